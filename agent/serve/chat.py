"""The OpenAI-compatible face: /v1/chat/completions requests, replies and streamed chunks (progress as reasoning)."""
from __future__ import annotations

import json
import time
import uuid
from typing import Any, AsyncIterator

from pydantic import BaseModel, ConfigDict, Field

from agent.limits import InvalidRequest, check_text
from agent.state import AgentEvent, AgentResult


class ChatMessage(BaseModel):
    """One chat message; content as a string or a list of OpenAI content parts."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """The fields we read from an OpenAI chat request (others, like temperature, are accepted and ignored)."""

    model_config = ConfigDict(extra="allow")

    model: str = "frames-agent"
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


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


def usage(result: AgentResult) -> dict[str, int]:
    """OpenAI's usage object."""
    return {"prompt_tokens": result.tokens.prompt, "completion_tokens": result.tokens.completion,
            "total_tokens": result.tokens.prompt + result.tokens.completion}


def progress_line(event: AgentEvent) -> str:
    """One event as a line of reasoning text."""
    if event.kind == "step_started":
        return f"Step {event.step}\n"
    if event.kind == "queries":
        calls = "".join(f" | {c.name}({json.dumps(c.args, ensure_ascii=False)})" for c in event.tool_calls)
        return f"  searching: {' | '.join(event.queries)}{calls}\n"
    if event.kind == "documents_added":
        titles = ", ".join(dict.fromkeys(d.title for d in event.documents))
        return f"  +{len(event.documents)} new: {titles[:300]}\n"
    return ""


def completion(result: AgentResult, model: str) -> dict[str, Any]:
    """A chat.completion object: the answer as content, the documents as sources."""
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": result.answer}}],
            "usage": usage(result), "sources": sources(result)}


def _chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    body = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


async def completion_chunks(events: AsyncIterator[AgentEvent], model: str) -> AsyncIterator[str]:
    """chat.completion.chunk SSE lines: progress as reasoning_content, then the answer, sources and usage."""
    cid = f"chatcmpl-{uuid.uuid4().hex}"
    yield _chunk(cid, model, {"role": "assistant", "content": ""})
    try:
        async for event in events:
            if event.kind == "answer":
                yield _chunk(cid, model, {"content": event.result.answer})
                yield _chunk(cid, model, {}, "stop", sources=sources(event.result), usage=usage(event.result))
            else:
                yield _chunk(cid, model, {"reasoning_content": progress_line(event)})
    except Exception as exc:  # noqa: BLE001 - headers are sent: the error travels in the stream, one line
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        yield f"data: {json.dumps({'error': {'message': message, 'type': type(exc).__name__}})}\n\n"
    yield "data: [DONE]\n\n"
