"""The LLM layer's public face: structured calls that survive small models, and usage accounting.

(Minimal contract version; providers, caching and retries land with the LLM-layer issue.)
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ValidationError

from retrieval.tokens import count_tokens

T = TypeVar("T", bound=BaseModel)


@dataclass
class Structured(Generic[T]):
    """A parsed reply: the value, the raw text, and whether it had to be repaired or replaced."""

    value: T
    raw: str
    repaired: bool = False
    fallback: bool = False
    error: str | None = None


def _as_messages(prompt: str | list[BaseMessage]) -> list[BaseMessage]:
    return [HumanMessage(content=prompt)] if isinstance(prompt, str) else list(prompt)


def _json_candidates(text: str) -> list[str]:
    fenced = re.findall(r"```(?:json)?\s*(.*?)```", text, flags=re.S)
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    tail = [text[start:]] if start >= 0 else []
    return fenced + tail + [text]


def _close_truncated(text: str) -> str:
    """Close the brackets and string a reply was cut off inside."""
    stack, in_str, esc = [], False, False
    for ch in text:
        if in_str:
            esc = (ch == "\\") and not esc
            if ch == '"' and not esc:
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    fixed = text + ('"' if in_str else "")
    fixed = re.sub(r",\s*$", "", fixed)
    return fixed + "".join(reversed(stack))


def _loads_lenient(text: str) -> Any:
    decoder = json.JSONDecoder()
    for attempt in (text, re.sub(r",\s*([}\]])", r"\1", text), _close_truncated(text)):
        try:
            value, _ = decoder.raw_decode(attempt.strip())
            return value
        except ValueError:
            continue
    raise ValueError("no JSON value found")


def parse_structured(raw: str, schema: type[T], fallback: Callable[[str], T]) -> Structured[T]:
    """Parse a reply into schema, repairing or falling back deterministically; never raises."""
    errors = []
    for i, candidate in enumerate(_json_candidates(raw or "")):
        try:
            data = _loads_lenient(candidate)
            return Structured(schema.model_validate(data), raw, repaired=i > 0 or candidate.strip() != raw.strip())
        except (ValueError, ValidationError) as exc:
            errors.append(str(exc).splitlines()[0])
    return Structured(fallback(raw or ""), raw, fallback=True, error=errors[0] if errors else "empty reply")


def structured(llm: BaseChatModel, prompt: str | list[BaseMessage], schema: type[T], fallback: Callable[[str], T],
               config: RunnableConfig | None = None) -> Structured[T]:
    """Ask for a schema-shaped reply; broken JSON is repaired or replaced by fallback(raw)."""
    reply = llm.invoke(_as_messages(prompt), config=config)
    return parse_structured(str(reply.content), schema, fallback)


async def astructured(llm: BaseChatModel, prompt: str | list[BaseMessage], schema: type[T],
                      fallback: Callable[[str], T], config: RunnableConfig | None = None) -> Structured[T]:
    """Async structured()."""
    reply = await llm.ainvoke(_as_messages(prompt), config=config)
    return parse_structured(str(reply.content), schema, fallback)


@dataclass
class Usage:
    """LLM calls and tokens."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class UsageTracker(BaseCallbackHandler):
    """Counts calls and tokens; provider figures when reported, else tiktoken counts."""

    def __init__(self) -> None:
        self.usage = Usage()
        self._lock = threading.Lock()
        self._prompts: dict[Any, int] = {}

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], *, run_id: Any, **kwargs: Any) -> None:
        text = "\n".join(str(m.content) for batch in messages for m in batch)
        with self._lock:
            self._prompts[run_id] = count_tokens(text)

    def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
        prompt, completion = self._prompts.pop(run_id, 0), 0
        for gens in response.generations:
            for gen in gens:
                meta = getattr(getattr(gen, "message", None), "usage_metadata", None)
                if meta:
                    prompt, completion = meta.get("input_tokens", prompt), completion + meta.get("output_tokens", 0)
                else:
                    completion += count_tokens(gen.text or "")
        with self._lock:
            self.usage.calls += 1
            self.usage.prompt_tokens += prompt
            self.usage.completion_tokens += completion
