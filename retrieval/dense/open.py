"""Wiring a dense index to a BM25 index: build it beside the Lucene index, and open the pair as one retriever."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from frames_agent.core.errors import RetrievalError
from frames_agent.retrieval.dense.encoder import Encoder, MiniLMEncoder
from frames_agent.retrieval.dense.hybrid import HybridRetriever
from frames_agent.retrieval.dense.store import DenseIndex, build_dense, dense_dir, finished

if TYPE_CHECKING:
    from frames_agent.retrieval.lucene.searcher import BM25Retriever


def _identity(bm25: BM25Retriever, encoder: Encoder) -> dict:
    return {"index_fingerprint": bm25.fingerprint, "encoder": encoder.name,
            "max_tokens": getattr(encoder, "max_tokens", None)}


def build_for_index(bm25: BM25Retriever, encoder: Encoder | None = None, progress: bool = True) -> Path:
    """Build (or resume, or reuse) the dense index of a BM25Retriever's Lucene index; returns its directory."""
    encoder = encoder or MiniLMEncoder()
    out = dense_dir(bm25.fingerprint, encoder)
    build_dense(bm25.iter_documents(), bm25.num_docs, encoder, out, _identity(bm25, encoder), progress)
    return out


def open_hybrid(bm25: BM25Retriever, weight: float = 1.0, *, encoder: Encoder | None = None, depth: int = 2,
                build: bool = False, progress: bool = True) -> HybridRetriever:
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
    return HybridRetriever(bm25, DenseIndex.load(out), encoder, weight=weight, depth=depth)
