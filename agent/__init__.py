"""frames-agent's agent: FRAMES multi-step retrieval as a LangGraph state machine."""
from agent.api import FramesAgent
from agent.config import AgentConfig
from agent.errors import AgentError
from agent.graph import build_graph
from agent.state import AgentEvent, AgentInput, AgentOutput, AgentResult

__all__ = ["FramesAgent", "AgentConfig", "AgentError", "AgentResult", "AgentEvent", "AgentInput", "AgentOutput",
           "build_graph"]
