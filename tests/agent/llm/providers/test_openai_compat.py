"""openai:<model> against a real loopback HTTP server faking /v1/chat/completions (no network)."""
from __future__ import annotations

import asyncio
import socket
import time

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from frames_agent.agent.llm import UsageTracker, resolve_model, structured
from frames_agent.agent.llm import errors as E
from tests.agent.llm.fake_openai import HTML, FakeOpenAI, completion, sse_chunks

SECRET = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def fake():
    server = FakeOpenAI()
    yield server
    server.close()


@pytest.fixture
def env(monkeypatch):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return monkeypatch


FAST_RETRY = {"retry-after-ms": "1"}  # the client honours it, so retry tests do not sleep for seconds


class Queries(BaseModel):
    queries: list[str] = Field(min_length=1, max_length=3)


def test_plain_reply_with_provider_usage(fake, env):
    fake.add(200, completion("Paris", prompt_tokens=12, completion_tokens=3))
    llm = resolve_model("openai:fake-model", base_url=fake.url)
    tracker = UsageTracker()
    reply = llm.invoke("capital of France?", config={"callbacks": [tracker]})
    assert reply.content == "Paris"
    assert (tracker.usage.calls, tracker.usage.prompt_tokens, tracker.usage.completion_tokens) == (1, 12, 3)
    assert tracker.usage.counted_calls == 0
    sent = fake.requests[0]
    assert sent["model"] == "fake-model" and sent["messages"][-1]["content"] == "capital of France?"
    assert fake.headers[0]["authorization"] == f"Bearer {SECRET}"


def test_base_url_from_environment_and_dummy_key(fake, env):
    env.delenv("OPENAI_API_KEY")
    env.setenv("OPENAI_BASE_URL", fake.url)
    fake.add(200, completion("hi"))
    assert resolve_model("openai:m").invoke("x").content == "hi"
    assert fake.headers[0]["authorization"].startswith("Bearer ")


def test_streamed_reply(fake, env):
    fake.add(200, sse_chunks(["Pa", "ri", "s"]))
    llm = resolve_model("openai:m", base_url=fake.url)
    chunks = list(llm.stream("capital?"))
    assert "".join(str(c.content) for c in chunks) == "Paris"
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    assert total.usage_metadata["output_tokens"] == 3


def test_structured_sends_the_json_schema(fake, env):
    fake.add(200, completion('{"queries": ["eiffel tower height", "eiffel tower"]}'))
    llm = resolve_model("openai:m", base_url=fake.url)
    result = structured(llm, "queries please", Queries, lambda raw: Queries(queries=["fallback"]))
    assert result.value.queries == ["eiffel tower height", "eiffel tower"] and not result.repaired
    fmt = fake.requests[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["queries"]["maxItems"] == 3


def test_local_servers_get_max_tokens_not_max_completion_tokens(fake, env):
    fake.add(200, completion("ok"))
    resolve_model("openai:m", base_url=fake.url, max_tokens=17).invoke("x")
    assert fake.requests[0]["max_tokens"] == 17 and "max_completion_tokens" not in fake.requests[0]


def test_rate_limit_is_retried_then_succeeds(fake, env):
    fake.add(429, {"error": {"message": "slow down"}}, FAST_RETRY).add(503, {"error": {"message": "busy"}}, FAST_RETRY)
    fake.add(200, completion("done"))
    assert resolve_model("openai:m", base_url=fake.url, max_retries=3).invoke("x").content == "done"
    assert len(fake.requests) == 3


def test_retries_are_bounded_and_end_in_one_line_errors(fake, env):
    for _ in range(3):
        fake.add(500, {"error": {"message": "boom"}}, FAST_RETRY)
    with pytest.raises(E.ServerError) as err:
        resolve_model("openai:m", base_url=fake.url, max_retries=2).invoke("x")
    assert len(fake.requests) == 3 and "\n" not in str(err.value)
    for _ in range(2):
        fake.add(429, {"error": {"message": "quota"}}, FAST_RETRY)
    with pytest.raises(E.QuotaError):
        resolve_model("openai:m", base_url=fake.url, max_retries=1).invoke("x")


def test_timeout_is_per_call_and_bounded(fake, env):
    fake.add(200, completion("late"), delay=1.0).add(200, completion("late"), delay=1.0)
    started = time.monotonic()
    with pytest.raises(E.LLMTimeoutError):
        resolve_model("openai:m", base_url=fake.url, timeout=0.2, max_retries=1).invoke("x")
    assert time.monotonic() - started < 10


def test_bad_key_is_reported_without_the_key(fake, env, capsys):
    fake.add(401, {"error": {"message": f"Incorrect API key provided: {SECRET}", "code": "invalid_api_key"}})
    with pytest.raises(E.AuthError) as err:
        resolve_model("openai:m", base_url=fake.url).invoke("x")
    assert SECRET not in str(err.value) and "OPENAI_API_KEY" in str(err.value)
    assert SECRET not in capsys.readouterr().err


def test_unknown_model_and_unreachable_server(fake, env):
    fake.add(404, {"error": {"message": "model 'nope' not found"}})
    with pytest.raises(E.ModelNotFoundError, match="nope"):
        resolve_model("openai:nope", base_url=fake.url).invoke("x")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with pytest.raises(E.UnreachableError, match=f"127.0.0.1:{closed}"):
        resolve_model("openai:m", base_url=f"http://127.0.0.1:{closed}/v1", max_retries=0).invoke("x")


def test_missing_key_names_the_variable(env):
    env.delenv("OPENAI_API_KEY")
    with pytest.raises(E.MissingKeyError, match="OPENAI_API_KEY"):
        resolve_model("openai:gpt-4o-mini")


def test_async_calls(fake, env):
    fake.add(200, completion('{"queries": ["a"]}')).add(200, completion("b"))
    llm = resolve_model("openai:m", base_url=fake.url)

    async def run():
        return await llm.ainvoke([HumanMessage(content="x")]), await llm.ainvoke("y")

    first, second = asyncio.run(run())
    assert first.content == '{"queries": ["a"]}' and second.content == "b"


@pytest.mark.parametrize("content_type_json", [False, True])
def test_an_html_page_with_status_200_is_an_llm_error(fake, env, content_type_json):
    fake.add(200, HTML, {"Content-Type": "application/json"} if content_type_json else {})
    with pytest.raises(E.LLMError, match="not JSON") as err:
        resolve_model("openai:m", base_url=fake.url, max_retries=0).invoke("x")
    assert "\n" not in str(err.value)


def test_cache_entries_are_per_server(fake, env, tmp_path):
    other = FakeOpenAI()
    try:
        fake.add(200, completion("from A"))
        other.add(200, completion("from B"))
        cache = tmp_path / "calls.sqlite"
        first = resolve_model("openai:same-name", base_url=fake.url, cache=cache).invoke("q")
        second = resolve_model("openai:same-name", base_url=other.url, cache=cache).invoke("q")
        assert (first.content, second.content) == ("from A", "from B")
        assert len(other.requests) == 1
    finally:
        other.close()


def test_cache_key_masks_credentials_in_the_base_url(env):
    llm = resolve_model("openai:m", base_url="http://user:sk-hidden-123456@host:9/v1?api_key=abc123")
    key = llm._get_llm_string()
    assert "sk-hidden" not in key and "abc123" not in key and "host:9" in key


def test_content_blocks_with_null_or_number_text(fake, env):
    body = completion("")
    body["choices"][0]["message"]["content"] = [{"type": "text", "text": "It is "}, {"text": None}, {"text": 42}]
    fake.add(200, body)
    assert resolve_model("openai:m", base_url=fake.url).invoke("x").content == "It is 42"


def test_credentials_in_the_base_url_never_reach_an_error(env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    url = f"http://alice:sk-url-secret-987654@127.0.0.1:{closed}/v1?api_key=AIzaQUERYSECRET"
    with pytest.raises(E.UnreachableError) as err:
        resolve_model("openai:m", base_url=url, max_retries=0).invoke("x")
    message = str(err.value)
    assert "sk-url-secret" not in message and "QUERYSECRET" not in message and "alice" not in message
    assert f"***@127.0.0.1:{closed}/v1" in message
    with pytest.raises(E.ModelSpecError) as err:
        resolve_model("openai:m", base_url="ftp://bob:hunter2-pass@host/v1")
    assert "hunter2" not in str(err.value)


def test_each_asyncio_run_gets_a_working_client():
    """A kept-alive connection belongs to the loop that opened it; a second asyncio.run once failed with
    "Event loop is closed" (as `compare` and a user's app calling asyncio.run(agent.ainvoke(q)) twice did)."""
    server = FakeOpenAI(keep_alive=True)
    try:
        server.add(200, completion("first")).add(200, completion("second")).add(200, completion("third"))
        llm = resolve_model("openai:m", base_url=server.url, max_retries=0)
        replies = [asyncio.run(llm.ainvoke(q)).content for q in ("a", "b")]
        replies.append(llm.invoke("c").content)
        assert replies == ["first", "second", "third"]
    finally:
        server.close()


class Joke(BaseModel):
    setup: str
    punchline: str


def test_with_structured_output_of_a_pydantic_model_returns_the_models_object(env):
    model_server = FakeOpenAI(model=True)
    try:
        llm = resolve_model("openai:m", base_url=model_server.url)
        joke = llm.with_structured_output(Joke).invoke("Tell me a joke about 'cats'.")
        assert joke == Joke(setup="cats", punchline="cats")
        sent = model_server.requests[-1]["response_format"]
        assert sent["type"] == "json_schema" and set(sent["json_schema"]["schema"]["properties"]) == {"setup", "punchline"}
        assert asyncio.run(llm.with_structured_output(Joke).ainvoke("A joke about 'dogs'.")).setup == "dogs"
    finally:
        model_server.close()


def test_serialized_model_loads_as_langchains_chat_openai(env):
    from langchain_core.load import dumpd, load
    from langchain_openai import ChatOpenAI

    llm = resolve_model("openai:m", base_url="http://127.0.0.1:9/v1")
    loaded = load(dumpd(llm), valid_namespaces=["langchain"], allowed_objects="all", secrets_from_env=True)
    assert type(loaded) is ChatOpenAI and loaded.dict() == llm.dict()
    assert loaded.openai_api_base == "http://127.0.0.1:9/v1" and loaded.model_name == "m"
