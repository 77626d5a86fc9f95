"""The agent's context: article-level dedup (C <- C ∪ (D \\ C)) and rendering under a token budget."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from retrieval.tokens import count_tokens, truncate_tokens
from retrieval.types import Document

# Tokens below which a partly fitting document is not worth showing.
_MIN_PARTIAL_TOKENS = 30
# Joining two parts can merge tokens across the seam; reserve a little for it.
_SEPARATOR_TOKENS = 2


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


def merge(context: list[ContextEntry], found: Sequence[tuple[int, Document]], step: int) -> list[Document]:
    """Add the documents not yet in context (in place); return the new ones.

    `found` pairs each document with its rank in its query's hits. Dedup is per article:
    a new passage of a known article joins that article's entry instead of becoming a second article.
    """
    by_key = {entry.key: entry for entry in context}
    seen_ids = {d.id for entry in context for d in entry.documents}
    added: list[Document] = []
    for rank, doc in found:
        if doc.id in seen_ids:
            # Found again, maybe higher up for another query: that is a sign of use, so it moves up.
            known = by_key[doc.key]
            known.rank = min(known.rank, rank)
            continue
        seen_ids.add(doc.id)
        added.append(doc)
        entry = by_key.get(doc.key)
        if entry is None:
            entry = by_key[doc.key] = ContextEntry(key=doc.key, step=step, rank=rank)
            context.append(entry)
        entry.documents.append(doc)
    return added


def ordered(context: Sequence[ContextEntry]) -> list[ContextEntry]:
    """Most useful first: every query's best hit before any second-best hit; then earlier steps, then query order.

    BM25 scores of different queries are not comparable, so they never decide the order.
    """
    return sorted(context, key=lambda e: (e.rank, e.step))


def render(context: Sequence[ContextEntry], budget: int, doc_tokens: int, empty: str = "(no documents yet)") -> RenderedContext:
    """Render entries best first, each cut to doc_tokens, until budget tokens are used."""
    parts, out = [], RenderedContext(text=empty)
    remaining = budget
    for entry in ordered(context):
        # Cut by characters first so that long articles are never tokenised whole.
        head = f"[{len(parts) + 1}] {entry.title}\n{entry.text()}"[: doc_tokens * 8]
        want = min(doc_tokens, count_tokens(head))
        room = remaining - _SEPARATOR_TOKENS
        if room < min(want, _MIN_PARTIAL_TOKENS):
            out.cut += 1
            out.tokens_cut += want
            continue
        body = truncate_tokens(head, min(want, room))
        used = count_tokens(body)
        out.tokens_cut += want - used
        parts.append(body)
        out.shown_keys.append(entry.key)
        remaining -= used + _SEPARATOR_TOKENS
        out.tokens += used + _SEPARATOR_TOKENS
    out.shown = len(parts)
    if parts:
        out.text = "\n\n".join(parts)
    return out
