"""Hybrid search: BM25 hits and dense hits of the same index fused by reciprocal rank."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frames_agent.core.errors import RetrievalError
from frames_agent.retrieval.dense.encoder import Encoder
from frames_agent.retrieval.dense.store import DenseIndex
from frames_agent.retrieval.fusion import rrf
from frames_agent.retrieval.types import Document, Retriever


class HybridRetriever:
    """A BM25 retriever whose hits are fused with a dense index's over the same units.

    Dense vectors read each unit's title and lead, so a description ("the university that gave her an honorary
    degree") can reach an article whose words BM25 does not share. weight 0 gives BM25 alone.
    """

    def __init__(self, bm25: Retriever, dense: DenseIndex, encoder: Encoder, *, weight: float = 1.0,
                 depth: int = 2) -> None:
        if weight < 0 or depth < 1:
            raise RetrievalError(f"hybrid search needs weight >= 0 and depth >= 1, got {weight!r} and {depth!r}")
        self.bm25, self.dense, self.encoder = bm25, dense, encoder
        self.weight, self.depth = float(weight), int(depth)
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
        lexical = self.bm25.batch_search(queries, k * self.depth)
        semantic = self.dense.search(self.encoder.encode(queries), k * self.depth)
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

    def doc(self, doc_id: str) -> Document | None:
        """The stored document with this id, if any."""
        return self.bm25.doc(doc_id)

    def by_title(self, title: str) -> Document | None:
        """The whole article with this title, if any."""
        return self.bm25.by_title(title)

    def as_langchain(self, k: int = 10) -> Any:
        """This hybrid search as a LangChain BaseRetriever."""
        from frames_agent.retrieval.bridges import FramesRetriever

        return FramesRetriever(retriever=self, k=k)

    def __getattr__(self, name: str) -> Any:
        # Everything else a BM25Retriever offers (fingerprint, num_docs, close, index_dir, ...) is the index's.
        if name.startswith("__") or name in ("bm25", "dense", "encoder"):
            raise AttributeError(name)
        return getattr(self.bm25, name)
