"""LangChain bridges: any BaseRetriever as our Retriever, ours as a BaseRetriever, and traced batch searches."""
from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from langchain_core.runnables.config import get_callback_manager_for_config, run_in_executor
from pydantic import ConfigDict, Field

from frames_agent.core.errors import RetrievalError, UsageError
from frames_agent.retrieval.types import Document, Retriever

# What the agent calls; the rest of the Retriever protocol (search, doc, by_title) serves baselines and tools.
_AGENT_NEEDS = ("batch_search",)
# Recent documents a LangChain adapter keeps for doc()/by_title(): flat memory, yet a question's hits fit many times.
KEEP_RECENT = 2048


def to_langchain(doc: Document) -> LCDocument:
    """Our Document as a LangChain Document (id, title, score and source in the metadata)."""
    return LCDocument(id=doc.id, page_content=doc.text, metadata={
        "id": doc.id, "title": doc.title, "score": doc.score, "source": doc.source, "article_id": doc.article_id})


def from_langchain(doc: LCDocument, rank: int, source: str = "langchain") -> Document:
    """A LangChain Document as ours; without an id or title, the metadata's or the rank stands in."""
    meta = doc.metadata or {}
    doc_id = str(doc.id or meta.get("id") or meta.get("source") or f"{source}#{rank}")
    title = str(meta.get("title") or meta.get("source") or doc_id)
    score = meta.get("score", meta.get("relevance_score", 0.0))
    return Document(id=doc_id, title=title, text=doc.page_content, source=str(meta.get("source") or source),
                    score=float(score) if isinstance(score, (int, float)) else 0.0, article_id=meta.get("article_id"))


def as_documents(docs: Iterable[Any], source: str = "langchain") -> list[Document]:
    """Ours as they are, LangChain Documents converted (from_langchain); a one-line UsageError for anything else."""
    out = []
    for rank, doc in enumerate(docs):
        if isinstance(doc, LCDocument):
            doc = from_langchain(doc, rank, source)
        elif not isinstance(doc, Document):
            raise UsageError(f"document {rank} is a {type(doc).__name__}: pass retrieval.Document or LangChain "
                             "Document objects")
        out.append(doc)
    return out


class LangChainRetriever:
    """Any LangChain BaseRetriever (or a binding of one) behind our Retriever protocol (docs/library.md)."""

    traces_itself = True  # traced_batch_search leaves the reporting to LangChain's own retriever runs

    def __init__(self, retriever: Runnable, name: str | None = None, keep: int = KEEP_RECENT,
                 own_k: bool = False) -> None:
        self.retriever = retriever
        base = retriever.bound if isinstance(retriever, RunnableBinding) else retriever
        if not isinstance(base, BaseRetriever):
            raise UsageError(f"{type(base).__name__} is not a LangChain BaseRetriever")
        self.base = base
        self.name = name or self.base.get_name()
        self.keep, self.own_k = keep, own_k
        self._seen: OrderedDict[str, Document] = OrderedDict()
        self._lock = threading.Lock()  # searches run concurrently (ainvoke, batch) in the agent's thread pool

    def _runner(self, k: int) -> Runnable:
        """The retriever set to return k hits (the rule above), inside its binding if it came with one."""
        if self.own_k:
            return self.retriever
        kwargs = getattr(self.base, "search_kwargs", None)
        if isinstance(kwargs, dict):
            base = self.base.model_copy(update={"search_kwargs": {**kwargs, "k": k}})
        elif "k" in type(self.base).model_fields:
            base = self.base.model_copy(update={"k": k})
        else:
            return self.retriever
        return self.retriever.model_copy(update={"bound": base}) if isinstance(self.retriever, RunnableBinding) else base

    def _failed(self, exc: Exception) -> RetrievalError:
        first = str(exc).splitlines()[0] if str(exc) else ""
        return RetrievalError(f"retriever {self.name}: {type(exc).__name__}: {first}")

    def _kept(self, found: Sequence[Sequence[LCDocument]], k: int) -> list[list[Document]]:
        out = [[from_langchain(d, rank, f"langchain:{self.name}") for rank, d in enumerate(docs[:k])] for docs in found]
        with self._lock:
            for doc in (d for docs in out for d in docs):
                self._seen[doc.id] = doc
                self._seen.move_to_end(doc.id)
            while len(self._seen) > self.keep:
                self._seen.popitem(last=False)
        return out

    def search(self, query: str, k: int = 10, config: RunnableConfig | None = None) -> list[Document]:
        """Top-k documents for one query, best first."""
        return self.batch_search([query], k, config)[0]

    def batch_search(self, queries: Sequence[str], k: int = 10,
                     config: RunnableConfig | None = None) -> list[list[Document]]:
        """Top-k documents for each query, in order; the queries run concurrently (Runnable.batch's threads)."""
        try:
            # A remote store's failure is a retrieval error, one line.
            found = self._runner(k).batch(list(queries), config, return_exceptions=False) if queries else []
        except Exception as exc:
            raise self._failed(exc) from exc
        return self._kept(found, k)

    async def abatch_search(self, queries: Sequence[str], k: int = 10,
                            config: RunnableConfig | None = None) -> list[list[Document]]:
        """Async batch_search: the retriever's own async path (ainvoke), the queries gathered at once."""
        runner = self._runner(k)
        try:
            found = await asyncio.gather(*(runner.ainvoke(q, config) for q in queries))
        except Exception as exc:
            raise self._failed(exc) from exc
        return self._kept(found, k)

    def doc(self, doc_id: str) -> Document | None:
        """A document among the last `keep` this adapter returned (LangChain retrievers have no lookup by id)."""
        with self._lock:
            return self._seen.get(doc_id)

    def by_title(self, title: str) -> Document | None:
        """A recently returned document with this title (case and underscores ignored), the latest first."""
        want = title.replace("_", " ").casefold()
        with self._lock:
            recent = list(reversed(self._seen.values()))
        return next((d for d in recent if d.title.replace("_", " ").casefold() == want), None)


class FramesRetriever(BaseRetriever):
    """Our Retriever as a LangChain BaseRetriever; hits per query: invoke(q, k=2), else search_kwargs["k"], else k."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any
    k: int = 10
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[LCDocument]:
        options = {**self.search_kwargs, **kwargs}
        k = options.pop("k", None)
        k = self.k if k is None else k
        if options:
            raise UsageError(f"unknown search argument(s) {', '.join(sorted(options))}: only k is known")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise UsageError(f"k must be a positive whole number, got {k!r}")
        return [to_langchain(d) for d in self.retriever.search(query, k)]

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[LCDocument]:
        return await run_in_executor(None, self._get_relevant_documents, query, run_manager=run_manager.get_sync(),
                                     **kwargs)


def as_retriever(retriever: Any) -> Retriever | None:
    """Our Retriever for any accepted object (ours, or a LangChain BaseRetriever); a one-line error otherwise."""
    if retriever is None or isinstance(retriever, LangChainRetriever):
        return retriever
    if isinstance(retriever, FramesRetriever):
        return retriever.retriever
    if isinstance(retriever, BaseRetriever) or (isinstance(retriever, RunnableBinding)
                                                and isinstance(retriever.bound, BaseRetriever)):
        return LangChainRetriever(retriever)
    missing = [attr for attr in _AGENT_NEEDS if not callable(getattr(retriever, attr, None))]
    if missing:
        raise UsageError(f"the retriever {type(retriever).__name__} has no {', '.join(missing)}(): pass a LangChain "
                         "BaseRetriever or a retrieval.Retriever (name, search, batch_search, doc, by_title)")
    return retriever


def traced_batch_search(retriever: Retriever, queries: Sequence[str], k: int,
                        config: RunnableConfig | None = None) -> list[list[Document]]:
    """batch_search as one retriever run per query in the run's callbacks; a self-tracing retriever gets the config."""
    if getattr(retriever, "traces_itself", False):
        return retriever.batch_search(queries, k, config)  # type: ignore[call-arg]
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
