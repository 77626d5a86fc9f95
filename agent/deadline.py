"""Deadlines on a whole question: past it the caller gets QuestionTimeout instead of waiting on a hung model."""
from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TypeVar

from frames_agent.agent.errors import QuestionTimeout

T = TypeVar("T")
# (monotonic end, its question_timeout): every LLM request and its retries stop there, freeing the model server.
_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar("frames_question_deadline",
                                                                                      default=None)
_SLACK = 0.05  # a request cut to the deadline may time out this much early (timer granularity)
# Threads running questions given up at their deadline (a sync call cannot be cancelled).
_ABANDONED: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def abandoned() -> bool:
    """Whether work of a question given up at its deadline is still running in this process."""
    return any(thread.is_alive() for thread in list(_ABANDONED))


def remaining() -> float | None:
    """Seconds left before the current question's deadline (never negative); None outside any deadline."""
    current = _DEADLINE.get()
    return None if current is None else max(0.0, current[0] - time.monotonic())


def expired() -> QuestionTimeout | None:
    """The current question's QuestionTimeout once its deadline has passed; None before it or outside any."""
    current = _DEADLINE.get()
    return _expired(current[1]) if current is not None and current[0] - time.monotonic() <= _SLACK else None


def _bounded(seconds: float) -> tuple[float, float]:
    """The deadline `seconds` from now, or an enclosing question's if that comes first."""
    deadline, outer = (time.monotonic() + seconds, seconds), _DEADLINE.get()
    return deadline if outer is None or deadline[0] < outer[0] else outer


def _expired(seconds: float) -> QuestionTimeout:
    return QuestionTimeout(f"no answer within the question deadline of {seconds:g} s (question_timeout / "
                           "--question-timeout); the model or a search did not finish in time")


def call_within(fn: Callable[[], T], seconds: float | None) -> T:
    """fn() or QuestionTimeout after `seconds`; the abandoned call ends at its own per-request timeout."""
    return list(iterate_within((fn() for _ in range(1)), seconds))[0]


async def await_within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """await awaitable, cancelling it (and its LLM request) after `seconds` with QuestionTimeout."""
    async def once() -> AsyncIterator[T]:
        yield await awaitable

    return [value async for value in aiterate_within(once(), seconds)][0]


def iterate_within(events: Iterator[T], seconds: float | None) -> Iterator[T]:
    """events, read on a helper thread so that waiting for the next one ends at the deadline (QuestionTimeout)."""
    if seconds is None:
        yield from events
        return
    deadline = _bounded(seconds)
    channel: queue.Queue = queue.Queue()

    def pump() -> None:
        _DEADLINE.set(deadline)
        try:
            for event in events:
                channel.put(("event", event))
            channel.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            channel.put(("error", exc))

    # A daemon thread in a copy of the caller's context: a sync call cannot be cancelled, and must not be waited for.
    pumping = threading.Thread(target=contextvars.copy_context().run, args=(pump,), name="frames-question", daemon=True)
    pumping.start()
    while True:
        try:
            kind, item = channel.get(timeout=max(0.0, deadline[0] - time.monotonic()))
        except queue.Empty:
            _ABANDONED.add(pumping)
            raise _expired(seconds) from None
        if kind == "end":
            return
        if kind == "error":
            raise item
        yield item


async def aiterate_within(events: AsyncIterator[T], seconds: float | None) -> AsyncIterator[T]:
    """Async events; waiting for the next one is cancelled at the deadline with QuestionTimeout."""
    if seconds is None:
        async for event in events:
            yield event
        return
    deadline = _bounded(seconds)
    iterator = events.__aiter__()
    while True:
        # Set only around the wait (no yield in between): the step's task copies it, the consumer never sees it.
        token = _DEADLINE.set(deadline)
        try:
            event = await asyncio.wait_for(iterator.__anext__(), max(0.0, deadline[0] - time.monotonic()))
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise _expired(seconds) from None
        finally:
            _DEADLINE.reset(token)
        yield event
