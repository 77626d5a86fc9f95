"""CRAG scoring rules on hand-made predictions, with a scripted judge."""
from __future__ import annotations

import pytest

from agent.llm.testing import ScriptedLLM
from agent.prompts import load_prompt
from eval.crag.records import CragRecord
from eval.crag.score import (
    CragJudge,
    figures,
    format_table,
    normalize_prediction,
    parse_judge_reply,
    score_prediction,
)

Q = "who directed lock, stock and two smoking barrels?"


def test_i_dont_know_anywhere_is_missing_without_a_judge_call():
    judge = ScriptedLLM([])
    v = score_prediction(Q, "Sorry, I don’t know the director.", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("missing", "idk") and judge.calls == []


def test_empty_prediction_is_missing():
    assert score_prediction(Q, "   ", "guy ritchie").outcome == "missing"


def test_exact_match_is_case_and_whitespace_insensitive():
    judge = ScriptedLLM([])
    v = score_prediction(Q, "  Guy Ritchie\n", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("accurate", "exact") and judge.calls == []


def test_exact_match_with_an_alternative_answer():
    v = score_prediction("how many?", "Three", "3", alternatives=["three"])
    assert (v.outcome, v.method) == ("accurate", "exact")


def test_invalid_question_ground_truth_needs_exactly_invalid_question():
    judge = ScriptedLLM([])
    assert score_prediction(Q, "Invalid question", "invalid question", judge=judge).outcome == "accurate"
    v = score_prediction(Q, "this is an invalid question because", "invalid question", judge=judge)
    assert (v.outcome, v.method) == ("incorrect", "invalid_question")
    assert score_prediction(Q, "guy ritchie", "invalid question", judge=judge).outcome == "incorrect"
    assert judge.calls == []


def test_invalid_question_prediction_for_a_real_answer_is_incorrect():
    v = score_prediction(Q, "invalid question", "guy ritchie", judge=ScriptedLLM([]))
    assert (v.outcome, v.method) == ("incorrect", "invalid_question")


def test_judge_decides_non_exact_answers_and_sees_the_trimmed_prediction():
    judge = ScriptedLLM(['{"score": 1, "explanation": "Same person."}'])
    v = score_prediction(Q, "It was directed by Guy Ritchie in 1998.", "guy ritchie", judge=judge)
    assert (v.outcome, v.method, v.explanation) == ("accurate", "judge", "Same person.")
    prompt = judge.prompts[0]
    assert "Ground truth: guy ritchie" in prompt and "Prediction: it was directed by guy ritchie in 1998." in prompt
    assert f"Question: {Q}" in prompt


def test_judge_zero_is_incorrect():
    judge = ScriptedLLM(['Output: {"score": 0, "explanation": "Wrong person."}'])
    v = score_prediction(Q, "matthew vaughn", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("incorrect", "judge")


def test_judge_tries_each_alternative_until_one_is_accurate():
    judge = ScriptedLLM(['{"score": 0}', '{"score": 1}'])
    v = score_prediction("when?", "in early march 2024", "2024-03-01", alternatives=["march 2024"], judge=judge)
    assert v.outcome == "accurate" and len(judge.calls) == 2
    assert "Ground truth: march 2024" in judge.prompts[1]


def test_unparsable_judge_reply_is_incorrect_and_recorded():
    judge = ScriptedLLM(["I think the prediction is probably right."])
    v = score_prediction(Q, "ritchie", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("incorrect", "judge_unparsable")
    assert v.replies == ["I think the prediction is probably right."]


def test_failing_judge_call_is_incorrect_and_recorded():
    judge = ScriptedLLM([RuntimeError("rate limited")])
    v = score_prediction(Q, "ritchie", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("incorrect", "judge_unparsable")
    assert "judge call failed: rate limited" in v.replies[0]


def test_no_judge_leaves_a_paraphrased_right_answer_unrated_never_incorrect():
    v = score_prediction(Q, "it was guy ritchie", "guy ritchie", judge=None)
    assert (v.outcome, v.method, v.rated) == ("unrated", "unrated", False)
    assert CragJudge(None, "none").rate(Q, ["guy ritchie"], "Guy Ritchie").outcome == "accurate"


def test_crag_judge_is_a_judge_over_answer_and_alternatives():
    judge = ScriptedLLM(['{"score": 0}', '{"score": 1, "explanation": "alt"}'])
    v = CragJudge(judge, "j").rate(Q, ["guy ritchie", "g. ritchie"], "mr ritchie")
    assert (v.outcome, v.method, v.explanation, v.calls, len(v.replies)) == ("accurate", "judge", "alt", 2, 2)


def test_prediction_is_trimmed_to_75_tokens():
    long = "guy ritchie " + "and many more words " * 60
    trimmed = normalize_prediction(long)
    assert trimmed.startswith("guy ritchie") and len(trimmed.split()) < 80
    # "i don't know" after the first 75 tokens is cut off, so it does not count.
    v = score_prediction(Q, long + " i don't know", "guy ritchie", judge=ScriptedLLM(['{"score": 0}']))
    assert v.outcome == "incorrect"


@pytest.mark.parametrize("reply,expected", [
    ('{"score": 1, "explanation": "ok"}', (1, "ok")),
    ('{"explanation": "first"}\nWait, no.\n{"score": 0, "explanation": "second"}', (0, "second")),
    ('```json\n{"score": "1", "explanation": "quoted"}\n```', (1, "quoted")),
    ('{"score": 1, "explanation": "the "best" answer"}', (1, 'the \\"best')),
    ("score: 0", (0, "")),
    ('{"score": 2}', (None, "")),
    ("", (None, "")),
])
def test_parse_judge_reply(reply, expected):
    score, explanation = parse_judge_reply(reply)
    assert score == expected[0]
    if expected[0] is not None and expected[1]:
        assert explanation.startswith(expected[1].split("\\")[0])


def test_judge_prompt_uses_only_its_three_variables():
    prompt = load_prompt("crag_judge")
    assert prompt.variables == {"question", "ground_truth", "prediction"}


def test_summary_overall_and_per_group():
    records = [
        {"domain": "finance", "question_type": "simple", "outcome": "accurate", "method": "exact"},
        {"domain": "finance", "question_type": "simple", "outcome": "incorrect", "method": "judge"},
        {"domain": "movie", "question_type": "comparison", "outcome": "missing", "method": "idk"},
        {"domain": "movie", "question_type": "simple", "outcome": "accurate", "method": "judge"},
        {"domain": "movie", "question_type": "simple", "outcome": "missing", "method": "empty", "error": "boom"},
        {"domain": "open", "question_type": "set", "outcome": None, "error": "row has no answer"},
    ]
    s = figures([CragRecord(row=i, interaction_id=str(i), **r) for i, r in enumerate(records)])
    o = s.overall
    assert (o.n, o.accurate, o.incorrect, o.missing, o.unrated) == (5, 2, 1, 2, 0)
    assert o.accuracy == pytest.approx(0.4) and o.hallucination == pytest.approx(0.2)
    assert o.score == pytest.approx(0.2) and o.missing_rate == pytest.approx(0.4)
    assert s.by_domain["finance"].score == pytest.approx(0.0)
    assert s.by_domain["movie"].n == 3 and "open" not in s.by_domain
    assert s.by_question_type["simple"].accurate == 2
    assert s.errors == 1 and s.methods["judge"] == 2
    table = format_table(s)
    assert table.splitlines()[0].startswith("score 0.200") and "rated" not in table.splitlines()[0]
    assert table.splitlines()[3].split()[:3] == ["overall", "5", "5"] and "domain: finance" in table


def test_summary_rates_only_rated_rows_and_says_how_many_are_unrated():
    records = [{"domain": "movie", "outcome": "accurate", "method": "exact"},
               {"domain": "movie", "outcome": "unrated", "method": "unrated"},
               # a row scored before "unrated" existed: its unjudged answer was called incorrect
               {"domain": "music", "outcome": "incorrect", "method": "unjudged"}]
    s = figures([CragRecord(row=i, interaction_id=str(i), **r) for i, r in enumerate(records)])
    assert (s.overall.n, s.overall.rated, s.overall.unrated) == (3, 1, 2)
    assert s.overall.accuracy == 1.0 and s.overall.hallucination == 0.0 and s.overall.score == 1.0
    assert s.by_domain["music"].rated == 0 and s.by_domain["music"].score is None
    table = format_table(s)
    assert table.splitlines()[0].startswith("score over 1 rated of 3: 1.000") and "2 unrated" in table
