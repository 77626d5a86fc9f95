"""FramesAgent as a LangChain Runnable: per-call config reaches tracers, batch/with_config, and agent-as-tool in a
LangChain 1.x `create_agent` agent driven by LangChain's own fake chat model (docs/library.md)."""
from __future__ import annotations

import asyncio
import json
import re

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

from frames_agent.agent import AgentConfig, AgentResult, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM


def _question_in(text: str) -> str:
    return re.findall(r"Question: (.+)", text)[-1].strip()


def responder(messages) -> str:
    """Plans search the question's first capitalised word (and call `lookup`); answers name it."""
    text = messages[-1].content
    word = re.findall(r"[A-Z]\w+", _question_in(text))[-1]
    if "Reply with one JSON" not in text:
        return f"Answer: {word}"
    return json.dumps({"thought": "look", "queries": [word], "enough": False,
                       "tool_calls": [{"name": "lookup", "args": {"q": word}}]})


def lookup(q: str) -> str:
    """Look a word up in the notebook."""
    return f"notebook entry for {q}"


@pytest.fixture
def agent(tiny_retriever):
    tool = StructuredTool.from_function(lookup)
    return FramesAgent(ScriptedLLM(responder=responder), tiny_retriever, [tool], AgentConfig(k=1, n=2, n_docs=2))


def walk(run):
    yield run
    for child in run.child_runs:
        yield from walk(child)


def test_invoke_config_reaches_a_tracer_with_tool_retriever_and_edge_runs(agent):
    tracer = RunCollectorCallbackHandler()
    result = agent.invoke("Who founded Brennick?", config={"callbacks": [tracer], "tags": ["t1"],
                                                           "metadata": {"user": "u7"}, "run_name": "research"})
    assert isinstance(result, AgentResult) and result.answer == "Brennick" and result.llm_calls == 3
    [root] = tracer.traced_runs
    assert root.name == "research" and "t1" in root.tags and root.metadata["user"] == "u7"
    assert root.outputs["answer"] == "Brennick"
    runs = list(walk(root))
    tools = [r for r in runs if r.run_type == "tool"]
    assert [r.name for r in tools] == ["lookup", "lookup"] and "t1" in tools[0].tags
    retrievers = sorted((r for r in runs if r.run_type == "retriever"), key=lambda r: r.start_time)
    assert retrievers and retrievers[0].inputs["query"] == "Brennick"
    assert retrievers[0].name == "tiny" and retrievers[0].outputs["documents"][0].metadata["title"] == "Brennick"
    names = {r.name for r in runs}
    assert {"after_merge", "plan", "retrieve", "answer"} <= names and "RunnableCallable" not in names
    assert sum(r.run_type == "llm" for r in runs) == 3


def test_get_graph_draws_the_langgraph_nodes(agent):
    assert {"plan", "retrieve", "merge", "answer"} <= set(agent.get_graph().nodes)


def test_batch_abatch_and_with_config(agent):
    results = agent.batch(["Who is Ferrante?", "Where is Gannet?"])
    assert [r.answer for r in results] == ["Ferrante", "Gannet"]
    tracer = RunCollectorCallbackHandler()
    bound = agent.with_config(tags=["bound"], callbacks=[tracer])
    assert bound.invoke("Tell me about Olse").answer == "Olse"
    assert tracer.traced_runs[0].name == "FramesAgent" and "bound" in tracer.traced_runs[0].tags
    results = asyncio.run(agent.abatch(["About Brennick", "About Port"], config={"tags": ["a"]}))
    assert [r.answer for r in results] == ["Brennick", "Port"]


def test_stream_and_astream_are_traced_and_typed(agent):
    tracer = RunCollectorCallbackHandler()
    kinds = [e.kind for e in agent.stream("About Brennick", config={"callbacks": [tracer]})]
    assert kinds[0] == "step_started" and kinds[-1] == "answer"
    assert tracer.traced_runs[0].outputs["answer"] == "Brennick"

    async def collect():
        return [e async for e in agent.astream({"question": "About Olse"}, {"tags": ["x"]})]

    assert asyncio.run(collect())[-1].result.answer == "Olse"


class ToolCallingFake(GenericFakeChatModel):
    """LangChain's fake chat model, with bind_tools so prebuilt agents accept it."""

    def bind_tools(self, tools, **kwargs):
        return self


def test_as_tool_inside_a_langchain_create_agent(agent):
    from langchain.agents import create_agent

    research = agent.as_tool(name="research", description="Research a question in Wikipedia.")
    model = ToolCallingFake(messages=iter([
        AIMessage(content="", tool_calls=[{"name": "research", "args": {"question": "Who is Ferrante?"},
                                           "id": "call-1", "type": "tool_call"}]),
        AIMessage(content="The tool says Ferrante."),
    ]))
    assistant = create_agent(model, [research])  # as docs/library.md shows it
    tracer = RunCollectorCallbackHandler()
    out = assistant.invoke({"messages": [{"role": "user", "content": "who is ferrante?"}]},
                           config={"callbacks": [tracer]})
    reply = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert reply.name == "research" and reply.content.startswith("Ferrante\nSources:\n- ")
    assert reply.artifact["answer"] == "Ferrante" and reply.artifact["documents"]
    assert out["messages"][-1].content == "The tool says Ferrante."
    runs = list(walk(tracer.traced_runs[0]))
    tool_run = next(r for r in runs if r.run_type == "tool" and r.name == "research")
    assert any(r.name == "FramesAgent" for r in tool_run.child_runs)  # the agent's trace nests under the tool call


def test_as_tool_async(agent):
    tool = agent.as_tool()
    assert tool.name == "frames_research" and set(tool.args) == {"question"}
    text = asyncio.run(tool.ainvoke({"question": "About Gannet"}))
    assert text.startswith("Gannet")


def test_astream_events_show_retriever_and_tool_runs(agent):
    async def collect():
        return [(e["event"], e["name"]) async for e in agent.astream_events("About Brennick", version="v2")]

    events = asyncio.run(collect())
    assert events[0] == ("on_chain_start", "FramesAgent") and events[-1] == ("on_chain_end", "FramesAgent")
    assert ("on_retriever_start", "tiny") in events and ("on_retriever_end", "tiny") in events
    assert ("on_tool_start", "lookup") in events and ("on_chat_model_start", "ScriptedLLM") in events
