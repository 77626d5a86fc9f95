"""LangChain retriever bridges: a real LangChain vector-store retriever drives the agent; ours serves LangChain."""
from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.retrievers import BaseRetriever
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.vectorstores import InMemoryVectorStore

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.core.errors import FramesAgentError, UsageError
from frames_agent.retrieval.bridges import KEEP_RECENT, FramesRetriever, LangChainRetriever, as_retriever
from frames_agent.retrieval.types import Document


@pytest.fixture
def store_retriever():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([LCDocument(id=f"d{i}", page_content=f"fact number {i}", metadata={"title": f"Fact {i}"})
                         for i in range(6)])
    return store.as_retriever(search_kwargs={"k": 4})


def test_a_langchain_retriever_drives_the_agent(store_retriever):
    llm = ScriptedLLM([{"thought": "", "queries": ["fact number 3"]}, "Answer: three"])
    agent = FramesAgent(llm, store_retriever, config=AgentConfig(k=1, n=1, n_docs=2, question_query=False))
    assert isinstance(agent.retriever, LangChainRetriever)
    tracer = RunCollectorCallbackHandler()
    result = agent.invoke("Which fact?", config={"callbacks": [tracer]})
    runs = [tracer.traced_runs[0]]
    for run in runs:
        runs.extend(run.child_runs)
    assert [r.inputs["query"] for r in runs if r.run_type == "retriever"] == ["fact number 3"]  # one run, not two
    assert result.answer == "three" and len(result.documents) == 2  # n_docs, not the retriever's own k=4
    assert {d.title for d in result.documents} <= {f"Fact {i}" for i in range(6)}
    assert result.documents[0].source.startswith("langchain:")


def test_adapter_keeps_documents_it_returned(store_retriever):
    adapter = LangChainRetriever(store_retriever)
    hits = adapter.batch_search(["fact number 1", "fact number 2"], 3)
    assert [len(h) for h in hits] == [3, 3]
    assert adapter.doc(hits[0][0].id) == hits[0][0]
    assert adapter.by_title(hits[0][0].title.upper()) == hits[0][0] and adapter.doc("nope") is None


def test_a_non_retriever_fails_at_construction_in_one_line():
    class Half:
        name = "half"

        def search(self, query, k=10):
            return []

    with pytest.raises(UsageError) as err:
        FramesAgent(ScriptedLLM([]), Half())
    assert "batch_search" in str(err.value) and "BaseRetriever" in str(err.value) and "\n" not in str(err.value)


def test_bm25_as_a_langchain_retriever_is_traced(tiny_retriever):
    lc = tiny_retriever.as_langchain(k=2)
    assert isinstance(lc, FramesRetriever)
    tracer = RunCollectorCallbackHandler()
    docs = lc.invoke("Brennick mayor", config={"callbacks": [tracer]})
    assert len(docs) == 2 and docs[0].metadata["title"] in {"Brennick", "Tomas Ferrante"}
    assert docs[0].id == docs[0].metadata["id"] and docs[0].page_content
    assert tracer.traced_runs[0].run_type == "retriever"
    assert as_retriever(lc) is tiny_retriever  # handing the wrapper back to the agent unwraps it


class FreshHits(BaseRetriever):
    """A LangChain retriever whose every search returns k documents never seen before."""

    k: int = 10

    def _get_relevant_documents(self, query, *, run_manager):
        return [LCDocument(id=f"{query}-{i}", page_content=f"text {i} for {query}", metadata={"title": f"{query} {i}"})
                for i in range(self.k)]


@pytest.mark.slow
def test_adapter_memory_stays_flat_over_10000_searches():
    adapter = LangChainRetriever(FreshHits())
    for i in range(10_000):
        hits = adapter.search(f"q{i}", 10)
    # Only this adapter's documents: other tests' (a session fixture's, a kept variant's) may still be alive.
    live = sum(isinstance(o, Document) and o.source == f"langchain:{adapter.name}" for o in gc.get_objects())
    assert live <= KEEP_RECENT + 10, live  # 100,000 documents returned, only the recent ones held
    assert adapter.doc(hits[0].id) == hits[0] and adapter.by_title("Q9999_3") == hits[3]  # recent ones still known
    assert adapter.doc("q0-0") is None and adapter.by_title("q0 0") is None  # the oldest were let go


def test_adapter_keeps_what_one_question_reads():
    adapter = LangChainRetriever(FreshHits(), keep=30)
    first = adapter.search("a", 10)
    adapter.batch_search(["b", "c"], 10)
    adapter.search("a", 10)  # seen again: most recent again
    adapter.search("d", 10)
    assert adapter.doc(first[0].id) == first[0] and adapter.doc("b-0") is None


def test_bm25_as_langchain_takes_k_per_call_and_search_kwargs(tiny_retriever):
    query = "Port Alder Brennick Olse River stadium"
    lc = tiny_retriever.as_langchain(k=5)
    assert len(lc.invoke(query)) == 5 and len(lc.invoke(query, k=2)) == 2
    assert len(asyncio.run(lc.ainvoke(query, k=1))) == 1
    assert len(FramesRetriever(retriever=tiny_retriever, search_kwargs={"k": 3}).invoke(query)) == 3
    assert len(lc.model_copy(update={"search_kwargs": {"k": 4}}).invoke(query, k=2)) == 2  # the call's k wins
    with pytest.raises(UsageError) as err:
        lc.invoke(query, filter={"title": "x"})
    assert "filter" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(UsageError):
        lc.invoke(query, k=0)


class AsyncOnly(BaseRetriever):
    """A remote store's retriever with only an async path; every query waits until `expected` are in flight."""

    expected: int = 1
    started: list = []
    all_in: Any = None  # an asyncio.Event, set when `expected` searches have started

    def _get_relevant_documents(self, query, *, run_manager):
        raise NotImplementedError("this store is async only")

    async def _aget_relevant_documents(self, query, *, run_manager):
        self.started.append(query)
        if len(self.started) >= self.expected:
            self.all_in.set()
        try:  # the step's other queries start while this one waits: they run concurrently (else this never ends)
            await asyncio.wait_for(self.all_in.wait(), 60)
        except TimeoutError:
            raise AssertionError(f"searched one after another: {self.started}") from None
        return [LCDocument(id=f"{query}-{i}", page_content=f"{query} fact {i}", metadata={"title": f"{query} {i}"})
                for i in range(3)]


def test_ainvoke_uses_the_retrievers_async_path_and_searches_a_steps_queries_at_once():
    plan = {"thought": "", "queries": ["alpha", "beta", "gamma"]}
    llm = ScriptedLLM([plan, "Answer: alpha"])
    store = AsyncOnly(expected=4, all_in=asyncio.Event())  # three model queries and the question query
    agent = FramesAgent(llm, store, config=AgentConfig(k=3, n=1, n_docs=2))
    result = asyncio.run(agent.ainvoke("Which one?"))
    assert result.answer == "alpha" and sorted(store.started) == ["Which one?", "alpha", "beta", "gamma"]
    assert [s.query_hits for s in result.steps] == [[2, 2, 2, 3]]  # n_docs per query, question_docs capped at 3
    with pytest.raises(FramesAgentError) as err:  # the sync path says why in one line
        FramesAgent(ScriptedLLM([plan]), AsyncOnly(), config=AgentConfig(k=1, n=1)).invoke("Which one?")
    assert "this store is async only" in str(err.value) and "\n" not in str(err.value)


class Gate(BaseRetriever):
    """Every sync search waits at a barrier until `parties` searches are in flight (threads, not one by one)."""

    barrier: Any
    k: int = 3

    def _get_relevant_documents(self, query, *, run_manager):
        self.barrier.wait()
        return [LCDocument(page_content=f"{query} {i}", metadata={"title": f"{query} {i}"}) for i in range(self.k)]


def test_sync_searches_of_a_step_run_concurrently():
    adapter = LangChainRetriever(Gate(barrier=threading.Barrier(3, timeout=30)))
    assert [len(h) for h in adapter.batch_search(["a", "b", "c"], 2)] == [2, 2, 2]  # k set per call, as the rule says


class Searches(BaseCallbackHandler):
    """A user's own callback handler: the queries and tags of the retriever runs it is told about."""

    def __init__(self) -> None:
        self.queries, self.tags = [], []

    def on_retriever_start(self, serialized, query, *, tags=None, **kwargs):
        self.queries.append(query)
        self.tags.append(tags or [])


def test_a_users_retriever_keeps_its_callbacks_tags_and_the_runs_and_its_k_follows_the_documented_rule(store_retriever):
    own, tracer = Searches(), RunCollectorCallbackHandler()
    bound = store_retriever.with_config(callbacks=[own], tags=["my-store"])
    plan = {"thought": "", "queries": ["fact number 3", "gamma delta"]}
    agent = FramesAgent(ScriptedLLM([plan, "Answer: three"]), bound,
                        config=AgentConfig(k=2, n=1, n_docs=3, question_query=False))
    result = asyncio.run(agent.ainvoke("Which fact?", {"callbacks": [tracer], "tags": ["run-tag"]}))
    assert sorted(own.queries) == ["fact number 3", "gamma delta"] and all("my-store" in t for t in own.tags)
    runs = [tracer.traced_runs[0]]
    for run in runs:
        runs.extend(run.child_runs)
    retrieved = [r for r in runs if r.run_type == "retriever"]
    assert len(retrieved) == 2 and all("run-tag" in r.tags for r in retrieved)  # one run per query, under the agent's
    assert result.steps[0].query_hits == [3, 3]  # the agent's n_docs overrides search_kwargs k=4
    capped = LangChainRetriever(store_retriever.model_copy(update={"search_kwargs": {"k": 1}}), own_k=True)
    assert [len(h) for h in capped.batch_search(["fact number 1"], 3)] == [1]  # own_k: the retriever's k stands
