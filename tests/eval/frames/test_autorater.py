"""Autorater (exact match, verdict parsing, judge calls), agreement, paired tests and the recall maths."""
from __future__ import annotations

import asyncio

import pytest

from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.state import AgentResult, StepRecord
from frames_agent.eval.frames.autorater import (
    Autorater,
    agreement,
    exact_match,
    normalize_answer,
    number_mismatch,
    parse_verdict,
)
from frames_agent.eval.frames.metrics import found_steps, retrieval_figures, run_summary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.stats import compare_paired, mcnemar_exact, paired_bootstrap
from frames_agent.retrieval.types import Document


# --- exact match ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("response,gold", [
    ("Jane Ballou", "jane ballou"), ("The answer is Jane Ballou.", "Jane Ballou"), ("1,000", "1000"),
    ("four", "4"), ("3.50", "3.5"), ("Jiri Brozek", "Jiří Brožek"), ("France", "the France"),
    ("87 years", "87"), ("U.S.A.", "U.S.A"), ("eighty-seven", "87"),
])
def test_exact_match_hits(response, gold):
    assert exact_match(response, gold)


@pytest.mark.parametrize("response,gold", [
    ("14", "4"), ("Jane", "Jane Ballou"), ("", "x"), ("x", ""),
    ("It could be many things, I looked at several options and finally I think it is 4", "4"),
])
def test_exact_match_misses(response, gold):
    assert not exact_match(response, gold)


def test_normalize_answer():
    assert normalize_answer("The Lord of the Rings: 2,001 copies!") == "lord of rings 2001 copies"


@pytest.mark.parametrize("response,gold,mismatch", [
    ("It was founded in 1965, which is 10 years earlier", "87", False), ("10 years", "87", True),
    ("eighty-seven", "87", False), ("1.5 million people", "1500000", False), ("no idea", "4"[:1], False),
    ("the 87th edition", "87", False), ("62", "1962", True), ("February 3", "February 2", False),
])
def test_number_mismatch(response, gold, mismatch):
    assert number_mismatch(response, gold) is mismatch


def test_number_mismatch_decides_without_the_judge():
    llm = ScriptedLLM([])
    verdict = asyncio.run(Autorater(llm, "j").arate("How many?", "87", "It lasted 10 years."))
    assert (verdict.correct, verdict.method, verdict.calls) == (False, "number-mismatch", 0)
    assert verdict.explanation == "the gold answer is the number 87; the response states 10"


# --- verdict parsing --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reply,decision", [
    ("Explanation: same person.\nDecision: TRUE", True),
    ("Explanation: different year.\nDecision: FALSE", False),
    ("**Decision:** **True**", True),
    ("decision = false", False),
    ('{"explanation": "matches", "decision": "TRUE"}', True),
    ('```json\n{"correct": false}\n```', False),
    ("The response is correct.", True),
    ("The response is incorrect.", False),
    ("Explanation: it says 1961 not 1962, so it is not correct", False),
    ("TRUE", True), ("false", False),
    ("Explanation: TRUE would need 1962. FALSE is right here.\nDecision: FALSE", False),
    ("Verdict: yes", True),
])
def test_parse_verdict_shapes(reply, decision):
    assert parse_verdict(reply)[0] is decision


@pytest.mark.parametrize("reply", ["", "I cannot tell.", "true or false? hard to say: true... false", None, "{}",
                                   '{"decision": 3}', "Decision: maybe"])
def test_parse_verdict_unreadable_is_none_never_raises(reply):
    assert parse_verdict(reply)[0] is None


def test_parse_verdict_explanation():
    assert parse_verdict("Explanation: both name Paris.\nDecision: TRUE")[1].startswith("both name Paris.")


def _rate(rater, response, gold="1962"):
    return asyncio.run(rater.arate("When did Gannet Park open?", gold, response))


def test_autorater_exact_shortcut_makes_no_call():
    llm = ScriptedLLM([])
    verdict = _rate(Autorater(llm, "scripted"), "It opened in 1962.")
    assert verdict.correct and verdict.method == "exact" and verdict.calls == 0 and llm.prompts == []


def test_autorater_calls_judge_with_the_prompt():
    llm = ScriptedLLM(["Explanation: the response gives nineteen sixty-two.\nDecision: TRUE"])
    verdict = _rate(Autorater(llm, "scripted"), "nineteen sixty-two")
    assert verdict.correct and verdict.method == "judge" and verdict.calls == 1
    prompt = llm.prompts[0]
    # the paper's autorater prompt (FRAMES, Appendix B), in its order: question, predicted answer, ground truth
    assert prompt.index("- Question: When did") < prompt.index("- Predicted Answer: nineteen sixty-two") \
        < prompt.index("- Ground Truth Answer: 1962")
    assert "the meaning and the vital facts of the \"Ground Truth Answer\"" in prompt


def test_autorater_unparsable_and_failing_judges_leave_the_answer_unrated_never_wrong():
    verdict = _rate(Autorater(ScriptedLLM(["hmm"]), "j"), "the sixties")
    assert (verdict.outcome, verdict.correct, verdict.method, verdict.error) == (
        "unrated", None, "unparsed", "judge reply has no TRUE/FALSE decision")
    assert verdict.replies == ["hmm"]
    verdict = _rate(Autorater(ScriptedLLM([RuntimeError("quota exceeded\ntrace")]), "j"), "the sixties")
    assert (verdict.outcome, verdict.method) == ("unrated", "error") and verdict.error == "judge failed: quota exceeded"


def test_autorater_without_judge_leaves_non_exact_answers_unrated():
    verdict = _rate(Autorater(None, "none"), "the sixties")
    assert (verdict.outcome, verdict.correct, verdict.rated) == ("unrated", None, False)
    # a paraphrased right answer is not called wrong, and neither is a number the short-cut would reject
    assert _rate(Autorater(None, "none"), "nineteen sixty-two").outcome == "unrated"
    assert _rate(Autorater(None, "none"), "It opened in 1963.").outcome == "unrated"
    assert _rate(Autorater(None, "none"), "1962").outcome == "accurate"
    assert _rate(Autorater(ScriptedLLM([]), "j"), "  ").method == "empty"


def test_rate_is_the_sync_face_of_arate():
    verdict = Autorater(ScriptedLLM(["Decision: TRUE"]), "j").rate("When?", "1962", "the sixties, early on")
    assert verdict.correct is True and verdict.calls == 1


def test_agreement_by_hand():
    result = agreement([True, True, False, False], [True, False, False, False])
    assert result["n"] == 4 and result["agreement"] == 0.75 and result["kappa"] == pytest.approx(0.5)
    assert agreement([True, True], [True, True])["kappa"] is None
    assert agreement([], [])["agreement"] is None


# --- paired tests -----------------------------------------------------------------------------------------------
def test_mcnemar_exact_known_values():
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024)  # 2 * (C(10,0) + C(10,1)) / 2^10
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_exact(5, 5) == 1.0 and mcnemar_exact(0, 0) == 1.0


def test_compare_paired_constructed_example():
    # 20 questions: 8 both right, 1 only A, 9 only B, 2 both wrong.
    a = [True] * 8 + [True] + [False] * 9 + [False] * 2
    b = [True] * 8 + [False] + [True] * 9 + [False] * 2
    result = compare_paired(a, b)
    assert (result.only_a, result.only_b, result.n) == (1, 9, 20)
    assert result.diff == pytest.approx(0.4) and result.p_value == pytest.approx(22 / 1024)
    assert result.ci_low > 0 and result.ci_high <= 0.75
    assert "real difference" in result.sentence("vanilla", "planning")
    assert compare_paired(a, b) == result  # fixed seed: the same CI every time


def test_paired_bootstrap_no_difference_ci_contains_zero():
    a = [True, False] * 10
    low, high = paired_bootstrap(a, list(reversed(a)))
    assert low <= 0 <= high
    assert compare_paired(a, list(reversed(a))).p_value >= 0.05


# --- recall maths -----------------------------------------------------------------------------------------------
def _doc(doc_id, title):
    return Document(id=doc_id, title=title, text="", article_id=doc_id.split("#")[0])


def _result():
    docs = [_doc("a#0", "Alpha"), _doc("x", "Xeno"), _doc("b", "beta"), _doc("a#1", "Alpha")]
    steps = [StepRecord(step=1, new_doc_ids=["a#0", "x"]), StepRecord(step=2, new_doc_ids=["b", "a#1"]),
             StepRecord(step=3, new_doc_ids=[])]
    return AgentResult(question="q", documents=docs, steps=steps)


def test_recall_by_hand():
    gold = ("Alpha", "Beta", "Gamma", "Delta")
    figures = retrieval_figures(gold, ["Alpha", "Beta", "Gamma"], _result())
    assert figures["found_step"] == {"Alpha": 1, "Beta": 2, "Gamma": None, "Delta": None}
    assert figures["recall"] == 0.5 and figures["covered_recall"] == pytest.approx(2 / 3)
    assert figures["recall_by_step"] == [0.25, 0.5, 0.5] and figures["coverage"] == 0.75 and figures["steps_run"] == 3


def test_documents_without_steps_count_as_given_up_front():
    result = AgentResult(question="q", documents=[_doc("g", "Gamma")])
    assert found_steps(("Gamma",), result) == {"Gamma": 0}
    assert retrieval_figures(("Gamma",), None, result)["covered_recall"] is None


def summarize(records):
    return run_summary([QuestionRecord.model_validate(r) for r in records])


def _record(qid, correct, types, gold, covered, found, steps, **extra):
    # the verdict in the shape records had before the one Verdict type: old files must still be read
    verdict = None if correct is None else {"correct": correct, "method": "exact" if correct else "judge"}
    return {"id": qid, "verdict": verdict, "reasoning_types": types, "gold_titles": gold, "covered_titles": covered,
            "found_step": found, "steps_run": steps, "failed": False, "llm_calls": 6,
            "tokens": {"prompt": 100, "completion": 10}, "seconds": 1.0, "exact_match": correct,
            "recall": sum(v is not None for v in found.values()) / len(gold),
            "covered_recall": sum(found.get(t) is not None for t in covered) / len(covered), **extra}


def test_summary_by_hand():
    records = [
        _record("1", True, ["Numerical reasoning"], ["A", "B"], ["A"], {"A": 1, "B": None}, 2),
        # stopped early after step 1: its curve carries its last value to step 2
        _record("2", False, ["Numerical reasoning", "Temporal reasoning"], ["C", "D", "E", "F"], ["C", "D"],
                {"C": 1, "D": None, "E": 1, "F": None}, 1),
        {"id": "3", "failed": True, "error": "AgentError: retrieval failed at step 1: boom", "correct": None,
         "reasoning_types": ["Temporal reasoning"], "gold_titles": ["G"], "llm_calls": 0, "seconds": 0.5},
    ]
    s = summarize(records)
    assert s.n == 3 and s.failed == 1 and s.accuracy == pytest.approx(1 / 3) and (s.rated, s.unrated) == (3, 0)
    assert s.by_reasoning_type["Numerical reasoning"].accuracy == 0.5
    temporal = s.by_reasoning_type["Temporal reasoning"]
    assert (temporal.n, temporal.rated, temporal.accuracy, temporal.recall) == (2, 2, 0.0, 0.5)
    assert s.recall == pytest.approx((0.5 + 0.5) / 2) and s.covered_recall == pytest.approx((1 + 0.5) / 2)
    assert s.recall_by_step == [pytest.approx(0.5), pytest.approx(0.5)]
    assert s.coverage == pytest.approx(3 / 6) and s.fully_covered == 0 and s.gold_articles == 6
    assert s.calls == 12 and s.tokens.model_dump() == {"prompt": 200, "completion": 20}
    assert s.failures == [{"id": "3", "error": "AgentError: retrieval failed at step 1: boom"}]


def test_summary_of_an_old_run_without_a_judge_counts_exact_misses_as_unrated():
    old_miss = _record("2", False, ["Numerical reasoning"], ["A"], ["A"], {"A": 1}, 1)
    old_miss["verdict"] = {"correct": False, "method": "exact-miss", "explanation": "no exact match; no judge"}
    s = summarize([_record("1", True, ["Numerical reasoning"], ["A"], ["A"], {"A": 1}, 1), old_miss])
    assert (s.rated, s.unrated, s.accuracy, s.exact_matches) == (1, 1, 1.0, 1)


def test_summary_retrieval_only_has_no_accuracy():
    s = summarize([_record("1", None, [], ["A"], ["A"], {"A": 1}, 1)])
    assert s.accuracy is None and s.recall == 1.0 and s.unrated == 0


def test_small_judges_get_the_no_overlap_check():
    from frames_agent.agent.llm.testing import ScriptedLLM
    from frames_agent.eval.frames.autorater import Autorater, no_overlap

    assert no_overlap("The future wife's name is Laura Bush.", "Jane Ballou")
    assert not no_overlap("Her name would be Jane Smith.", "Jane Ballou")
    assert not no_overlap("It opened in 1962.", "1962")
    # A local judge is not asked when nothing overlaps; a hosted judge still is (paraphrases).
    local = Autorater(ScriptedLLM([]), "local:qwen2.5-coder-1.5b")
    verdict = asyncio.run(local.arate("Who?", "Jane Ballou", "The name is Laura Bush."))
    assert verdict.method == "no-overlap" and verdict.correct is False
    hosted = Autorater(ScriptedLLM(["Explanation: USA is the United States.\nDecision: TRUE"]), "gemini:gemini-1.5-pro")
    verdict = asyncio.run(hosted.arate("Where?", "United States", "USA"))
    assert verdict.method == "judge" and verdict.correct is True


def test_a_judge_prompt_file_replaces_the_papers(tmp_path):
    from frames_agent.core.errors import FramesAgentError
    from frames_agent.eval.frames.autorater import judge_prompt

    path = tmp_path / "mine.txt"
    path.write_text("Now grade this one.\nQ: {question}\nResponse: {response}\nGold: {ground_truth}\n")
    llm = ScriptedLLM(["Explanation: hedged.\nDecision: FALSE"])
    verdict = _rate(Autorater(llm, "j", prompt=judge_prompt(str(path))), "the sixties")
    assert verdict.correct is False and "Now grade this one." in llm.prompts[0]
    assert "Response: the sixties" in llm.prompts[0] and judge_prompt("frames").name == "frames_judge"
    with pytest.raises(FramesAgentError, match="no prompt named 'strict'"):  # the retired stricter prompt
        judge_prompt("strict")


def test_run_config_records_the_judge_prompt(tmp_path):
    import hashlib

    from frames_agent.agent.config import AgentConfig
    from frames_agent.eval.frames.datasets import load_questions
    from frames_agent.eval.frames.runner import FramesRunSettings, run_config
    from tests.eval.frames.test_runner import TINY

    dataset = load_questions(TINY)
    paper = run_config(FramesRunSettings(data=TINY, judge="j"), AgentConfig(), dataset)
    mine = tmp_path / "mine.txt"
    mine.write_text("Grade: {question} {response} {ground_truth}\n")
    other = run_config(FramesRunSettings(data=TINY, judge="j", judge_prompt=str(mine)), AgentConfig(), dataset)
    assert paper["info"]["judge_prompt"] == "frames" and other["info"]["judge_prompt"] == str(mine)
    assert paper["judge_prompt"] != other["judge_prompt"]
    assert other["judge_prompt"].endswith(hashlib.sha256(mine.read_text().encode()).hexdigest()[:16])


@pytest.mark.parametrize("response, decided", [
    ("I don't know", True), ("I don’t know.", True), ("Not enough information provided", True),
    ("The passages do not mention the year. Therefore, I cannot answer this question.", True),
    ("I cannot determine the answer from the given information", True),
    ("I don't know, but probably Lake Orva", False),  # a guess follows: the judge decides
    ("There were no such championships", False),  # an answer (zero), not a refusal
    ("Lake Orva", False),
])
def test_a_reply_that_only_declines_is_wrong_without_asking(response, decided):
    verdict = Autorater(None, "none", strict=False).shortcut(response, "Lake Orva")
    assert (verdict is not None and verdict.method == "refusal" and verdict.correct is False) == decided
