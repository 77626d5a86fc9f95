"""The proposer (titles named in the matched sentences), the hits each origin fetches, and which query brought each
new document (ScriptedLLM, the real tiny index)."""
from __future__ import annotations

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.evidence import Evidence, propose
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.state import StepRecord
from frames_agent.retrieval.types import Document


def _evidence() -> list[Evidence]:
    # Ferrante's article: both names share the sentence, "Port Alder" is seen first.
    return [Evidence("Tomas Ferrante", "ferrante", 3.0,
                     ["He was born in Port Alder, and his football club is Kestrel Valley FC."], [2.0])]


def test_the_proposer_offers_titles_in_the_order_seen_and_skips_what_was_read(tiny_retriever):
    question = "Which stadium does the football club supported by the mayor of Brennick play at?"
    assert propose(_evidence(), ["Tomas Ferrante"], [], tiny_retriever.has_title, 5, question=question) == [
        "Port Alder", "Kestrel Valley FC"]
    assert propose(_evidence(), ["Port Alder"], ["kestrel valley fc"], tiny_retriever.has_title, 5,
                   question=question) == []
    # A sentence sharing fewer than two words with the question matched a query word, not the question's subject.
    assert propose(_evidence(), [], [], tiny_retriever.has_title, 5, question="Where is Gannet Park?") == []


def test_each_new_document_is_credited_to_the_first_query_that_brought_it():
    a, b, c = (Document(id=i, title=i, text="") for i in "abc")
    record = StepRecord(step=1, queries=["q1", "q2", "q3"], origins=["model", "proposer", "question"],
                        query_hits=[1, 0, 2])
    # q1 brought a; q2 found nothing; q3 brought a again and c; then a tool result b.
    found = [(0, a), (0, a), (1, c), (0, b)]
    assert record.doc_origins(found) == {"a": "model", "c": "question", "b": "tool"}


def test_step_records_say_where_queries_and_new_documents_came_from(tiny_retriever):
    plans = [{"thought": "t", "queries": ["Marta Kowalczyk"]}, {"thought": "t", "queries": ["Halvorsen Prize"]}]
    config = AgentConfig(k=2, n=2, n_docs=2, question_query=False)
    result = FramesAgent(ScriptedLLM(plans), tiny_retriever, config=config).invoke(
        "Who is the mayor of the city where Marta Kowalczyk was born?", answer=False)
    first, second = result.steps
    # Step 1: nothing read yet, so no proposal (the question names only what the model asked for).
    assert first.origins == ["model"] and first.query_hits == [1], "only her article names her"
    assert first.new_doc_ids == ["kowalczyk"] and first.new_doc_origins == ["model"]
    # Step 2: her article says she was born in Brennick (a title): the proposer fills the step.
    assert second.origins == ["model", "proposer"] and second.queries[1] == "Brennick"
    assert second.query_hits == [2, 3], "a proposal fetches 3 hits"
    assert len(second.new_doc_origins) == len(second.new_doc_ids)
    assert second.new_doc_origins[second.new_doc_ids.index("brennick")] == "proposer"
    assert set(second.new_doc_origins) <= set(second.origins)


def test_each_origin_fetches_its_own_number_of_hits():
    config = AgentConfig(n_docs=2, question_query=False)
    assert [config.hits_for(o) for o in ("model", "proposer", "question")] == [2, 3, 20]
    # The fallback (the question again) goes deeper each step: the next n_docs past what the question brought.
    assert config.hits_for("fallback", 3) == 2 * 3 and AgentConfig(n_docs=10).hits_for("fallback", 2) == 20 + 20
    # A step's sizes: a recorded depth wins (a repeat's), else the origin's count; an unrecorded origin is the model's.
    assert config.step_hits(4, ["proposer", "repeat", "question"], [0, 7]) == [3, 7, 20, 2]


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
