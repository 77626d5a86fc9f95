"""One article, one hit: which article a Lucene hit belongs to, and top-k as k distinct articles.

An article can have several documents in an index: passages, copies kept by `--keep-copies`, copies in indexes built
before copies were merged (format 3), or a foreign index's own layout. A hit's article key is
- on our indexes before format 4: the title table's id for the hit's normalised title (copies then share the id
  of the article the table kept), provided both titles are the same canonical title (so "Red dwarf" and
  "Red Dwarf", two articles, stay apart); else the stored article id, else the id;
- on our newer indexes: the kept id of a copy (aliases.tsv), else the stored article id, else the id;
- on foreign indexes (no title table): the stored article id, else the normalised title, else the id.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from frames_agent.retrieval.lucene.titles import TitleTable, canonical_title, normalize_title
from frames_agent.retrieval.types import Document

FETCH_FACTOR = 2  # first Lucene fetch of a collapsing search: 2k hits, then doubled while articles repeat
MAX_FETCH_FACTOR = 32  # ... up to 32k hits: past that the query just keeps hitting the same few articles


class ArticleKeys:
    """The article key of a hit on one index (the rules in the module docstring)."""

    def __init__(self, table: TitleTable | None, legacy: bool, title_of: Callable[[str], str | None]) -> None:
        """title_of reads an article's stored title by id (only the pre-format-4 rule needs it)."""
        self.table, self.legacy, self._title_of = table, legacy, title_of
        self._titles: dict[str, str] = {}  # kept id -> canonical title, read once each

    def key(self, doc_id: str, title: str, stored: str | None) -> str:
        """The article key of a hit with this id, title and stored article id (None when the raw doc has none)."""
        if self.table is None:
            return stored or normalize_title(title) or doc_id
        own = stored or doc_id
        if not self.legacy:
            return self.table.aliases.get(own, own)
        kept = self.table.titles.get(normalize_title(title))
        if kept and kept != own and self._canonical(kept) == canonical_title(title):
            return kept
        return own

    def _canonical(self, article_id: str) -> str:
        if article_id not in self._titles:
            self._titles[article_id] = canonical_title(self._title_of(article_id) or "")
        return self._titles[article_id]


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
