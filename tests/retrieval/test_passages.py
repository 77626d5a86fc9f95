"""Passages of an article: whole sentences, every word kept."""
from __future__ import annotations

from frames_agent.retrieval.passages import chunk_text, split_passages


def test_split_keeps_whole_sentences_and_every_word():
    text = "One two three four. Five six seven.\nEight nine ten eleven twelve. Thirteen."
    parts = split_passages(text, words=6)
    assert parts == ["One two three four.", "Five six seven.", "Eight nine ten eleven twelve. Thirteen."]
    assert " ".join(parts).split() == text.split()
    # The CRAG chunker fills every chunk instead (its old behaviour).
    assert chunk_text(text, words=6)[0] == "One two three four. Five six"
