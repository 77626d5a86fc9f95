"""Bounded retries with exponential backoff (the loop every hosted model call goes through), bounded by the
question's deadline."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from frames_agent.agent.deadline import call_within
from frames_agent.agent.errors import QuestionTimeout
from frames_agent.agent.llm.errors import AuthError, QuotaError, ServerError
from frames_agent.agent.llm.providers.gemini import make_gemini_chat
from frames_agent.agent.llm.retry import RetryPolicy, acall_with_retries, call_with_retries, request_timeout, timed_out


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


def _wait_for_abandoned_questions() -> None:
    """Join the workers call_within left behind at its deadline (an event, not a sleep)."""
    for thread in [t for t in threading.enumerate() if t.name == "frames-question"]:
        thread.join(30)


def test_retries_never_start_after_the_question_deadline():
    calls: list[float] = []

    def fail():
        calls.append(time.monotonic())
        raise ServerError("500")

    # Calls at 0, 0.35 and 0.7 s; a fourth would begin at 1.05 s. The 0.3 s margin absorbs a loaded machine's drift.
    policy = RetryPolicy(max_retries=100, base_delay=0.35, max_delay=0.35, jitter=0.0)
    started = time.monotonic()
    with pytest.raises(ServerError):
        call_within(lambda: call_with_retries(fail, policy, lambda e: e), 1.0)
    _wait_for_abandoned_questions()
    assert len(calls) >= 2 and calls[-1] < started + 1.0


def test_a_request_gets_what_is_left_of_the_deadline_and_none_once_it_passed():
    assert request_timeout(30.0, "m") == 30.0 and request_timeout(None, "m") is None  # no question, no deadline
    assert 0 < call_within(lambda: request_timeout(30.0, "m"), 0.5) <= 0.5
    late: list[BaseException] = []
    passed, done = threading.Event(), threading.Event()

    def after_the_deadline():
        passed.wait(30)  # the question's deadline has passed: its caller was told
        late.append(timed_out("the request's own timeout"))
        try:
            request_timeout(30.0, "m")
        except QuestionTimeout as exc:
            late.append(exc)
        done.set()

    with pytest.raises(QuestionTimeout):
        call_within(after_the_deadline, 0.2)
    passed.set()
    assert done.wait(30)
    assert len(late) == 2 and all(isinstance(e, QuestionTimeout) for e in late)


def test_gemini_requests_are_cut_to_the_deadline():
    chat = make_gemini_chat("gemini-2.5-flash", timeout=120, env={"GEMINI_API_KEY": "AIza-test-key-0000"})
    assert chat._config(None, None, {}).http_options is None
    assert call_within(lambda: chat._config(None, None, {}), 2.0).http_options.timeout <= 2000
