"""Native structured output and tool calling: a tool-calling chat model gets plans through
with_structured_output and the CRAG tools through bind_tools; models without them keep the prompt-JSON path."""
from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import AIMessage

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM, ToolScriptedLLM
from frames_agent.retrieval.crag import CRAGClient
from frames_agent.retrieval.crag.tools import crag_tools


def _call(name: str, args: dict, i: int = 0) -> dict:
    return {"name": name, "args": args, "id": f"call-{name}-{i}", "type": "tool_call"}


def _tool_names(kwargs: dict) -> list[str]:
    return [t["function"]["name"] for t in kwargs.get("tools", [])]


@pytest.fixture(scope="module")
def client(crag_server):
    with CRAGClient(crag_server, retries=0) as c:
        yield c


def test_plans_and_the_answer_go_through_with_structured_output(tiny_retriever):
    plan = AIMessage(content="", tool_calls=[_call("PlanReply", {"thought": "find the mayor", "queries": ["Brennick"]})])
    answer = AIMessage(content="", tool_calls=[_call("AnswerReply", {"reasoning": "The article names him.",
                                                                     "answer": "Tomas Ferrante"})])
    llm = ToolScriptedLLM([plan, answer])
    result = FramesAgent(llm, tiny_retriever, config=AgentConfig(k=1, n=1, n_docs=2, question_query=False)).invoke(
        "Who is the mayor of Brennick?")
    plan_kwargs, answer_kwargs = llm.call_kwargs
    assert _tool_names(plan_kwargs) == ["PlanReply"] and plan_kwargs["tool_choice"] == "any"
    assert plan_kwargs["tools"][0]["function"]["parameters"]["properties"]["queries"]["maxItems"] == 1
    assert _tool_names(answer_kwargs) == ["AnswerReply"]
    assert result.steps[0].queries == ["Brennick"] and not result.steps[0].fallback
    assert result.answer == "Tomas Ferrante" and result.final.structured and result.final.format_ok


def test_a_native_model_that_answers_in_text_is_read_from_the_text(tiny_retriever):
    llm = ToolScriptedLLM([json.dumps({"thought": "t", "queries": ["Brennick"]}),
                           "Reasoning: named.\nAnswer: Tomas Ferrante"])
    result = FramesAgent(llm, tiny_retriever, config=AgentConfig(k=1, n=1, n_docs=2, question_query=False)).invoke(
        "Who is the mayor?")
    assert result.steps[0].queries == ["Brennick"] and result.answer == "Tomas Ferrante"
    assert not result.final.format_ok  # the structured reply was unusable: the fallback parser read it


def test_the_crag_tools_are_bound_and_called_natively(client):
    step = AIMessage(content="", tool_calls=[_call("plan", {"thought": "look it up", "queries": []}),
                                             _call("finance_get_eps", {"ticker_name": "META"}, 1)])
    llm = ToolScriptedLLM([step, "Answer: 22.95"])
    agent = FramesAgent(llm, None, crag_tools(client, ["finance"]), AgentConfig(k=1, n=1, structured_answer=False))
    result = agent.invoke("What is Meta's EPS?")
    kwargs = llm.call_kwargs[0]
    assert _tool_names(kwargs)[0] == "plan" and "finance_get_eps" in _tool_names(kwargs)
    assert kwargs["tool_choice"] == "any"
    assert "properties" in kwargs["tools"][0]["function"]["parameters"]
    assert "tool_calls" not in kwargs["tools"][0]["function"]["parameters"]["properties"]
    assert "Send your JSON reply as the arguments of the plan tool" in llm.prompts[0]
    assert '"tool_calls"' not in llm.prompts[0]  # the reply JSON has no tool_calls field: the calls are native
    assert [c.name for c in result.steps[0].tool_calls] == ["finance_get_eps"]
    crag = [d for d in result.documents if d.source == "crag:finance_get_eps"]
    assert len(crag) == 1 and crag[0].text == "22.95" and "22.95" in llm.prompts[-1]
    assert result.answer == "22.95"


def test_only_tool_calls_is_a_plan_without_queries_not_a_fallback(client):
    step = AIMessage(content="", tool_calls=[_call("finance_get_eps", {"ticker_name": "META"})])
    llm = ToolScriptedLLM([step, "Answer: 22.95"])
    agent = FramesAgent(llm, None, crag_tools(client, ["finance"]), AgentConfig(k=1, n=1, structured_answer=False))
    result = asyncio.run(agent.ainvoke("What is Meta's EPS?"))
    assert not result.steps[0].fallback and [c.name for c in result.steps[0].tool_calls] == ["finance_get_eps"]
    assert result.answer == "22.95"


def test_native_tools_off_and_models_without_tool_calling_keep_prompt_json(client):
    plan = json.dumps({"thought": "t", "queries": [], "tool_calls": [{"name": "finance_get_eps",
                                                                      "args": {"ticker_name": "META"}}]})
    for llm, config in ((ToolScriptedLLM([plan, "Answer: 22.95"]), {"native_tools": False}),
                        (ScriptedLLM([plan, "Answer: 22.95"]), {})):
        agent = FramesAgent(llm, None, crag_tools(client, ["finance"]), AgentConfig(k=1, n=1, **config))
        result = agent.invoke("What is Meta's EPS?")
        assert "tools" not in llm.call_kwargs[0] and '"tool_calls"' in llm.prompts[0]
        assert [c.name for c in result.steps[0].tool_calls] == ["finance_get_eps"] and result.answer == "22.95"


def test_schema_constrained_providers_keep_the_json_schema_path(client):
    plan = json.dumps({"thought": "t", "queries": ["meta eps"], "tool_calls": []})
    llm = ToolScriptedLLM([plan], supports_json_schema=True)
    agent = FramesAgent(llm, None, crag_tools(client, ["finance"]), AgentConfig(k=1, n=1))
    agent.invoke("What is Meta's EPS?", answer=False)
    kwargs = llm.call_kwargs[0]
    assert "tools" not in kwargs and "tool_calls" in kwargs["response_format"]["json_schema"]["schema"]["properties"]
