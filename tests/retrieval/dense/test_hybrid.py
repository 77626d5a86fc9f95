"""Dense and hybrid retrieval over the tiny index: fusion, the on-disk dense index, resumable builds, the real model."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from frames_agent.core.errors import RetrievalError
from frames_agent.retrieval.dense import (
    DenseIndex,
    HybridRetriever,
    MiniLMEncoder,
    build_dense,
    open_hybrid,
    rrf,
    store,
)
from frames_agent.retrieval.types import Document, Retriever


class HashEncoder:
    """A deterministic stand-in: each text's words hashed into 64 dimensions (lexical, like BM25, but a vector)."""

    name = "hash-64"
    dim = 64
    max_tokens = 32

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls, self.texts, self.fail_after = 0, 0, fail_after

    def encode(self, texts):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt  # what a user's Ctrl-C looks like mid-build
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_rrf_sums_weighted_reciprocal_ranks_and_keeps_first_seen_order_on_ties():
    assert rrf([["a", "b", "c"], ["c", "d"]], [1.0, 1.0], 3) == ["c", "a", "b"]  # c is in both lists
    assert rrf([["a", "b"], ["b", "a"]], [1.0, 1.0], 2) == ["a", "b"]  # a tie: a was seen first
    assert rrf([["a", "b"], ["b"]], [1.0, 0.0], 2) == ["a", "b"]
    assert rrf([["a"], ["z", "y"]], [1.0, 3.0], 3) == ["z", "y", "a"]


def test_dense_index_returns_nearest_units_best_first():
    vectors = np.eye(4, dtype=np.float16)
    index = DenseIndex(vectors, ["w", "x", "y", "z"])
    query = np.array([[0.1, 0.0, 0.9, 0.4]], dtype=np.float32)
    assert [doc_id for doc_id, _ in index.search(query, 2)[0]] == ["y", "z"]
    assert len(index.search(query, 99)[0]) == 4
    with pytest.raises(RetrievalError):
        DenseIndex(vectors, ["w"])


def test_a_corpus_too_large_for_memory_is_searched_slice_by_slice_with_the_same_answer(monkeypatch):
    vectors, ids = np.random.default_rng(0).normal(size=(7, 4)).astype(np.float16), list("abcdefg")
    query = np.array([[0.3, -0.2, 0.9, 0.1]], dtype=np.float32)
    whole = DenseIndex(vectors, ids).search(query, 4)
    monkeypatch.setattr(store, "_IN_MEMORY", 0)
    monkeypatch.setattr(store, "_SLICE", 3)
    assert DenseIndex(vectors, ids).search(query, 4) == whole


def test_build_encodes_every_unit_once_and_an_interrupted_build_resumes(tiny_retriever, tmp_path, monkeypatch):
    monkeypatch.setattr(store, "PART_DOCS", 5)
    units = list(tiny_retriever.iter_documents())
    assert {u.id for u in units} >= {"kowalczyk", "gannet-park", "cpp"} and len(units) == tiny_retriever.num_docs
    out, identity = tmp_path / "dense", {"index_fingerprint": tiny_retriever.fingerprint, "encoder": "hash-64"}
    with pytest.raises(KeyboardInterrupt):
        build_dense(units, len(units), HashEncoder(fail_after=1), out, identity, progress=False)
    assert store.finished(out) is None
    resumed = HashEncoder()
    meta = build_dense(units, len(units), resumed, out, identity, progress=False)
    assert resumed.texts == len(units) - 5  # the first part was kept, not encoded again
    assert meta["docs"] == len(units) and meta["complete"]
    loaded = DenseIndex.load(out)
    assert loaded.ids == [u.id for u in units]
    again = HashEncoder()
    build_dense(units, len(units), again, out, identity, progress=False)
    assert again.calls == 0  # finished and the same identity: reused


def test_parts_of_another_index_are_discarded_not_mixed_in(tiny_retriever, tmp_path, monkeypatch):
    monkeypatch.setattr(store, "PART_DOCS", 5)
    units = list(tiny_retriever.iter_documents())
    out = tmp_path / "dense"
    with pytest.raises(KeyboardInterrupt):
        build_dense(units, len(units), HashEncoder(fail_after=1), out, {"index_fingerprint": "other"}, progress=False)
    fresh = HashEncoder()
    build_dense(units, len(units), fresh, out, {"index_fingerprint": "mine"}, progress=False)
    assert fresh.texts == len(units)
    assert json.loads((out / "manifest.json").read_text())["index_fingerprint"] == "mine"


def test_open_hybrid_refuses_a_missing_dense_index_with_the_command_to_build_it(tiny_retriever, cache):
    with pytest.raises(RetrievalError, match=r"index dense --index tiny"):
        open_hybrid(tiny_retriever, encoder=HashEncoder())


def test_weight_zero_is_bm25_alone_and_fusion_adds_dense_only_hits(tiny_retriever, cache):
    hybrid = open_hybrid(tiny_retriever, 0.0, encoder=HashEncoder(), build=True, progress=False)
    query = "Gannet Park stadium"
    assert [d.id for d in hybrid.search(query, 3)] == [d.id for d in tiny_retriever.search(query, 3)]
    fused = HybridRetriever(tiny_retriever, hybrid.dense, hybrid.encoder, weight=1.0)
    hits = fused.batch_search([query, "zzz-nothing-matches"], 3)
    assert hits[0][0].id == "gannet-park" and len(hits[0]) == 3
    assert all(isinstance(d, Document) for d in hits[1])  # BM25 has nothing; the dense side still ranks units
    assert fused.by_title("Port Alder").id == "port-alder" and fused.fingerprint == tiny_retriever.fingerprint
    assert fused.doc("port-alder").title == "Port Alder" and isinstance(fused, Retriever)


@pytest.mark.slow
def test_the_real_model_reaches_an_article_by_description_where_bm25_finds_nothing(tiny_retriever, cache):
    query = "rodent meteorologist"
    assert tiny_retriever.search(query, 3) == []
    hybrid = open_hybrid(tiny_retriever, 1.0, encoder=MiniLMEncoder(threads=1), build=True, progress=False)
    hits = hybrid.search(query, 3)
    assert hits[0].id == "phil" and hits[0].source == "bm25:tiny+dense"
    assert "gannet-park" in [d.id for d in hybrid.search("sports arena by the sea", 3)]
