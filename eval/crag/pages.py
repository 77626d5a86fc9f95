"""CRAG task 1 retrieval source: a row's HTML pages -> clean text -> ~100-word chunks -> an in-memory BM25 retriever."""
from __future__ import annotations

import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from retrieval.types import Document

CHUNK_WORDS = 100
MAX_CHUNKS_PER_PAGE = 400  # ~40k words: a few pages are whole manuals; the rest of them is rarely the answer
_TOKEN = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_STOPWORDS = frozenset("""a an and are as at be but by did do does for from had has have how i in is it its of on or
that the their them there these they this to was were what when where which who whom whose why will with you your""".split())


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


def chunk_text(text: str, words: int = CHUNK_WORDS, max_chunks: int = MAX_CHUNKS_PER_PAGE) -> list[str]:
    """Sentence-packed chunks of about `words` words (long sentences are split)."""
    chunks, current = [], []
    for sentence in _SENTENCE.split(text):
        tokens = sentence.split()
        while tokens:
            room = words - len(current)
            current += tokens[:room]
            tokens = tokens[room:]
            if len(current) >= words:
                chunks.append(" ".join(current))
                current = []
                if len(chunks) >= max_chunks:
                    return chunks
    if current:
        chunks.append(" ".join(current))
    return chunks


def terms(text: str) -> list[str]:
    """BM25 terms: lower-case words without stopwords, with a light plural fold."""
    out = []
    for word in _TOKEN.findall(text.lower()):
        if word in _STOPWORDS:
            continue
        out.append(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return out


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
        parts = ([snippet] if snippet else []) + chunk_text(text, words)
        for j, part in enumerate(parts):
            doc_id = f"{row_id}:p{i}:c{j}"
            docs.append(Document(id=doc_id, article_id=doc_id, title=title, text=part, source="crag:page"))
    stats.chunks = len(docs)
    return docs, stats


class ChunkRetriever:
    """Okapi BM25 over one row's chunks, in memory (implements retrieval.types.Retriever)."""

    def __init__(self, documents: Sequence[Document], name: str = "crag-pages", k1: float = 1.2, b: float = 0.75) -> None:
        self.name, self.k1, self.b = name, k1, b
        self.documents = list(documents)
        self._by_id = {d.id: d for d in self.documents}
        self._tf = [Counter(terms(f"{d.title} {d.text}")) for d in self.documents]
        self._len = [sum(tf.values()) for tf in self._tf]
        self._avg = (sum(self._len) / len(self._len)) if self._len else 0.0
        df = Counter(t for tf in self._tf for t in tf)
        n = len(self.documents)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def search(self, query: str, k: int = 10) -> list[Document]:
        """Top-k chunks for the query (chunks sharing no term with it are never returned)."""
        q = set(terms(query))
        scored = []
        for i, tf in enumerate(self._tf):
            score = 0.0
            for t in q & tf.keys():
                f = tf[t]
                score += self._idf[t] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self._len[i] / self._avg))
            if score > 0:
                scored.append((score, i))
        scored.sort(key=lambda s: (-s[0], s[1]))
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
