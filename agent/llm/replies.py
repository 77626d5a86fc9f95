"""A chat completion checked at the provider boundary: each way a server's reply can be unusable is one typed error,
never an IndexError or an empty answer passed off as the model's."""
from __future__ import annotations

from typing import Any

from frames_agent.agent.llm import errors as E
from frames_agent.agent.llm.calls import message_text


def not_json(spec: str, where: str) -> E.MalformedReplyError:
    """The error for a reply body that is not JSON (an HTML page, a body cut off midway)."""
    return E.MalformedReplyError(f"{spec}: {where} answered with something that is not JSON "
                                 "(is it an OpenAI-compatible /v1 URL?)")


def json_kind(value: Any) -> str:
    """What a decoded JSON value is, in words ("null", "a list", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return kinds.get(type(value), "a number")


def check_completion(response: Any, spec: str, where: str) -> None:
    """Raise the BadReplyError that fits a chat.completion body (a dict) that cannot be read as a reply."""
    if isinstance(response, str):  # the SDK hands over a body it could not read as JSON as its text
        raise not_json(spec, where)
    if not isinstance(response, dict):  # JSON, but no object: the server answered, the URL is not to blame
        raise E.MalformedReplyError(f"{spec}: {where} answered with {json_kind(response)} in JSON, not a chat completion")
    if response.get("error"):
        raise E.BadReplyError(f"{spec}: {where} answered with an error: {E.redact(str(response['error']))}")
    choices = response.get("choices")
    if choices is not None and not isinstance(choices, list):
        raise E.MalformedReplyError(f"{spec}: {where} answered with 'choices' as {json_kind(choices)}, "
                                    "not a list of choices")
    if not choices:
        raise E.EmptyChoicesError(f"{spec}: {where} answered with no choices (an empty reply, not the model's answer)")
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise E.MissingMessageError(f"{spec}: {where} answered with a choice that has no message")
        if message_text(message.get("content")).strip() or message.get("tool_calls") or message.get("function_call"):
            continue
        if message.get("refusal"):
            raise E.RefusalError(f"{spec}: the model refused: {E.redact(str(message['refusal']))}")
        if choice.get("finish_reason") == "length":
            raise E.ReplyCutOffError(f"{spec}: the reply reached its token limit before any text (raise max_tokens)")
        raise E.NullContentError(f"{spec}: the reply has no text (finish reason {choice.get('finish_reason')})")
