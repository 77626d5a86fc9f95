"""Hybrid search: BM25 hits and dense hits of the same index fused by reciprocal rank, and the dense index built
beside a Lucene index and opened with it."""
from __future__ import annotations

import sys
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from frames_agent.core.errors import RetrievalError
from frames_agent.retrieval.dense.encoder import Encoder, MiniLMEncoder
from frames_agent.retrieval.dense.store import DenseIndex, build_dense, dense_dir, finished
from frames_agent.retrieval.types import Document, Retriever

if TYPE_CHECKING:
    from frames_agent.retrieval.lucene.searcher import BM25Retriever

Key = TypeVar("Key", bound=Hashable)
RRF_K = 60  # the constant of Cormack et al. (2009): ranks past a few dozen count about the same
FUSION_DEPTH = 2  # each side gives k x this hits, so fusion can lift one from below either side's top k


def rrf(rankings: Sequence[Sequence[Key]], weights: Sequence[float], k: int, rrf_k: int = RRF_K) -> list[Key]:
    """The k keys with the highest weighted reciprocal-rank sum; ties keep the order keys were first seen."""
    score: dict[Key, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, key in enumerate(ranking):
            score[key] = score.get(key, 0.0) + weight / (rrf_k + rank)
    order = {key: n for n, key in enumerate(score)}
    return sorted(score, key=lambda key: (-score[key], order[key]))[:k]


class HybridRetriever:
    """A BM25 retriever whose hits are fused with a dense index's (each unit's title and lead); weight 0: BM25."""

    def __init__(self, bm25: Retriever, dense: DenseIndex, encoder: Encoder, *, weight: float = 1.0) -> None:
        if weight < 0:
            raise RetrievalError(f"hybrid search needs weight >= 0, got {weight!r}")
        self.bm25, self.dense, self.encoder, self.weight = bm25, dense, encoder, float(weight)
        self.name = bm25.name
        self.source = f"{getattr(bm25, 'source', 'bm25')}+dense"

    def search(self, query: str, k: int = 10) -> list[Document]:
        """Top-k fused documents for one query."""
        return self.batch_search([query], k)[0]

    def batch_search(self, queries: Sequence[str], k: int = 10) -> list[list[Document]]:
        """Top-k fused documents for each query, in the order of the queries."""
        queries = list(queries)
        if not queries:
            return []
        if self.weight == 0:
            return self.bm25.batch_search(queries, k)
        lexical = self.bm25.batch_search(queries, k * FUSION_DEPTH)
        semantic = self.dense.search(self.encoder.encode(queries), k * FUSION_DEPTH)
        return [self._fuse(hits, nearest, k) for hits, nearest in zip(lexical, semantic)]

    def _fuse(self, hits: list[Document], nearest: list[tuple[str, float]], k: int) -> list[Document]:
        by_id = {doc.id: doc for doc in hits}
        chosen = rrf([[doc.id for doc in hits], [doc_id for doc_id, _ in nearest]], [1.0, self.weight], k)
        docs = []
        for doc_id in chosen:
            doc = by_id.get(doc_id) or self._fetch(doc_id)
            if doc is not None:
                docs.append(doc)
        return docs

    def _fetch(self, doc_id: str) -> Document | None:
        doc = self.bm25.doc(doc_id)
        return doc.model_copy(update={"source": self.source}) if doc is not None else None

    def as_langchain(self, k: int = 10) -> Any:
        """This hybrid search as a LangChain BaseRetriever."""
        from frames_agent.retrieval.bridges import FramesRetriever

        return FramesRetriever(retriever=self, k=k)

    def __getattr__(self, name: str) -> Any:
        # Everything else a BM25Retriever offers (doc, by_title, fingerprint, num_docs, close, ...) is the index's.
        if name.startswith("__") or name in ("bm25", "dense", "encoder"):
            raise AttributeError(name)
        return getattr(self.bm25, name)


def _identity(bm25: BM25Retriever, encoder: Encoder) -> dict:
    return {"index_fingerprint": bm25.fingerprint, "encoder": encoder.name,
            "max_tokens": getattr(encoder, "max_tokens", None)}


def build_for_index(bm25: BM25Retriever, encoder: Encoder | None = None, progress: bool = True) -> Path:
    """Build (or resume, or reuse) the dense index of a BM25Retriever's Lucene index; returns its directory."""
    encoder = encoder or MiniLMEncoder()
    out = dense_dir(bm25.fingerprint, encoder)
    build_dense(bm25.iter_documents(), bm25.num_docs, encoder, out, _identity(bm25, encoder), progress)
    return out


def open_hybrid(bm25: BM25Retriever, weight: float = 1.0, *, encoder: Encoder | None = None, build: bool = False,
                progress: bool = True) -> HybridRetriever:
    """bm25 fused with its dense index; build=True builds a missing one first (else a missing one is an error)."""
    encoder = encoder or MiniLMEncoder()
    out = dense_dir(bm25.fingerprint, encoder)
    if finished(out, _identity(bm25, encoder)) is None:
        if not build:
            state = "is stale (an older format or encoder)" if finished(out) else "is not built"
            raise RetrievalError(f"the dense index of {bm25.index_dir} {state}: run `python cli.py index dense "
                                 f"--index {bm25.name}` (about 25 min on 2 cores for the embedded corpus)")
        if progress:
            print(f"encoding the units of {bm25.name} for hybrid search into {out} (first use; ~25 min for the "
                  "embedded corpus on 2 cores, resumable; later runs reuse it)", file=sys.stderr, flush=True)
        build_for_index(bm25, encoder, progress)
    return HybridRetriever(bm25, DenseIndex.load(out), encoder, weight=weight)
