"""The proposer's specificity ranking (real phrase counts on the tiny Lucene index), feedback queries, and which
query brought each new document (ScriptedLLM, the real tiny index)."""
from __future__ import annotations

import pytest

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.bridging import Evidence, Specificity, feedback_queries, propose
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.proposer import doc_origins
from frames_agent.agent.specificity import PhraseCounts, phrase_counts
from frames_agent.agent.state import StepRecord
from frames_agent.retrieval.types import Document


@pytest.fixture(scope="module")
def counts(tiny_index):
    found = PhraseCounts(tiny_index)
    yield found
    found.close()


def test_phrase_counts_are_articles_whose_text_holds_the_phrase(counts, tiny_corpus):
    assert counts.total == len(tiny_corpus) == 12
    # Brennick is named in 5 articles (her birthplace, the city, its mayor, its observatory, its river).
    assert counts("Brennick") == sum("Brennick" in d["contents"] for d in tiny_corpus) == 5
    assert counts("Gannet Park") == 2 and counts("Kestrel Valley FC") == 2
    assert counts("Port Alder") == sum("Port Alder" in d["contents"] for d in tiny_corpus) == 6
    assert counts("Alder Observatory") == 0, "a phrase, not its words"
    assert counts("of the") is None and counts("...") is None, "nothing indexed to count"
    assert counts("Nowhere Town") == 0


def _evidence() -> list[Evidence]:
    # Ferrante's article: both names share the sentence, "Port Alder" is seen first.
    return [Evidence("Tomas Ferrante", "ferrante", 3.0,
                     ["He was born in Port Alder, and his football club is Kestrel Valley FC."], [2.0])]


def test_a_specific_title_ranks_above_a_hub(tiny_retriever, counts):
    question = "Which stadium does the football club supported by the mayor of Brennick play at?"
    args = (_evidence(), ["Tomas Ferrante"], [], tiny_retriever.has_title, 5)
    kwargs = {"question": question, "min_shared": 2, "titles_only": True}
    assert propose(*args, **kwargs) == ["Port Alder", "Kestrel Valley FC"], "order: the first seen first"
    rare_first = propose(*args, **kwargs, specificity=Specificity(counts, counts.total, hub_share=1.0))
    assert rare_first == ["Kestrel Valley FC", "Port Alder"], "in 2 of 12 articles before one in 6 of 12"
    # A hub (here: in more than a third of the articles) is never proposed.
    assert propose(*args, **kwargs, specificity=Specificity(counts, counts.total, hub_share=0.34)) == ["Kestrel Valley FC"]


def test_question_words_not_yet_covered_lift_a_title(counts):
    # Equal counts (2 and 2): the one whose sentence answers a question word no read title holds comes first.
    entries = [["Gannet Park", 0, 0, 0, True, {"brennick"}], ["Halvorsen Prize", 0, 0, 1, True, {"prize", "chemist"}]]
    ranking = Specificity(counts, counts.total, hub_share=1.0)
    assert ranking.rank(entries, covered=set()) == ["Halvorsen Prize", "Gannet Park"]
    assert ranking.rank(entries, covered={"prize", "chemist"}) == ["Gannet Park", "Halvorsen Prize"]


def test_specificity_is_off_by_default_and_needs_a_lucene_index(tiny_retriever):
    assert AgentConfig().proposer_rank == "order" and AgentConfig().feedback_queries == 0
    agent = FramesAgent(ScriptedLLM([]), tiny_retriever, config=AgentConfig(proposer_rank="specificity"))
    assert agent.nodes.proposer.specificity() is not None
    assert phrase_counts(object()) is None, "a retriever without an index directory keeps the order ranking"


def test_feedback_queries_are_the_best_matched_sentences_content_words():
    evidence = [Evidence("Marta Kowalczyk", "kowalczyk", 2.0, ["She was born in Brennick and studied at the "
                                                               "university there.", "She won a prize."], [1.0, 1.0]),
                Evidence("question", "", 0, ["Where was Marta Kowalczyk born?"], [0])]
    question = "In which city was the prize winner Marta Kowalczyk born?"
    assert feedback_queries(evidence, question, [], 2, 12) == ["born Brennick studied university", "won prize"]
    assert feedback_queries(evidence, question, ["university Brennick born studied"], 1, 12) == ["won prize"]
    assert feedback_queries(evidence, question, [], 1, 2) == ["born Brennick"]


def test_each_new_document_is_credited_to_the_first_query_that_brought_it():
    a, b, c = (Document(id=i, title=i, text="") for i in "abc")
    record = StepRecord(step=1, queries=["q1", "q2", "q3"], origins=["model", "proposer", "question"],
                        query_hits=[1, 0, 2])
    # q1 brought a; q2 found nothing; q3 brought a again and c; then a tool result b.
    found = [(0, a), (0, a), (1, c), (0, b)]
    assert doc_origins(record, found) == {"a": "model", "c": "question", "b": "tool"}


def test_step_records_say_where_queries_and_new_documents_came_from(tiny_retriever):
    plans = [{"thought": "t", "queries": ["Marta Kowalczyk"]}, {"thought": "t", "queries": ["Halvorsen Prize"]}]
    config = AgentConfig(k=2, n=2, n_docs=2, proposer_docs=1, feedback_queries=1, question_query=False)
    result = FramesAgent(ScriptedLLM(plans), tiny_retriever, config=config).invoke(
        "Who is the mayor of the city where Marta Kowalczyk was born?", answer=False)
    first, second = result.steps
    # Step 1: nothing read yet, so no proposal (the question names only what the model asked for) and no feedback.
    assert first.origins == ["model"] and first.query_hits == [1], "only her article names her"
    assert first.new_doc_ids == ["kowalczyk"] and first.new_doc_origins == ["model"]
    # Step 2: her article says she was born in Brennick (a title), and its best sentence is fed back.
    assert second.origins == ["model", "proposer", "feedback"] and second.queries[1] == "Brennick"
    assert second.query_hits == [2, 1, 2]
    assert len(second.new_doc_origins) == len(second.new_doc_ids)
    assert second.new_doc_origins[second.new_doc_ids.index("brennick")] == "proposer"
    assert set(second.new_doc_origins) <= set(second.origins)


def test_feedback_queries_fetch_feedback_docs_hits_each(tiny_retriever):
    plans = [{"thought": "t", "queries": ["Marta Kowalczyk"]}, {"thought": "t", "queries": ["Halvorsen Prize"]}]
    config = AgentConfig(k=2, n=2, n_docs=2, proposer_docs=1, feedback_queries=1, feedback_docs=1,
                         question_query=False)
    assert [config.hits_for(o) for o in ("model", "proposer", "question", "feedback")] == [2, 1, 20, 1]
    # The fallback (the question again) goes deeper each step: the next n_docs past what the question brought.
    assert config.hits_for("fallback", 3) == 2 * 3 and AgentConfig(n_docs=10).hits_for("fallback", 2) == 20 + 20
    # A step's sizes: a recorded depth wins (a repeat's), else the origin's count; an unrecorded origin is the model's.
    assert config.step_hits(4, ["proposer", "repeat", "feedback"], [0, 7]) == [1, 7, 1, 2]
    result = FramesAgent(ScriptedLLM(plans), tiny_retriever, config=config).invoke(
        "Who is the mayor of the city where Marta Kowalczyk was born?", answer=False)
    assert result.steps[1].origins == ["model", "proposer", "feedback"] and result.steps[1].query_hits == [2, 1, 1]


def test_a_step_that_brings_nothing_worth_reading_ends_the_loop(tiny_retriever):
    question = "Who is the mayor of the city where Marta Kowalczyk was born?"
    plans = [{"thought": "t", "queries": ["Marta Kowalczyk"]}, {"thought": "t", "queries": ["Punxsutawney Phil"]},
             {"thought": "t", "queries": ["Brennick"]}]
    base = dict(k=1, n=3, n_docs=1, propose_queries=False, answer_budget=200, question_query=False)
    stale = FramesAgent(ScriptedLLM(plans[:2]), tiny_retriever, config=AgentConfig(**base, stop_when_stale=True))
    result = stale.invoke(question, answer=False)
    assert [s.queries for s in result.steps] == [["Marta Kowalczyk"], ["Punxsutawney Phil"]] and result.stopped_early
    fixed = FramesAgent(ScriptedLLM(plans), tiny_retriever, config=AgentConfig(**base)).invoke(question, answer=False)
    assert len(fixed.steps) == 3 and not fixed.stopped_early
    # A step whose new article the answer would read goes on.
    useful = [plans[0], {"thought": "t", "queries": ["Brennick"]}, {"thought": "t", "queries": ["Punxsutawney Phil"]}]
    result = FramesAgent(ScriptedLLM(useful), tiny_retriever, config=AgentConfig(**base, stop_when_stale=True)).invoke(
        question, answer=False)
    assert len(result.steps) == 3


def test_max_articles_bounds_the_context_over_every_step(tiny_retriever):
    question = "Who is the mayor of the city where Marta Kowalczyk was born?"
    plans = [{"thought": "t", "queries": ["Marta Kowalczyk", "Brennick"]}, {"thought": "t", "queries": ["Port Alder"]},
             {"thought": "t", "queries": ["Kestrel Valley FC"]}]
    base = dict(k=2, n=3, n_docs=3, propose_queries=False, question_query=False)
    free = FramesAgent(ScriptedLLM(plans), tiny_retriever, config=AgentConfig(**base)).invoke(question, answer=False)
    bounded = FramesAgent(ScriptedLLM(plans), tiny_retriever, config=AgentConfig(**base, max_articles=4)).invoke(
        question, answer=False)
    assert len({d.key for d in free.documents}) > 4
    assert len({d.key for d in bounded.documents}) == 4 and len(bounded.steps) == 3
    # Step 1's two top hits came first: each query's best article is read before any second hit.
    top = [hits[0].key for hits in tiny_retriever.batch_search(["Marta Kowalczyk", "Brennick"], 3)]
    assert set(top) <= {d.key for d in bounded.documents}


def test_a_repeated_model_query_brings_its_next_hits(tiny_retriever):
    question = "Who is the mayor of the city where Marta Kowalczyk was born?"
    plans = [{"thought": "t", "queries": ["Brennick"]}, {"thought": "t", "queries": ["brennick", "Marta Kowalczyk"]}]
    base = dict(k=2, n=2, n_docs=1, propose_queries=False, question_query=False)
    dropped = FramesAgent(ScriptedLLM(plans), tiny_retriever, config=AgentConfig(**base, repeat_docs=0)).invoke(
        question, answer=False)
    deeper = FramesAgent(ScriptedLLM(plans), tiny_retriever, config=AgentConfig(**base, repeat_docs=2)).invoke(
        question, answer=False)
    assert dropped.steps[1].origins == ["model"] and dropped.steps[1].dropped_queries == ["brennick"]
    step = deeper.steps[1]
    # Searched as first written, past the one hit step 1 read: its next hits are new articles.
    assert step.queries == ["Marta Kowalczyk", "Brennick"] and step.origins == ["model", "repeat"]
    assert step.query_depths == [0, 3] and step.query_hits[1] == 3
    assert step.dropped_queries == []  # searched again: listed once, as a repeat, never also as dropped
    ranked = [d.key for d in tiny_retriever.search("Brennick", 3)]
    assert set(ranked[1:]) <= {d.key for d in deeper.documents}
    assert set(ranked[1:]) - {d.key for d in dropped.documents}, "dropping the repeat never reads them"
    assert set(step.new_doc_origins) == {"model", "repeat"}


def test_repeats_are_counted_once_searched_past_the_deepest_ask_and_only_where_there_is_room():
    from frames_agent.agent.queries import deeper_repeats

    steps = [StepRecord(step=1, queries=["Sony", "Walkman"], query_hits=[10, 10]),
             StepRecord(step=2, queries=["Sony"], origins=["repeat"], query_hits=[15], query_depths=[15])]
    state = {"steps": steps}
    assert deeper_repeats(state, ["the Sony", "sony", "Walkman", "Channel Tunnel"], room=5, extra=5) == {
        "Sony": 20, "Walkman": 15}  # one ask per earlier query; a query never searched is not a repeat
    assert deeper_repeats(state, ["Walkman", "Sony"], room=1, extra=5) == {"Walkman": 15}
    assert deeper_repeats(state, ["Sony"], room=5, extra=0) == {} == deeper_repeats(state, ["Sony"], room=0, extra=5)
