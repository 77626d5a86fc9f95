"""The OpenAI-compatible face: /v1/models, /v1/chat/completions requests (fields the agent cannot honour refused),
replies and streamed chunks (progress as reasoning)."""
from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from frames_agent.agent.limits import InvalidRequest, RequestRefused, check_text
from frames_agent.agent.serve.encoding import json_text
from frames_agent.agent.state import AgentEvent, AgentResult, progress_line
from frames_agent.core.errors import first_line


class ChatMessage(BaseModel):
    """One chat message; content as a string or a list of OpenAI content parts."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None


MODEL_ID = "frames-agent"
# Request fields that would change what the reply is, with the values that change nothing; any other value gets 400.
_NO_OP: dict[str, Any] = {
    "n": (None, 1), "tools": (None, []), "functions": (None, []), "tool_choice": (None, "none", "auto"),
    "function_call": (None, "none", "auto"), "response_format": (None, {"type": "text"}), "logprobs": (None, False),
    "top_logprobs": (None, 0), "logit_bias": (None, {}), "modalities": (None, ["text"]), "audio": (None,),
    "prediction": (None,),
}


class Unsupported(RequestRefused):
    """A request field this server cannot honour (n > 1, tools, response_format, ...)."""

    status = 400


class ChatRequest(BaseModel):
    """The fields we read from an OpenAI chat request (the others are checked by check_supported, or ignored)."""

    model_config = ConfigDict(extra="allow")

    model: str = MODEL_ID
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


def check_supported(request: ChatRequest) -> None:
    """Unsupported (400) naming every field set to something this server would not honour."""
    extra = request.model_extra or {}
    refused = [name if isinstance(extra[name], (list, dict)) else f"{name}={json.dumps(extra[name])}"
               for name, no_op in _NO_OP.items() if name in extra and extra[name] not in no_op]
    if refused:
        raise Unsupported(f"unsupported: {', '.join(refused)} (this server gives one text answer per request; "
                          "no tools, no structured or multiple choices)")


def model_card() -> dict[str, Any]:
    """One OpenAI model object."""
    return {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "frames-agent"}


def question_of(request: ChatRequest) -> str:
    """The last user message's text: the question (InvalidRequest when it has none or is too long)."""
    for message in reversed(request.messages):
        if message.role == "user":
            content = message.content
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
            if content and content.strip():
                return check_text(content)
            break
    raise InvalidRequest("messages: the last user message has no text (it is the question)")


def sources(result: AgentResult, limit: int = 10) -> list[dict[str, Any]]:
    """The documents behind an answer, first added first."""
    return [{"id": d.id, "title": d.title, "source": d.source, "score": d.score} for d in result.documents[:limit]]


def content(result: AgentResult, with_sources: bool = True, listed: int = 5) -> str:
    """The message content: the answer, then (with_sources) the top sources as a Markdown list, as the tool's text."""
    if not with_sources or not result.documents:
        return result.answer
    return "\n".join([result.answer, "", "Sources:", *(f"- {d.title} [{d.id}]" for d in result.documents[:listed])])


def usage(result: AgentResult) -> dict[str, int]:
    """OpenAI's usage object."""
    return {"prompt_tokens": result.tokens.prompt, "completion_tokens": result.tokens.completion,
            "total_tokens": result.tokens.prompt + result.tokens.completion}


def completion(result: AgentResult, model: str, with_sources: bool = True) -> dict[str, Any]:
    """A chat.completion object: the answer (with its top sources) as content, the documents as `sources`."""
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": content(result, with_sources)}}],
            "usage": usage(result), "sources": sources(result)}


def _chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    body = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return f"data: {json_text(body)}\n\n"


async def completion_chunks(events: AsyncIterator[AgentEvent], model: str,
                            with_sources: bool = True) -> AsyncIterator[str]:
    """chat.completion.chunk SSE lines: progress as reasoning_content, then the answer, sources and usage."""
    cid = f"chatcmpl-{uuid.uuid4().hex}"
    yield _chunk(cid, model, {"role": "assistant", "content": ""})
    try:
        async for event in events:
            if event.kind == "answer":
                yield _chunk(cid, model, {"content": content(event.result, with_sources)})
                yield _chunk(cid, model, {}, "stop", sources=sources(event.result), usage=usage(event.result))
            else:
                yield _chunk(cid, model, {"reasoning_content": progress_line(event)})
    except Exception as exc:  # noqa: BLE001 - headers are sent: the error travels in the stream, one line
        yield f"data: {json_text({'error': {'message': first_line(exc), 'type': type(exc).__name__}})}\n\n"
    yield "data: [DONE]\n\n"
