"""LangChain retriever bridges: a real LangChain vector-store retriever drives the agent; ours serves LangChain."""
from __future__ import annotations

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.vectorstores import InMemoryVectorStore

from agent import AgentConfig, FramesAgent
from agent.llm.testing import ScriptedLLM
from retrieval.bridges import FramesRetriever, LangChainRetriever, as_retriever
from retrieval.errors import UsageError


@pytest.fixture
def store_retriever():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([LCDocument(id=f"d{i}", page_content=f"fact number {i}", metadata={"title": f"Fact {i}"})
                         for i in range(6)])
    return store.as_retriever(search_kwargs={"k": 4})


def test_a_langchain_retriever_drives_the_agent(store_retriever):
    llm = ScriptedLLM([{"thought": "", "queries": ["fact number 3"]}, "Answer: three"])
    agent = FramesAgent(llm, store_retriever, config=AgentConfig(k=1, n=1, n_docs=2))
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
