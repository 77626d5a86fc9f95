"""The graph factory langgraph.json names, so LangGraph Server and Studio can load the agent.

Settings come from the run's `configurable` (model, index, tools, k, n, n_docs, prompt), else FRAMES_AGENT_MODEL,
FRAMES_AGENT_INDEX and FRAMES_AGENT_TOOLS, else the CLI defaults. The graph's input is {"question": ...}.
"""
from __future__ import annotations

import argparse
import os
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

# What a run's `configurable` may set; every other setting keeps the CLI's default.
CONFIGURABLE = ("model", "index", "tools", "k", "n", "n_docs", "prompt")
ENV = {"model": "FRAMES_AGENT_MODEL", "index": "FRAMES_AGENT_INDEX", "tools": "FRAMES_AGENT_TOOLS"}


def cli_defaults() -> dict[str, Any]:
    """The defaults of the CLI's agent flags (one source: `ask`, `frames` and this factory agree)."""
    from agent.commands import add_agent_flags

    parser = argparse.ArgumentParser(add_help=False)
    add_agent_flags(parser)
    return vars(parser.parse_args([]))


def settings(config: RunnableConfig | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The agent's settings for this factory call: configurable, then environment, then defaults."""
    env = os.environ if env is None else env
    configurable = (config or {}).get("configurable", {})
    out = cli_defaults()
    out.update({key: env[var] for key, var in ENV.items() if env.get(var)})
    out.update({key: configurable[key] for key in CONFIGURABLE if configurable.get(key) is not None})
    return out


def make_graph(config: RunnableConfig | None = None) -> CompiledStateGraph:
    """The compiled agent graph for LangGraph Server (input {"question": ...}, output the final state)."""
    from agent.commands import build_agent

    args = argparse.Namespace(**settings(config))
    return build_agent(args).graph
