"""One article, one hit: which article a Lucene hit belongs to (passages, copies kept by `--keep-copies` and foreign
layouts split one), and top-k as k distinct articles."""
from __future__ import annotations

from collections.abc import Iterator

from frames_agent.retrieval.lucene.titles import TitleTable, normalize_title
from frames_agent.retrieval.types import Document

FETCH_FACTOR = 2  # first Lucene fetch of a collapsing search: 2k hits, then doubled while articles repeat
MAX_FETCH_FACTOR = 32  # ... up to 32k hits: past that the query just keeps hitting the same few articles


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
