"""frames-agent's agent: FRAMES multi-step retrieval as a LangGraph state machine.

Every error the project reports is a FramesAgentError (its message one line); AgentError is the agent layer's.
"""
from agent.api import FramesAgent
from agent.config import AgentConfig
from agent.errors import AgentError
from agent.graph import build_graph
from agent.state import AgentEvent, AgentInput, AgentOutput, AgentResult
from retrieval.errors import FramesAgentError
from retrieval.version import __version__

__all__ = ["FramesAgent", "AgentConfig", "AgentError", "AgentResult", "AgentEvent", "AgentInput", "AgentOutput",
           "FramesAgentError", "__version__", "build_graph"]
