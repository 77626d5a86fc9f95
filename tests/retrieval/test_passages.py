"""Passages of an article and their selection by BM25 within the article."""
from __future__ import annotations

from retrieval.passages import chunk_text, query_terms, select, split_passages


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
