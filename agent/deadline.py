"""Deadlines on a whole question: past it the caller gets QuestionTimeout instead of waiting on a hung model."""
from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, TypeVar

from agent.errors import QuestionTimeout

T = TypeVar("T")


def _expired(seconds: float) -> QuestionTimeout:
    return QuestionTimeout(f"no answer within the question deadline of {seconds:g} s (question_timeout / "
                           "--question-timeout); the model or a search did not finish in time")


def call_within(fn: Callable[[], T], seconds: float | None) -> T:
    """fn() or QuestionTimeout after `seconds`; the abandoned call ends at its own per-request timeout."""
    if seconds is None:
        return fn()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    # A daemon thread: a sync call cannot be cancelled, but the caller must not wait for it. It runs in a copy of
    # the caller's context, so tracing and LangGraph's context variables carry over.
    worker = threading.Thread(target=contextvars.copy_context().run, args=(run,), name="frames-question", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise _expired(seconds)
    if "error" in box:
        raise box["error"]
    return box["value"]


async def await_within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """await awaitable, cancelling it (and its LLM request) after `seconds` with QuestionTimeout."""
    if seconds is None:
        return await awaitable
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError:
        raise _expired(seconds) from None


def iterate_within(events: Iterator[T], seconds: float | None) -> Iterator[T]:
    """events, read on a helper thread so that waiting for the next one ends at the deadline (QuestionTimeout)."""
    if seconds is None:
        yield from events
        return
    deadline = time.monotonic() + seconds
    channel: queue.Queue = queue.Queue()

    def pump() -> None:
        try:
            for event in events:
                channel.put(("event", event))
            channel.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            channel.put(("error", exc))

    threading.Thread(target=contextvars.copy_context().run, args=(pump,), name="frames-question-stream",
                     daemon=True).start()
    while True:
        try:
            kind, item = channel.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
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
    deadline = time.monotonic() + seconds
    iterator = events.__aiter__()
    while True:
        try:
            event = await asyncio.wait_for(iterator.__anext__(), max(0.0, deadline - time.monotonic()))
        except StopAsyncIteration:
            return
        except asyncio.TimeoutError:
            raise _expired(seconds) from None
        yield event
