"""What the answer saw (eval/frames/shown.py) on hand-made records, and the summary's reader/retrieval split."""
from __future__ import annotations

from frames_agent.eval.frames.metrics import run_summary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.frames.shown import (
    MAX_RECORDED_CONTEXT,
    answer_figures,
    answer_in_text,
    gold_shown,
    recorded_context,
)
from frames_agent.eval.judge import Verdict


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


def _record(qid: str, correct: bool, in_prompt: bool, recall: float) -> QuestionRecord:
    verdict = Verdict(correct=correct, method="judge", rated=True)
    return QuestionRecord(id=qid, gold_titles=["A"], covered_titles=["A"], answer="a", verdict=verdict,
                          answer_in_prompt=in_prompt, answer_context_recall=recall, gold_shown=["A"] if recall else [],
                          shown_recall=recall)


def test_summary_splits_wrong_answers_into_reader_and_retrieval_failures():
    summary = run_summary([_record("1", True, True, 1.0), _record("2", False, True, 1.0),
                           _record("3", False, False, 0.0), _record("4", False, False, 1.0)])
    assert summary.reader_failures == 1 and summary.retrieval_failures == 2
    assert summary.answer_in_prompt == 0.5 and summary.answer_context_recall == 0.75 and summary.gold_shown == 0.75
    assert summary.answer_in_prompt_ci is not None
