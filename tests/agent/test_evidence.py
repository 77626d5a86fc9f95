"""Matched sentences and the deterministic query proposer, on the tiny real index."""
from __future__ import annotations

from frames_agent.agent.evidence import (
    FUNCTION_WORDS,
    entity_spans,
    matched_sentences,
    propose,
    question_evidence,
    render_evidence,
    substance,
)
from frames_agent.agent.queries import clean_queries
from frames_agent.retrieval import context as ctx


def _context(retriever, queries):
    context: list[ctx.ContextEntry] = []
    for hits in retriever.batch_search(queries, 3):
        ctx.merge(context, list(enumerate(hits)), 1)
    return context


def test_matched_sentences_are_the_ones_sharing_query_words(tiny_retriever):
    context = _context(tiny_retriever, ["Marta Kowalczyk"])
    evidence = matched_sentences(context, ["Where was the chemist Marta Kowalczyk born?"], per_doc=1)
    assert evidence[0].title == "Marta Kowalczyk"
    assert evidence[0].sentences == ["Marta Kowalczyk (1931-2004) was a chemist known for her work on catalysis."]
    both = matched_sentences(context, ["Kowalczyk birthplace", "born studied university"], per_doc=2)
    assert "She was born in Brennick and studied at the university there." in both[0].sentences
    text = render_evidence(both, budget=200, doc_tokens=80)
    assert text.startswith("[1] Marta Kowalczyk: ") and "born in Brennick" in text


def test_proposer_names_the_bridging_entity_and_never_a_function_word(tiny_retriever):
    question = "What is the population of the city where Marta Kowalczyk was born?"
    context = _context(tiny_retriever, ["Marta Kowalczyk"])
    evidence = matched_sentences(context, [question, "Marta Kowalczyk born"], per_doc=2)
    read = [e.title for e in context]
    proposed = propose([*evidence, *question_evidence(question)], read, ["Marta Kowalczyk"],
                       tiny_retriever.has_title, limit=5, question=question)
    assert proposed[0] == "Brennick", "an article title named in a matched sentence comes first"
    assert "Marta Kowalczyk" not in proposed, "a title already read is not proposed"
    for query in proposed:
        assert substance(query), query
        assert query.split()[0].lower() not in FUNCTION_WORDS and not query.isdigit()


def test_proposer_skips_sentences_off_the_question_and_spans_that_are_not_titles(tiny_retriever):
    question = "What is the population of the city where Marta Kowalczyk was born?"
    context: list[ctx.ContextEntry] = []
    for hits in tiny_retriever.batch_search(["Marta Kowalczyk", "Port Alder"], 1):
        ctx.merge(context, list(enumerate(hits)), 1)
    evidence = matched_sentences(context, [question, "Marta Kowalczyk born", "harbour town"], per_doc=3)
    read = [e.title for e in context]
    proposed = propose(evidence, read, [], tiny_retriever.has_title, limit=10, question=question)
    # The birthplace sentence speaks of the question's subject (its article's title); the harbour sentence, naming
    # the Olse River, matched a query word, not the question.
    assert proposed == ["Brennick"]


def test_entity_spans_drop_function_words_numbers_and_sentence_openers():
    spans = entity_spans("In 1972 she won the Halvorsen Prize. According to the University of Brennick, "
                         "Several of The Beatles met 2 times")
    assert "Halvorsen Prize" in spans and "University of Brennick" in spans and "Beatles" in spans
    for bad in ("In", "According", "Several", "2", "The", "1972"):
        assert bad not in spans
    assert entity_spans("Imagine there is a town. What is it? Here it is. According to him, 1990 was dry.") == []
    assert entity_spans("It was held in 1990 Olympics stadium") == ["Olympics"]
    assert entity_spans("It opened on 4 July 1990, a Monday, in Port Alder") == ["Port Alder"]


def test_repeats_in_substance_are_dropped():
    kept, dropped = clean_queries(["Sony history", "the Sonys", "sony", "2", "of the", "Channel Tunnel"], ["Sony"], k=5)
    assert kept == ["Sony history", "Channel Tunnel"] and dropped == ["the Sonys", "sony", "2", "of the"]


def test_content_words_are_bm25_words_folded_from_five_letters():
    assert substance("Ships on Mars in 1990, the 1960s, as it is") == frozenset({"ship", "mars", "1960"})
    assert substance("the Glass of a BUS") == frozenset({"glass", "bus"})
