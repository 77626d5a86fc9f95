"""The systems FRAMES compares: multistep (the agent), naive, BM25-R and oracle; one answer prompt, one result type."""
from __future__ import annotations

import asyncio
import contextvars
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.state import AgentEvent, AgentResult, AnswerReady, StepRecord
from frames_agent.core.errors import FramesAgentError
from frames_agent.core.paths import write_atomic
from frames_agent.eval.frames.datasets import Question, normalize_title
from frames_agent.retrieval.types import Document, Retriever

SYSTEMS = ("multistep", "naive", "bm25", "oracle")
# Where this task's question sends the agent's events (set by the progress display): one per concurrent question.
WATCH: contextvars.ContextVar[Callable[[AgentEvent], None] | None] = contextvars.ContextVar("frames_watch",
                                                                                            default=None)


@dataclass
class SystemOutput:
    """A system's AgentResult plus, for the oracle, which gold articles it could and could not supply."""

    result: AgentResult
    oracle: dict | None = None


class System(Protocol):
    """Anything the runner can ask to answer (or only retrieve for) a question."""

    name: str

    async def run(self, question: Question, answer: bool = True) -> SystemOutput:
        """Answer one question (answer=False: retrieval only)."""
        ...


class MultiStep:
    """The FRAMES agent: k queries per step for n steps, then the answer."""

    name = "multistep"

    def __init__(self, agent: FramesAgent) -> None:
        self.agent = agent

    async def run(self, question: Question, answer: bool = True) -> SystemOutput:
        watch = WATCH.get()
        if watch is None:
            return SystemOutput(await self.agent.ainvoke(question.prompt, answer=answer))
        result = None
        async for event in self.agent.astream(question.prompt, answer=answer):  # the same result, step by step
            watch(event)
            result = event.result if isinstance(event, AnswerReady) else result
        assert result is not None, "a typed stream ends with its answer"
        return SystemOutput(result)


class Naive:
    """The question alone, no retrieval (the paper's naive prompt)."""

    name = "naive"

    def __init__(self, agent: FramesAgent) -> None:
        self.agent = agent

    async def run(self, question: Question, answer: bool = True) -> SystemOutput:
        if not answer:
            return SystemOutput(AgentResult(question=question.prompt))
        return SystemOutput(await self.agent.aanswer_from(question.prompt, []))


class BM25R:
    """BM25-R: the top n_docs hits for the question itself, then the answer."""

    name = "bm25"

    def __init__(self, agent: FramesAgent, retriever: Retriever, n_docs: int) -> None:
        self.agent, self.retriever, self.n_docs = agent, retriever, n_docs

    async def run(self, question: Question, answer: bool = True) -> SystemOutput:
        docs = await asyncio.to_thread(self.retriever.search, question.prompt, self.n_docs)
        step = StepRecord(step=1, queries=[question.prompt], new_doc_ids=[d.id for d in docs], origins=["question"],
                          query_hits=[len(docs)], new_doc_origins=["question"] * len(docs))
        if not answer:
            return SystemOutput(AgentResult(question=question.prompt, documents=docs, steps=[step]))
        result = await self.agent.aanswer_from(question.prompt, docs)
        return SystemOutput(result.model_copy(update={"steps": [step]}))


class WikipediaFetcher:
    """Whole Wikipedia pages via the `wikipedia` package, cached on disk; offline it reports, never waits."""

    def __init__(self, cache: Path, *, online: bool = True,
                 fetch: Callable[[str], tuple[str, str]] | None = None) -> None:
        self.cache, self.online = Path(cache), online
        self._fetch = fetch or _wikipedia_page
        self._lock = threading.Lock()

    def get(self, title: str) -> tuple[Document | None, str | None]:
        """(document, None) or (None, why it is missing)."""
        path = self.cache / (hashlib.sha1(normalize_title(title).encode()).hexdigest()[:24] + ".json")
        if path.exists():
            try:
                return Document.model_validate_json(path.read_text(encoding="utf-8")), None
            except (OSError, ValueError):
                pass  # a damaged cache entry is fetched again
        if not self.online:
            return None, "not in the index; offline and not in the Wikipedia cache"
        try:
            page_title, text = self._fetch(title)
        except Exception as exc:  # the package raises requests and its own errors alike
            if _is_network_error(exc):
                with self._lock:
                    self.online = False  # one failed connection is enough: later titles skip the network
                return None, "not in the index; Wikipedia unreachable (offline)"
            return None, f"not in the index; Wikipedia: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        doc = Document(id=f"wikipedia:{page_title}", title=title, text=text, source="wikipedia",
                       article_id=f"wikipedia:{page_title}")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, doc.model_dump_json())
        return doc, None


def _wikipedia_page(title: str) -> tuple[str, str]:
    import wikipedia
    from wikipedia import wikipedia as api

    # The package's endpoint is plain http, so anyone on the path could change what the oracle reads.
    api.API_URL = api.API_URL.replace("http://", "https://", 1)
    page = wikipedia.page(title, auto_suggest=False, redirect=True)
    return page.title, page.content


def _is_network_error(exc: Exception) -> bool:
    try:
        import requests
    except ImportError:  # pragma: no cover - requests comes with wikipedia
        return isinstance(exc, OSError)
    return isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.Timeout, OSError))


class Oracle:
    """The gold articles themselves: from the index by title, else Wikipedia (online), else reported missing."""

    name = "oracle"

    def __init__(self, agent: FramesAgent, retriever: Retriever | None, fetcher: WikipediaFetcher | None) -> None:
        self.agent, self.retriever, self.fetcher = agent, retriever, fetcher

    def _lookup(self, title: str) -> tuple[Document | None, str]:
        doc = self.retriever.by_title(title) if self.retriever is not None else None
        if doc is not None:
            return doc, "index"
        if self.fetcher is None:
            return None, "not in the index"
        fetched, why = self.fetcher.get(title)
        return (fetched, "wikipedia") if fetched is not None else (None, why or "missing")

    async def run(self, question: Question, answer: bool = True) -> SystemOutput:
        docs: list[Document] = []
        info: dict[str, Any] = {"found": [], "missing": [], "fetched": [], "reasons": {}}
        for title in question.gold_titles:
            doc, how = await asyncio.to_thread(self._lookup, title)
            if doc is None:
                info["missing"].append(title)
                info["reasons"][title] = how
                continue
            info["found"].append(title)
            if how == "wikipedia":
                info["fetched"].append(title)
            docs.append(doc)
        if not answer:
            return SystemOutput(AgentResult(question=question.prompt, documents=docs), info)
        return SystemOutput(await self.agent.aanswer_from(question.prompt, docs), info)


def make_system(name: str, agent: FramesAgent, *, n_docs: int, fetcher: WikipediaFetcher | None = None) -> System:
    """The named system over the agent's model and retriever."""
    retriever = agent.retriever
    if name == "multistep":
        return MultiStep(agent)
    if name == "naive":
        return Naive(agent)
    if name == "bm25":
        if retriever is None:
            raise FramesAgentError("--system bm25 needs a Wikipedia index (--tools without wiki has none)")
        return BM25R(agent, retriever, n_docs)
    if name == "oracle":
        return Oracle(agent, retriever, fetcher)
    raise FramesAgentError(f"unknown --system {name!r}; choose one of {', '.join(SYSTEMS)}")


class CoverageChecker:
    """Which gold titles the index holds at all; each title is looked up once per run."""

    def __init__(self, retriever: Retriever | None) -> None:
        self.retriever = retriever
        self._known: dict[str, bool] = {}
        self._aliases: dict[str, str] = {}
        self._lock = threading.Lock()

    def _present(self, title: str) -> bool:
        key = normalize_title(title)
        with self._lock:
            if key in self._known:
                return self._known[key]
        assert self.retriever is not None, "covered() asks only with an index"
        doc = self.retriever.by_title(title)
        with self._lock:
            self._known[key] = doc is not None
            if doc is not None and normalize_title(doc.title) != key:  # a redirect: its target is what counts
                self._aliases[key] = normalize_title(doc.title)
        return doc is not None

    def aliases(self, titles: tuple[str, ...]) -> dict[str, str]:
        """Normalised gold titles that are redirects, mapped to their targets' (after covered() saw them)."""
        with self._lock:
            return {k: self._aliases[k] for k in map(normalize_title, titles) if k in self._aliases}

    async def covered(self, titles: tuple[str, ...]) -> list[str] | None:
        """The titles present in the index (None when there is no index to ask)."""
        if self.retriever is None:
            return None
        flags = await asyncio.to_thread(lambda: [self._present(t) for t in titles])
        return [t for t, ok in zip(titles, flags) if ok]
