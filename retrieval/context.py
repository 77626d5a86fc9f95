"""The agent's context: article-level dedup (C <- C ∪ (D \\ C)) and rendering under a token budget."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from frames_agent.retrieval.passages import ShownPassages
from frames_agent.retrieval.selection import SEPARATOR_TOKENS, Article, ContextSelection, choose
from frames_agent.retrieval.tokens import count_tokens, truncate_tokens
from frames_agent.retrieval.types import Document

# Tokens below which a partly fitting document is not worth showing.
_MIN_PARTIAL_TOKENS = 30


@dataclass
class ContextEntry:
    """One article in the context, with every passage of it found so far."""

    key: str
    step: int
    rank: int
    documents: list[Document] = field(default_factory=list)

    @property
    def title(self) -> str:
        """The article's title."""
        return self.documents[0].title if self.documents else ""

    def text(self) -> str:
        """Passages in the order found; whole articles are just their text."""
        return "\n…\n".join(d.text for d in self.documents)


@dataclass
class RenderedContext:
    """Context text for a prompt and what the budget left out."""

    text: str
    shown: int = 0
    cut: int = 0
    tokens: int = 0
    tokens_cut: int = 0
    shown_keys: list[str] = field(default_factory=list)
    shown_titles: list[str] = field(default_factory=list)
    # Passage mode only: which passages of which article were shown.
    articles: list[ShownPassages] = field(default_factory=list)
    # Context-wide selection only: passages that shared a term with the question (the candidates ranked).
    passages_ranked: int = 0


def merge(context: list[ContextEntry], found: Sequence[tuple[int, Document]], step: int) -> list[Document]:
    """Add the documents not yet in context (in place); return the new ones.

    `found` pairs each document with its rank in its query's hits. Dedup is per article (Document.key, the
    article's identity): a new passage of a known article joins that article's entry instead of becoming a second
    article, and a whole article (id == key) whose article is already read is a copy, not news.
    """
    by_key = {entry.key: entry for entry in context}
    seen_ids = {d.id for entry in context for d in entry.documents}
    added: list[Document] = []
    for rank, doc in found:
        known = by_key.get(doc.key)
        if known is not None and (doc.id in seen_ids or doc.id == doc.key or _whole(known)):
            # Found again, maybe higher up for another query: that is a sign of use, so it moves up.
            known.rank = min(known.rank, rank)
            continue
        if doc.id in seen_ids:
            continue
        seen_ids.add(doc.id)
        added.append(doc)
        entry = by_key.get(doc.key)
        if entry is None:
            entry = by_key[doc.key] = ContextEntry(key=doc.key, step=step, rank=rank)
            context.append(entry)
        entry.documents.append(doc)
    return added


def _whole(entry: ContextEntry) -> bool:
    """The entry holds its whole article: no passage of it is news."""
    return any(d.id == entry.key for d in entry.documents)


def ordered(context: Sequence[ContextEntry]) -> list[ContextEntry]:
    """Most useful first: every query's best hit before any second-best hit; then earlier steps, then query order.

    BM25 scores of different queries are not comparable, so they never decide the order.
    """
    return sorted(context, key=lambda e: (e.rank, e.step))


def _lead(entry: ContextEntry, index: int, limit: int) -> str:
    # Cut by characters first so that long articles are never tokenised whole.
    return f"[{index}] {entry.title}\n{entry.text()}"[: limit * 8]


def render(context: Sequence[ContextEntry], budget: int, doc_tokens: int, empty: str = "(no documents yet)",
           selection: ContextSelection | None = None) -> RenderedContext:
    """Render the context under `budget` tokens.

    A ContextSelection ranks the passages of every article together and shows the best (retrieval/selection.py);
    without one, entries go best first by search rank, each its beginning cut to doc_tokens.
    """
    if selection is not None:
        return select_context(context, budget, selection, empty)
    parts: list[str] = []
    out = RenderedContext(text=empty)
    remaining = budget
    for entry in ordered(context):
        room = remaining - SEPARATOR_TOKENS
        head = _lead(entry, len(parts) + 1, doc_tokens)
        want = min(doc_tokens, count_tokens(head))
        if room < min(want, _MIN_PARTIAL_TOKENS):
            out.cut += 1
            out.tokens_cut += want
            continue
        body = truncate_tokens(head, min(want, room))
        used = count_tokens(body)
        out.tokens_cut += want - used
        parts.append(body)
        out.shown_keys.append(entry.key)
        out.shown_titles.append(entry.title)
        remaining -= used + SEPARATOR_TOKENS
        out.tokens += used + SEPARATOR_TOKENS
    out.shown = len(parts)
    if parts:
        out.text = "\n\n".join(parts)
    return out


def select_context(context: Sequence[ContextEntry], budget: int, selection: ContextSelection,
                   empty: str = "(no documents)") -> RenderedContext:
    """The best passages of the whole context under `budget` tokens (search rank only breaks ties)."""
    entries = ordered(context)
    articles = [Article(key=e.key, title=e.title, text=e.text(), order=i) for i, e in enumerate(entries)]
    chosen = choose(articles, selection, budget, empty)
    return RenderedContext(text=chosen.text, shown=len(chosen.articles), cut=chosen.cut, tokens=chosen.tokens,
                           shown_keys=chosen.shown_keys, shown_titles=[a.title for a in chosen.articles],
                           articles=chosen.articles, passages_ranked=chosen.passages_ranked,
                           tokens_cut=chosen.tokens_cut)
