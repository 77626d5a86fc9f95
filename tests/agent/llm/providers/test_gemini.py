"""gemini:<model> against a fake of the SDK's transport client (google.ai.generativelanguage), no network."""
from __future__ import annotations

import warnings

import pytest
from pydantic import BaseModel, Field

from agent.llm import UsageTracker, resolve_model, structured
from agent.llm import errors as E

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import google.api_core.exceptions as gexc
    from google.generativeai import protos

    from agent.llm.providers import gemini

SECRET = "AIzaTEST-SECRET-KEY-0123456789"


def response(text: str = "", *, finish: str = "STOP", prompt_tokens: int = 9, out_tokens: int = 4,
             blocked: str | None = None) -> protos.GenerateContentResponse:
    """A real GenerateContentResponse proto, as the service would send."""
    if blocked:
        return protos.GenerateContentResponse(prompt_feedback={"block_reason": blocked})
    parts = [protos.Part(text=text)] if text else []
    return protos.GenerateContentResponse(
        candidates=[protos.Candidate(content=protos.Content(parts=parts, role="model"), finish_reason=finish)],
        usage_metadata={"prompt_token_count": prompt_tokens, "candidates_token_count": out_tokens,
                        "total_token_count": prompt_tokens + out_tokens})


class FakeClient:
    """Stands in for glm.GenerativeServiceClient: plays scripted replies, records requests."""

    instances: list["FakeClient"] = []
    script: list = []

    def __init__(self, client_options=None, transport=None) -> None:
        self.client_options, self.transport, self.requests = client_options, transport, []
        FakeClient.instances.append(self)

    def _next(self, request, kwargs):
        self.requests.append((request, kwargs))
        item = FakeClient.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def generate_content(self, request, **kwargs):
        return self._next(request, kwargs)

    def stream_generate_content(self, request, **kwargs):
        return iter(self._next(request, kwargs))


@pytest.fixture
def fake(monkeypatch):
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    monkeypatch.setattr(gemini.glm, "GenerativeServiceClient", FakeClient)
    FakeClient.instances, FakeClient.script = [], []
    return FakeClient


def llm(**kwargs):
    model = resolve_model("gemini:gemini-1.5-flash", **kwargs)
    model.retry_base_delay = 0.0  # no real sleeping between retries in tests
    return model


class Queries(BaseModel):
    queries: list[str] = Field(min_length=1, max_length=3, description="search queries")
    note: str | None = None


def test_plain_reply_usage_and_own_client_key(fake):
    fake.script = [response("Paris", prompt_tokens=9, out_tokens=2)]
    tracker = UsageTracker()
    model = llm()
    reply = model.invoke([("system", "be brief"), ("human", "capital of France?")], config={"callbacks": [tracker]})
    assert reply.content == "Paris" and reply.usage_metadata["input_tokens"] == 9
    assert (tracker.usage.prompt_tokens, tracker.usage.completion_tokens) == (9, 2)
    client = fake.instances[0]
    assert client.client_options == {"api_key": SECRET} and client.transport == "rest"
    request, kwargs = client.requests[0]
    assert request.system_instruction.parts[0].text == "be brief"
    assert [c.role for c in request.contents] == ["user"] and kwargs["timeout"] == 120.0
    assert SECRET not in repr(model)


def test_google_api_key_is_the_second_choice(fake, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaOTHER-KEY-123456")
    fake.script = [response("ok")]
    llm().invoke("x")
    assert fake.instances[0].client_options == {"api_key": "AIzaOTHER-KEY-123456"}


def test_streamed_reply(fake):
    fake.script = [[response("Pa", out_tokens=1), response("ris", out_tokens=2)]]
    chunks = list(llm().stream("capital?"))
    assert "".join(str(c.content) for c in chunks) == "Paris"
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    assert total.usage_metadata["output_tokens"] == 2  # the running total, not a sum of totals


def test_structured_uses_response_schema(fake):
    fake.script = [response('{"queries": ["a", "b"]}')]
    result = structured(llm(), "queries?", Queries, lambda raw: Queries(queries=["fb"]))
    assert result.value.queries == ["a", "b"] and not result.fallback
    config = fake.instances[0].requests[0][0].generation_config
    assert config.response_mime_type == "application/json"
    schema = config.response_schema
    assert schema.properties["queries"].max_items == 3 and schema.properties["queries"].items.type_.name == "STRING"
    assert schema.properties["note"].nullable


def test_quota_is_retried_then_succeeds(fake):
    fake.script = [gexc.ResourceExhausted("quota"), gexc.ServiceUnavailable("busy"), response("ok")]
    assert llm().invoke("x").content == "ok"
    assert len(fake.instances[0].requests) == 3


def test_quota_retries_are_bounded(fake):
    fake.script = [gexc.TooManyRequests("slow down")] * 3
    with pytest.raises(E.QuotaError) as err:
        llm(max_retries=2).invoke("x")
    assert len(fake.instances[0].requests) == 3 and "\n" not in str(err.value)


def test_bad_key_never_shows_the_key(fake, capsys):
    fake.script = [gexc.InvalidArgument(f"API key not valid. Please pass a valid API key. {SECRET}")]
    with pytest.raises(E.AuthError) as err:
        llm().invoke("x")
    assert SECRET not in str(err.value) and "GEMINI_API_KEY" in str(err.value)
    assert len(fake.instances[0].requests) == 1  # not retried
    assert SECRET not in capsys.readouterr().err


def test_unknown_model(fake):
    fake.script = [gexc.NotFound("models/nope is not found")]
    with pytest.raises(E.ModelNotFoundError):
        llm().invoke("x")


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
        resolve_model("gemini:gemini-1.5-pro")


def test_schema_translation_inlines_refs_and_nullables():
    class Inner(BaseModel):
        name: str

    class Outer(BaseModel):
        items: list[Inner] = Field(max_length=2)
        kind: str | None = None

    out = gemini.json_schema_to_gemini(Outer.model_json_schema())
    assert out["properties"]["items"]["items"]["properties"]["name"] == {"type_": "STRING"}
    assert out["properties"]["kind"] == {"type_": "STRING", "nullable": True}
    protos.Schema(out)  # the SDK accepts it
