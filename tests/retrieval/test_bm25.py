"""The shared in-memory Okapi BM25."""
from __future__ import annotations

import math

import pytest

from frames_agent.retrieval.bm25 import OkapiBM25, normalised, terms


def test_terms_drop_stopwords_and_fold_plurals():
    assert terms("What are the Bridges of the city?") == ["bridge", "city"]
    assert terms("Days on Mars, 12 glass bus") == ["day", "mar", "12", "glass", "bus"]


def test_a_repeat_key_is_the_words_alone():
    assert normalised("  Mayor-of BRENNICK? ") == normalised("mayor of brennick") == "mayor of brennick"


def test_lucene_idf_never_negative_and_okapi_floors_it():
    corpus = [["canal", "bridge"], ["canal"], ["canal", "lake"]]
    lucene, okapi = OkapiBM25(corpus, idf="lucene"), OkapiBM25(corpus)
    assert lucene.idf["canal"] > 0 and lucene.idf["bridge"] > lucene.idf["canal"]
    # rank_bm25: a negative idf (a word in most documents) becomes epsilon x the mean raw idf.
    raw = [math.log(2.5 / 1.5), math.log(2.5 / 1.5), math.log(0.5 / 3.5)]
    assert okapi.idf["canal"] == pytest.approx(0.25 * sum(raw) / 3)
    scores = lucene.scores(["bridge"])
    assert scores[0] > 0 and scores[1] == scores[2] == 0


def test_empty_corpus_scores_nothing():
    assert len(OkapiBM25([]).scores(["x"])) == 0 and list(OkapiBM25([[]]).scores(["x"])) == [0.0]
