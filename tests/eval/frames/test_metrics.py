"""Per-question figures on hand-made results and records: redirect-aware recall, where the gold came from (per gold
article its step, the articles read by then and its query's origin; totals per origin in the summary and the report),
and what the answer saw with the summary's reader/retrieval split."""
from __future__ import annotations

from frames_agent.agent.state import AgentResult, StepRecord
from frames_agent.eval.frames.metrics import (
    MAX_RECORDED_CONTEXT,
    answer_figures,
    answer_in_text,
    gold_shown,
    recorded_context,
    retrieval_figures,
    run_summary,
)
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.frames.report import origin_lines
from frames_agent.eval.judge import Verdict
from frames_agent.retrieval.types import Document


def _doc(doc_id: str, title: str, article: str | None = None) -> Document:
    return Document(id=doc_id, title=title, text="", article_id=article)


def test_each_gold_article_keeps_its_step_rank_and_origin():
    docs = [_doc("a", "Marta Kowalczyk"), _doc("b", "Halvorsen Prize"), _doc("c", "Brennick"),
            _doc("c2", "Brennick", article="c"), _doc("d", "Tomas Ferrante")]
    steps = [StepRecord(step=1, queries=["Marta Kowalczyk", "Halvorsen Prize"], origins=["model", "model"],
                        query_hits=[1, 1], new_doc_ids=["a", "b"], new_doc_origins=["model", "model"]),
             StepRecord(step=2, queries=["Brennick", "born Brennick"], origins=["proposer", "repeat"],
                        new_doc_ids=["c", "c2", "d"], new_doc_origins=["proposer", "proposer", "repeat"])]
    gold = ("Brennick", "Mayor of Brennick", "Olse River")
    figures = retrieval_figures(gold, list(gold), AgentResult(question="q", documents=docs, steps=steps),
                                {"mayor of brennick": "tomas ferrante"})
    assert figures["found_step"] == {"Brennick": 2, "Mayor of Brennick": 2, "Olse River": None}
    # A second passage of Brennick (c2) is no new article: Ferrante is the 4th article read, not the 5th.
    assert figures["found_at"] == {"Brennick": 3, "Mayor of Brennick": 4, "Olse River": None}
    assert figures["found_origin"] == {"Brennick": "proposer", "Mayor of Brennick": "repeat", "Olse River": None}
    assert figures["articles_by_step"] == [2, 4]


def _record(qid: str, steps: list[dict], found_step: dict, found_origin: dict) -> QuestionRecord:
    return QuestionRecord(id=qid, gold_titles=list(found_step), covered_titles=list(found_step), steps=steps,
                          found_step=found_step, found_origin=found_origin, steps_run=len(steps),
                          articles_by_step=[sum(len(s["new_doc_ids"]) for s in steps[:i + 1]) for i in range(len(steps))])


def test_the_summary_totals_queries_articles_and_gold_per_origin():
    one = _record("1", [{"origins": ["model", "question"], "new_doc_ids": ["a", "b", "c"],
                         "new_doc_origins": ["model", "question", "question"]},
                        {"origins": ["model", "proposer"], "new_doc_ids": ["d"], "new_doc_origins": ["proposer"]}],
                  {"A": 1, "C": 1, "D": 2, "E": None}, {"A": "model", "C": "question", "D": "proposer", "E": None})
    two = _record("2", [{"origins": ["fallback"], "new_doc_ids": ["x"], "new_doc_origins": ["fallback"]},
                        {"origins": ["repeat"], "new_doc_ids": ["y", "z"], "new_doc_origins": ["repeat", "repeat"]}],
                  {"Y": 2, "Z": 2}, {"Y": "repeat", "Z": "repeat"})
    s = run_summary([one, two])
    assert s.queries_by_origin == {"model": 2, "question": 1, "proposer": 1, "fallback": 1, "repeat": 1}
    assert s.articles_by_origin == {"model": 1, "question": 2, "proposer": 1, "fallback": 1, "repeat": 2}
    assert s.gold_by_origin == {"model": 1, "question": 1, "proposer": 1, "repeat": 2}
    assert s.gold_by_step_origin == {"1": {"model": 1, "question": 1}, "2": {"proposer": 1, "repeat": 2}}
    assert s.articles_by_step == [2.0, 3.5] and s.articles_read == 3.5
    text = "\n".join(origin_lines(s))
    assert "## Where the gold came from" in text and "| repeat | 1 | 2 | 2 | 100.0 |" in text
    assert "| 2 | 0 | 1 | 0 | 0 | 2 |" in text, "step 2: proposer 1, repeat 2 (columns in origin order)"


def test_records_written_before_origins_were_recorded_still_summarise():
    old = QuestionRecord(id="1", gold_titles=["A"], covered_titles=["A"], found_step={"A": 1}, steps_run=1,
                         steps=[{"queries": ["q"], "new_doc_ids": ["a", "b"], "new_docs": 2}])
    s = run_summary([old])
    assert s.gold_by_origin == {"unknown": 1} and s.articles_by_origin == {"unknown": 2}
    assert s.articles_by_step == [2.0]


def test_a_gold_redirect_counts_its_target():
    docs = [Document(id="t", title="Tomas Ferrante", text="mayor")]
    result = AgentResult(question="q", documents=docs, steps=[StepRecord(step=2, new_doc_ids=["t"])])
    gold = ("Mayor of Brennick", "Olse River")
    plain = retrieval_figures(gold, list(gold), result)
    assert plain["found_step"] == {"Mayor of Brennick": None, "Olse River": None}
    aliased = retrieval_figures(gold, list(gold), result, {"mayor of brennick": "tomas ferrante"})
    assert aliased["found_step"] == {"Mayor of Brennick": 2, "Olse River": None}
    assert aliased["recall"] == 0.5 and aliased["recall_by_step"] == [0.0, 0.5]


def test_answer_in_text_phrases_numbers_and_content_words():
    assert answer_in_text("Ilse Marwood", "[1] Brennick\nThe opera house was designed by Ilse Marwood in 1912.")
    assert answer_in_text("1,912", "It opened in 1912.") and answer_in_text("twelve", "a team of 12 players")
    assert answer_in_text("The Eiffel Tower and the Louvre", "the Louvre ... the Eiffel Tower")
    assert not answer_in_text("1913", "It opened in 1912 and closed in 19134.")
    assert not answer_in_text("Ilse Marwood", "Ilse was born in Vell.") and not answer_in_text("", "anything")


def test_gold_shown_follows_redirects_and_ignores_case():
    shown = ["daikin park", "Brennick"]
    assert gold_shown(["Minute Maid Park", "brennick", "Olse River"], shown, {"minute maid park": "daikin park"}) == [
        "Minute Maid Park", "brennick"]


def _context(titles, text="", budget=1600):
    return {"budget": budget, "shown_titles": titles, "text": text,
            "passages": [{"title": t, "passages": [0]} for t in titles]}


def test_answer_figures_on_a_hand_made_record():
    gold = ["Brennick", "Tomas Ferrante", "Missing Page"]
    covered = ["Brennick", "Tomas Ferrante"]
    found = {"Brennick": 1, "Tomas Ferrante": 3, "Missing Page": None}
    figures = answer_figures(gold, covered, found, "Tomas Ferrante",
                             _context(["Kestrel Valley FC", "Brennick"], "The mayor is Tomas Ferrante."))
    assert figures == {"gold_shown": ["Brennick"], "answer_context_recall": 0.5, "shown_recall": 0.5,
                       "answer_in_prompt": True}
    nothing_found = answer_figures(gold, covered, {}, "x", _context([], "text"))
    assert nothing_found["answer_context_recall"] is None and nothing_found["shown_recall"] == 0.0
    assert answer_figures(gold, covered, found, "x", {"budget": 0})["answer_in_prompt"] is None  # retrieval only


def test_recorded_context_caps_the_text():
    long = recorded_context({"text": "x" * (MAX_RECORDED_CONTEXT + 10), "budget": 5})
    assert len(long["text"]) == MAX_RECORDED_CONTEXT and long["text_cut"] is True
    assert recorded_context({"text": "short"}) == {"text": "short"}


def _answered(qid: str, correct: bool, in_prompt: bool, recall: float) -> QuestionRecord:
    verdict = Verdict(correct=correct, method="judge", rated=True)
    return QuestionRecord(id=qid, gold_titles=["A"], covered_titles=["A"], answer="a", verdict=verdict,
                          answer_in_prompt=in_prompt, answer_context_recall=recall, gold_shown=["A"] if recall else [],
                          shown_recall=recall)


def test_summary_splits_wrong_answers_into_reader_and_retrieval_failures():
    summary = run_summary([_answered("1", True, True, 1.0), _answered("2", False, True, 1.0),
                           _answered("3", False, False, 0.0), _answered("4", False, False, 1.0)])
    assert summary.reader_failures == 1 and summary.retrieval_failures == 2
    assert summary.answer_in_prompt == 0.5 and summary.answer_context_recall == 0.75 and summary.gold_shown == 0.75
    assert summary.answer_in_prompt_ci is not None
