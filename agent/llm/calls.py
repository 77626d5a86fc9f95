"""The LLM layer's public face: model specs, structured calls that survive small models, usage accounting."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from frames_agent.agent.llm.errors import EmptyReplyError
from frames_agent.agent.llm.json_repair import Structured, parse_structured
from frames_agent.agent.llm.text import message_text

T = TypeVar("T", bound=BaseModel)

__all__ = ["Structured", "astructured", "parse_structured",
           "message_text", "response_format_for", "structured"]


def _as_messages(prompt: str | list[BaseMessage]) -> list[BaseMessage]:
    return [HumanMessage(content=prompt)] if isinstance(prompt, str) else list(prompt)


def accepts_json_schema(llm: BaseChatModel) -> bool:
    """Whether llm takes an OpenAI-style response_format json_schema (our providers do)."""
    return bool(getattr(llm, "supports_json_schema", False))


def response_format_for(schema: type[BaseModel], json_schema: dict | None = None) -> dict:
    """The OpenAI-style response_format asking for schema (non-strict: servers differ in strict support).

    json_schema narrows the model's own schema for one call (e.g. at most k items); replies are still
    validated against the model.
    """
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "strict": False,
                                                   "schema": json_schema or schema.model_json_schema()}}


def _call_kwargs(llm: BaseChatModel, schema: type[BaseModel], use_schema: bool | None, kwargs: dict,
                 json_schema: dict | None = None) -> dict:
    if use_schema is None:
        use_schema = accepts_json_schema(llm)
    return {"response_format": response_format_for(schema, json_schema), **kwargs} if use_schema else kwargs


def _goes_native(llm: BaseChatModel, use_schema: bool | None, native: bool) -> bool:
    """Whether a structured call goes through the model's own structured output instead of response_format."""
    if not native or use_schema is False or accepts_json_schema(llm):
        return False
    from frames_agent.agent.llm.native import native_structured

    return native_structured(llm)


def structured(llm: BaseChatModel, prompt: str | list[BaseMessage], schema: type[T], fallback: Callable[[str], T],
               config: RunnableConfig | None = None, *, use_schema: bool | None = None,
               json_schema: dict | None = None, native: bool = False, **invoke_kwargs: Any) -> Structured[T]:
    """Ask for a schema-shaped reply; broken JSON is repaired or replaced by fallback(raw).

    The JSON schema goes to the backend as response_format when it accepts one (use_schema=None: ask
    the model); with native=True a model that does not, but has its own structured output or tool calling
    (agent.llm.native), is asked through with_structured_output. Never raises for bad output; provider failures
    (network, key, quota) still raise.
    """
    if _goes_native(llm, use_schema, native):
        from frames_agent.agent.llm.native import invoke_structured

        return invoke_structured(llm, _as_messages(prompt), schema, fallback, json_schema or schema.model_json_schema(),
                                 config, invoke_kwargs)
    kwargs = _call_kwargs(llm, schema, use_schema, invoke_kwargs, json_schema)
    try:
        reply = llm.invoke(_as_messages(prompt), config=config, **kwargs)
    except EmptyReplyError as exc:
        return Structured(fallback(""), "", fallback=True, error=str(exc))
    return parse_structured(message_text(reply.content), schema, fallback)


async def astructured(llm: BaseChatModel, prompt: str | list[BaseMessage], schema: type[T],
                      fallback: Callable[[str], T], config: RunnableConfig | None = None, *,
                      use_schema: bool | None = None, json_schema: dict | None = None, native: bool = False,
                      **invoke_kwargs: Any) -> Structured[T]:
    """Async structured()."""
    if _goes_native(llm, use_schema, native):
        from frames_agent.agent.llm.native import ainvoke_structured

        return await ainvoke_structured(llm, _as_messages(prompt), schema, fallback,
                                        json_schema or schema.model_json_schema(), config, invoke_kwargs)
    kwargs = _call_kwargs(llm, schema, use_schema, invoke_kwargs, json_schema)
    try:
        reply = await llm.ainvoke(_as_messages(prompt), config=config, **kwargs)
    except EmptyReplyError as exc:
        return Structured(fallback(""), "", fallback=True, error=str(exc))
    return parse_structured(message_text(reply.content), schema, fallback)


def cached(llm: BaseChatModel, path: str | Path | bool | None = True) -> BaseChatModel:
    """llm with a persistent call cache (see agent.llm.cache)."""
    from frames_agent.agent.llm.cache import with_cache

    return with_cache(llm, path)
