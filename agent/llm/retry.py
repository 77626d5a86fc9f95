"""Bounded retries with exponential backoff (tenacity) that never start after the question deadline."""
from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from frames_agent.agent.deadline import expired, remaining
from frames_agent.agent.llm.errors import LLMTimeoutError, TransientLLMError

R = TypeVar("R")
# The server's own word on when to come back (Retry-After), read from the raw exception behind ours; None: no word.
RetryHint = Callable[[BaseException], "float | None"]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry transient failures."""

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 20.0
    jitter: float = 0.1
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number attempt (0-based)."""
        base = min(self.max_delay, self.base_delay * (2 ** attempt))
        return base * (1 + self.jitter * random.random())


def retry_after_seconds(headers: Any) -> float | None:
    """A server's Retry-After (or retry-after-ms) in seconds, when it is given and sensible (0-60 s)."""
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            seconds = float(headers["retry-after-ms"]) / 1000
        elif headers.get("retry-after"):
            value = headers["retry-after"]
            seconds = float(value) if value.strip().isdigit() else (
                email.utils.parsedate_to_datetime(value).timestamp() - time.time())
        else:
            return None
    except (TypeError, ValueError):
        return None
    return seconds if 0 <= seconds <= 60 else None


def request_timeout(configured: float | None, spec: str) -> float | None:
    """A request's timeout: the configured one cut to what is left of the question's deadline (None: no limit)."""
    left = remaining()
    # Nothing left: no request starts that nobody will wait for.
    if left is not None and left <= 0:
        raise timed_out(f"{spec}: no time left before the question deadline; request not sent")
    return left if configured is None else configured if left is None else min(configured, left)


def timed_out(message: str) -> Exception:
    """LLMTimeoutError(message), or the question's QuestionTimeout when its deadline is what cut the request short."""
    return expired() or LLMTimeoutError(message)


def _past_deadline(state: RetryCallState) -> bool:
    """Stop when the next attempt would begin at or after the question deadline: nobody waits for its answer."""
    left = remaining()
    return left is not None and left <= (state.upcoming_sleep or 0.0)


def _options(policy: RetryPolicy, hint: RetryHint | None) -> dict[str, Any]:
    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        hinted = hint(error) if hint and error else None
        return policy.delay(state.attempt_number - 1) if hinted is None else hinted

    # tenacity's hints allow `|` only between stop_base objects; at run time any stop callable combines.
    return {"retry": retry_if_exception_type(TransientLLMError), "wait": wait, "reraise": True,
            "stop": stop_after_attempt(policy.max_retries + 1) | _past_deadline}  # type: ignore[operator]


@contextlib.contextmanager
def mapped_errors(classify: Callable[[Exception], Exception]) -> Iterator[None]:
    """Raise our error for what the block raises, caused by it (one that classify returns unchanged is re-raised)."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - mapped or re-raised unchanged
        mapped = classify(exc)
        if mapped is exc:
            raise
        raise mapped from exc  # the raw error stays reachable (its Retry-After header)


def call_with_retries(fn: Callable[[], R], policy: RetryPolicy, classify: Callable[[Exception], Exception],
                      hint: RetryHint | None = None) -> R:
    """fn(), retried on transient failures; classify maps a raw exception to our error type."""
    def attempt() -> R:
        with mapped_errors(classify):
            return fn()

    return Retrying(sleep=policy.sleep, **_options(policy, hint))(attempt)


async def acall_with_retries(fn: Callable[[], Awaitable[R]], policy: RetryPolicy,
                             classify: Callable[[Exception], Exception], hint: RetryHint | None = None) -> R:
    """Async call_with_retries (sleeps without blocking the loop)."""
    async def attempt() -> R:
        with mapped_errors(classify):
            return await fn()

    async def sleep(seconds: float) -> None:
        if policy.sleep is time.sleep:
            await asyncio.sleep(seconds)
        else:
            policy.sleep(seconds)

    return await AsyncRetrying(sleep=sleep, **_options(policy, hint))(attempt)


class RetriedChat:
    """Mixin listed before a chat model's class: calls retried on transient errors, a stream until its first chunk."""

    def _policy(self) -> RetryPolicy:
        return RetryPolicy()

    def _classify(self, exc: Exception) -> Exception:
        return exc

    def _retry_after(self, error: BaseException) -> float | None:
        """The server's Retry-After behind error, if it gave one."""
        return None

    def _ready(self) -> None:
        """Called before each request (the local model starts its server here)."""

    def _first(self, chunk: Any) -> Any:
        """A stream's first chunk (None: the stream ended before any)."""
        return chunk

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self._ready()
        parent = super()._generate  # type: ignore[misc]
        return call_with_retries(lambda: parent(messages, stop=stop, run_manager=run_manager, **kwargs),
                                 self._policy(), self._classify, self._retry_after)

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self._ready()
        parent = super()._agenerate  # type: ignore[misc]
        return await acall_with_retries(lambda: parent(messages, stop=stop, run_manager=run_manager, **kwargs),
                                        self._policy(), self._classify, self._retry_after)

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Iterator[Any]:
        self._ready()
        parent = super()._stream  # type: ignore[misc]

        def opened() -> tuple[Iterator[Any], Any]:
            chunks = parent(messages, stop=stop, run_manager=run_manager, **kwargs)
            return chunks, next(chunks, None)

        chunks, first = call_with_retries(opened, self._policy(), self._classify, self._retry_after)
        yield self._first(first)
        with mapped_errors(self._classify):
            yield from chunks

    async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                       **kwargs: Any) -> AsyncIterator[Any]:
        self._ready()
        parent = super()._astream  # type: ignore[misc]

        async def opened() -> tuple[AsyncIterator[Any], Any]:
            chunks = parent(messages, stop=stop, run_manager=run_manager, **kwargs)
            return chunks, await anext(chunks, None)

        chunks, first = await acall_with_retries(opened, self._policy(), self._classify, self._retry_after)
        yield self._first(first)
        with mapped_errors(self._classify):
            async for chunk in chunks:
                yield chunk
