"""The one word rule (words, folded BM25 terms, repeat keys) and an in-memory Okapi BM25 over small collections: a
CRAG row's pages, one article's passages, a company table."""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal

import numpy as np

_WORD = re.compile(r"\w+")
# Words too frequent to rank by (agent/evidence.py's FUNCTION_WORDS is another list, for another job).
STOPWORDS = frozenset("""a an and are as at be but by did do does for from had has have how i in is it its of on or
that the their them there these they this to was were what when where which who whom whose why will with you your""".split())


def words(text: str) -> list[str]:
    """The lower-cased words of a text: the one word rule of BM25 terms, content words and query keys."""
    return _WORD.findall(text.lower())


def normalised(text: str) -> str:
    """The words of a text joined by single spaces: the key that spots a repeated query or sub-question."""
    return " ".join(words(text))


def fold(word: str, shortest: int = 4) -> str:
    """A word with a light plural fold: a trailing s dropped from words of `shortest` letters or more, not -ss."""
    return word[:-1] if len(word) >= shortest and word.endswith("s") and not word.endswith("ss") else word


def terms(text: str, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """BM25 terms: the words of a text without stopwords, folded."""
    return [fold(word) for word in words(text) if word not in stopwords]


class OkapiBM25:
    """Okapi BM25 over pre-tokenised documents; idf "okapi" is rank_bm25's (CRAG finance search), "lucene" Lucene's."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                 idf: Literal["okapi", "lucene"] = "okapi", epsilon: float = 0.25) -> None:
        self.k1, self.b = k1, b
        self.doc_len = np.array([len(doc) for doc in corpus], dtype=float)
        self.avgdl = float(self.doc_len.mean()) if len(corpus) else 0.0
        self.postings: dict[str, dict[int, int]] = {}
        for i, doc in enumerate(corpus):
            for word in doc:
                slot = self.postings.setdefault(word, {})
                slot[i] = slot.get(i, 0) + 1
        n = len(corpus)
        if idf == "lucene":
            self.idf = {w: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for w, p in self.postings.items()}
        else:
            raw = {w: float(np.log(n - len(p) + 0.5) - np.log(len(p) + 0.5)) for w, p in self.postings.items()}
            floor = epsilon * (sum(raw.values()) / len(raw)) if raw else 0.0
            self.idf = {w: (floor if v < 0 else v) for w, v in raw.items()}

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the query terms (a repeated term counts again)."""
        out = np.zeros(len(self.doc_len))
        if not len(self.doc_len) or self.avgdl == 0:
            return out
        norm = self.k1 * (1 - self.b + self.b * self.doc_len / self.avgdl)
        for word in query:
            postings = self.postings.get(word)
            if not postings:
                continue
            idx = np.fromiter(postings.keys(), dtype=int, count=len(postings))
            freqs = np.fromiter(postings.values(), dtype=float, count=len(postings))
            out[idx] += self.idf[word] * (freqs * (self.k1 + 1) / (freqs + norm[idx]))
        return out
