"""Bounded retries with exponential backoff, for clients that do not retry on their own."""
from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable, TypeVar

from agent.llm.errors import TransientLLMError

R = TypeVar("R")


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


def call_with_retries(fn: Callable[[], R], policy: RetryPolicy,
                      classify: Callable[[Exception], Exception]) -> R:
    """fn(), retried on transient failures; classify maps a raw exception to our error type."""
    for attempt in range(policy.max_retries + 1):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - classify decides what is ours to handle
            mapped = classify(exc)
            if not isinstance(mapped, TransientLLMError) or attempt == policy.max_retries:
                raise mapped from exc
        policy.sleep(policy.delay(attempt))
    raise AssertionError("unreachable")


async def acall_with_retries(fn: Callable[[], Awaitable[R]], policy: RetryPolicy,
                             classify: Callable[[Exception], Exception]) -> R:
    """Async call_with_retries (sleeps without blocking the loop)."""
    for attempt in range(policy.max_retries + 1):
        try:
            return await fn()
        except Exception as exc:  # noqa: BLE001
            mapped = classify(exc)
            if not isinstance(mapped, TransientLLMError) or attempt == policy.max_retries:
                raise mapped from exc
        delay = policy.delay(attempt)
        if policy.sleep is time.sleep:
            await asyncio.sleep(delay)
        else:
            policy.sleep(delay)
    raise AssertionError("unreachable")
