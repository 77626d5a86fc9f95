"""One hit per article: top-k is k distinct articles on indexes that hold copies (--keep-copies, passages, foreign
indexes), a copy's hit stands as the kept article, and merged indexes skip the over-fetch."""
from __future__ import annotations

from frames_agent.retrieval.lucene.searcher import BM25Retriever, article_key, collapse, fetch_depths
from frames_agent.retrieval.lucene.titles import TitleTable, canonical_redirects, canonical_title
from frames_agent.retrieval.types import Document

QUERY = "Olse River Port Alder"
KEPT = {"olse-2025", "gannet-arena", "port-alder-full", "red-kite-band", "red-kite-bird", "kestrel"}


def keys(docs):
    return [d.key for d in docs]


def test_top_k_is_k_distinct_articles_and_a_copy_hit_is_the_kept_article(copies_kept_index):
    with BM25Retriever(copies_kept_index, exact_title=False) as retriever:
        raw = [hit[0] for hit in retriever._java_search(QUERY, 9)]
        assert len(raw) == 9 and set(raw) - KEPT, "Lucene alone returns copies"
        for k in (1, 3, 6):
            docs = retriever.search(QUERY, k)
            assert len(docs) == k and len(set(keys(docs))) == k
            assert all(d.id == d.article_id and d.id in KEPT for d in docs), "whole articles, each the kept one"
        scores = [d.score for d in retriever.search(QUERY, 6)]
        assert scores == sorted(scores, reverse=True)
        assert [keys(r) for r in retriever.batch_search([QUERY, "football stadium"], 3)] == [
            keys(retriever.search(q, 3)) for q in (QUERY, "football stadium")]
        assert {d.key for d in retriever.search("red kite", 6)} >= {"red-kite-band", "red-kite-bird"}, \
            "titles equal only when case-folded are two articles"


def test_langchain_top_k_are_distinct_articles(copies_kept_index):
    with BM25Retriever(copies_kept_index) as retriever:
        docs = retriever.as_langchain(k=3).invoke("Olse River")
    assert docs[0].id == "olse-2025" and len({d.metadata["article_id"] for d in docs}) == 3


def test_exact_title_hit_is_not_repeated(copies_kept_index, copies_passage_index):
    with BM25Retriever(copies_kept_index) as retriever:
        docs = retriever.search("Olse River", 4)
        assert docs[0].id == "olse-2025" and keys(docs).count("olse-2025") == 1 and len(docs) == 4
    with BM25Retriever(copies_passage_index) as passages:
        docs = passages.search("Port Alder", 4)
        assert docs[0].key == "port-alder-full" and len(set(keys(docs))) == len(docs) == 4


def test_passage_search_returns_distinct_articles_with_copies_joined(copies_passage_index):
    with BM25Retriever(copies_passage_index) as passages:
        docs = passages.search(QUERY, 6)
        assert len(set(keys(docs))) == len(docs) == 6 and set(keys(docs)) == KEPT
        assert all("#" in d.id and d.id != d.article_id for d in docs), "passages, each with its article's key"
        assert passages.doc("olse-2015").id == "olse-2015", "a kept copy's whole text"


def test_merged_index_fetches_k_others_over_fetch(copies_index, copies_kept_index, monkeypatch):
    for index, first in ((copies_index, 3), (copies_kept_index, 6)):
        with BM25Retriever(index) as retriever:
            asked = []
            java_search = retriever._java_search
            monkeypatch.setattr(retriever, "_java_search", lambda q, n: asked.append(n) or java_search(q, n))  # noqa: B023
            retriever.search(QUERY, 3)
            assert asked[0] == first
    assert list(fetch_depths(5, True)) == [5] and list(fetch_depths(5, False)) == [10, 20, 40, 80, 160]


def test_article_keys_by_index_kind():
    assert article_key(None, "7", "Eiffel_Tower", None) == "eiffel tower" and article_key(None, "7", "", None) == "7"
    assert article_key(None, "7#2", "Eiffel Tower", "7") == "7"
    table = TitleTable(titles={"eiffel tower": "e1"}, aliases={"e2": "e1"})
    assert article_key(table, "e2#0", "Eiffel Tower", "e2") == "e1" and article_key(table, "e3", "Eiffel Tower", None) == "e3"
    hits = [Document(id=i, article_id=a, score=s) for i, a, s in [("x#1", "x", 3), ("x#0", "x", 2), ("y", None, 1)]]
    assert [d.id for d in collapse(hits, 5)] == ["x#1", "y"] and [d.id for d in collapse(hits, 1)] == ["x#1"]


def test_canonical_title_is_mediawiki_case_and_follows_redirects():
    redirects = canonical_redirects([("minute_Maid Park", "Daikin Park"), ("loop a", "Loop b"), ("Loop b", "loop a")])
    assert canonical_title("minute maid park", redirects) == "Minute maid park", "only the first letter folds"
    assert canonical_title("Minute%20Maid_Park", redirects) == "Daikin Park"
    assert canonical_title("  iPhone   4 ") == "IPhone 4" and canonical_title("Cafe\u0301") == "Café"
    assert canonical_title("https://en.wikipedia.org/wiki/Eiffel_Tower#History") == "Eiffel Tower"
    assert canonical_title("Loop a", redirects) in {"Loop a", "Loop b"} and canonical_title("") == ""
