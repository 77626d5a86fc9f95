"""Paired comparison of FRAMES runs: only questions rated in both runs are paired, and the excluded are counted."""
from __future__ import annotations

from frames_agent.eval.frames.comparison import comparison, paired_line, paired_recall_line
from frames_agent.eval.frames.metrics import run_summary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.judge import Verdict
from frames_agent.eval.stats import wilson_ci


def _record(qid: str, outcome: str | None, failed: bool = False, recall: float | None = None) -> QuestionRecord:
    verdict = None if outcome is None else Verdict(outcome=outcome, method="judge" if outcome != "unrated" else "unrated")
    return QuestionRecord(id=qid, failed=failed, verdict=verdict, recall=recall, gold_titles=["T"])


def test_paired_tests_use_only_questions_rated_in_both_runs():
    a = [_record("1", "accurate"), _record("2", "incorrect"), _record("3", "unrated"), _record("4", "accurate")]
    b = [_record("1", "accurate"), _record("2", "accurate"), _record("3", "accurate"), _record("4", "unrated")]
    line = paired_line("a", a, "b", b)
    assert "on 2 paired questions" in line and "(2 shared question(s) excluded: 2 unrated in either run)" in line
    assert "+50.0 points" in line  # over 1, 2: a right once, b right twice


def test_no_rated_pairs_says_so_with_the_excluded_count():
    line = paired_line("a", [_record("1", "unrated")], "b", [_record("1", "accurate")])
    assert line == "b vs a: no paired accuracy (no shared rated questions) (1 shared question(s) excluded: 1 unrated " \
                   "in either run)"


def test_comparison_table_shows_rated_counts_and_says_accuracy_is_over_rated():
    a = [_record("1", "accurate"), _record("2", "unrated")]
    b = [_record("1", "incorrect"), _record("2", "accurate")]
    table = comparison([("a", run_summary(a), a), ("b", run_summary(b), b)])
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in table.splitlines()]
    assert rows[2][:6] == ["a", "2", "0", "1", "1", "100.0% [20.7, 100.0]"] and rows[3][:5] == ["b", "2", "0", "2", "0"]
    assert rows[3][5].startswith("50.0% [")
    assert "accuracy is over rated answers only" in table and "on 1 paired questions" in table


def test_a_failed_question_is_never_scored_in_the_paired_tests():
    """Once a failure was paired as a wrong answer: "3 paired questions" when one arm failed one of the three."""
    a = [_record("1", "accurate", recall=1.0), _record("2", "incorrect", recall=0.0), _record("3", "accurate", recall=1.0)]
    b = [_record("1", None, failed=True), _record("2", "accurate", recall=1.0), _record("3", "accurate", recall=0.5)]
    line = paired_line("a", a, "b", b)
    assert "on 2 paired questions" in line and "(1 shared question(s) excluded: 1 failed in either run)" in line
    recall = paired_recall_line("a", a, "b", b)
    assert "+0.250 gold recall" in recall and "on 2 paired questions" in recall and "1 failed in either run" in recall


def test_comparison_has_a_failed_column_intervals_and_a_recall_test():
    a = [_record(str(i), "accurate" if i % 2 else "incorrect", recall=0.5) for i in range(6)]
    b = [_record(str(i), "accurate", recall=1.0) for i in range(5)] + [_record("5", None, failed=True)]
    table = comparison([("a", run_summary(a), a), ("b", run_summary(b), b)])
    header, _, row_a, row_b = table.splitlines()[:4]
    assert header.startswith("| run | questions | failed | rated | unrated |")
    assert row_a.startswith("| a | 6 | 0 |") and row_b.startswith("| b | 6 | 1 |")
    low, high = wilson_ci(5, 6)  # the failure counts wrong in the accuracy and in its interval alike
    assert f"| 83.3% [{low * 100:.1f}, {high * 100:.1f}] |" in row_b
    assert "[" in row_a and "on 5 paired questions" in table and "paired tests leave them out" in table
    assert "b vs a: +0.500 gold recall (1.000 vs 0.500) on 5 paired questions" in table


def test_compare_two_prompts_against_a_real_http_model_drops_no_question(tmp_path, tiny_index, monkeypatch, capsys):
    """The issue's command on an OpenAI-compatible HTTP server that keeps connections alive (as llama.cpp does):
    the second prompt's first question once failed with "Event loop is closed"."""
    import json

    from frames_agent import cli
    from tests.agent.llm.providers.test_openai_compat import FakeOpenAI
    from tests.eval.frames.test_runner import TINY

    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "FRAMES_AGENT_TEST_SCRIPT"):
        monkeypatch.delenv(var, raising=False)
    server = FakeOpenAI(keep_alive=True)
    try:
        code = cli.main(["compare", "--prompts", "vanilla", "planning", "--model", "openai:fake", "--base-url",
                         server.url, "--index", str(tiny_index), "--data", TINY, "--k", "2", "--n", "2", "--limit",
                         "3", "--judge", "none", "--no-progress", "--no-cache", "--out", str(tmp_path / "cmp")])
    finally:
        server.close()
    out = capsys.readouterr().out
    assert code == 0, out
    for arm in ("vanilla", "planning"):
        summary = json.loads((tmp_path / "cmp" / arm / "summary.json").read_text())
        assert summary["n"] == 3 and summary["failed"] == 0, summary["failures"]
    assert len(server.requests) >= 2 * 3 * 2  # every question of both arms reached the model
    assert "excluded" not in out or "failed in either run" not in out


def test_one_paired_question_writes_every_table_and_says_no_test(tmp_path):
    from frames_agent.eval.frames.comparison import write_tables

    a = [_record("1", "accurate", recall=0.0)]
    b = [_record("1", "incorrect", recall=1.0)]
    runs = [("a", {}, run_summary(a), a), ("b", {}, run_summary(b), b)]
    written = write_tables(runs, tmp_path, {"a": "A", "b": "B"})
    assert [p.name for p in written] == ["comparison.md", "comparison.csv", "comparison.json"]
    table = (tmp_path / "comparison.md").read_text()
    assert "| b | 1 | -100.0 [-100.0, -100.0] | no test | 0 | 1 | 1 | +1.000 [+1.000, +1.000] | no test |" in table
    assert "no test (fewer than 2 paired questions)" in comparison([("a", run_summary(a), a), ("b", run_summary(b), b)])


def test_report_of_two_one_question_runs_writes_the_comparison(tmp_path, tiny_retriever, capsys):
    from frames_agent import cli
    from tests.eval.frames.test_runner import run

    run(tmp_path, tiny_retriever, out=str(tmp_path / "a"), limit=1)
    run(tmp_path, tiny_retriever, out=str(tmp_path / "b"), limit=1, system="bm25", n_docs=1, retrieval_only=True)
    assert cli.main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp")]) == 0
    printed = capsys.readouterr().out
    assert "on 1 paired questions" in printed and "no test (fewer than 2 paired questions)" in printed
    assert (tmp_path / "cmp" / "comparison.md").exists() and (tmp_path / "cmp" / "comparison.json").exists()


def test_comparison_md_says_the_verdict_the_terminal_prints_and_who_judged(tmp_path):
    from frames_agent.eval.frames.comparison import write_tables

    def decided(qid: str, outcome: str, method: str) -> QuestionRecord:
        verdict = Verdict(outcome=outcome, method=method, judge="openai:gpt-4o-mini")
        return QuestionRecord(id=qid, verdict=verdict, recall=1.0 if outcome == "accurate" else 0.0, gold_titles=["T"])

    a = [decided(str(i), "accurate" if i % 2 else "incorrect", "exact") for i in range(6)]  # short-cuts alone
    b = [decided(str(i), "accurate", "judge") for i in range(6)]
    runs = [("a", {}, run_summary(a, judge="openai:gpt-4o-mini"), a),
            ("b", {}, run_summary(b, judge="openai:gpt-4o-mini"), b)]
    write_tables(runs, tmp_path, {"a": "A", "b": "B"})
    table = (tmp_path / "comparison.md").read_text()
    printed = comparison([(name, s, r) for name, _, s, r in runs])
    verdicts = [line for line in printed.splitlines() if line.startswith("b vs a:")]
    assert len(verdicts) == 2 and "not distinguishable from chance" in verdicts[0]
    assert all(f"- {line}" in table for line in verdicts)  # the very sentences, in the file
    assert "- `a`: A; every answer decided by the short-cuts; the judge `openai:gpt-4o-mini` was never called" in table
    assert "- `b`: B; judge `openai:gpt-4o-mini` after the short-cuts" in table


def test_report_md_names_the_judge_only_when_it_was_asked():
    from frames_agent.eval.frames.report import render_markdown

    verdict = Verdict(outcome="accurate", method="exact", judge="openai:gpt-4o-mini")
    records = [QuestionRecord(id="1", verdict=verdict, recall=1.0, gold_titles=["T"])]
    page = render_markdown({}, run_summary(records, judge="openai:gpt-4o-mini"), records, [])
    assert "the judge `openai:gpt-4o-mini` was never called" in page
    assert "after the short-cuts" not in page


def test_compare_has_one_prompts_flag(capsys):
    import pytest

    from frames_agent import cli

    with pytest.raises(SystemExit):
        cli.main(["compare", "--help"])
    shown = capsys.readouterr().out
    assert "--prompts PROMPT" in shown and "--prompt " not in shown and "--prompt\n" not in shown
    with pytest.raises(SystemExit) as refused:
        cli.main(["compare", "--prompts", "vanilla", "planning", "--prompt", "vanilla"])
    assert refused.value.code == 2
    error = capsys.readouterr().err
    assert "compare takes its planning prompts as --prompts A B" in error and "Traceback" not in error
