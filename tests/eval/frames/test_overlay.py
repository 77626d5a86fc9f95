"""`report A B C --out DIR`: the Fig.-4-style overlay, the comparison files, intervals and truthful labels."""
from __future__ import annotations

import json

import pytest

from frames_agent import cli
from frames_agent.eval.frames.plots import run_label
from frames_agent.eval.frames.systems import WikipediaFetcher
from tests.eval.frames.test_runner import FakeWikipedia, builder, run


@pytest.fixture
def three_runs(tmp_path, tiny_retriever):
    import requests

    multistep, _ = run(tmp_path / "a", tiny_retriever)
    bm25, _ = run(tmp_path / "b", tiny_retriever, system="bm25", retrieval_only=True)
    fetcher = WikipediaFetcher(tmp_path / "wiki", fetch=FakeWikipedia(requests.exceptions.ConnectionError("offline")))
    oracle, _ = run(tmp_path / "c", tiny_retriever, system="oracle", build=builder(tiny_retriever, fetcher=fetcher))
    return [multistep.out, bm25.out, oracle.out]


def test_report_out_writes_the_overlay_and_the_comparison_files(tmp_path, three_runs, capsys):
    out = tmp_path / "cmp"
    assert cli.main(["report", *map(str, three_runs), "--out", str(out)]) == 0
    png = (out / "recall_overlay.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    table = (out / "comparison.md").read_text()
    assert "failed" in table and "gold recall" in table and "BM25-R(3), no model — retrieval only" in table
    data = json.loads((out / "comparison.json").read_text())
    assert [r["questions"] for r in data["runs"]] == [6, 6, 6]
    assert {"accuracy", "accuracy_ci", "recall", "recall_ci", "covered_recall", "calls_per_question",
            "tokens_per_question", "failed"} <= set(data["runs"][0])
    assert len(data["paired"]) == 2 and "gold recall" in data["paired"][0]["sentences"][1]
    assert data["baseline"] == data["paired"][0]["baseline"] == data["order"][0]
    recall = data["paired"][0]["recall"]  # numbers, not prose: delta, CI bounds, p, n
    assert recall["n"] == 6 and recall["ci_low"] <= recall["delta"] <= recall["ci_high"] and 0 < recall["p"] <= 1
    assert "| run | questions | failed |" in table and (out / "comparison.csv").read_text().startswith("run,baseline,")


def test_reports_carry_intervals_and_labels_that_tell_the_truth(three_runs):
    multistep, bm25, oracle = three_runs
    summary = json.loads((multistep / "summary.json").read_text())
    low, high = summary["accuracy_ci"]
    assert low <= summary["accuracy"] <= high and len(summary["recall_by_step_ci"]) == len(summary["recall_by_step"])
    report = (multistep / "report.md").read_text()
    assert "k=2 queries/step, n=2 steps" in report and "accuracy (rated) [95% CI]" in report
    assert "agreement with hand labels is unknown" in report or "hand-labelled answers" in report
    assert (bm25 / "report.md").read_text().startswith("# FRAMES run: BM25-R(3), no model — retrieval only")
    assert "questions" in (bm25 / "report.md").read_text()
    oracle_report = (oracle / "report.md").read_text()
    assert "- Oracle: **2 of the 16 gold articles could not be supplied** (1× not in the index; " in oracle_report
    assert "offline" in oracle_report.split("- Oracle:")[1].splitlines()[0]
    assert run_label(json.loads((bm25 / "config.json").read_text())).endswith("no model — retrieval only")


def test_the_legend_never_covers_the_data(tmp_path, three_runs, monkeypatch):
    import matplotlib.pyplot as plt

    from frames_agent.eval.frames.plots import plot_overlay
    from frames_agent.eval.frames.report import rerender

    closed = []
    monkeypatch.setattr(plt, "close", closed.append)
    runs = [(p.name, *rerender(p)) for p in three_runs]
    plot_overlay(runs, tmp_path / "overlay.png")
    fig = closed[-1]
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    assert not legend.overlaps(ax.get_window_extent(renderer))
    assert len(ax.get_legend().get_texts()) == 3


def test_one_shot_lines_are_visible_when_every_run_is_one_shot():
    from frames_agent.eval.frames.plots import one_shot_span

    low, high = one_shot_span(1)
    assert low < 1 < high and high - low > 0.4  # naive/BM25-R/oracle alone: their lines still have length
