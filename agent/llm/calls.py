"""Structured calls that survive small models: a JSON schema as response_format, else the model's own structured
output or tool calling (LangChain `with_structured_output`, `bind_tools`); every reply ends as a Structured value."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel

from frames_agent.agent.llm.errors import EmptyReplyError
from frames_agent.agent.llm.json_repair import Structured, parse_structured
from frames_agent.core.terminal import valid_text

T = TypeVar("T", bound=BaseModel)


def message_text(content: Any) -> str:
    """Message content as valid text (providers may return a list of content blocks; a lone surrogate becomes U+FFFD)."""
    if isinstance(content, list):
        return valid_text("".join(_block_text(b) for b in content))
    return "" if content is None else valid_text(str(content))


def _block_text(block: Any) -> str:
    """A content block's text: {"text": None} is no text, a number is its digits, images are nothing."""
    if isinstance(block, str):
        return block
    value = block.get("text") if isinstance(block, dict) else None
    return "" if value is None or isinstance(value, (dict, list)) else str(value)


def _as_messages(prompt: str | list[BaseMessage]) -> list[BaseMessage]:
    return [HumanMessage(content=prompt)] if isinstance(prompt, str) else list(prompt)


def accepts_json_schema(llm: BaseChatModel) -> bool:
    """Whether llm takes an OpenAI-style response_format json_schema (our providers do)."""
    return bool(getattr(llm, "supports_json_schema", False))


def response_format_for(schema: type[BaseModel], json_schema: dict | None = None) -> dict:
    """The OpenAI-style response_format asking for schema, or json_schema narrowing it (non-strict)."""
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "strict": False,
                                                   "schema": json_schema or schema.model_json_schema()}}


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


def structured_runnable(llm: BaseChatModel, json_schema: dict, kwargs: dict) -> Runnable:
    """llm.with_structured_output(json_schema, include_raw=True), with the call's token cap kept."""
    cap = kwargs.get("max_tokens")  # as the model's own setting: with_structured_output's chain drops call kwargs
    fields = type(llm).model_fields
    named = {name for name, f in fields.items()} | {f.alias for f in fields.values() if f.alias}
    capped = llm.model_copy(update={"max_tokens": cap}) if cap and "max_tokens" in named else llm
    return capped.with_structured_output(json_schema, include_raw=True)


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
    """A with_structured_output(include_raw=True) result as Structured: the parsed value, else the raw reply repaired."""
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


def _request(llm: BaseChatModel, schema: type[T], fallback: Callable[[str], T], json_schema: dict | None, native: bool,
             kwargs: dict) -> tuple[Runnable, dict, Callable[[Any], Structured[T]]]:
    """(what to call, its call kwargs, how its output becomes Structured) for one structured call."""
    if native and not accepts_json_schema(llm) and native_structured(llm):
        shape = json_schema or schema.model_json_schema()
        name = str(shape.get("title", schema.__name__))
        return structured_runnable(llm, shape, kwargs), {}, lambda out: read_native(out, schema, fallback, name)
    if accepts_json_schema(llm):
        kwargs = {"response_format": response_format_for(schema, json_schema), **kwargs}
    return llm, kwargs, lambda reply: parse_structured(message_text(reply.content), schema, fallback)


def structured(llm: BaseChatModel, prompt: str | list[BaseMessage], schema: type[T], fallback: Callable[[str], T],
               config: RunnableConfig | None = None, *, json_schema: dict | None = None, native: bool = False,
               **invoke_kwargs: Any) -> Structured[T]:
    """A schema-shaped reply, repaired or replaced by fallback(raw); only provider failures raise."""
    runnable, kwargs, read = _request(llm, schema, fallback, json_schema, native, invoke_kwargs)
    try:
        return read(runnable.invoke(_as_messages(prompt), config=config, **kwargs))
    except EmptyReplyError as exc:
        return Structured(fallback(""), "", fallback=True, error=str(exc))


async def astructured(llm: BaseChatModel, prompt: str | list[BaseMessage], schema: type[T],
                      fallback: Callable[[str], T], config: RunnableConfig | None = None, *,
                      json_schema: dict | None = None, native: bool = False, **invoke_kwargs: Any) -> Structured[T]:
    """Async structured()."""
    runnable, kwargs, read = _request(llm, schema, fallback, json_schema, native, invoke_kwargs)
    try:
        return read(await runnable.ainvoke(_as_messages(prompt), config=config, **kwargs))
    except EmptyReplyError as exc:
        return Structured(fallback(""), "", fallback=True, error=str(exc))


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
