"""Passages of an article and the ones most relevant to a question (BM25 over the article's own passages)."""
from __future__ import annotations

import re

from pydantic import BaseModel, Field

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
