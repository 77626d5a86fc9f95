"""LangChain bridges: any BaseRetriever as our Retriever, ours as a BaseRetriever, and traced batch searches."""
from __future__ import annotations

from typing import Any, Sequence

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_callback_manager_for_config
from pydantic import ConfigDict

from retrieval.errors import RetrievalError, UsageError
from retrieval.types import Document, Retriever

# What the agent calls; the rest of the Retriever protocol (search, doc, by_title) serves baselines and tools.
_AGENT_NEEDS = ("batch_search",)


def to_langchain(doc: Document) -> LCDocument:
    """Our Document as a LangChain Document (id, title, score and source in the metadata)."""
    return LCDocument(id=doc.id, page_content=doc.text, metadata={
        "id": doc.id, "title": doc.title, "score": doc.score, "source": doc.source, "article_id": doc.article_id})


def from_langchain(doc: LCDocument, rank: int, source: str) -> Document:
    """A LangChain Document as ours; without an id or title, the metadata's or the rank stands in."""
    meta = doc.metadata or {}
    doc_id = str(doc.id or meta.get("id") or meta.get("source") or f"{source}#{rank}")
    title = str(meta.get("title") or meta.get("source") or doc_id)
    score = meta.get("score", meta.get("relevance_score", 0.0))
    return Document(id=doc_id, title=title, text=doc.page_content, source=str(meta.get("source") or source),
                    score=float(score) if isinstance(score, (int, float)) else 0.0, article_id=meta.get("article_id"))


class LangChainRetriever:
    """Any LangChain BaseRetriever behind our Retriever protocol (its own k, or search_kwargs={"k": k} when it has them)."""

    def __init__(self, retriever: BaseRetriever, name: str | None = None) -> None:
        self.retriever = retriever
        self.name = name or retriever.get_name()
        self._seen: dict[str, Document] = {}

    def _invoke(self, query: str, k: int) -> list[LCDocument]:
        kwargs = getattr(self.retriever, "search_kwargs", None)
        runner = self.retriever
        if isinstance(kwargs, dict):
            runner = self.retriever.model_copy(update={"search_kwargs": {**kwargs, "k": k}})
        elif hasattr(self.retriever, "k"):
            runner = self.retriever.model_copy(update={"k": k})
        try:
            # No callbacks of its own: traced_batch_search already reports this search as the run's retriever run.
            return runner.invoke(query, config={"callbacks": []})[:k]
        except Exception as exc:  # a remote store's failure is a retrieval error, one line
            raise RetrievalError(f"retriever {self.name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc

    def search(self, query: str, k: int = 10) -> list[Document]:
        """Top-k documents for one query, best first."""
        docs = [from_langchain(d, rank, f"langchain:{self.name}") for rank, d in enumerate(self._invoke(query, k))]
        self._seen.update((d.id, d) for d in docs)
        return docs

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Document]]:
        """Top-k documents for each query, in order."""
        return [self.search(q, k) for q in queries]

    def doc(self, doc_id: str) -> Document | None:
        """A document this adapter has returned before (LangChain retrievers have no lookup by id)."""
        return self._seen.get(doc_id)

    def by_title(self, title: str) -> Document | None:
        """A returned document with this title (case and underscores ignored), if any."""
        want = title.replace("_", " ").casefold()
        return next((d for d in self._seen.values() if d.title.replace("_", " ").casefold() == want), None)


class FramesRetriever(BaseRetriever):
    """Our Retriever (e.g. the Lucene BM25Retriever) as a LangChain BaseRetriever."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any
    k: int = 10

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[LCDocument]:
        return [to_langchain(d) for d in self.retriever.search(query, self.k)]


def as_retriever(retriever: Any) -> Retriever | None:
    """Our Retriever for any accepted object (ours, or a LangChain BaseRetriever); a one-line error otherwise."""
    if retriever is None or isinstance(retriever, LangChainRetriever):
        return retriever
    if isinstance(retriever, FramesRetriever):
        return retriever.retriever
    if isinstance(retriever, BaseRetriever):
        return LangChainRetriever(retriever)
    missing = [attr for attr in _AGENT_NEEDS if not callable(getattr(retriever, attr, None))]
    if missing:
        raise UsageError(f"the retriever {type(retriever).__name__} has no {', '.join(missing)}(): pass a LangChain "
                         "BaseRetriever or a retrieval.Retriever (name, search, batch_search, doc, by_title)")
    return retriever


def traced_batch_search(retriever: Retriever, queries: Sequence[str], k: int,
                        config: RunnableConfig | None = None) -> list[list[Document]]:
    """batch_search, reported to the run's callbacks as one retriever run per query (on_retriever_start/end)."""
    manager = get_callback_manager_for_config(config or {})
    if not manager.handlers:
        return retriever.batch_search(queries, k)
    name = getattr(retriever, "name", None) or "retriever"
    runs = [manager.on_retriever_start(None, query, name=name) for query in queries]
    try:
        found = retriever.batch_search(queries, k)
    except BaseException as exc:
        for run in runs:
            run.on_retriever_error(exc)
        raise
    for run, hits in zip(runs, found):
        run.on_retriever_end([to_langchain(d) for d in hits])
    return found
