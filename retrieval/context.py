"""The agent's context: article-level dedup (C <- C ∪ (D \\ C)) and rendering under a token budget, either each
article's beginning by search rank or its passages, all ranked together against the question."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from frames_agent.retrieval.bm25 import OkapiBM25, terms
from frames_agent.retrieval.tokens import count_tokens, truncate_tokens
from frames_agent.retrieval.types import Document

# ~80 words is ~110 tokens: a fact with its sentence of context, and several passages per article fit a small budget.
PASSAGE_WORDS = 80
# Long articles (FRAMES gold pages reach ~75k tokens) are read whole: the fact is often deep inside.
MAX_PASSAGES = 2000
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


class ShownPassages(BaseModel):
    """Which passages of one article a prompt showed, and how much of the article that was."""

    key: str
    title: str = ""
    passages: list[int] = Field(default_factory=list, description="indices into the article's passages, in article order")
    of: int = Field(0, description="passages in the article")
    cut: bool = Field(False, description="not even one passage fitted whole: the first shown is cut short")
    tokens: int = Field(0, description="tokens of the article shown")
    article_tokens: int = Field(0, description="tokens in the article (up to the passages split)")


def chunk_text(text: str, words: int = PASSAGE_WORDS, max_chunks: int = MAX_PASSAGES,
               whole_sentences: bool = False) -> list[str]:
    """Sentence-packed chunks of about `words` words; whole_sentences=True cuts only a sentence longer than a chunk."""
    chunks: list[str] = []
    current: list[str] = []
    for sentence in _SENTENCE.split(text):
        tokens = sentence.split()
        if whole_sentences and current and len(current) + len(tokens) > words:
            chunks.append(" ".join(current))
            current = []
            if len(chunks) >= max_chunks:
                return chunks
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


def split_passages(text: str, words: int = PASSAGE_WORDS) -> list[str]:
    """An article's passages: whole sentences packed to about `words` words, in article order."""
    return chunk_text(text, words, MAX_PASSAGES, whole_sentences=True)


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
    """Add the (rank, document) pairs not yet in context, in place, per article (Document.key); return the new ones."""
    by_key = {entry.key: entry for entry in context}
    seen_ids = {d.id for entry in context for d in entry.documents}
    added: list[Document] = []
    for rank, doc in found:
        known = by_key.get(doc.key)
        # A new passage of a known article joins its entry; a whole article already read is a copy, not news.
        if known is not None and (doc.id in seen_ids or doc.id == doc.key
                                  or any(d.id == known.key for d in known.documents)):
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


def ordered(context: Sequence[ContextEntry]) -> list[ContextEntry]:
    """Best first: each query's best hit before any second-best, then earlier steps (queries' scores don't compare)."""
    return sorted(context, key=lambda e: (e.rank, e.step))


def render(context: Sequence[ContextEntry], budget: int, doc_tokens: int, empty: str = "(no documents yet)",
           selection: ContextSelection | None = None) -> RenderedContext:
    """The context under `budget` tokens: a ContextSelection's best passages, else each entry's first doc_tokens."""
    if selection is not None:  # search rank only breaks ties
        articles = [ContextArticle(key=e.key, title=e.title, text=e.text(), order=i) for i, e in enumerate(ordered(context))]
        return choose(articles, selection, budget, empty)
    parts: list[str] = []
    out = RenderedContext(text=empty)
    remaining = budget
    for entry in ordered(context):
        room = remaining - SEPARATOR_TOKENS
        # Cut by characters first so that long articles are never tokenised whole.
        head = f"[{len(parts) + 1}] {entry.title}\n{entry.text()}"[: doc_tokens * 8]
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


# Joining two parts can merge tokens across the seam; reserve a little for it.
SEPARATOR_TOKENS = 2
# Passage size in a context too large for every lead to fit. Measured: docs/measurements.md#passage-size
LARGE_CONTEXT_WORDS = 40
# A first sentence longer than this is not worth its room in an article's header.
_FIRST_SENTENCE_TOKENS = 60
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s|$)", re.DOTALL)


@dataclass(frozen=True)
class ContextArticle:
    """One article as the selector sees it: identity, title and text, and its place in the context (rank order)."""

    key: str
    title: str
    text: str
    order: int = 0


@dataclass(frozen=True)
class Pick:
    """One passage chosen for the prompt."""

    article: int  # index into the articles given
    passage: int  # index into that article's passages
    score: float


@dataclass(frozen=True)
class ContextSelection:
    """Settings of context-wide selection: per_article caps an article's passages until only spare budget is left."""

    question: Sequence[str]
    queries: Sequence[str] = ()
    per_article: int = 3
    # None: PASSAGE_WORDS when every lead fits in half the budget, else LARGE_CONTEXT_WORDS (more distinct evidence).
    words: int | None = PASSAGE_WORDS

    def weighted_terms(self) -> list[str]:
        """Query terms: the question's twice (they outweigh the step queries'), then the step queries' other terms."""
        own = list(dict.fromkeys(self.question))
        extra = [t for t in dict.fromkeys(self.queries) if t not in set(own)]
        return own * 2 + extra


def rank_passages(articles: Sequence[ContextArticle], passages: Sequence[Sequence[str]],
                  selection: ContextSelection) -> list[Pick]:
    """Passages sharing a term with the query, best first; ties go to the better-ranked article, then the earlier."""
    flat = [(a, p) for a, parts in enumerate(passages) for p in range(len(parts))]
    if not flat:
        return []
    # The title travels with each passage: "He was born in ..." belongs to the article it is about.
    title_terms = [terms(article.title) for article in articles]
    bm25 = OkapiBM25([title_terms[a] + terms(passages[a][p]) for a, p in flat], k1=1.2, idf="lucene")
    scores = bm25.scores(selection.weighted_terms())
    ranked = sorted((i for i in range(len(flat)) if scores[i] > 0),
                    key=lambda i: (-scores[i], articles[flat[i][0]].order, flat[i][1]))
    return [Pick(flat[i][0], flat[i][1], float(scores[i])) for i in ranked]


def _too_many_for_leads(articles: int, budget: int) -> bool:
    """So many articles that their leads cannot fit in half the budget, whatever their length."""
    return articles * 20 > budget // 2


def _leads_fit(passages: Sequence[Sequence[str]], budget: int) -> bool:
    """Every article's lead fits in half the budget (counted only for contexts small enough to possibly fit)."""
    if _too_many_for_leads(len(passages), budget):
        return False
    return sum(count_tokens(parts[0]) + SEPARATOR_TOKENS for parts in passages) <= budget // 2


class _Budget:
    """Greedy filling, costing only the passages considered; with `lead` a shown article shows its lead if it fits."""

    def __init__(self, articles: Sequence[ContextArticle], passages: Sequence[Sequence[str]], lead: bool,
                 budget: int) -> None:
        self.articles, self.passages, self.lead = articles, passages, lead
        self.remaining = budget
        self.taken: dict[int, list[int]] = {}
        self.header: dict[int, tuple[str, int]] = {}

    def _head(self, a: int) -> tuple[str, int]:
        if a not in self.header:
            title = self.articles[a].title or self.articles[a].key
            self.header[a] = (title, count_tokens(f"[00] {title}\n") + SEPARATOR_TOKENS)
        return self.header[a]

    def take(self, pick: Pick) -> bool:
        """Take the passage if it fits (with its article's header when it is the article's first)."""
        cost = count_tokens(self.passages[pick.article][pick.passage]) + SEPARATOR_TOKENS
        first = pick.article not in self.taken
        if first:
            cost += self._head(pick.article)[1]
        if cost > self.remaining:
            return False
        self.taken.setdefault(pick.article, []).append(pick.passage)
        self.remaining -= cost
        if first and self.lead and pick.passage != 0:  # the lead says who or what the article is about
            lead = count_tokens(self.passages[pick.article][0]) + SEPARATOR_TOKENS
            if lead <= self.remaining:
                self.taken[pick.article].append(0)
                self.remaining -= lead
        return True

    def add_first_sentences(self) -> dict[int, str]:
        """Each shown article's first sentence, where its lead is not shown and the room is left (best first)."""
        out: dict[int, str] = {}
        for a, shown in self.taken.items():
            if 0 in shown:
                continue
            match = _FIRST_SENTENCE.match(self.passages[a][0].strip()[:600])
            sentence = match.group(1) if match else ""
            cost = count_tokens(sentence) + SEPARATOR_TOKENS if sentence else 0
            if sentence and cost <= min(_FIRST_SENTENCE_TOKENS, self.remaining):
                out[a] = sentence
                self.remaining -= cost
        return out


def choose(articles: Sequence[ContextArticle], selection: ContextSelection, budget: int,
           empty: str = "(no documents)") -> RenderedContext:
    """The best passages under `budget` tokens, by article (most relevant first), under its title and first sentence."""
    words = selection.words
    if words is None and _too_many_for_leads(len(articles), budget):
        words = LARGE_CONTEXT_WORDS  # no lead needs measuring: split once (it costs ~0.15 s over 100 articles)
    passages = [split_passages(a.text, words or PASSAGE_WORDS) or [""] for a in articles]
    few = _leads_fit(passages, budget)  # every article's lead fits in half the budget
    if words is None and not few:
        passages = [split_passages(a.text, LARGE_CONTEXT_WORDS) or [""] for a in articles]
    picks = rank_passages(articles, passages, selection)
    fill = _Budget(articles, passages, few, budget)  # leads where they fit. Measured: docs/measurements.md#leads
    counts: dict[int, int] = {}
    spare: list[Pick] = []
    for pick in picks:
        if pick.passage in fill.taken.get(pick.article, ()):  # its lead, taken with its first passage
            continue
        if counts.get(pick.article, 0) >= max(1, selection.per_article):
            spare.append(pick)
            continue
        if fill.take(pick):
            counts[pick.article] = counts.get(pick.article, 0) + 1
    for pick in spare:  # budget left once every article had its share: more of the best articles
        if pick.passage not in fill.taken.get(pick.article, ()):
            fill.take(pick)
    if not fill.taken and articles and budget > 0:
        # Nothing fitted or matched: the best passage, else the top article's beginning, cut to the budget.
        first = picks[0] if picks else Pick(min(range(len(articles)), key=lambda a: articles[a].order), 0, 0.0)
        fill.taken[first.article] = [first.passage]
    sentences = fill.add_first_sentences()
    return _render(articles, passages, fill, sentences, picks, empty, budget)


def _render(articles: Sequence[ContextArticle], passages: Sequence[Sequence[str]], fill: _Budget, sentences: dict[int, str],
            picks: Sequence[Pick], empty: str, budget: int) -> RenderedContext:
    best: dict[int, int] = {}
    for position, pick in enumerate(picks):
        best.setdefault(pick.article, position)
    order = sorted(fill.taken, key=lambda a: (best.get(a, len(picks)), articles[a].order))
    blocks, shown = [], []
    for number, a in enumerate(order, start=1):
        kept = sorted(fill.taken[a])
        head = f"[{number}] {fill._head(a)[0]}\n" + (f"{sentences[a]}\n…\n" if a in sentences else "")
        block = head + "\n…\n".join(passages[a][p] for p in kept)
        blocks.append(block)
        shown.append(ShownPassages(key=articles[a].key, title=articles[a].title, passages=kept, of=len(passages[a]),
                                   tokens=count_tokens(block), article_tokens=count_tokens(articles[a].text)))
    text = "\n\n".join(blocks) if blocks else empty
    if blocks and count_tokens(text) > budget:  # a forced first passage, or seams counted short: never overrun
        text = truncate_tokens(text, budget)
        shown[-1] = shown[-1].model_copy(update={"cut": True})
    left = sum(len(passages[p.article][p.passage]) // 4 for p in picks if p.passage not in fill.taken.get(p.article, ()))
    return RenderedContext(text=text, shown=len(shown), cut=len(articles) - len(order),
                           tokens=count_tokens(text) if blocks else 0, tokens_cut=left,
                           shown_keys=[s.key for s in shown], shown_titles=[s.title for s in shown], articles=shown,
                           passages_ranked=len(picks))
