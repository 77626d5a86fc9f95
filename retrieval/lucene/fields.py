"""Query text (plain, capped, checked), the title as a search field of its own (BM25F-style weights) and the
exact-title path."""
from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from frames_agent.core.errors import RetrievalError
from frames_agent.retrieval.types import Document

# Weight of the title field against the body (1.0) in the BM25F-style sum; chosen on FRAMES dev BM25-R recall.
DEFAULT_TITLE_BOOST = 0.75
TITLE_FIELD = "title"
_TERM = re.compile(r"\w+")
# Lucene refuses over 1,024 clauses (TooManyClauses), and with the title field each term is a clause twice.
MAX_TERMS = 500
_SURROGATE = re.compile("[\ud800-\udfff]")  # undecodable input bytes; the JVM cannot encode them
_log = logging.getLogger("frames_agent.retrieval.lucene.searcher")  # where users (and tests) listen for search warnings


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
