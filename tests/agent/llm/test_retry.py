"""Bounded retries with exponential backoff (the loop Gemini calls go through)."""
from __future__ import annotations

import asyncio

import pytest

from agent.llm.errors import AuthError, QuotaError, ServerError
from agent.llm.retry import RetryPolicy, acall_with_retries, call_with_retries


def flaky(failures):
    calls = []

    def fn():
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return "ok"
    return fn, calls


def test_backoff_doubles_up_to_a_cap_and_stops():
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=4, base_delay=1.0, max_delay=5.0, jitter=0.0, sleep=sleeps.append)
    fn, calls = flaky([QuotaError("q")] * 10)
    with pytest.raises(QuotaError):
        call_with_retries(fn, policy, lambda e: e)
    assert len(calls) == 5 and sleeps == [1.0, 2.0, 4.0, 5.0]


def test_transient_failures_recover_and_others_fail_at_once():
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=3, sleep=sleeps.append)
    fn, calls = flaky([ServerError("500"), QuotaError("429")])
    assert call_with_retries(fn, policy, lambda e: e) == "ok" and len(calls) == 3
    fn, calls = flaky([AuthError("bad key")])
    with pytest.raises(AuthError):
        call_with_retries(fn, policy, lambda e: e)
    assert len(calls) == 1


def test_raw_exceptions_are_classified():
    policy = RetryPolicy(max_retries=1, sleep=lambda s: None)
    fn, calls = flaky([TimeoutError(), TimeoutError()])
    with pytest.raises(ServerError, match="mapped"):
        call_with_retries(fn, policy, lambda e: ServerError("mapped") if isinstance(e, TimeoutError) else e)
    assert len(calls) == 2


def test_async_retries():
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=2, jitter=0.0, sleep=sleeps.append)
    failures = [QuotaError("q")]

    async def fn():
        if failures:
            raise failures.pop()
        return "ok"

    assert asyncio.run(acall_with_retries(fn, policy, lambda e: e)) == "ok" and sleeps == [1.0]
