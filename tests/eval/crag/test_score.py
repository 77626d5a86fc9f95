"""CRAG scoring rules on hand-made predictions, with a scripted judge."""
from __future__ import annotations

import pytest

from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.prompts import load_prompt
from frames_agent.eval.crag.score import (
    CragJudge,
    CragRecord,
    figures,
    format_table,
    parse_judge_reply,
    score_prediction,
)

Q = "who directed lock, stock and two smoking barrels?"


# Each test names the behaviour of Meta's official scorer it mirrors: facebookresearch/CRAG local_evaluation.py
# (evaluate_predictions and parse_response), "official" below.

def test_i_dont_know_anywhere_is_missing_without_a_judge_call():
    """official: `if "i don't know" in prediction_lowercase: n_miss += 1`."""
    judge = ScriptedLLM([])
    v = score_prediction(Q, "Sorry, I Don't Know the director.", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("missing", "idk") and judge.calls == []


def test_curly_apostrophe_i_dont_know_goes_to_the_judge_as_officially():
    """official: the substring test uses an ASCII apostrophe, so "I don’t know" is judged (and scored 0: incorrect)."""
    judge = ScriptedLLM(['{"score": 0, "explanation": "no answer"}'])
    v = score_prediction(Q, "I don’t know.", "guy ritchie", judge=judge)
    assert (v.outcome, v.method, len(judge.calls)) == ("incorrect", "judge", 1)


def test_empty_prediction_is_judged_as_officially():
    """official: "" is not "i don't know" and not equal to the answer, so the judge is asked; no score 1 = incorrect."""
    judge = ScriptedLLM(['{"score": 0, "explanation": "empty"}'])
    assert score_prediction(Q, "   ", "guy ritchie", judge=judge).outcome == "incorrect" and len(judge.calls) == 1
    assert score_prediction(Q, "   ", "guy ritchie").outcome == "unrated"


def test_exact_match_is_case_and_whitespace_insensitive():
    """official: `prediction.strip().lower() == ground_truth.strip().lower()` is correct without the judge."""
    judge = ScriptedLLM([])
    v = score_prediction(Q, "  Guy Ritchie\n", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("accurate", "exact") and judge.calls == []


@pytest.mark.parametrize("prediction,truth,outcome", [
    ("this is an invalid question because", "invalid question", "accurate"),  # substring on both sides
    ("The premise is invalid.", "Invalid question", "accurate"),
    ("guy ritchie", "invalid question", "incorrect"),  # "invalid" only in the ground truth
    ("invalid question", "guy ritchie", "incorrect"),  # "invalid" only in the prediction
])
def test_invalid_rule_is_a_substring_test_on_both_sides(prediction, truth, outcome):
    """official: `"invalid" in prediction_lowercase and "invalid" in ground_truth_lowercase` is correct; "invalid"
    in only one of them is a hallucination, without the judge."""
    judge = ScriptedLLM([])
    v = score_prediction(Q, prediction, truth, judge=judge)
    assert (v.outcome, v.method) == (outcome, "invalid") and judge.calls == []


def test_judge_decides_non_exact_answers_and_sees_the_trimmed_prediction():
    """official: the judge gets `Question`, `Ground truth` and the trimmed, stripped (not lower-cased) prediction."""
    judge = ScriptedLLM(['{"score": 1, "explanation": "Same person."}'])
    v = score_prediction(Q, "It was directed by Guy Ritchie in 1998.", "guy ritchie", judge=judge)
    assert (v.outcome, v.method, v.explanation) == ("accurate", "judge", "Same person.")
    prompt = judge.prompts[0]
    assert "Ground truth: guy ritchie" in prompt and "Prediction: It was directed by Guy Ritchie in 1998." in prompt
    assert f"Question: {Q}" in prompt


def test_judge_zero_is_incorrect():
    judge = ScriptedLLM(['Output: {"score": 0, "explanation": "Wrong person."}'])
    v = score_prediction(Q, "matthew vaughn", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("incorrect", "judge")


def test_unparsable_judge_reply_is_incorrect_and_recorded():
    """official: parse_response returns -1 for a reply without a score, which is not 1: incorrect."""
    judge = ScriptedLLM(["I think the prediction is probably right."])
    v = score_prediction(Q, "ritchie", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("incorrect", "judge_unparsable")
    assert v.replies == ["I think the prediction is probably right."]


def test_failing_judge_call_is_incorrect_and_recorded():
    """official: attempt_api_call returns None after errors; accuracy stays -1: incorrect."""
    judge = ScriptedLLM([RuntimeError("rate limited")])
    v = score_prediction(Q, "ritchie", "guy ritchie", judge=judge)
    assert (v.outcome, v.method) == ("incorrect", "judge_unparsable")
    assert "judge call failed: rate limited" in v.replies[0]


def test_no_judge_leaves_a_paraphrased_right_answer_unrated_never_incorrect():
    v = score_prediction(Q, "it was guy ritchie", "guy ritchie", judge=None)
    assert (v.outcome, v.method, v.rated) == ("unrated", "unrated", False)
    assert CragJudge(None, "none").rate(Q, "guy ritchie", "Guy Ritchie").outcome == "accurate"


def test_crag_judge_asks_once_about_the_main_answer():
    judge = ScriptedLLM(['{"score": 1, "explanation": "same"}'])
    v = CragJudge(judge, "j").rate(Q, "guy ritchie", "mr ritchie")
    assert (v.outcome, v.method, v.explanation, v.calls, len(v.replies)) == ("accurate", "judge", "same", 1, 1)


def test_prediction_is_trimmed_to_75_tokens():
    """official: trim_predictions_to_max_token_length keeps 75 tokens (Llama-2 there, cl100k here)."""
    long = "guy ritchie " + "and many more words " * 60
    trimmed = score_prediction(Q, long, "guy ritchie").prediction
    assert trimmed.startswith("guy ritchie") and len(trimmed.split()) < 80
    # "i don't know" after the first 75 tokens is cut off, so it does not count.
    v = score_prediction(Q, long + " i don't know", "guy ritchie", judge=ScriptedLLM(['{"score": 0}']))
    assert v.outcome == "incorrect"


@pytest.mark.parametrize("reply,expected", [
    ('{"score": 1, "explanation": "ok"}', (1, "ok")),
    ('{"explanation": "first"}\nWait, no.\n{"score": 0, "explanation": "second"}', (0, "second")),
    ('{"score": 1}\nOn reflection: {"explanation": "no score here"}', (None, "")),  # only the last block counts
    ('```json\n{"score": "1", "explanation": "quoted"}\n```', (None, "")),  # the regex wants digits after ':'
    ('{"score": 1, "explanation": "the "best" answer"}', (1, 'the "best" answer')),  # greedy (.+)
    ("score: 0", (None, "")),  # no {...} block
    ('{"score": 2}', (None, "")),  # not 0 or 1
    ('{"score" : 1}', (1, '{"score" : 1}')),  # no explanation: the block itself
    ("", (None, "")),
])
def test_parse_judge_reply_as_the_official_regex(reply, expected):
    """official parse_response: last `{([^}]*)}` match, `"score"\\s*:\\s*(\\d+)`, 0/1 only, else -1."""
    assert parse_judge_reply(reply) == expected


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
