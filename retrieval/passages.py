"""Passages of an article and the ones most relevant to a question (BM25 over the article's own passages)."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from frames_agent.retrieval.bm25 import OkapiBM25, terms
from frames_agent.retrieval.fusion import rrf

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
    """Sentence-packed chunks of about `words` words (long sentences are split).

    whole_sentences=True starts a new chunk rather than cutting a sentence that does not fit, so a passage never
    begins mid-sentence (what a reader of a selected passage needs); False fills every chunk to `words`.
    """
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


def query_terms(question: str, queries: Sequence[str] = ()) -> list[str]:
    """The question's terms, then new terms of the step queries (each term once)."""
    seen: dict[str, None] = {}
    for text in (question, *queries):
        for term in terms(text):
            seen.setdefault(term, None)
    return list(seen)


def select(passages: Sequence[str], query: Sequence[str], k: int, lead: bool = True,
           rerank: Rerank | None = None) -> list[int]:
    """Indices of up to k passages, best first: the lead (it says what the article is), then the best by BM25
    (re-ranked by `rerank` when given).

    Passages that share no term with the query are never picked; ties go to the earlier passage.
    """
    if k <= 0 or not passages:
        return []
    chosen = [0] if lead else []
    scores = OkapiBM25([terms(p) for p in passages], k1=1.2, idf="lucene").scores(query)
    ranked = sorted((i for i in range(len(passages)) if scores[i] > 0), key=lambda i: (-scores[i], i))
    if rerank is not None and ranked:
        ranked = rerank.order(passages, ranked)
    chosen += [i for i in ranked if i not in chosen]
    return chosen[:k] or [0]


@dataclass(frozen=True)
class Rerank:
    """BM25's best `candidates` passages re-ranked by fusing their order with a similarity's (reciprocal rank).

    similarity scores texts against the question (e.g. cosine of sentence embeddings): it finds the passage that
    states a fact in other words than the question's; weight is its side's weight in the fusion.
    """

    similarity: Callable[[Sequence[str]], Sequence[float]]
    weight: float = 1.0
    candidates: int = 30

    def order(self, passages: Sequence[str], ranked: Sequence[int]) -> list[int]:
        """ranked (best first by BM25) with its head re-ordered by the fusion."""
        head = list(ranked[: self.candidates])
        sims = list(self.similarity([passages[i] for i in head]))
        by_similarity = [head[j] for j in sorted(range(len(head)), key=lambda j: (-sims[j], j))]
        return rrf([head, by_similarity], [1.0, self.weight], len(head)) + list(ranked[self.candidates:])
