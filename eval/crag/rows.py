"""CRAG rows (.jsonl, .jsonl.bz2, .jsonl.gz) read robustly (bad lines and truncated files become per-row errors), and
a row's HTML pages as ~100-word chunks behind an in-memory BM25 retriever (task 1's retrieval source)."""
from __future__ import annotations

import bz2
import gzip
import json
import logging
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from frames_agent.core.errors import FramesAgentError
from frames_agent.retrieval.bm25 import OkapiBM25, terms
from frames_agent.retrieval.context import chunk_text
from frames_agent.retrieval.types import Document

CHUNK_WORDS = 100
MAX_CHUNKS_PER_PAGE = 400  # ~40k words: a few pages are whole manuals; the rest of them is rarely the answer


@dataclass
class CragRow:
    """One CRAG question with its ground truth and search results."""

    index: int
    interaction_id: str
    query: str
    answer: str
    query_time: str = ""
    domain: str = "unknown"
    question_type: str = "unknown"
    static_or_dynamic: str = "unknown"
    pages: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class RowError:
    """A line that could not become a row (or the point where the file broke off)."""

    index: int
    interaction_id: str
    message: str


def _open(path: Path) -> BinaryIO:
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")  # type: ignore[return-value]
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def parse_row(index: int, data: Any, warnings: list[str] | None = None) -> CragRow | RowError:
    """A CragRow from one decoded JSON line, or a RowError naming the missing field."""
    warnings = list(warnings or [])
    if not isinstance(data, dict):
        return RowError(index, f"row-{index}", f"line {index + 1}: not a JSON object")
    row_id = str(data.get("interaction_id") or f"row-{index}")
    for name in ("query", "answer"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            return RowError(index, row_id, f"line {index + 1} ({row_id}): missing field '{name}'")
    pages = data.get("search_results")
    if not isinstance(pages, list):
        warnings.append("no search_results; answering without pages")
        pages = []
    text = {k: str(data.get(k) or "unknown") for k in ("domain", "question_type", "static_or_dynamic")}
    return CragRow(index=index, interaction_id=row_id, query=data["query"].strip(), answer=data["answer"],
                   query_time=str(data.get("query_time") or ""), pages=pages, warnings=warnings, **text)


def iter_rows(path: str | Path) -> Iterator[CragRow | RowError]:
    """Rows in file order; a broken line or a truncated/corrupt compressed file yields a RowError, never raises."""
    path = Path(path)
    if not path.is_file():
        raise FramesAgentError(f"no CRAG data file {path}")
    index = 0
    try:
        with _open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    text, warnings = line.decode("utf-8"), []
                except UnicodeDecodeError:
                    text, warnings = line.decode("utf-8", errors="replace"), ["non-UTF-8 bytes replaced by U+FFFD"]
                try:
                    data = json.loads(text)
                except json.JSONDecodeError as exc:
                    yield RowError(index, f"row-{index}", f"line {index + 1}: not valid JSON ({exc.msg})")
                else:
                    yield parse_row(index, data, warnings)
                index += 1
    except (EOFError, OSError, zlib.error) as exc:
        reason = "file ends early (truncated)" if isinstance(exc, EOFError) else f"cannot read it ({exc})"
        yield RowError(index, f"row-{index}", f"{path.name}: {reason} after {index} rows; later rows are lost")


def clean_unicode(text: str) -> str:
    """Text without lone surrogates or other unencodable code points (they break parsers and tokenizers)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def html_to_text(html: str) -> tuple[str, str]:
    """(clean text, how it was obtained): trafilatura, else a BeautifulSoup text dump, else a tag strip."""
    if not isinstance(html, str) or not html.strip():
        return "", "empty"
    html = clean_unicode(html)
    try:
        import trafilatura

        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
        text = trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True) or ""
        if text.strip():
            return text.strip(), "trafilatura"
    except Exception:  # broken markup or an extractor bug: fall through to the plain-text dump
        pass
    try:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(html, "lxml")
        for tag in soup(["script", "style", "noscript", "template", "svg"]):
            tag.decompose()
        text = soup.get_text("\n")
    except Exception:
        text = re.sub(r"<[^>]*>", " ", html)
    text = "\n".join(" ".join(line.split()) for line in text.splitlines())
    text = re.sub(r"\n{2,}", "\n", text).strip()
    return text, "fallback" if text else "no_text"


@dataclass
class PageStats:
    """What happened to a row's pages."""

    pages: int = 0
    duplicates: int = 0
    empty: int = 0
    fallback: int = 0
    chunks: int = 0
    warnings: list[str] = field(default_factory=list)


def page_documents(row_id: str, pages: Sequence[Any], words: int = CHUNK_WORDS) -> tuple[list[Document], PageStats]:
    """Chunk documents for a row's search results (snippet first, then the page text); duplicate pages once."""
    docs: list[Document] = []
    stats, seen = PageStats(), set()
    for i, page in enumerate(pages):
        if not isinstance(page, dict):
            stats.warnings.append(f"page {i}: not an object")
            continue
        stats.pages += 1
        key = page.get("page_url") or page.get("page_name") or i
        if key in seen:
            stats.duplicates += 1
            continue
        seen.add(key)
        text, how = html_to_text(page.get("page_result") or "")
        stats.empty += how in ("empty", "no_text")
        stats.fallback += how == "fallback"
        title = clean_unicode(str(page.get("page_name") or page.get("page_url") or f"page {i}"))[:120]
        modified = str(page.get("page_last_modified") or "").strip()
        if modified:
            title += f" (last modified {modified})"
        snippet = clean_unicode(re.sub(r"<[^>]*>", "", str(page.get("page_snippet") or ""))).strip()
        parts = ([snippet] if snippet else []) + chunk_text(text, words, MAX_CHUNKS_PER_PAGE)
        for j, part in enumerate(parts):
            doc_id = f"{row_id}:p{i}:c{j}"
            docs.append(Document(id=doc_id, article_id=doc_id, title=title, text=part, source="crag:page"))
    stats.chunks = len(docs)
    return docs, stats


def page_articles(chunks: Sequence[Document]) -> list[Document]:
    """One document per page from its chunks, so context-wide selection ranks every page's passages together."""
    pages: dict[str, list[Document]] = {}
    for chunk in chunks:
        pages.setdefault(chunk.id.rsplit(":c", 1)[0], []).append(chunk)
    return [Document(id=page, article_id=page, title=parts[0].title, text="\n".join(p.text for p in parts),
                     source=parts[0].source) for page, parts in pages.items()]


class ChunkRetriever:
    """Okapi BM25 over one row's chunks, in memory (implements retrieval.types.Retriever)."""

    name = "crag-pages"

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = list(documents)
        self._by_id = {d.id: d for d in self.documents}
        self._bm25 = OkapiBM25([terms(f"{d.title} {d.text}") for d in self.documents], k1=1.2, b=0.75, idf="lucene")

    def search(self, query: str, k: int = 10) -> list[Document]:
        """Top-k chunks for the query (chunks sharing no term with it are never returned)."""
        scores = self._bm25.scores(list(dict.fromkeys(terms(query))))
        scored = sorted(((float(s), i) for i, s in enumerate(scores) if s > 0), key=lambda s: (-s[0], s[1]))
        return [self.documents[i].model_copy(update={"score": round(s, 4)}) for s, i in scored[:max(k, 0)]]

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Document]]:
        """search() for each query, in order."""
        return [self.search(q, k) for q in queries]

    def doc(self, doc_id: str) -> Document | None:
        """A chunk by id."""
        return self._by_id.get(doc_id)

    def by_title(self, title: str) -> Document | None:
        """The first chunk of the page with this title."""
        want = title.strip().lower()
        return next((d for d in self.documents if d.title.lower().startswith(want)), None)
