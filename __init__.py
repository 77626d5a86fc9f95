"""frames-agent: FRAMES-style multi-step retrieval (Fact, Fetch, and Reason) as a LangGraph agent.
What most users import is re-exported here: `from frames_agent import FramesAgent, AgentConfig`."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from frames_agent.core.version import __version__

if TYPE_CHECKING:
    from frames_agent.agent import (
        AgentConfig,
        AgentError,
        AgentEvent,
        AgentInput,
        AgentOutput,
        AgentResult,
        AgentSettings,
        FramesAgent,
        build_graph,
    )
    from frames_agent.retrieval import Document, FramesAgentError, Retriever

# Lazy, so importing a light sub-module (core.paths in a server process, say) does not load LangGraph.
_EXPORTS = {
    "FramesAgent": "frames_agent.agent", "AgentConfig": "frames_agent.agent", "AgentError": "frames_agent.agent",
    "AgentEvent": "frames_agent.agent", "AgentInput": "frames_agent.agent", "AgentOutput": "frames_agent.agent",
    "AgentResult": "frames_agent.agent", "AgentSettings": "frames_agent.agent", "build_graph": "frames_agent.agent",
    "Document": "frames_agent.retrieval", "FramesAgentError": "frames_agent.retrieval",
    "Retriever": "frames_agent.retrieval",
}
__all__ = ["AgentConfig", "AgentError", "AgentEvent", "AgentInput", "AgentOutput", "AgentResult", "AgentSettings",
           "Document", "FramesAgent", "FramesAgentError", "Retriever", "__version__", "build_graph"]


def __getattr__(name: str) -> Any:
    """PEP 562: an export imported on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
