"""LangChain/LangGraph conventions: LangChain retrievers and Documents at every entry point, Runnable
stream modes and runtime `configurable` settings, a typed input schema, the agent inside a user's StateGraph."""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TypedDict

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from frames_agent.agent import AgentConfig, AgentError, AgentResult, FramesAgent, FramesAgentError, build_graph
from frames_agent.agent.configurable import RunSettings
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.core.errors import UsageError
from tests.retrieval.test_bridges import store_retriever  # noqa: F401 - the fixture: a LangChain vector store's retriever


def responder(messages) -> str:
    """Plans search the question's last capitalised word (as many queries as asked); answers name it."""
    text = messages[-1].content
    word = re.findall(r"[A-Z]\w+", re.findall(r"Question: (.+)", text)[-1])[-1]
    if "Reply with one JSON" not in text:
        return f"Answer: {word}"
    return json.dumps({"thought": "look", "queries": [word, f"{word} city", f"{word} river"], "enough": False})


@pytest.fixture
def agent(tiny_retriever):
    return FramesAgent(ScriptedLLM(responder=responder), tiny_retriever, config=AgentConfig(k=1, n=1, n_docs=2))


class Half:
    name = "half"

    def search(self, query, k=10):
        return []


def test_build_graph_adapts_a_langchain_retriever(store_retriever):
    llm = ScriptedLLM([{"thought": "", "queries": ["fact number 3"]}, "Answer: three"])
    graph = build_graph(llm, store_retriever, config=AgentConfig(k=1, n=1, n_docs=2, question_query=False))
    state = graph.invoke({"question": "Which fact?"})
    assert state["answer"] == "three" and len(state["context"]) == 2
    with pytest.raises(UsageError) as err:  # at construction, not inside the retrieve task
        build_graph(ScriptedLLM([]), Half())
    assert "batch_search" in str(err.value) and "\n" not in str(err.value)


def test_answer_from_takes_langchain_documents(agent, tiny_retriever):
    docs = tiny_retriever.as_langchain(k=2).invoke("Marta Kowalczyk")
    result = agent.answer_from("Where was Marta Kowalczyk born?", docs)
    assert result.answer == "Kowalczyk" and result.documents[0].title == "Marta Kowalczyk"
    assert "born in Brennick" in agent.llm.prompts[-1]
    plain = [LCDocument(page_content="Brennick lies on the Olse.")]  # no id, no title: stand-ins, still answered
    assert asyncio.run(agent.aanswer_from("Where is Brennick?", plain)).documents[0].text.startswith("Brennick")
    with pytest.raises(UsageError) as err:
        agent.answer_from("Where?", ["just a string"])
    assert "document 0 is a str" in str(err.value) and "\n" not in str(err.value)


def test_the_root_error_is_exported_beside_agent_error():
    assert issubclass(AgentError, FramesAgentError) and issubclass(UsageError, FramesAgentError)


def test_stream_is_typed_by_default_and_langgraph_chunks_with_stream_mode(agent):
    assert [e.kind for e in agent.stream("About Brennick")][-1] == "answer"
    updates = list(agent.stream("About Brennick", stream_mode="updates"))
    assert [next(iter(u)) for u in updates] == ["begin", "plan", "retrieve", "merge", "answer"]
    pairs = list(agent.stream("About Brennick", stream_mode=["custom", "values"]))
    assert {mode for mode, _ in pairs} == {"custom", "values"} and pairs[-1][1]["answer"] == "Brennick"

    async def collect():
        return [c async for c in agent.astream({"question": "About Olse"}, stream_mode="values")]

    assert asyncio.run(collect())[-1]["answer"] == "Olse"


def test_in_a_streamed_chain_the_output_chunk_is_the_result(agent):
    chain = RunnableLambda(lambda q: f"About {q}") | agent
    [chunk] = chain.stream("Brennick")
    assert isinstance(chunk, AgentResult) and chunk.answer == "Brennick"

    async def collect():
        return [c async for c in (chain | RunnableLambda(lambda r: r.answer)).astream("Olse")]

    assert asyncio.run(collect()) == ["Olse"]


def own(**settings) -> dict:
    """A run config with the agent's settings under its one configurable key."""
    return {"configurable": {"frames_agent": settings}}


def test_configurable_settings_per_run(agent):
    [spec] = agent.config_specs
    assert spec.id == "frames_agent" and spec.default is None and "k=1" in spec.description
    fields = RunSettings.model_json_schema()["properties"]
    assert set(fields) == {"k", "n", "n_docs", "prompt", "answer_prompt", "model", "index"}
    assert "model spec" in fields["model"]["description"] and "per step" in fields["k"]["description"]
    result = agent.invoke("About Brennick", config=own(k=2, n=2))
    assert len(result.steps) == 2 and max(o.count("model") for o in (s.origins for s in result.steps)) == 2
    bound = agent.with_config(configurable={"frames_agent": {"n": 3}})
    assert len(bound.invoke("About Olse").steps) == 3 and len(agent.invoke("About Olse").steps) == 1
    assert agent.with_settings(n=3) is agent.with_settings(n=3)  # variants are kept, not rebuilt per run
    events = list(agent.stream("About Olse", own(n=2)))
    assert len(events[-1].result.steps) == 2
    assert len(agent.invoke("About Olse", own(**RunSettings(n=2).model_dump())).steps) == 2
    for bad in ({"k": 0}, {"kk": 2}, "k=2"):
        with pytest.raises(AgentError) as err:
            agent.invoke("About Olse", config={"configurable": {"frames_agent": bad}})
        assert str(err.value).startswith("configurable.frames_agent") and "\n" not in str(err.value)


def test_an_apps_own_configurable_keys_never_reach_the_agent(agent, monkeypatch):
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda *a, **kw: pytest.fail("model was resolved"))
    app = {"model": "anthropic/claude-3-5-sonnet-20240620", "k": 0, "n": "many", "prompt": "/etc/passwd",
           "answer_prompt": "nope", "index": "/nonexistent", "thread_id": "t1"}
    result = agent.invoke("About Brennick", config={"configurable": app})
    assert result.answer == "Brennick" and len(result.steps) == 1 and "root:" not in "".join(agent.llm.prompts)


def test_configurable_model_and_index_per_run(tiny_retriever, tiny_index, monkeypatch):
    agent = FramesAgent(ScriptedLLM(responder=responder), tiny_retriever, config=AgentConfig(k=1, n=1, n_docs=2),
                        models=["fakeprov:other"], indexes=[str(tiny_index), "/nonexistent/index"])
    other = ScriptedLLM(responder=lambda m: json.dumps({"thought": "", "queries": ["Olse"]})
                        if "Reply with one JSON" in m[-1].content else "Answer: from the other model")
    made = []
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda spec, **kw: made.append((spec, kw)) or other)
    result = agent.invoke("About Brennick", config=own(model="fakeprov:other", n=2))
    assert result.answer == "from the other model" and len(result.steps) == 2
    assert made == [("fakeprov:other", {"timeout": agent.config.timeout})]
    agent.invoke("About Brennick", config=own(model="fakeprov:other"))
    assert len(made) == 1  # the variant is kept
    assert agent.invoke("About Brennick").answer == "Brennick"  # the agent's own model otherwise
    indexed = agent.invoke("About Brennick", config=own(index=str(tiny_index)))
    assert indexed.documents and indexed.answer == "Brennick"
    with pytest.raises(FramesAgentError) as err:
        agent.invoke("About Brennick", config=own(index="/nonexistent/index"))  # listed, but not there
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("part", [{"index": "/etc"}, {"index": "/nonexistent/index"}, {"index": "default"},
                                  {"index": "msmarco-v1-passage"}, {"model": "local:/etc/passwd.gguf"}])
def test_a_run_chooses_only_models_and_indexes_the_owner_listed(agent, monkeypatch, part):
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda *a, **kw: pytest.fail("model was resolved"))
    monkeypatch.setattr("frames_agent.index.build.open_index", lambda *a, **kw: pytest.fail("index was opened"))
    (name, value), = part.items()
    with pytest.raises(AgentError) as err:
        agent.invoke("About Brennick", config=own(**part))
    # One line, the same whether the path exists or not: nothing was looked at.
    assert str(err.value).replace(value, "X") == f"{name} 'X': a run may only choose a{'n' * (name == 'index')} " \
                                                   f"{name} the server's owner listed (listed: none besides its own)"


def test_input_schema_is_the_typed_agent_input(agent):
    schema = agent.get_input_jsonschema()
    assert {"type": "string"} in schema["anyOf"]
    assert set(schema["$defs"]["AgentInput"]["properties"]) == {"question", "variables", "skip_answer"}
    assert agent.get_output_jsonschema()["title"] == "AgentResult"
    result = agent.invoke({"question": "About Brennick", "skip_answer": True})
    assert result.answer == "" and result.documents


class AppState(TypedDict, total=False):
    question: str
    answer: str
    steps: int


def test_inside_a_users_state_graph_with_configurable_and_a_checkpointer(agent):
    def research(state: AppState, config) -> AppState:
        result: AgentResult = agent.invoke(state["question"], config)
        return {"answer": result.answer, "steps": len(result.steps)}

    app = StateGraph(AppState)
    app.add_node("research", research)
    app.add_edge(START, "research")
    app.add_edge("research", END)
    graph = app.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1", "n": 5, "frames_agent": {"n": 2}}}
    out = graph.invoke({"question": "About Brennick"}, config)
    assert out == {"question": "About Brennick", "answer": "Brennick", "steps": 2}
    assert graph.get_state(config).values["answer"] == "Brennick"


def test_two_questions_on_one_checkpointed_thread_each_start_from_their_own_state(tiny_retriever):
    graph = build_graph(ScriptedLLM(responder=responder), tiny_retriever, config=AgentConfig(k=1, n=2, n_docs=2),
                        checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t1"}}
    first = graph.invoke({"question": "Where was Marta Kowalczyk born?"}, thread)
    second = graph.invoke({"question": "Which river flows through Port Alder?"}, thread)
    assert [s.step for s in first["steps"]] == [s.step for s in second["steps"]] == [1, 2]
    assert first["answer"] == "Kowalczyk" and second["answer"] == "Alder"
    titles = {d.title for entry in second["context"] for d in entry.documents}
    assert "Marta Kowalczyk" not in titles and "Port Alder" in titles  # its own context, not the first one's
    assert all("Kowalczyk" not in q for q in graph.get_state(thread).values["queries"])
    # The thread keeps the questions and answers, as a chat agent's does.
    assert [(m.type, m.content) for m in second["messages"]] == [
        ("human", "Where was Marta Kowalczyk born?"), ("ai", "Kowalczyk"),
        ("human", "Which river flows through Port Alder?"), ("ai", "Alder")]


@pytest.mark.slow
def test_checkpoints_read_back_without_unregistered_type_warnings_in_langgraphs_strict_mode(tmp_path):
    # langgraph.json sets LANGGRAPH_STRICT_MSGPACK: LangGraph then allows the types of the graph's state schema.
    script = tmp_path / "thread.py"
    script.write_text(
        "import logging\n"
        "from langgraph.checkpoint.memory import InMemorySaver\n"
        "from frames_agent.agent import AgentConfig, build_graph\n"
        "from frames_agent.agent.llm.testing import ScriptedLLM\n"
        "from tests.agent.test_api_langchain import responder\n"
        "from frames_agent.retrieval.types import Document\n"
        "class Wiki:\n"
        "    name = 'wiki'\n"
        "    def search(self, query, k=10): return [Document(id='b', title='Brennick', text='A city on the Olse.')]\n"
        "    def batch_search(self, queries, k=10): return [self.search(q, k) for q in queries]\n"
        "    def doc(self, doc_id): return None\n"
        "    def by_title(self, title): return None\n"
        "logging.basicConfig(level=logging.WARNING)\n"
        "graph = build_graph(ScriptedLLM(responder=responder), Wiki(), config=AgentConfig(k=1, n=2),\n"
        "                    checkpointer=InMemorySaver())\n"
        "thread = {'configurable': {'thread_id': 't'}}\n"
        "graph.invoke({'question': 'Where is Brennick?'}, thread)\n"
        "print(graph.invoke({'question': 'Where is Olse?'}, thread)['answer'])\n")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONPATH": os.pathsep.join(
        [os.environ.get("PYTHONPATH", ""), str(root)]).strip(os.pathsep)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "Olse", out.stderr[-2000:]
    assert "unregistered type" not in out.stderr and "Blocked" not in out.stderr, out.stderr[-2000:]
