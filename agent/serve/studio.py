"""The graph factory langgraph.json names, so LangGraph Server and Studio can load the agent.

Settings come from the run's `configurable` (model, index, tools, k, n, n_docs, prompt), else FRAMES_AGENT_MODEL,
FRAMES_AGENT_INDEX and FRAMES_AGENT_TOOLS, else the CLI defaults (AgentSettings.from_runnable_config reads them).
The graph declares them as its context schema (StudioSettings), so Studio draws a settings form. The graph's
input is {"question": ...}.
"""
# No `from __future__ import annotations`: LangGraph Server loads this file by path, outside sys.modules, where
# pydantic could not resolve StudioSettings' annotations as strings.
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


def make_graph(config: RunnableConfig | None = None) -> CompiledStateGraph:
    """The compiled agent graph for LangGraph Server (input {"question": ...}, output the final state, context
    schema StudioSettings)."""
    from frames_agent.agent.graph import build_graph
    from frames_agent.agent.settings import AgentSettings

    agent = AgentSettings.from_runnable_config(config).build_agent()
    return build_graph(agent.llm, agent.retriever, agent.tools, agent.config, nodes=agent.nodes,
                       context_schema=StudioSettings)
