"""ScriptedLLM: the one fake chat model for tests and benchmarks."""
from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import BaseModel, PrivateAttr

Reply = str | dict | list | BaseModel | Exception | Callable[[list[BaseMessage]], Any]


class ScriptExhausted(AssertionError):
    """The test asked the fake model for more replies than it scripted."""


def render_messages(messages: list[BaseMessage]) -> str:
    """The prompt as one string, the way tests assert on it."""
    return "\n\n".join(f"[{m.type}]\n{m.content}" for m in messages)


class ScriptedLLM(BaseChatModel):
    """Pops scripted replies (text, JSON, exceptions, callables of the messages), records prompts, fails when out."""

    replies: list[Any] = []
    responder: Callable[[list[BaseMessage]], Any] | None = None
    delay: float = 0.0
    model_name: str = "scripted"
    # Set True to have structured() send response_format (a JSON schema), as it does to our providers.
    supports_json_schema: bool = False
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _kwargs: list[dict] = PrivateAttr(default_factory=list)

    def __init__(self, replies: Iterable[Reply] = (), **kwargs: Any) -> None:
        super().__init__(replies=list(replies), **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def prompts(self) -> list[str]:
        """Every prompt seen, rendered as text, in call order."""
        return [render_messages(messages) for messages in self.calls]

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """Every message list seen, in call order."""
        return list(self._calls)

    @property
    def call_kwargs(self) -> list[dict]:
        """The keyword arguments (stop, response_format, ...) of every call."""
        return list(self._kwargs)

    @property
    def remaining(self) -> int:
        """Scripted replies not yet used."""
        return len(self.replies)

    def _next(self, messages: list[BaseMessage], kwargs: dict) -> ChatResult:
        with self._lock:
            self._calls.append(list(messages))
            self._kwargs.append(dict(kwargs))
            if self.replies:
                reply = self.replies.pop(0)
            elif self.responder is not None:
                reply = self.responder
            else:
                raise ScriptExhausted(f"ScriptedLLM has no reply left for call {len(self._calls)}:\n"
                                      f"{render_messages(messages)[:500]}")
        if callable(reply) and not isinstance(reply, BaseModel):
            reply = reply(messages)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, AIMessage):  # a scripted tool call (ToolScriptedLLM) or usage, sent as is
            return ChatResult(generations=[ChatGeneration(message=reply)])
        if isinstance(reply, BaseModel):
            reply = reply.model_dump_json()
        elif isinstance(reply, (dict, list)):
            reply = json.dumps(reply)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=str(reply)))])

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.delay:
            time.sleep(self.delay)
        return self._next(messages, kwargs)

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.delay:
            await asyncio.sleep(self.delay)
        return self._next(messages, kwargs)


class StreamingScriptedLLM(ScriptedLLM):
    """ScriptedLLM streaming each reply in pieces of `chunk_chars`; `before_last` runs before the last piece."""

    chunk_chars: int = 8
    before_last: Callable[[], None] | None = None

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        text = str(self._next(messages, kwargs).generations[0].message.content)
        pieces = [text[i:i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)] or [""]
        for i, piece in enumerate(pieces):
            if i == len(pieces) - 1 and self.before_last is not None:
                self.before_last()
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))


class ToolScriptedLLM(ScriptedLLM):
    """ScriptedLLM with tool calling: bind_tools sends the tools and tool_choice as call kwargs."""

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any) -> Runnable:
        """The tools and tool_choice bound to every call (see call_kwargs)."""
        from langchain_core.utils.function_calling import convert_to_openai_tool

        choice = {"tool_choice": tool_choice} if tool_choice else {}
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **choice, **kwargs)


def scripted_from_env() -> ScriptedLLM | None:
    """The test-only ScriptedLLM of the FRAMES_AGENT_TEST_SCRIPT file, if set (never set it in production)."""
    path = os.environ.get("FRAMES_AGENT_TEST_SCRIPT")
    if not path:
        return None
    # {"rules": [[needle, reply], ...], "delay": s}: the first rule found in the last message answers, endlessly.
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    rules = [(str(needle), reply) for needle, reply in spec["rules"]]

    def respond(messages: list[BaseMessage]) -> Any:
        text = str(messages[-1].content)
        for needle, reply in rules:
            if needle in text:
                return reply
        raise ScriptExhausted(f"no scripted rule matches the prompt:\n{text[:300]}")

    return ScriptedLLM(responder=respond, delay=float(spec.get("delay", 0.0)))
