"""The agent inside a host app: the app's own `configurable` keys never reach it, a run's config never
makes it read a file, and it fails like a tool; a LangChain `create_agent` app embeds it as a tool and as a subgraph.
No Lucene: a LangChain in-memory vector store is the retriever."""
from __future__ import annotations

import asyncio
import json
import re

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from frames_agent.agent import AgentConfig, FramesAgent, build_graph
from frames_agent.agent.errors import AgentError, PromptError
from frames_agent.agent.llm.testing import ScriptedLLM

# What a LangGraph template's app keeps in its own configurable: none of it is the agent's.
APP_CONFIGURABLE = {"model": "anthropic/claude-3-5-sonnet-20240620", "k": 0, "n": "many", "n_docs": -1,
                    "prompt": "/etc/passwd", "answer_prompt": "../../etc/passwd", "index": "/nonexistent",
                    "system_prompt": "You are a helpful assistant."}
SECRET = "the-secret-in-a-file-4e1f"


def responder(messages) -> str:
    """Plans search the question's last capitalised word; answers name it."""
    text = messages[-1].content
    assert SECRET not in text and "root:" not in text, "a file's contents reached the model"
    word = re.findall(r"(?:About|Who is) ([A-Z]\w+)", text)[-1]
    if "Reply with one JSON" not in text and "queries" not in text:
        return f"Answer: {word}"
    return json.dumps({"thought": "look", "queries": [word], "enough": False})


@pytest.fixture
def store():
    vectors = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    vectors.add_documents([LCDocument(id=f"d{i}", page_content=f"Brennick fact number {i}",
                                      metadata={"title": f"Fact {i}"}) for i in range(6)])
    return vectors.as_retriever(search_kwargs={"k": 4})


@pytest.fixture
def agent(store):
    return FramesAgent(ScriptedLLM(responder=responder), store, config=AgentConfig(k=1, n=1, n_docs=2))


class ToolCallingFake(GenericFakeChatModel):
    """LangChain's fake chat model, with bind_tools so create_agent accepts it."""

    def bind_tools(self, tools, **kwargs):
        return self


def calls_research(question: str, final: str = "Done.") -> ToolCallingFake:
    return ToolCallingFake(messages=iter([
        AIMessage(content="", tool_calls=[{"name": "research", "args": {"question": question}, "id": "call-1",
                                           "type": "tool_call"}]),
        AIMessage(content=final)]))


def test_a_create_agent_app_with_its_own_model_k_and_prompt_embeds_the_agent_as_a_tool(agent):
    from langchain.agents import create_agent

    app = create_agent(calls_research("Who is Brennick?"), [agent.as_tool(name="research")])
    out = app.invoke({"messages": [{"role": "user", "content": "who?"}]}, {"configurable": APP_CONFIGURABLE})
    reply = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert reply.status == "success" and reply.content.startswith("Brennick")
    assert out["messages"][-1].content == "Done."

    async def arun():
        return await app.ainvoke({"messages": [{"role": "user", "content": "who?"}]},
                                 {"configurable": APP_CONFIGURABLE})

    app = create_agent(calls_research("Who is Olse?"), [agent.as_tool(name="research")])
    assert next(m for m in asyncio.run(arun())["messages"] if isinstance(m, ToolMessage)).content.startswith("Olse")


class AppState(TypedDict, total=False):
    question: str
    answer: str
    messages: list


def test_the_agent_as_a_subgraph_and_a_node_beside_create_agent_under_the_apps_configurable(agent):
    from langchain.agents import create_agent

    inner = create_agent(calls_research("Who is Ferrante?", "Checked."), [agent.as_tool(name="research")])
    app = StateGraph(AppState)
    app.add_node("graph", agent.graph)  # the compiled agent graph as a subgraph: reads question, writes answer
    app.add_node("node", agent.pick(["answer"]))  # the Runnable as a node: its answer field joins the state
    app.add_node("assistant", lambda state, config: {"messages": inner.invoke(
        {"messages": [{"role": "user", "content": state["question"]}]}, config)["messages"]})
    app.add_edge(START, "graph")
    app.add_edge("graph", "node")
    app.add_edge("node", "assistant")
    app.add_edge("assistant", END)
    out = app.compile().invoke({"question": "About Brennick"}, {"configurable": APP_CONFIGURABLE})
    assert out["answer"] == "Brennick" and out["messages"][-1].content == "Checked."
    assert any(isinstance(m, ToolMessage) and m.content.startswith("Ferrante") for m in out["messages"])


@pytest.mark.parametrize("path", ["/etc/passwd", "secret.txt", "./secret.txt", "../secret.txt"])
def test_a_run_config_naming_a_file_never_reads_it(agent, tmp_path, monkeypatch, path):
    (tmp_path / "secret.txt").write_text(f"{SECRET} {{question}} {{context}}\n")
    monkeypatch.chdir(tmp_path / ".." if path.startswith("..") else tmp_path)
    if path.startswith(".."):
        (tmp_path.parent / "secret.txt").write_text(f"{SECRET} {{question}} {{context}}\n")
    for field in ("prompt", "answer_prompt"):
        with pytest.raises(PromptError) as err:
            agent.invoke("About Brennick", {"configurable": {"frames_agent": {field: path}}})
        assert str(err.value).startswith(f"{field}: ") and "no file paths" in str(err.value)
        assert "\n" not in str(err.value)
    assert agent.llm.prompts == []  # refused before any model call


def test_a_run_config_may_name_shipped_prompts_or_pass_text_and_files_only_in_an_allowed_directory(store, tmp_path):
    allowed = tmp_path / "prompts"
    allowed.mkdir()
    (allowed / "mine.txt").write_text("MINE: answer {question} from {context}\n")
    (tmp_path / "outside.txt").write_text(f"{SECRET} {{question}} {{context}}\n")
    llm = ScriptedLLM(responder=responder)
    agent = FramesAgent(llm, store, config=AgentConfig(k=1, n=1, n_docs=2), prompt_dirs=[allowed])

    def run(**settings):
        return agent.invoke("About Brennick", {"configurable": {"frames_agent": settings}})

    assert run(answer_prompt="answer_direct").answer == "Brennick"
    assert run(answer_prompt="TEXT: {question}\n{context}").answer == "Brennick"
    assert llm.prompts[-1].startswith("[human]\nTEXT: About Brennick")
    assert run(answer_prompt="mine.txt").answer == "Brennick" and "MINE: answer About Brennick" in llm.prompts[-1]
    assert run(answer_prompt=str(allowed / "mine.txt")).answer == "Brennick"
    for escape in ("../outside.txt", str(tmp_path / "outside.txt"), "/etc/passwd"):
        with pytest.raises(PromptError) as err:
            run(answer_prompt=escape)
        assert f"a file in {allowed}" in str(err.value)
    assert not any(SECRET in p for p in llm.prompts)


def test_as_tool_returns_failures_as_its_message_or_raises_when_asked(agent):
    from langchain.agents import create_agent

    tool = agent.as_tool(name="research")
    call = {"name": "research", "args": {"question": "  "}, "id": "c1", "type": "tool_call"}
    message = tool.invoke(call)
    assert message.status == "error" and message.content == "the question is empty"
    bad = {**call, "args": {"query": "wrong argument"}}
    assert tool.invoke(bad).status == "error"  # the schema's refusal is a message too
    path = tool.invoke(call | {"args": {"question": "About Olse"}},
                       {"configurable": {"frames_agent": {"prompt": "/etc/passwd"}}})
    assert path.status == "error" and path.content.startswith("prompt: ")
    assert asyncio.run(tool.ainvoke(call)).content == "the question is empty"
    app = create_agent(calls_research("   ", "Sorry, the tool failed."), [tool])
    out = app.invoke({"messages": [{"role": "user", "content": "?"}]})
    assert out["messages"][-1].content == "Sorry, the tool failed."  # the outer agent went on
    assert agent.as_tool(handle_tool_error="research failed").invoke(call).content == "research failed"
    with pytest.raises(Exception, match="the question is empty"):
        agent.as_tool(handle_tool_error=False).invoke(call)


class Note(TypedDict, total=False):
    q: str
    note: str


def note_graph():
    """A user's own small LangGraph graph, used by the agent as a tool: it runs as the agent's subgraph."""
    graph = StateGraph(Note)
    graph.add_node("write", lambda state: {"note": f"note on {state['q']}"})
    graph.add_edge(START, "write")
    graph.add_edge("write", END)
    return graph.compile()


def test_langgraph_stream_arguments_pass_through(store):
    def plan_with_tool(messages):
        text = messages[-1].content
        if "Reply with one JSON" in text or "queries" in text:
            return json.dumps({"thought": "", "queries": ["Brennick"], "enough": False,
                               "tool_calls": [{"name": "notes", "args": {"q": "Brennick"}}]})
        return "Answer: Brennick"

    tool = note_graph().as_tool(name="notes", description="Notes on a word.", arg_types={"q": str})
    agent = FramesAgent(ScriptedLLM(responder=plan_with_tool), store, [tool], AgentConfig(k=1, n=1, n_docs=2))
    items = list(agent.stream("About Brennick", stream_mode="updates", subgraphs=True))
    assert all(isinstance(i, tuple) and len(i) == 2 for i in items)
    assert [next(iter(c)) for ns, c in items if ns == ()] == ["begin", "plan", "retrieve", "merge", "answer"]
    assert any(ns and ns[0].startswith("retrieve:") and "write" in c for ns, c in items)  # the tool's own graph
    triples = list(agent.stream("About Brennick", stream_mode=["updates", "values"], subgraphs=True))
    assert {len(t) for t in triples} == {3} and triples[-1][:2] == ((), "values")
    events = list(agent.stream("About Brennick", subgraphs=True))  # typed events stay typed
    assert events[-1].kind == "answer" and events[-1].result.answer == "Brennick"

    async def collect():
        return [i async for i in agent.astream("About Brennick", stream_mode="updates", subgraphs=True)]

    assert any(ns for ns, _ in asyncio.run(collect()))
    with pytest.warns(UserWarning, match="durability"):  # LangGraph got it (and says it needs a checkpointer)
        assert agent.invoke("About Brennick", durability="exit", debug=False).answer == "Brennick"
    for bad in ({"version": "v2"}, {"output_keys": ["answer"]}):
        with pytest.raises(AgentError):
            list(agent.stream("About Brennick", stream_mode="updates", **bad))
    for bad in ({"subgraphs": True}, {"stream_mode": "values"}):  # invoke returns the result, not chunks
        with pytest.raises(AgentError):
            agent.invoke("About Brennick", **bad)


def test_build_graph_takes_the_usual_compile_settings(store):
    from langgraph.checkpoint.memory import InMemorySaver

    llm = ScriptedLLM(responder=responder)
    graph = build_graph(llm, store, config=AgentConfig(k=1, n=1, n_docs=2), name="research",
                        checkpointer=InMemorySaver(), interrupt_before=["answer"])
    assert graph.name == "research"
    run = {"configurable": {"thread_id": "t1"}}
    paused = graph.invoke({"question": "About Olse"}, run)
    assert not paused.get("answer") and graph.get_state(run).next == ("answer",)
    assert graph.invoke(None, run)["answer"] == "Olse"  # resumed from the checkpoint
    after = build_graph(llm, store, config=AgentConfig(k=1, n=1, n_docs=2), checkpointer=InMemorySaver(),
                        interrupt_after=["plan"], debug=False)
    after.invoke({"question": "About Olse"}, run)
    assert after.get_state(run).next == ("retrieve",)


def test_pick_works_on_the_result(agent):
    assert agent.pick("answer").invoke("About Brennick") == "Brennick"
    picked = agent.pick(["answer", "llm_calls"]).invoke("About Olse")
    assert picked == {"answer": "Olse", "llm_calls": 2}
    assert asyncio.run(agent.pick("answer").ainvoke("About Olse")) == "Olse"


def test_a_run_stopped_at_a_breakpoint_says_so_instead_of_an_empty_answer(agent):
    result = agent.invoke("About Olse", interrupt_before=["answer"])
    assert result.answer == "" and "stopped at a breakpoint (interrupt_before=['answer']) after 1 step(s)" in result.error
    events = list(agent.stream("About Olse", interrupt_after=["plan"]))
    assert "interrupt_after=['plan']" in events[-1].result.error
    assert asyncio.run(agent.ainvoke("About Olse", interrupt_before=["answer"])).error == result.error
    assert agent.invoke("About Olse", interrupt_after=["answer"]).error is None  # it answered before stopping


def test_unknown_arguments_and_arg_types_are_refused_assign_works_and_the_inner_run_is_named(agent):
    from langchain_core.tracers.context import collect_runs

    with pytest.raises(AgentError, match=r"unknown argument\(s\) varibles: the agent takes variables") as err:
        agent.invoke("About Olse", varibles={"x": "y"})
    assert "\n" not in str(err.value)
    with pytest.raises(AgentError, match="takes one argument, question"):
        agent.as_tool(arg_types={"query": str})
    assert agent.as_tool(arg_types={"question": str}).name == "frames_research"
    out = agent.assign(shout=lambda result: result["answer"].upper()).invoke("About Olse")
    assert out["answer"] == "Olse" and out["shout"] == "OLSE"
    with collect_runs() as runs:
        agent.invoke("About Olse")
    outer = next(r for r in runs.traced_runs if r.name == "FramesAgent")
    assert [r.name for r in outer.child_runs] == ["frames_agent_graph"]


def test_configurable_fields_read_run_settings_from_the_apps_own_ids(agent):
    from langchain_core.runnables import ConfigurableField

    tuned = agent.configurable_fields(n=ConfigurableField(id="research_steps", name="steps"))
    result = tuned.invoke("About Olse", config={"configurable": {"research_steps": 2}})
    assert len(result.steps) == 2 and len(agent.invoke("About Olse").steps) == 1
    assert {"research_steps", "frames_agent"} <= {spec.id for spec in tuned.config_specs}
    with pytest.raises(AgentError, match="configurable.frames_agent.n"):
        tuned.invoke("About Olse", config={"configurable": {"research_steps": 0}})
    with pytest.raises(AgentError, match="stop_when_stale cannot be set per run"):
        agent.configurable_fields(stop_when_stale=ConfigurableField(id="x"))
