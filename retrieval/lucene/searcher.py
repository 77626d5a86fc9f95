"""BM25 search over a Lucene index (plain query text, a title field, one hit per article), calling Anserini's
SimpleSearcher through jnius: pyserini's Python layer pulls torch (~7 s) for Java classes that load in under a second."""
from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from frames_agent.core.errors import RetrievalError, first_line
from frames_agent.retrieval.lucene.layout import check_index_dir, content_fingerprint, hold_reader, read_manifest
from frames_agent.retrieval.lucene.titles import TitleTable, normalize_title, read_title_table
from frames_agent.retrieval.types import Document

# Weight of the title field against the body (1.0) in the BM25F-style sum; chosen on FRAMES dev BM25-R recall.
DEFAULT_TITLE_BOOST = 0.75
TITLE_FIELD = "title"
_TERM = re.compile(r"\w+")
# Lucene refuses over 1,024 clauses (TooManyClauses), and with the title field each term is a clause twice.
MAX_TERMS = 500
_SURROGATE = re.compile("[\ud800-\udfff]")  # undecodable input bytes; the JVM cannot encode them
_log = logging.getLogger(__name__)
FETCH_FACTOR = 2  # first Lucene fetch of a collapsing search: 2k hits, then doubled while articles repeat
MAX_FETCH_FACTOR = 32  # ... up to 32k hits: past that the query just keeps hitting the same few articles


class BM25Retriever:
    """Retriever over a Lucene index built by `index build` (or any Anserini index with stored raw docs)."""

    def __init__(self, index_dir: str | os.PathLike, *, name: str | None = None, threads: int = 4,
                 title_boost: float = DEFAULT_TITLE_BOOST, exact_title: bool = True):
        """Open the index at index_dir (resolve_index for names); title_boost and exact_title are the agent's settings."""
        from frames_agent.retrieval.lucene.jvm import CALL_LOCK, start_jvm

        self.index_dir = check_index_dir(Path(index_dir))
        self.manifest = read_manifest(self.index_dir)
        self.unit = (self.manifest or {}).get("unit", "article")
        self.name = name or (self.manifest or {}).get("name") or self.index_dir.name
        self.source = f"bm25:{self.name}"
        # What the index holds, independent of its name: runs record it and refuse to resume against other content.
        self.fingerprint = content_fingerprint(self.index_dir, self.manifest)
        self.threads = max(1, int(threads))
        if title_boost < 0:
            raise RetrievalError(f"title_boost must be >= 0, got {title_boost!r}")
        self.title_boost, self.exact_title = float(title_boost), bool(exact_title)
        start_jvm()
        from jnius import JavaException, autoclass

        self._lock = CALL_LOCK
        self._java_error = JavaException
        self._array_list = autoclass("java.util.ArrayList")
        self._fields = field_weights(autoclass, self.manifest, self.title_boost)
        with self._lock:
            try:
                self._searcher = autoclass("io.anserini.search.SimpleSearcher")(str(self.index_dir))
            except JavaException as exc:
                raise RetrievalError(open_error(self.index_dir, first_line(exc))) from exc
        self._reader = hold_reader(self.index_dir)  # until close(), rebuilding this index is refused
        # Where every document is a whole article of its own, top-k needs no over-fetch to be k articles.
        self._distinct = bool((self.manifest or {}).get("one_doc_per_article"))
        self._table: TitleTable | None = None
        self._table_read = False
        self._titles_lock = threading.Lock()

    # -- searching ---------------------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10) -> list[Document]:
        """Top-k articles for one query (plain text, no Lucene syntax), best first, each as its best hit."""
        (hits,) = self._collapsed([plain_query(check_query(query))], check_k(k))
        return self._exact_first(query, hits, k)

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Document]]:
        """Top-k articles for each query, searched in parallel on Java threads, in the order of the queries."""
        texts = [plain_query(check_query(q)) for q in queries]
        k = check_k(k)
        return [self._exact_first(query, hits, k) for query, hits in zip(queries, self._collapsed(texts, k))]

    # -- lookups -----------------------------------------------------------------------------------------------
    def doc(self, doc_id: str) -> Document | None:
        """The stored document with this id; a passage index's article id or a merged copy's id gives the article."""
        doc_id = str(doc_id)
        raw = self._java_raw(doc_id)
        if raw is not None:
            return self._raw_document(raw, score=0.0)
        whole = self._whole_article(doc_id) if self.unit == "passage" and "#" not in doc_id else None
        kept = (self._title_table() or TitleTable()).aliases.get(doc_id)
        return whole or (self.doc(kept) if kept and kept != doc_id else None)

    def as_langchain(self, k: int = 10) -> Any:
        """This index as a LangChain BaseRetriever (top-k LangChain Documents per query)."""
        from frames_agent.retrieval.bridges import FramesRetriever

        return FramesRetriever(retriever=self, k=k)

    def by_title(self, title: str) -> Document | None:
        """The whole article with this title (case, underscores and URL escapes ignored), if any."""
        key = normalize_title(title)
        if not key:
            return None
        table = self._title_table()
        if table is None:  # foreign index without our title table: search, then compare titles
            hit = next((h for h in self.search(key, 20) if normalize_title(h.title) == key), None)
            return hit.model_copy(update={"score": 0.0}) if hit else None
        article_id = table.titles.get(key)
        if article_id is None:
            return None
        return self._whole_article(article_id) if self.unit == "passage" else self.doc(article_id)

    def has_title(self, title: str) -> bool:
        """Whether an article has this title or a redirect from it (no document is read)."""
        table = self._title_table()
        if table is None:
            return self.by_title(title) is not None
        return normalize_title(title) in table.titles

    @property
    def num_docs(self) -> int:
        """Number of documents (units) in the index."""
        with self._lock:
            return int(self._searcher.get_total_num_docs())

    def iter_documents(self, batch: int = 1000) -> Iterator[Document]:
        """Every stored document (unit) in index order; what a dense index over this one encodes."""
        total = self.num_docs
        for start in range(0, total, batch):
            with self._lock:
                raws = [self._searcher.doc(i).get("raw") for i in range(start, min(start + batch, total))]
            yield from (self._raw_document(raw, score=0.0) for raw in raws if raw)

    def close(self) -> None:
        """Release the Lucene reader."""
        with self._lock:
            self._searcher.close()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> BM25Retriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- Java calls: each runs under the process-wide jnius lock and returns plain Python values ----------------
    def _java_search(self, query: str, k: int) -> list[tuple[str, float, str | None]]:
        with self._lock:
            try:
                hits = (self._searcher.search_fields(query, self._fields, k) if self._fields is not None
                        else self._searcher.search(query, k))
                return [_hit_tuple(hit) for hit in hits]
            except self._java_error as exc:
                shown = query if len(query) <= 80 else query[:77] + "..."
                raise RetrievalError(f"search failed for {shown!r}: {first_line(exc)[:200]}") from exc

    def _java_batch(self, queries: list[str], k: int) -> list[list[tuple[str, float, str | None]]]:
        with self._lock:
            texts, qids = self._array_list(), self._array_list()
            for i, query in enumerate(queries):
                texts.add(query)
                qids.add(str(i))
            try:
                threads = min(self.threads, len(queries))
                results = (self._searcher.batch_search_fields(texts, qids, k, threads, self._fields)
                           if self._fields is not None else self._searcher.batch_search(texts, qids, k, threads))
            except self._java_error as exc:
                raise RetrievalError(f"batch search failed: {first_line(exc)[:200]}") from exc
            return [[_hit_tuple(hit) for hit in (results.get(str(i)) or [])] for i in range(len(queries))]

    def _java_raw(self, doc_id: str) -> str | None:
        with self._lock:
            return self._searcher.doc_raw(doc_id)

    # -- internals ---------------------------------------------------------------------------------------------
    def _collapsed(self, texts: list[str], k: int) -> list[list[Document]]:
        """k distinct articles per query: fetch more Lucene hits while articles repeat and Lucene has more."""
        parsed: dict[str, Document] = {}  # the k queries of a step often share hits: parse each document once
        found: list[list[Document]] = [[] for _ in texts]
        pending = list(range(len(texts)))
        for depth in fetch_depths(k, self._distinct):
            if not pending:
                break
            batch = [texts[i] for i in pending]
            hits = self._java_batch(batch, depth) if len(batch) > 1 else [self._java_search(batch[0], depth)]
            short = []
            for i, raw_hits in zip(pending, hits):
                found[i] = collapse([self._cached_hit(parsed, *hit) for hit in raw_hits], k)
                if len(found[i]) < k and len(raw_hits) == depth:
                    short.append(i)
            pending = short
        return found

    def _exact_first(self, query: str, hits: list[Document], k: int) -> list[Document]:
        table = self._title_table() if self.exact_title else None
        article_id = table.titles.get(normalize_title(query)) if table else None
        return exact_first(hits, k, article_id, self._article_hit)

    def _article_hit(self, article_id: str) -> Document | None:
        """An article's (first) document as a search hit would give it: its article key, a copy as the kept one."""
        doc_id = article_id if self.unit == "article" else f"{article_id}#0"
        raw = self._java_raw(doc_id)
        return self._hit_document(doc_id, 0.0, raw) if raw is not None else None

    def _hit_document(self, doc_id: str, score: float, raw: str | None) -> Document:
        """A hit as the article it belongs to: its article_id is the article key, and id == article_id a whole article."""
        # On an article index a copy's hit becomes the kept article's document (with the copy's score).
        if raw is None:
            return Document(id=doc_id, score=score, source=self.source, article_id=doc_id)
        data = json.loads(raw)
        doc = self._raw_document(data, score=score)
        key = article_key(self._title_table(), doc.id, doc.title, str(data.get("article_id") or "") or None)
        kept_raw = self._java_raw(key) if self.unit == "article" and key != doc.id else None
        if kept_raw is not None:
            doc = self._raw_document(kept_raw, score=score)
        return doc.model_copy(update={"article_id": key})

    def _cached_hit(self, parsed: dict[str, Document], doc_id: str, score: float, raw: str | None) -> Document:
        doc = parsed.get(doc_id)
        if doc is None:
            doc = parsed[doc_id] = self._hit_document(doc_id, score, raw)
        return doc if doc.score == score else doc.model_copy(update={"score": score})

    def _raw_document(self, raw: str | dict, *, score: float) -> Document:
        data = json.loads(raw) if isinstance(raw, str) else raw
        doc_id = str(data.get("id", ""))
        contents = str(data.get("contents", ""))
        title = data.get("title")
        if title is None:  # foreign indexes (e.g. KILT) put the title on the first line of contents
            first, _, rest = contents.partition("\n")
            title, text = (first, rest) if rest and len(first) < 200 else ("", contents)
        else:
            title = str(title)
            text = contents[len(title) + 1:] if contents.startswith(title + "\n") else contents
        article_id = str(data.get("article_id") or doc_id)
        return Document(id=doc_id, title=title, text=text, score=score, source=self.source, article_id=article_id)

    def _whole_article(self, article_id: str) -> Document | None:
        count = (self._title_table() or TitleTable()).units.get(article_id, 0)
        parts = [p for n in range(count) if (p := self.doc(f"{article_id}#{n}")) is not None]
        if not parts:
            return None
        text = "\n".join(p.text for p in parts)
        return Document(id=article_id, title=parts[0].title, text=text, source=self.source, article_id=article_id)

    def _title_table(self) -> TitleTable | None:
        with self._titles_lock:  # loaded once, on first use, by whichever thread gets here first
            if not self._table_read:
                self._table, self._table_read = read_title_table(self.index_dir), True
            return self._table


# -- query text: plain, capped and checked; the title as a field of its own; the exact-title path -------------
def check_query(query: str) -> str:
    """The query itself, or a RetrievalError when it has nothing to search for."""
    if not isinstance(query, str) or not _TERM.search(query):
        raise RetrievalError(f"empty query {query!r}: it needs at least one letter or digit")
    return query


def check_k(k: int) -> int:
    """k itself, or a RetrievalError when it is not a positive integer."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise RetrievalError(f"k must be a positive integer, got {k!r}")
    return k


def plain_query(query: str) -> str:
    """Query text for Lucene's tokenizer, which would keep "title:Paris" as one token (':' joins letters)."""
    text, dropped = cap_terms(_SURROGATE.sub(" ", query.replace(":", " ")))
    if dropped:
        _log.warning("query has more than %d distinct terms: searched the first %d, dropped %d",
                     MAX_TERMS, MAX_TERMS, dropped)
    return text


def field_weights(autoclass: Callable, manifest: dict | None, title_boost: float) -> Any:
    """A Java Map {contents: 1, title: boost} for search_fields, or None for the body alone (no boost or no title)."""
    if title_boost <= 0 or TITLE_FIELD not in (manifest or {}).get("fields", []):
        return None
    java_float = autoclass("java.lang.Float")
    weights = autoclass("java.util.HashMap")()
    weights.put("contents", java_float(1.0))
    weights.put(TITLE_FIELD, java_float(float(title_boost)))
    return weights


def exact_first(hits: list[Document], k: int, article_id: str | None,
                fetch: Callable[[str], Document | None]) -> list[Document]:
    """hits with the article the query names (title or redirect) first and once; fetch reads it if BM25 missed it."""
    if article_id is None or (hits and hits[0].key == article_id):
        return hits
    doc = fetch(article_id)
    if doc is None or (hits and hits[0].key == doc.key):
        return hits
    top = doc.model_copy(update={"score": hits[0].score if hits else 0.0})
    return [top, *(h for h in hits if h.key != top.key)][:k]


def cap_terms(query: str, limit: int = MAX_TERMS) -> tuple[str, int]:
    """(query keeping only its first `limit` distinct terms, how many distinct terms were dropped)."""
    terms = _TERM.findall(query)
    distinct = dict.fromkeys(t.casefold() for t in terms)
    if len(distinct) <= limit:
        return query, 0
    kept = set(list(distinct)[:limit])
    return " ".join(t for t in terms if t.casefold() in kept), len(distinct) - limit


# -- one article, one hit: passages, copies kept by --keep-copies and foreign layouts split one --------------
def article_key(table: TitleTable | None, doc_id: str, title: str, stored: str | None) -> str:
    """The article key of a hit with this id, title and stored article id (None when the raw doc has none)."""
    if table is None:
        return stored or normalize_title(title) or doc_id
    own = stored or doc_id
    return table.aliases.get(own, own)


def collapse(hits: list[Document], k: int) -> list[Document]:
    """The first (best) hit of each article, in order, at most k."""
    seen: set[str] = set()
    kept: list[Document] = []
    for hit in hits:
        if hit.key not in seen:
            seen.add(hit.key)
            kept.append(hit)
            if len(kept) == k:
                break
    return kept


def fetch_depths(k: int, distinct: bool) -> Iterator[int]:
    """How many Lucene hits to fetch, in turn, to find k distinct articles (just k where every document is one)."""
    if distinct:
        yield k
        return
    depth, cap = FETCH_FACTOR * k, MAX_FETCH_FACTOR * k
    while True:
        yield min(depth, cap)
        if depth >= cap:
            return
        depth *= 2


def _hit_tuple(hit: Any) -> tuple[str, float, str | None]:
    return str(hit.docid), float(hit.score), hit.lucene_document.get("raw")


def open_error(index_dir: Path, java_error: str) -> str:
    """Why Lucene could not open an index, in one line: another major version (rebuild it) or a corrupt index."""
    unknown_codec = "org.apache.lucene.codecs.Codec with name" in java_error  # a codec only a newer Lucene has
    if "IndexFormatTooNew" in java_error or "IndexFormatTooOld" in java_error or unknown_codec:
        which = "older" if "IndexFormatTooOld" in java_error else "newer"
        return (f"index {index_dir} was written by a {which} Lucene than this pyserini reads (Python 3.11 has "
                "pyserini 1.6/Lucene 9, 3.12+ pyserini 2.x/Lucene 10): rebuild it here with `frames-agent index "
                "build` (or use the Python it was built with)")
    return f"corrupt index {index_dir}: Lucene cannot open it ({java_error})"


