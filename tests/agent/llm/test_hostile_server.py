"""openai:<model> against a hostile server: each unusable reply is one typed one-line error, and retries never
outlive the question's deadline."""
from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frames_agent.agent.deadline import call_within
from frames_agent.agent.errors import QuestionTimeout
from frames_agent.agent.llm import errors as E
from frames_agent.agent.llm import resolve_model
from tests.agent.llm.fake_openai import HOSTILE, FakeOpenAI, Raw, completion, refused_url


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = FakeOpenAI()
    yield server
    server.close()


@pytest.mark.parametrize("case, error, words", [
    ("empty choices", E.EmptyChoicesError, "no choices"), ("no message", E.MissingMessageError, "no message"),
    ("null content", E.NullContentError, "no text"), ("refusal", E.RefusalError, "refused: I cannot help"),
    ("length", E.ReplyCutOffError, "token limit"), ("truncated json", E.MalformedReplyError, "not JSON"),
    ("html", E.MalformedReplyError, "not JSON"), ("500", E.ServerError, "server error"),
])
def test_each_unusable_reply_is_one_typed_error(fake, case, error, words):
    fake.always(*HOSTILE[case])
    llm = resolve_model("openai:m", base_url=fake.url, max_retries=1)
    for call in (llm.invoke, lambda text: asyncio.run(llm.ainvoke(text))):
        with pytest.raises(error, match=words) as raised:
            call("x")
        assert "\n" not in str(raised.value) and str(raised.value).startswith("openai:m: ")
    # Only a server failure is worth asking again; a reply that came back unusable is not.
    assert len(fake.requests) == (4 if case == "500" else 2)


def test_an_error_body_with_status_200_and_a_refused_connection(fake):
    fake.add(200, {"error": {"message": "model overloaded"}})
    with pytest.raises(E.BadReplyError, match="model overloaded"):
        resolve_model("openai:m", base_url=fake.url).invoke("x")
    started = time.monotonic()
    with pytest.raises(E.UnreachableError, match="cannot reach"):
        resolve_model("openai:m", base_url=refused_url(), max_retries=3).invoke("x")
    assert time.monotonic() - started < 2  # nothing listens: retrying would not change that


def test_a_stream_that_sends_nothing_is_an_error(fake):
    fake.add(200, [])
    with pytest.raises(E.EmptyChoicesError, match="streamed no reply"):
        list(resolve_model("openai:m", base_url=fake.url).stream("x"))


def test_a_reply_with_text_cut_at_the_token_limit_is_kept_for_repair(fake):
    fake.add(200, completion('{"queries": ["a", "b', finish="length"))
    reply = resolve_model("openai:m", base_url=fake.url).invoke("x")
    assert reply.content == '{"queries": ["a", "b' and reply.response_metadata["finish_reason"] == "length"


def _join_abandoned() -> None:
    """Wait for the workers call_within left behind at its deadline (a join, not a sleep)."""
    for thread in [t for t in threading.enumerate() if t.name == "frames-question"]:
        thread.join(30)


@pytest.mark.slow  # waits out a timeout against a live server
def test_a_hanging_server_costs_the_deadline_and_no_retry_after_it(fake):
    fake.always(*HOSTILE["hang"])
    llm = resolve_model("openai:m", base_url=fake.url, timeout=30, max_retries=3)
    with pytest.raises(QuestionTimeout):
        call_within(lambda: llm.invoke("x"), 1.0)
    # The abandoned request was cut at the deadline: its thread ends (long before the 30 s timeout), nothing is
    # sent after it.
    started = time.monotonic()
    _join_abandoned()
    assert time.monotonic() - started < 25 and len(fake.requests) == 1


def test_retries_inherit_the_deadline_and_never_start_after_it(fake):
    # Requests at 0 s and 0.7 s; a third would begin at 1.4 s. The 0.3 s margin absorbs a loaded machine's drift.
    fake.always(500, {"error": {"message": "boom"}}, {"retry-after-ms": "500"}, delay=0.2)
    llm = resolve_model("openai:m", base_url=fake.url, timeout=30, max_retries=50)
    started = time.monotonic()
    with pytest.raises((QuestionTimeout, E.ServerError)):
        call_within(lambda: llm.invoke("x"), 1.0)
    _join_abandoned()
    assert len(fake.requests) >= 2 and all(t < started + 1.0 for t in fake.times)


def test_retry_after_is_honoured_up_to_a_minute(fake):
    fake.add(429, {"error": {"message": "slow down"}}, {"retry-after": "1"}).add(200, completion("done"))
    assert resolve_model("openai:m", base_url=fake.url).invoke("x").content == "done"
    assert fake.times[1] - fake.times[0] >= 1.0


@pytest.mark.parametrize("case", ["deep", "deep object", "deep stream"])
def test_json_nested_100000_deep_is_one_bad_reply_error_not_a_recursion_error(fake, case):
    fake.always(*HOSTILE[case])
    llm = resolve_model("openai:m", base_url=fake.url, max_retries=2)
    for call in (llm.invoke, lambda text: asyncio.run(llm.ainvoke(text)), lambda text: list(llm.stream(text))):
        with pytest.raises(E.MalformedReplyError, match="nested deeper than 64 levels") as raised:
            call("x")
        assert "\n" not in str(raised.value)
    assert len(fake.requests) == 3  # a bad reply is not asked for again


def test_a_body_over_the_size_limit_is_refused_while_it_is_read(fake, monkeypatch):
    from frames_agent.core import bounded

    monkeypatch.setattr(bounded, "MAX_JSON_BYTES", 4096)
    fake.always(200, completion("x" * 10_000))
    with pytest.raises(E.MalformedReplyError, match="over the limit of 4,096 bytes"):
        resolve_model("openai:m", base_url=fake.url).invoke("x")


@pytest.mark.slow  # waits out a timeout against a live server
def test_a_server_that_drips_one_byte_a_second_is_cut_at_the_request_timeout(fake):
    fake.always(*HOSTILE["drip"])
    llm = resolve_model("openai:m", base_url=fake.url, timeout=2, max_retries=0)
    for call in (llm.invoke, lambda text: asyncio.run(llm.ainvoke(text))):
        # A byte every second never lets a 2 s read timeout fire: only a total deadline ends the request.
        with pytest.raises(E.LLMTimeoutError, match="within the timeout"):
            call("x")


def test_tool_call_arguments_that_are_not_json_do_not_blame_the_url(fake):
    from frames_agent.agent.llm.providers.openai_compat import map_openai_error

    fake.always(*HOSTILE["bad tool arguments"])
    message = resolve_model("openai:m", base_url=fake.url).invoke("x")  # kept: the agent falls back on it
    assert message.invalid_tool_calls and not message.tool_calls
    error = map_openai_error(ValueError("Function Reply arguments:\n{not json"), "openai:m", fake.url)
    assert isinstance(error, E.MalformedReplyError) and "URL" not in str(error) and "reply could not be read" in str(error)


def test_a_usage_field_that_is_not_a_number_keeps_the_call_count(fake, capsys):
    from frames_agent.agent.llm.timing import UsageTracker

    fake.always(*HOSTILE["text usage"])
    tracker = UsageTracker()
    llm = resolve_model("openai:m", base_url=fake.url)
    for _ in range(2):
        assert llm.invoke("x", config={"callbacks": [tracker]}).content == "fine"
    assert tracker.usage.calls == 2 and tracker.usage.completion_tokens > 0
    assert "TypeError" not in capsys.readouterr().err


_BODY_PIECES = [b"[", b"]", b"{", b"}", b'"', b"\\", b",", b":", b"null", b'"choices"', b'"message"', b'"content"',
                b'"usage"', b'"tool_calls"', b'"arguments"', b"1e999", b"-0", b"\xff", b"data: ", b"\n\n"]
bodies = st.one_of(
    st.binary(max_size=500),
    st.lists(st.tuples(st.sampled_from(_BODY_PIECES), st.integers(1, 200)), max_size=12).map(
        lambda parts: b"".join(piece * times for piece, times in parts)),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                     st.sampled_from(["choices", "message", "content", "usage", "tool_calls", "error", "index",
                                      "finish_reason", "prompt_tokens", "function", "arguments", "role"]),
                     inner, max_size=4), max_leaves=25).map(lambda value: json.dumps(value).encode()))


@pytest.fixture(scope="module")
def module_fake():
    server = FakeOpenAI()
    yield server
    server.close()


@settings(max_examples=40, deadline=None, database=None, derandomize=True)
@given(bodies, st.sampled_from(["application/json", "text/event-stream", "text/html"]))
def test_any_reply_body_is_a_reply_or_one_typed_error(module_fake, body, content_type):
    server = module_fake
    server.always(200, Raw(body, content_type))
    llm = resolve_model("openai:m", base_url=server.url, max_retries=0, timeout=10)
    for call in (llm.invoke, lambda text: list(llm.stream(text))):
        try:
            call("x")
        except E.LLMError as exc:
            assert str(exc) and "\n" not in str(exc)



def test_a_compressed_reply_is_decoded_within_the_size_bound(fake):
    import gzip
    import zlib

    fake.add(200, Raw(gzip.compress(json.dumps(completion("unzipped")).encode())), {"Content-Encoding": "gzip"})
    fake.add(200, Raw(zlib.compress(json.dumps(completion("deflated")).encode())), {"Content-Encoding": "deflate"})
    llm = resolve_model("openai:m", base_url=fake.url, max_retries=0)
    assert llm.invoke("x").content == "unzipped" and llm.invoke("x").content == "deflated"
    assert fake.headers[0]["accept-encoding"] == "gzip, deflate"
    bomb = gzip.compress(b'{"a": "' + b"0" * 40_000_000 + b'"}', compresslevel=9)  # 40 MB in ~40 kB
    fake.add(200, Raw(bomb), {"Content-Encoding": "gzip"}).add(200, Raw(b"{}"), {"Content-Encoding": "br"})
    with pytest.raises(E.MalformedReplyError, match="over the limit of 16,777,216 bytes"):
        llm.invoke("x")
    with pytest.raises(E.MalformedReplyError, match="Content-Encoding 'br', which was not asked for"):
        llm.invoke("x")


@pytest.mark.parametrize("body, words", [(b"null", "null in JSON"), (b"[]", "a list in JSON"),
                                         (b"7", "a number in JSON")])
def test_json_that_is_no_chat_completion_is_named_and_the_url_not_blamed(fake, body, words):
    fake.always(200, Raw(body))
    with pytest.raises(E.MalformedReplyError, match=words) as err:
        resolve_model("openai:m", base_url=fake.url, max_retries=0).invoke("x")
    assert "not a chat completion" in str(err.value) and "URL" not in str(err.value)


def test_choices_that_are_no_list_say_what_they_are(fake):
    fake.always(200, {**completion("x"), "choices": {"0": {"message": {"content": "x"}}}})
    with pytest.raises(E.MalformedReplyError, match="'choices' as an object, not a list of choices"):
        resolve_model("openai:m", base_url=fake.url, max_retries=0).invoke("x")


def test_a_usage_figure_of_thousands_of_digits_is_ignored_and_the_reply_kept(fake):
    body = json.dumps(completion("fine"))[:-1] + ', "usage": {"prompt_tokens": ' + "9" * 5000 + ', "completion_tokens": 3}}'
    fake.always(200, Raw(body.encode()))
    llm = resolve_model("openai:m", base_url=fake.url, max_retries=0)
    for reply in (llm.invoke("x"), asyncio.run(llm.ainvoke("x"))):
        assert reply.content == "fine"
        assert not reply.usage_metadata or reply.usage_metadata["input_tokens"] < 10**20


@pytest.mark.parametrize("arguments, queries, fallback", [
    ('["a", "b"]', ["a", "b"], False),  # a bare list for the schema's one list field
    ("7", ["fallback"], True),
    ('{"queries": ["Brennick mayor"]', ["Brennick mayor"], False),  # cut off: repaired by the tolerant parser
])
def test_native_tool_arguments_that_are_no_json_object_reach_the_tolerant_parser(fake, arguments, queries, fallback):
    from pydantic import BaseModel

    from frames_agent.agent.llm.calls import bind_with_tools, read_tool_reply, schema_tool

    class Plan(BaseModel):
        queries: list[str]

    fake.always(200, {**completion(None), "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "plan", "arguments": arguments}}]}}]})
    tool = schema_tool("plan", "the plan", Plan.model_json_schema())
    message = bind_with_tools(resolve_model("openai:m", base_url=fake.url, max_retries=0), [tool]).invoke("x")
    reply, others = read_tool_reply(message, "plan", Plan, lambda raw: Plan(queries=["fallback"]))
    assert (reply.value.queries, reply.fallback, others) == (queries, fallback, [])
