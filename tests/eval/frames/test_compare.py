"""Paired comparison of FRAMES runs: only questions rated in both runs are paired, and the excluded are counted."""
from __future__ import annotations

from eval.frames.compare import comparison, paired_line
from eval.frames.metrics import run_summary
from eval.frames.records import QuestionRecord
from eval.judge import Verdict


def _record(qid: str, outcome: str | None, failed: bool = False) -> QuestionRecord:
    verdict = None if outcome is None else Verdict(outcome=outcome, method="judge" if outcome != "unrated" else "unrated")
    return QuestionRecord(id=qid, failed=failed, verdict=verdict)


def test_paired_tests_use_only_questions_rated_in_both_runs():
    a = [_record("1", "accurate"), _record("2", "incorrect"), _record("3", "unrated"), _record("4", "accurate")]
    b = [_record("1", "accurate"), _record("2", "accurate"), _record("3", "accurate"), _record("4", "unrated")]
    line = paired_line("a", a, "b", b)
    assert "on 2 paired questions" in line and "(2 shared question(s) excluded: unrated in either run)" in line
    assert "+50.0 points" in line  # over 1, 2: a right once, b right twice


def test_no_rated_pairs_says_so_with_the_excluded_count():
    line = paired_line("a", [_record("1", "unrated")], "b", [_record("1", "accurate")])
    assert line == "b vs a: no paired accuracy (no shared rated questions) (1 shared question(s) excluded: unrated " \
                   "in either run)"


def test_comparison_table_shows_rated_counts_and_says_accuracy_is_over_rated():
    a = [_record("1", "accurate"), _record("2", "unrated")]
    b = [_record("1", "incorrect"), _record("2", "accurate")]
    table = comparison([("a", run_summary(a), a), ("b", run_summary(b), b)])
    rows = table.splitlines()
    assert rows[2].split()[:4] == ["a", "2", "1", "100.0%"] and rows[3].split()[:4] == ["b", "2", "2", "50.0%"]
    assert "accuracy is over rated answers only" in table and "on 1 paired questions" in table
