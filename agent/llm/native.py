"""A chat model's own structured output and tool calling (LangChain `with_structured_output`, `bind_tools`), for
models our providers do not constrain by JSON schema; every reply still ends as a Structured value, never raises."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel

from frames_agent.agent.llm.errors import EmptyReplyError
from frames_agent.agent.llm.json_repair import Structured, parse_structured
from frames_agent.agent.llm.text import message_text

T = TypeVar("T", bound=BaseModel)

__all__ = ["ainvoke_structured", "bind_with_tools", "invoke_structured", "native_structured", "native_tools",
           "read_native", "read_tool_reply", "schema_tool", "structured_runnable"]


def _profile(llm: BaseChatModel) -> dict:
    try:
        return dict(getattr(llm, "profile", None) or {})
    except Exception:  # noqa: BLE001 - a profile lookup that fails only means "not known"
        return {}


def native_tools(llm: BaseChatModel) -> bool:
    """Whether llm binds tools itself (its class implements bind_tools and its profile does not deny it)."""
    if _profile(llm).get("tool_calling") is False:
        return False
    return type(llm).bind_tools is not BaseChatModel.bind_tools


def native_structured(llm: BaseChatModel) -> bool:
    """Whether llm gives schema-shaped replies itself (its own with_structured_output, or through tool calling)."""
    own = type(llm).with_structured_output is not BaseChatModel.with_structured_output
    return (own and _profile(llm).get("structured_output") is not False) or native_tools(llm)


def _capped(llm: BaseChatModel, kwargs: dict) -> BaseChatModel:
    """llm with the call's max_tokens as its own setting: with_structured_output's chain drops call kwargs."""
    cap = kwargs.get("max_tokens")
    fields = type(llm).model_fields
    named = {name for name, f in fields.items()} | {f.alias for f in fields.values() if f.alias}
    return llm.model_copy(update={"max_tokens": cap}) if cap and "max_tokens" in named else llm


def structured_runnable(llm: BaseChatModel, json_schema: dict, kwargs: dict) -> Runnable:
    """llm.with_structured_output(json_schema, include_raw=True), with the call's token cap kept."""
    return _capped(llm, kwargs).with_structured_output(json_schema, include_raw=True)


def _args_json(message: AIMessage, name: str) -> str | None:
    """The arguments of the message's first call of tool `name`, as JSON text."""
    for call in getattr(message, "tool_calls", None) or []:
        if call.get("name") == name:
            return json.dumps(call.get("args") or {}, ensure_ascii=False)
    # Arguments LangChain could not read (not JSON, or no object) go to the tolerant parser as written.
    for invalid in getattr(message, "invalid_tool_calls", None) or []:
        if invalid.get("name") == name and isinstance(invalid.get("args"), str):
            return invalid["args"]
    return None


def _text(message: Any) -> str:
    return message_text(getattr(message, "content", "")) if message is not None else ""


def read_native(out: Any, schema: type[T], fallback: Callable[[str], T], name: str) -> Structured[T]:
    """A with_structured_output(include_raw=True) result as Structured: the parsed value checked against schema,
    else the raw reply's tool arguments or text repaired, else fallback."""
    out = out if isinstance(out, dict) else {"parsed": out}
    parsed, raw = out.get("parsed"), out.get("raw")
    if isinstance(parsed, BaseModel):
        parsed = parsed.model_dump()
    if isinstance(parsed, dict):
        return parse_structured(json.dumps(parsed, ensure_ascii=False), schema, fallback)
    text = (_args_json(raw, name) if isinstance(raw, AIMessage) else None) or _text(raw)
    reply = parse_structured(text, schema, fallback)
    if out.get("parsing_error") is not None and reply.error is None and reply.fallback:
        reply.error = str(out["parsing_error"]).splitlines()[0]
    return reply


def invoke_structured(llm: BaseChatModel, messages: list[BaseMessage], schema: type[T], fallback: Callable[[str], T],
                      json_schema: dict, config: RunnableConfig | None, kwargs: dict) -> Structured[T]:
    """One call through the model's own structured output."""
    try:
        out = structured_runnable(llm, json_schema, kwargs).invoke(messages, config=config)
    except EmptyReplyError as exc:
        return Structured(fallback(""), "", fallback=True, error=str(exc))
    return read_native(out, schema, fallback, str(json_schema.get("title", schema.__name__)))


async def ainvoke_structured(llm: BaseChatModel, messages: list[BaseMessage], schema: type[T],
                             fallback: Callable[[str], T], json_schema: dict, config: RunnableConfig | None,
                             kwargs: dict) -> Structured[T]:
    """Async invoke_structured."""
    try:
        out = await structured_runnable(llm, json_schema, kwargs).ainvoke(messages, config=config)
    except EmptyReplyError as exc:
        return Structured(fallback(""), "", fallback=True, error=str(exc))
    return read_native(out, schema, fallback, str(json_schema.get("title", schema.__name__)))


def schema_tool(name: str, description: str, json_schema: dict) -> dict:
    """A JSON schema as an OpenAI-format tool (what bind_tools takes from every provider)."""
    parameters = {k: v for k, v in json_schema.items() if k not in ("title", "description")}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def bind_with_tools(llm: BaseChatModel, tools: Sequence[Any]) -> Runnable:
    """llm.bind_tools(tools) asking for at least one call; a provider without tool_choice binds without it."""
    try:
        return llm.bind_tools(list(tools), tool_choice="any")
    except (NotImplementedError, ValueError, TypeError):
        return llm.bind_tools(list(tools))


def read_tool_reply(message: Any, reply_tool: str, schema: type[T],
                    fallback: Callable[[str], T]) -> tuple[Structured[T], list[dict]]:
    """(the reply tool's arguments as schema, else the text repaired; the other tool calls as {name, args})."""
    calls = [c for c in (getattr(message, "tool_calls", None) or []) if c.get("name") != reply_tool]
    others = [{"name": c.get("name", ""), "args": dict(c.get("args") or {})} for c in calls]
    args = _args_json(message, reply_tool) if isinstance(message, AIMessage) else None
    text = _text(message)
    if args is not None:
        return parse_structured(args, schema, fallback), others
    if not text.strip() and others:  # only tool calls: a plan without queries, not an unusable reply
        return Structured(fallback(""), ""), others
    return parse_structured(text, schema, fallback), others
