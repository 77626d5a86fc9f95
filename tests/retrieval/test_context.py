"""The context's C <- C ∪ (D \\ C) by article identity (retrieval/context.py merge)."""
from __future__ import annotations

from frames_agent.retrieval.context import merge
from frames_agent.retrieval.types import Document


def _doc(doc_id: str, article: str | None = None, text: str = "t") -> Document:
    return Document(id=doc_id, title=(article or doc_id).title(), text=text, article_id=article)


def test_a_second_copy_of_a_read_article_is_not_news_and_moves_it_up():
    context = []
    added = merge(context, [(3, _doc("eiffel", "eiffel"))], step=1)
    assert [d.id for d in added] == ["eiffel"]
    # The same article again under its identity (a copy folded by the index), found higher up by another query.
    assert merge(context, [(0, _doc("eiffel", "eiffel", "other text")), (1, _doc("gustave", "gustave"))], step=2) == [
        _doc("gustave", "gustave")]
    assert len(context) == 2 and context[0].rank == 0 and len(context[0].documents) == 1


def test_passages_of_one_article_join_its_entry_once_each():
    context = []
    merge(context, [(0, _doc("b#0", "b")), (1, _doc("b#1", "b"))], step=1)
    merge(context, [(0, _doc("b#1", "b")), (2, _doc("b#2", "b"))], step=2)
    assert len(context) == 1 and [d.id for d in context[0].documents] == ["b#0", "b#1", "b#2"]


def test_a_passage_of_an_article_read_whole_adds_nothing():
    context = []
    merge(context, [(0, _doc("b", "b", "the whole article"))], step=1)
    assert merge(context, [(0, _doc("b#3", "b", "a part of it"))], step=2) == []
    assert context[0].text() == "the whole article"


