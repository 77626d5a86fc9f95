"""structured(): broken replies from small models are repaired or replaced, never raised."""
from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel, Field

from frames_agent.agent.llm import (
    UsageTracker,
    astructured,
    message_text,
    parse_structured,
    response_format_for,
    structured,
)
from frames_agent.agent.llm.errors import EmptyReplyError, QuotaError
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.queries import PlanReply


class Queries(BaseModel):
    queries: list[str] = Field(min_length=1, max_length=3)


class Answer(BaseModel):
    answer: str
    confident: bool = False


def fallback(raw: str) -> Queries:
    return Queries(queries=["the question itself"])


REPAIRED = [
    ('```json\n{"queries": ["a", "b"]}\n```', ["a", "b"], "extracted JSON"),
    ('{"queries": ["a", "b",],}', ["a", "b"], "trailing commas"),
    ('{"queries": ["a", "b", "c', ["a", "b", "c"], "closed truncated"),
    ('{"queries": ["a", "b"], "extra": {"de', ["a", "b"], "closed truncated"),
    ("{'queries': ['it\\'s', \"Einstein's\"]}", ["it's", "Einstein's"], "single quotes"),
    ('["x", "y"]', ["x", "y"], "bare list"),
    ('{"queries": ["1", "2", "3", "4", "5"]}', ["1", "2", "3"], "truncated 'queries' to 3"),
    ('{"queries": []}', ["the question itself"], "padded 'queries'"),
    ('Sure! Here you go: {"queries": ["a"]} Hope it helps.', ["a"], "ignored text after"),
    ("Queries:\n1. first query\n2. second query", ["first query", "second query"], "plain-text lines"),
]


@pytest.mark.parametrize("raw,expected,note", REPAIRED)
def test_broken_replies_are_repaired_and_recorded(raw, expected, note):
    result = parse_structured(raw, Queries, fallback)
    assert result.value.queries == expected
    assert result.repaired and not result.fallback and result.raw == raw
    assert any(note in n for n in result.notes), result.notes


@pytest.mark.parametrize("raw", ["", "   ", "I cannot help with that.", "{}", '{"queries": "not a list"}', "[[["])
def test_hopeless_replies_fall_back(raw):
    result = parse_structured(raw, Queries, fallback)
    assert result.fallback and not result.repaired
    assert result.value.queries == ["the question itself"] and result.error


def test_clean_json_is_not_marked_repaired():
    result = parse_structured('{"answer": "Paris", "confident": true}', Answer, lambda raw: Answer(answer=raw))
    assert result.value == Answer(answer="Paris", confident=True)
    assert not result.repaired and not result.fallback and result.notes == []


def test_truncated_object_keeps_what_arrived():
    result = parse_structured('{"answer": "Paris, the capital', Answer, lambda raw: Answer(answer="?"))
    assert result.value.answer == "Paris, the capital" and result.repaired
    assert "closed truncated JSON" in result.notes


def test_schema_goes_to_models_that_take_it():
    plain = ScriptedLLM(['{"queries": ["a"]}'])
    structured(plain, "q", Queries, fallback)
    assert "response_format" not in plain.call_kwargs[0]
    schema_aware = ScriptedLLM(['{"queries": ["a"]}'], supports_json_schema=True)
    structured(schema_aware, "q", Queries, fallback)
    assert schema_aware.call_kwargs[0]["response_format"] == response_format_for(Queries)
    forced = ScriptedLLM(['{"queries": ["a"]}'], supports_json_schema=True)
    structured(forced, "q", Queries, fallback, max_tokens=50)
    assert forced.call_kwargs[0]["max_tokens"] == 50 and "response_format" in forced.call_kwargs[0]


def test_empty_reply_errors_fall_back_but_provider_failures_raise():
    llm = ScriptedLLM([EmptyReplyError("gemini: empty candidate"), QuotaError("gemini: quota")])
    result = structured(llm, "q", Queries, fallback)
    assert result.fallback and "empty candidate" in result.error
    with pytest.raises(QuotaError):
        structured(llm, "q", Queries, fallback)


def test_astructured_matches_structured():
    llm = ScriptedLLM(['{"queries": ["a", "b", "c", "d"]}'])
    result = asyncio.run(astructured(llm, "q", Queries, fallback))
    assert result.value.queries == ["a", "b", "c"] and result.repaired


def test_usage_tracker_counts_per_run_with_tiktoken_when_no_provider_figures():
    llm = ScriptedLLM(["one two three", "four"])
    first, second = UsageTracker(), UsageTracker()
    llm.invoke("hello world", config={"callbacks": [first]})
    llm.invoke("hi", config={"callbacks": [second]})
    assert (first.usage.calls, second.usage.calls) == (1, 1)
    assert first.usage.prompt_tokens == 2 and first.usage.completion_tokens == 3
    assert second.usage.completion_tokens == 1 and first.usage.counted_calls == 1


def test_usage_tracker_forgets_failed_calls():
    tracker = UsageTracker()
    with pytest.raises(QuotaError):
        ScriptedLLM([QuotaError("x")]).invoke("hello", config={"callbacks": [tracker]})
    assert tracker.usage.calls == 0 and not tracker._prompts


@pytest.mark.parametrize("content, text", [
    ([{"type": "text", "text": None}], ""),
    ([{"text": "a"}, {"text": 7}, {"type": "image_url", "image_url": {"url": "x"}}, "b"], "a7b"),
    (None, ""),
    ("plain", "plain"),
])
def test_message_text_of_odd_content_blocks(content, text):
    from frames_agent.agent.llm.calls import message_text

    assert message_text(content) == text


def test_a_model_reply_is_valid_text_where_it_is_read():
    """A lone surrogate (a JSON "\\ud800" escape) becomes U+FFFD, in plain text and in JSON the reply holds."""
    assert message_text("Answer: \ud800") == "Answer: \ufffd"
    assert message_text([{"type": "text", "text": "\udc00"}]) == "\ufffd"
    plan = parse_structured('{"thought": "", "queries": ["mayor \\ud800"]}', PlanReply, lambda raw: PlanReply())
    assert plan.value.queries == ["mayor \ufffd"]
