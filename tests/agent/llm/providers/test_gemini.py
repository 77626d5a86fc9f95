"""gemini:<model> over google-genai against a local HTTP server that answers the Gemini REST API's shapes."""
from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel, Field

from frames_agent.agent.llm import UsageTracker, resolve_model, structured
from frames_agent.agent.llm import errors as E
from frames_agent.agent.llm.providers import gemini

SECRET = "AIzaTEST-SECRET-KEY-0123456789"


def response(text: str = "", *, finish: str = "STOP", prompt_tokens: int = 9, out_tokens: int = 4,
             blocked: str | None = None) -> dict:
    """A generateContent reply body, as the service sends it."""
    if blocked:
        return {"promptFeedback": {"blockReason": blocked}}
    parts = [{"text": text}] if text else []
    return {"candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": finish}],
            "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": out_tokens,
                              "totalTokenCount": prompt_tokens + out_tokens}, "modelVersion": "gemini-2.5-flash"}


def failure(code: int, status: str, message: str) -> tuple[int, dict]:
    return code, {"error": {"code": code, "message": message, "status": status}}


class FakeGemini(ThreadingHTTPServer):
    """Plays a script of replies (bodies, (status, body) failures, or lists streamed as SSE); records requests."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script: list = []
        self.requests: list[dict] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        server: FakeGemini = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        server.requests.append({"path": self.path, "key": self.headers.get("x-goog-api-key"), "body": body})
        item = server.script.pop(0)
        status, payload = item if isinstance(item, tuple) else (200, item)
        if isinstance(payload, list):
            data = "".join(f"data: {json.dumps(p)}\r\n\r\n" for p in payload).encode()
            ctype = "text/event-stream"
        else:
            data, ctype = json.dumps(payload).encode(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def server():
    server = FakeGemini()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def fake(server, monkeypatch):
    server.script, server.requests = [], []
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    return server


def llm(**kwargs):
    model = resolve_model("gemini:gemini-2.5-flash", **kwargs)
    model.retry_base_delay = 0.0  # no real sleeping between retries in tests
    return model


class Queries(BaseModel):
    queries: list[str] = Field(min_length=1, max_length=3, description="search queries")
    note: str | None = None


def test_plain_reply_usage_key_and_system_instruction(fake):
    fake.script = [response("Paris", prompt_tokens=9, out_tokens=2)]
    tracker = UsageTracker()
    model = llm()
    reply = model.invoke([("system", "be brief"), ("human", "capital of France?")], config={"callbacks": [tracker]})
    assert reply.content == "Paris" and reply.usage_metadata["input_tokens"] == 9
    assert (tracker.usage.prompt_tokens, tracker.usage.completion_tokens) == (9, 2)
    [request] = fake.requests
    assert request["path"].endswith("/models/gemini-2.5-flash:generateContent") and request["key"] == SECRET
    assert request["body"]["systemInstruction"]["parts"][0]["text"] == "be brief"
    assert [c["role"] for c in request["body"]["contents"]] == ["user"]
    assert request["body"]["generationConfig"]["temperature"] == 0.0
    assert SECRET not in repr(model)


def test_async_path_is_native(fake):
    fake.script = [response("Rome")]
    assert asyncio.run(llm().ainvoke("capital of Italy?")).content == "Rome"
    assert fake.requests[0]["path"].endswith(":generateContent")


def test_google_api_key_is_the_second_choice(fake, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaOTHER-KEY-123456")
    fake.script = [response("ok")]
    llm().invoke("x")
    assert fake.requests[0]["key"] == "AIzaOTHER-KEY-123456"


def test_streamed_reply_sync_and_async(fake):
    fake.script = [[response("Pa", out_tokens=1), response("ris", out_tokens=2)]] * 2
    chunks = list(llm().stream("capital?"))
    assert "".join(str(c.content) for c in chunks) == "Paris"
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    assert total.usage_metadata["output_tokens"] == 2  # the running total, not a sum of totals
    assert "streamGenerateContent" in fake.requests[0]["path"]

    async def collect():
        return [c async for c in llm().astream("capital?")]

    assert "".join(str(c.content) for c in asyncio.run(collect())) == "Paris"


def test_structured_uses_response_schema(fake):
    fake.script = [response('{"queries": ["a", "b"]}')]
    result = structured(llm(), "queries?", Queries, lambda raw: Queries(queries=["fb"]))
    assert result.value.queries == ["a", "b"] and not result.fallback
    config = fake.requests[0]["body"]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    schema = config["responseSchema"]
    queries = schema["properties"]["queries"]  # the SDK writes proto field names; the API reads both spellings
    assert int(queries.get("maxItems", queries.get("max_items"))) == 3
    assert queries["items"]["type"] == "STRING"
    assert schema["properties"]["note"]["nullable"] is True


def test_quota_and_server_errors_are_retried_then_succeed(fake):
    fake.script = [failure(429, "RESOURCE_EXHAUSTED", "quota"), failure(503, "UNAVAILABLE", "busy"), response("ok")]
    assert llm().invoke("x").content == "ok"
    assert len(fake.requests) == 3


def test_a_stream_is_retried_until_its_first_chunk(fake):
    fake.script = [failure(503, "UNAVAILABLE", "busy"), [response("Pa", out_tokens=1), response("ris", out_tokens=2)]]
    assert "".join(str(c.content) for c in llm().stream("capital?")) == "Paris"
    assert len(fake.requests) == 2


def test_quota_retries_are_bounded(fake):
    fake.script = [failure(429, "RESOURCE_EXHAUSTED", "slow down")] * 3
    with pytest.raises(E.QuotaError) as err:
        llm(max_retries=2).invoke("x")
    assert len(fake.requests) == 3 and "\n" not in str(err.value)


def test_bad_key_never_shows_the_key(fake, capsys):
    fake.script = [failure(400, "INVALID_ARGUMENT", f"API key not valid. Please pass a valid API key. {SECRET}")]
    with pytest.raises(E.AuthError) as err:
        llm().invoke("x")
    assert SECRET not in str(err.value) and "GEMINI_API_KEY" in str(err.value)
    assert len(fake.requests) == 1  # not retried
    assert SECRET not in capsys.readouterr().err


def test_unknown_model(fake):
    fake.script = [failure(404, "NOT_FOUND", "models/nope is not found")]
    with pytest.raises(E.ModelNotFoundError, match="gemini-2.5-flash"):
        llm().invoke("x")


def test_unreachable_server_is_one_line(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    model = gemini.make_gemini_chat("gemini-2.5-flash", base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(E.UnreachableError, match="cannot reach"):
        model.invoke("x")


def test_safety_block_and_empty_candidate(fake):
    fake.script = [response(blocked="SAFETY"), response("", finish="SAFETY"), response("", finish="STOP")]
    with pytest.raises(E.SafetyBlockError, match="blocked"):
        llm().invoke("x")
    with pytest.raises(E.SafetyBlockError, match="SAFETY"):
        llm().invoke("x")
    with pytest.raises(E.EmptyReplyError, match="empty"):
        llm().invoke("x")


def test_structured_falls_back_on_a_blocked_reply(fake):
    fake.script = [response(blocked="SAFETY")]
    result = structured(llm(), "x", Queries, lambda raw: Queries(queries=["fb"]))
    assert result.fallback and result.value.queries == ["fb"] and "blocked" in result.error


def test_missing_key_names_both_variables(monkeypatch):
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(E.MissingKeyError, match="GEMINI_API_KEY.*GOOGLE_API_KEY"):
        resolve_model("gemini:gemini-2.5-pro")


def test_schema_translation_inlines_refs_and_nullables():
    from google.genai import types

    class Inner(BaseModel):
        name: str

    class Outer(BaseModel):
        items: list[Inner] = Field(max_length=2)
        kind: str | None = None

    out = gemini.json_schema_to_gemini(Outer.model_json_schema())
    assert out["properties"]["items"]["items"]["properties"]["name"] == {"type": "STRING"}
    assert out["properties"]["kind"] == {"type": "STRING", "nullable": True}
    types.Schema.model_validate(out)  # the SDK accepts it


def test_schema_translation_keeps_the_property_order():
    from google.genai import types

    from frames_agent.agent.answers import answer_schema

    out = gemini.json_schema_to_gemini(answer_schema())
    assert out["property_ordering"] == ["reasoning", "answer"]  # Gemini would write "answer" first otherwise
    assert types.Schema.model_validate(out).property_ordering == ["reasoning", "answer"]


@pytest.mark.parametrize("case, error, words", [("deep", E.MalformedReplyError, "nested deeper than 64 levels"),
                                                ("drip", E.LLMTimeoutError, "within the timeout")])
@pytest.mark.slow  # waits out a timeout against a live server
def test_a_deep_or_dripping_server_is_one_error_within_the_timeout(monkeypatch, case, error, words):
    import time

    from tests.agent.llm.fake_openai import HOSTILE, FakeOpenAI

    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    server = FakeOpenAI().always(*HOSTILE[case])
    model = gemini.make_gemini_chat("gemini-2.5-flash", base_url=server.url.removesuffix("/v1"), max_retries=0,
                                    timeout=2)
    started = time.monotonic()
    try:
        for call in (model.invoke, lambda text: asyncio.run(model.ainvoke(text))):
            with pytest.raises(error, match=words):
                call("x")
    finally:
        server.close()
    assert time.monotonic() - started < 6  # two requests, each ended at its 2 s total
