"""Deadlines: a model that never answers costs a question its deadline, never the caller's whole run."""
from __future__ import annotations

import asyncio
import time

import pytest

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.errors import QuestionTimeout
from frames_agent.agent.llm.testing import ScriptedLLM


def _hung_agent(retriever, seconds: float = 0.5) -> FramesAgent:
    llm = ScriptedLLM(responder=lambda messages: '{"queries": ["Brennick"]}', delay=30.0)
    return FramesAgent(llm, retriever, config=AgentConfig(k=1, n=1, question_timeout=seconds))


def test_invoke_past_its_deadline_raises_question_timeout(tiny_retriever):
    started = time.monotonic()
    with pytest.raises(QuestionTimeout, match="question deadline of 0.5 s"):
        _hung_agent(tiny_retriever).invoke("Who is the mayor of Brennick?")
    assert time.monotonic() - started < 5


def test_ainvoke_and_answer_from_cancel_at_the_deadline(tiny_retriever):
    agent = _hung_agent(tiny_retriever)

    async def both():
        results = await asyncio.gather(agent.ainvoke("q one?"), agent.aanswer_from("q two?", []),
                                       return_exceptions=True)
        return results

    started = time.monotonic()
    results = asyncio.run(both())
    assert all(isinstance(r, QuestionTimeout) for r in results) and time.monotonic() - started < 5


def test_astream_stops_at_the_deadline(tiny_retriever):
    agent = _hung_agent(tiny_retriever)

    async def consume():
        return [event async for event in agent.astream("q?")]

    with pytest.raises(QuestionTimeout):
        asyncio.run(consume())


def test_a_question_within_its_deadline_is_answered(tiny_retriever):
    llm = ScriptedLLM(['{"queries": ["Brennick mayor"]}', "Answer: Tomas Ferrante"])
    agent = FramesAgent(llm, tiny_retriever, config=AgentConfig(k=1, n=1, question_timeout=60))
    assert agent.invoke("Who is the mayor of Brennick?").answer == "Tomas Ferrante"


def test_defaults_differ_for_local_and_hosted_models():
    local, hosted = AgentConfig.for_model("local:qwen2.5-coder-1.5b"), AgentConfig.for_model("openai:gpt-4o-mini")
    assert local.timeout > hosted.timeout and local.question_timeout > hosted.question_timeout
    assert AgentConfig.for_model("openai:m", timeout=5).timeout == 5
    with pytest.raises(ValueError):
        AgentConfig(question_timeout=0)


def test_the_per_request_timeout_reaches_a_model_given_by_spec(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    agent = FramesAgent("openai:m", None, config=AgentConfig(timeout=7.5))
    assert agent.llm.request_timeout == 7.5


def test_stream_waiting_on_a_hung_model_ends_at_the_deadline(tiny_retriever):
    started = time.monotonic()
    with pytest.raises(QuestionTimeout):
        list(_hung_agent(tiny_retriever).stream("q?"))
    assert time.monotonic() - started < 5
