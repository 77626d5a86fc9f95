"""frames-agent's agent: FRAMES multi-step retrieval as a LangGraph state machine; AgentError is its error."""
from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.configurable import CONFIG_KEY, RunSettings
from frames_agent.agent.errors import AgentError
from frames_agent.agent.graph import build_graph
from frames_agent.agent.settings import AgentSettings
from frames_agent.agent.state import AgentEvent, AgentInput, AgentOutput, AgentResult
from frames_agent.core.errors import FramesAgentError
from frames_agent.core.version import __version__

__all__ = ["FramesAgent", "AgentConfig", "AgentSettings", "AgentError", "AgentResult", "AgentEvent", "AgentInput",
           "AgentOutput", "FramesAgentError", "__version__", "build_graph", "CONFIG_KEY", "RunSettings"]
