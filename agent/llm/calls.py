"""The LLM layer's public face: model specs, structured calls that survive small models, usage accounting."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from agent.llm.errors import EmptyReplyError
from agent.llm.json_repair import Structured, parse_structured
from retrieval.tokens import count_tokens

T = TypeVar("T", bound=BaseModel)

__all__ = ["Structured", "Usage", "UsageTracker", "astructured", "parse_structured",
           "message_text", "response_format_for", "structured"]


def _as_messages(prompt: str | list[BaseMessage]) -> list[BaseMessage]:
    return [HumanMessage(content=prompt)] if isinstance(prompt, str) else list(prompt)


def accepts_json_schema(llm: BaseChatModel) -> bool:
    """Whether llm takes an OpenAI-style response_format json_schema (our providers do)."""
    return bool(getattr(llm, "supports_json_schema", False))


def response_format_for(schema: type[BaseModel]) -> dict:
    """The OpenAI-style response_format asking for schema (non-strict: servers differ in strict support)."""
    return {"type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False}}


def _call_kwargs(llm: BaseChatModel, schema: type[BaseModel], use_schema: bool | None, kwargs: dict) -> dict:
    if use_schema is None:
        use_schema = accepts_json_schema(llm)
    return {"response_format": response_format_for(schema), **kwargs} if use_schema else kwargs


def structured(llm: BaseChatModel, prompt: str | list[BaseMessage], schema: type[T], fallback: Callable[[str], T],
               config: RunnableConfig | None = None, *, use_schema: bool | None = None,
               **invoke_kwargs: Any) -> Structured[T]:
    """Ask for a schema-shaped reply; broken JSON is repaired or replaced by fallback(raw).

    The JSON schema goes to the backend as response_format when it accepts one (use_schema=None: ask
    the model). Never raises for bad output; provider failures (network, key, quota) still raise.
    """
    kwargs = _call_kwargs(llm, schema, use_schema, invoke_kwargs)
    try:
        reply = llm.invoke(_as_messages(prompt), config=config, **kwargs)
    except EmptyReplyError as exc:
        return Structured(fallback(""), "", fallback=True, error=str(exc))
    return parse_structured(message_text(reply.content), schema, fallback)


async def astructured(llm: BaseChatModel, prompt: str | list[BaseMessage], schema: type[T],
                      fallback: Callable[[str], T], config: RunnableConfig | None = None, *,
                      use_schema: bool | None = None, **invoke_kwargs: Any) -> Structured[T]:
    """Async structured()."""
    kwargs = _call_kwargs(llm, schema, use_schema, invoke_kwargs)
    try:
        reply = await llm.ainvoke(_as_messages(prompt), config=config, **kwargs)
    except EmptyReplyError as exc:
        return Structured(fallback(""), "", fallback=True, error=str(exc))
    return parse_structured(message_text(reply.content), schema, fallback)


def message_text(content: Any) -> str:
    """Message content as text (providers may return a list of content blocks)."""
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)
    return str(content or "")


@dataclass
class Usage:
    """LLM calls and tokens (cached calls count their recorded tokens, and are also counted apart)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0
    counted_calls: int = 0  # calls whose tokens were estimated with tiktoken (no provider figures)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        """Plain numbers for reports."""
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens, "cached_calls": self.cached_calls,
                "counted_calls": self.counted_calls}


class UsageTracker(BaseCallbackHandler):
    """Counts calls and tokens of one run; provider figures when reported, else tiktoken counts.

    Pass it per run (config={"callbacks": [tracker]}) so agents sharing a process keep separate counts.
    """

    def __init__(self) -> None:
        self.usage = Usage()
        self._lock = threading.Lock()
        self._prompts: dict[Any, int] = {}

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], *, run_id: Any,
                            **kwargs: Any) -> None:
        text = "\n".join(message_text(m.content) for batch in messages for m in batch)
        with self._lock:
            self._prompts[run_id] = count_tokens(text)

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
        with self._lock:
            self._prompts.pop(run_id, None)

    def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
        with self._lock:
            prompt = self._prompts.pop(run_id, 0)
        completion, counted, cached = 0, False, False
        for gens in response.generations:
            for gen in gens:
                message = getattr(gen, "message", None)
                meta = getattr(message, "usage_metadata", None)
                cached = cached or bool((getattr(message, "response_metadata", None) or {}).get("cache_hit"))
                if meta and (meta.get("input_tokens") or meta.get("output_tokens")):
                    prompt, completion = meta.get("input_tokens", prompt), completion + meta.get("output_tokens", 0)
                else:
                    completion, counted = completion + count_tokens(gen.text or ""), True
        with self._lock:
            self.usage.calls += 1
            self.usage.prompt_tokens += prompt
            self.usage.completion_tokens += completion
            self.usage.cached_calls += int(cached)
            self.usage.counted_calls += int(counted)


def cached(llm: BaseChatModel, path: str | Path | bool | None = True) -> BaseChatModel:
    """llm with a persistent call cache (see agent.llm.cache)."""
    from agent.llm.cache import with_cache

    return with_cache(llm, path)
