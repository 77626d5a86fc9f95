"""The graph factory langgraph.json names, so LangGraph Server and Studio can load the agent.

Settings come from the run's `configurable` (model, index, tools, k, n, n_docs, prompt), else FRAMES_AGENT_MODEL,
FRAMES_AGENT_INDEX and FRAMES_AGENT_TOOLS, else the CLI defaults. The graph declares them as its context schema
(StudioSettings), so Studio draws a settings form. The graph's input is {"question": ...}.
"""
# No `from __future__ import annotations`: LangGraph Server loads this file by path, outside sys.modules, where
# pydantic could not resolve StudioSettings' annotations as strings.
import argparse
import os
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field
from typing_extensions import TypedDict

from frames_agent.agent.config import AgentConfig


def _described(name: str) -> Any:
    """An AgentConfig field's description and bounds (ge, le), for the schema below."""
    info = AgentConfig.model_fields[name]
    bounds = {key: value for m in info.metadata
              if is_dataclass(m) and not isinstance(m, type) for key, value in asdict(m).items()}
    return Field(description=info.description, **bounds)


class StudioSettings(TypedDict, total=False):
    """What a run may set (as `configurable`); every other setting keeps the CLI's default."""

    model: Annotated[str, Field(description="model spec, e.g. gemini:gemini-2.5-flash (FRAMES_AGENT_MODEL)")]
    index: Annotated[str, Field(description="index name or directory (FRAMES_AGENT_INDEX)")]
    tools: Annotated[str, Field(description="wiki, crag, crag:<domain>, comma-separated (FRAMES_AGENT_TOOLS)")]
    k: Annotated[int, _described("k")]
    n: Annotated[int, _described("n")]
    n_docs: Annotated[int, _described("n_docs")]
    prompt: Annotated[str, _described("prompt")]


CONFIGURABLE = tuple(StudioSettings.__annotations__)
ENV = {"model": "FRAMES_AGENT_MODEL", "index": "FRAMES_AGENT_INDEX", "tools": "FRAMES_AGENT_TOOLS"}


def cli_defaults() -> dict[str, Any]:
    """The defaults of the CLI's agent flags (one source: `ask`, `frames` and this factory agree)."""
    from frames_agent.agent.commands import add_agent_flags

    parser = argparse.ArgumentParser(add_help=False)
    add_agent_flags(parser)
    return vars(parser.parse_args([]))


def settings(config: RunnableConfig | None = None, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The agent's settings for this factory call: configurable, then environment, then defaults."""
    env = os.environ if env is None else env
    configurable = (config or {}).get("configurable", {})
    out = cli_defaults()
    out.update({key: env[var] for key, var in ENV.items() if env.get(var)})
    out.update({key: configurable[key] for key in CONFIGURABLE if configurable.get(key) is not None})
    return out


def make_graph(config: RunnableConfig | None = None) -> CompiledStateGraph:
    """The compiled agent graph for LangGraph Server (input {"question": ...}, output the final state, context
    schema StudioSettings)."""
    from frames_agent.agent.commands import build_agent
    from frames_agent.agent.graph import build_graph

    agent = build_agent(argparse.Namespace(**settings(config)))
    return build_graph(agent.llm, agent.retriever, agent.tools, agent.config, nodes=agent.nodes,
                       context_schema=StudioSettings)
