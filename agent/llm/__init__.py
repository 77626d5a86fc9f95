"""The LLM layer: `provider:model` specs to LangChain chat models, structured output that survives small models,
usage and per-call timing, a persistent call cache, and the errors users see (agent.llm.testing: the scripted fake)."""
from frames_agent.agent.llm.cache import LLMCallCache, with_cache
from frames_agent.agent.llm.calls import astructured, message_text, response_format_for, structured
from frames_agent.agent.llm.errors import LLMError, ModelSpecError
from frames_agent.agent.llm.json_repair import Structured, parse_structured
from frames_agent.agent.llm.spec import DEFAULT_MODEL, ModelClass, ModelSpec, resolve_model
from frames_agent.agent.llm.timing import CallTiming, NodeTiming, Usage, UsageTracker, by_node

__all__ = ["DEFAULT_MODEL", "CallTiming", "LLMCallCache", "LLMError", "ModelClass", "ModelSpec", "ModelSpecError",
           "NodeTiming", "Structured", "Usage", "UsageTracker", "astructured", "by_node", "message_text",
           "parse_structured", "resolve_model", "response_format_for", "structured", "with_cache"]
