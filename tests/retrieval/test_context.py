"""The context's C <- C ∪ (D \\ C) by article identity (merge), and context-wide passage selection (choose):
relevance across the whole context decides what is read; passages keep whole sentences and every word."""
from __future__ import annotations

from frames_agent.retrieval.bm25 import terms
from frames_agent.retrieval.context import ContextArticle, ContextSelection, choose, chunk_text, merge, split_passages
from frames_agent.retrieval.tokens import count_tokens
from frames_agent.retrieval.types import Document

FILLER = "The committee met again in the spring and discussed the budget of the coming season at length. "
FOOTBALL = "The football club played its home matches in a large stadium and won several national cups. "
FACT = "The opera house of Brennick was designed by the architect Ilse Marwood and opened in 1912."


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


def _selection(question: str, **kw) -> ContextSelection:
    return ContextSelection(terms(question), **kw)


def _context(n: int = 60, gold_at: int = 39) -> list[ContextArticle]:
    articles = [ContextArticle(key="top", title="Kestrel Valley FC", text=FOOTBALL * 80, order=0)]
    for i in range(1, n):
        text = f"Article {i} is about the town of Vell {i}. " + FILLER * 20
        if i == gold_at:
            text = "Brennick is a city on the Olse River. " + FILLER * 120 + FACT + " " + FILLER * 10
        articles.append(ContextArticle(key=f"a{i}", title=f"Brennick {i}" if i == gold_at else f"Vell {i}", text=text, order=i))
    return articles


def test_a_deep_gold_passage_of_the_40th_article_beats_the_top_ranked_irrelevant_article():
    question = "Which architect designed the opera house of Brennick?"
    chosen = choose(_context(), _selection(question), budget=400)
    assert FACT in chosen.text
    assert chosen.shown_keys[0] == "a39", "the article holding the answer comes first"
    assert "football club" not in chosen.text
    assert count_tokens(chosen.text) <= 400
    gold = next(a for a in chosen.articles if a.key == "a39")
    assert gold.passages and max(gold.passages) > 5, "a passage deep inside the article, not its lead"


def test_each_article_is_capped_while_others_have_relevant_passages_then_spare_room_is_filled():
    fact = "Marwood designed the opera house. "
    articles = [ContextArticle(key=k, title=k, text=" ".join([fact + FILLER] * 12), order=i) for i, k in enumerate("ABC")]
    capped = choose(articles, _selection("opera house Marwood", per_article=1), budget=300)
    assert len(capped.articles) >= 2 and all(len(a.passages) == 1 for a in capped.articles)
    roomy = choose(articles, _selection("opera house Marwood", per_article=1), budget=3000)
    assert all(len(a.passages) > 1 for a in roomy.articles), "spare budget goes to more of each article"
    assert all(a.passages == sorted(a.passages) for a in roomy.articles), "passages stay in article order"


def test_an_article_is_shown_once_under_its_title_and_first_sentence():
    text = "Gannet Park is a stadium in Port Alder. " + FILLER * 30 + "It opened in 1962 after a long delay. " + FILLER
    chosen = choose([ContextArticle(key="g", title="Gannet Park", text=text)], _selection("When did it open in 1962?"),
                    budget=120)
    assert chosen.text.startswith("[1] Gannet Park\nGannet Park is a stadium in Port Alder.")
    assert chosen.text.count("[1]") == 1 and "1962" in chosen.text


def test_nothing_relevant_shows_the_best_ranked_article_beginning_within_budget():
    articles = [ContextArticle(key="x", title="X", text=FILLER * 50, order=1),
                ContextArticle(key="y", title="Y", text=FILLER, order=0)]
    chosen = choose(articles, _selection("zebra quantum"), budget=30)
    assert chosen.shown_keys == ["y"] and count_tokens(chosen.text) <= 30


def test_question_terms_outweigh_step_query_terms():
    articles = [ContextArticle(key="hub", title="Census", text="The census counted people in every county. " * 3, order=0),
                ContextArticle(key="gold", title="Olse River", text="The Olse River is 410 kilometres long. " * 3, order=1)]
    chosen = choose(articles, ContextSelection(terms("How long is the Olse River?"), terms("Census county"),
                                               per_article=1), budget=60)
    assert chosen.shown_keys[0] == "gold"


def test_leads_are_shown_where_every_lead_fits_in_half_the_budget():
    def article(i: int) -> ContextArticle:
        return ContextArticle(key=f"k{i}", title=f"Town {i}", text=f"Town {i} is a town in Vell. " + FILLER * 10
                       + f"The opera house of Town {i} opened in 19{i:02d}. " + FILLER * 3, order=i)

    few = choose([article(i) for i in range(3)], _selection("When did the opera house open?"), budget=1600)
    assert all(0 in a.passages for a in few.articles), "few articles: each shows its lead"
    many = choose([article(i) for i in range(60)], _selection("When did the opera house open?"), budget=1600)
    assert not any(0 in a.passages for a in many.articles), "many articles: the room goes to relevant passages"


def test_unset_passage_size_is_long_for_a_few_articles_and_short_for_many():
    from frames_agent.retrieval.context import LARGE_CONTEXT_WORDS, PASSAGE_WORDS

    def article(i: int) -> ContextArticle:
        return ContextArticle(key=f"k{i}", title=f"Town {i}", text=f"Town {i} is a town in Vell. " + FILLER * 10
                       + f"The opera house of Town {i} opened in 19{i:02d}. " + FILLER * 3, order=i)

    question = "When did the opera house open?"
    for count, words in ((3, PASSAGE_WORDS), (60, LARGE_CONTEXT_WORDS)):
        articles = [article(i) for i in range(count)]
        chosen = choose(articles, _selection(question, words=None), budget=1600)
        fixed = choose(articles, _selection(question, words=words), budget=1600)
        assert chosen.text == fixed.text, f"{count} articles read as {words}-word passages"
        assert chosen.articles[0].of == len(split_passages(articles[0].text, words))
    many = [article(i) for i in range(60)]
    short = choose(many, _selection(question, words=None), budget=1600)
    long = choose(many, _selection(question, words=PASSAGE_WORDS), budget=1600)
    assert len(short.articles) > len(long.articles), "shorter passages: more articles' evidence in the same budget"


def test_split_keeps_whole_sentences_and_every_word():
    text = "One two three four. Five six seven.\nEight nine ten eleven twelve. Thirteen."
    parts = split_passages(text, words=6)
    assert parts == ["One two three four.", "Five six seven.", "Eight nine ten eleven twelve. Thirteen."]
    assert " ".join(parts).split() == text.split()
    # The CRAG chunker fills every chunk instead (its old behaviour).
    assert chunk_text(text, words=6)[0] == "One two three four. Five six"
