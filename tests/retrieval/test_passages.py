"""Passages of an article and their selection by BM25 within the article."""
from __future__ import annotations

from frames_agent.retrieval.passages import chunk_text, query_terms, select, split_passages


def test_split_keeps_whole_sentences_and_every_word():
    text = "One two three four. Five six seven.\nEight nine ten eleven twelve. Thirteen."
    parts = split_passages(text, words=6)
    assert parts == ["One two three four.", "Five six seven.", "Eight nine ten eleven twelve. Thirteen."]
    assert " ".join(parts).split() == text.split()
    # The CRAG chunker fills every chunk instead (its old behaviour).
    assert chunk_text(text, words=6)[0] == "One two three four. Five six"


def test_select_puts_the_lead_first_then_the_best_match():
    passages = ["Ada Kerr was an engineer.", "She liked rowing on the lake.", "Kerr designed the Varn Canal bridge.",
                "She retired to the coast."]
    assert select(passages, query_terms("Which bridge did Ada Kerr design?"), 2) == [0, 2]
    assert select(passages, query_terms("rowing lake"), 3, lead=False) == [1]
    assert select(passages, query_terms("nothing matches"), 3) == [0]
    assert select([], ["x"], 3) == [] and select(passages, ["kerr"], 0) == []


def test_query_terms_take_the_question_then_new_query_words_once():
    assert query_terms("When did the canal open?", ["Varn canal opening", "canal engineer"]) == [
        "canal", "open", "varn", "opening", "engineer"]


def test_rerank_fuses_a_similarity_with_the_bm25_order():
    from frames_agent.retrieval.passages import Rerank

    passages = ["Ada Kerr was an engineer.", "Kerr designed the Varn bridge in Kerr style.", "Kerr later built a dam.",
                "Her best-known achievement spans the Varn river."]
    query = query_terms("Which work of Ada Kerr crosses the Varn?")
    assert select(passages, query, 2) == [0, 1]
    calls = []

    def similarity(texts):
        calls.append(list(texts))
        return [1.0 if "spans" in t else 0.0 for t in texts]

    assert select(passages, query, 2, rerank=Rerank(similarity, weight=2.0)) == [0, 3]
    assert select(passages, query, 2, rerank=Rerank(similarity, weight=0.0)) == [0, 1]  # weight 0: BM25's order
    assert all(len(c) == 4 for c in calls)  # every passage sharing a term is a candidate (under `candidates`)
    assert select(passages, query, 2, rerank=Rerank(similarity, weight=2.0, candidates=1))[1] != 3
