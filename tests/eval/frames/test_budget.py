"""Matched budget: multistep's covered recall minus BM25-R's at the same number of articles read, from a BM25-R
run's recorded hit order; the report line and figure (hand-made records and run directories)."""
from __future__ import annotations

import json

import pytest

from frames_agent import cli
from frames_agent.eval.frames.budget import bm25_curve, gold_ranks, matched_budget
from frames_agent.eval.frames.plots import plot_budget
from frames_agent.eval.frames.records import QuestionRecord


def bm25(qid: str, ranks: dict[str, int | None], depth: int = 10) -> QuestionRecord:
    return QuestionRecord(id=qid, system="bm25", gold_titles=list(ranks), covered_titles=list(ranks), found_at=ranks,
                          found_step={t: 1 if r else None for t, r in ranks.items()}, steps_run=1,
                          articles_by_step=[depth])


def multistep(qid: str, found: dict[str, int | None], articles: list[int]) -> QuestionRecord:
    hits = [s for s in found.values() if s is not None]
    return QuestionRecord(id=qid, system="multistep", gold_titles=list(found), covered_titles=list(found),
                          found_step=found, covered_recall=len(hits) / len(found), steps_run=len(articles),
                          articles_by_step=articles)


def test_the_curve_is_recall_of_the_top_m_hits():
    curve = bm25_curve([bm25("1", {"A": 1, "B": 7, "C": None}), bm25("2", {}), bm25("3", {"D": 3})], depth=10)
    assert set(curve) == {"1", "3"}, "a question without covered gold articles has no recall"
    assert curve["1"][0] == pytest.approx(1 / 3) and curve["1"][5] == pytest.approx(1 / 3)
    assert curve["1"][6] == pytest.approx(2 / 3) and curve["1"][9] == pytest.approx(2 / 3)
    assert curve["3"][:3] == [0.0, 0.0, 1.0]


def test_older_records_rank_by_their_retrieved_titles():
    old = QuestionRecord(id="1", covered_titles=["Brennick", "Mayor of Brennick", "Olse River"],
                         retrieved_titles=["Port Alder", "Brennick", "Tomas Ferrante"],
                         found_step={"Brennick": 1, "Mayor of Brennick": 1, "Olse River": None})
    # A gold title found under its redirect's target counts at the last rank: found, but only by full depth.
    assert gold_ranks(old) == {"Brennick": 2, "Mayor of Brennick": 3, "Olse River": None}


def test_matched_budget_pairs_each_question_with_bm25_at_its_own_articles_read(tmp_path):
    curve = bm25_curve([bm25("1", {"A": 2, "B": 9}), bm25("2", {"C": 4}), bm25("3", {"D": 1})], depth=10)
    runs = [multistep("1", {"A": 1, "B": 2}, [3, 5]),      # reads 5: BM25-R(5) has A only -> 1.0 vs 0.5
            multistep("2", {"C": None}, [2, 3]),           # reads 3: BM25-R(3) misses C -> 0.0 vs 0.0
            multistep("3", {"D": None}, [6, 12]),          # reads 12 > depth 10: compared at 10 -> 0.0 vs 1.0
            multistep("4", {"E": 1}, [4, 4])]              # no BM25-R figure: left out, said
    result = matched_budget(runs, curve)
    assert (result.n, result.unpaired, result.capped) == (3, 1, 1)
    assert result.multistep == pytest.approx(1 / 3) and result.bm25 == pytest.approx(1 / 2)
    assert result.diff == pytest.approx(1 / 3 - 1 / 2) and result.ci[0] <= result.diff <= result.ci[1]
    assert result.articles == pytest.approx(20 / 3)
    assert result.steps == [(pytest.approx(11 / 3), pytest.approx(1 / 6)), (pytest.approx(20 / 3), pytest.approx(1 / 3))]
    assert len(result.curve) == 10 and result.curve[0] == pytest.approx(1 / 3)
    line = result.sentence()
    assert "-0.167" in line and "3 paired questions" in line and "1 multistep question(s) without" in line
    assert plot_budget(result, tmp_path / "b.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="no question has both"):
        matched_budget(runs[3:], curve)


def _run_dir(path, system: str, records: list[QuestionRecord], n_docs: int = 10) -> str:
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"system": system, "retrieval_only": True, "agent": {"n_docs": n_docs},
                                                  "index_fingerprint": "abc"}))
    (path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    return str(path)


def test_report_with_a_baseline_prints_the_paired_difference_and_draws_it(tmp_path, capsys):
    base = _run_dir(tmp_path / "bm25", "bm25", [bm25("1", {"A": 2, "B": 9}), bm25("2", {"C": 4})])
    ours = _run_dir(tmp_path / "multi", "multistep", [multistep("1", {"A": 1, "B": 2}, [3, 5]),
                                                      multistep("2", {"C": 1}, [2, 3])])
    assert cli.main(["report", ours, "--baseline", base]) == 0
    out = capsys.readouterr().out
    assert "multi vs BM25-R at the same articles read: covered recall 1.000 vs 0.250" in out
    assert (tmp_path / "multi" / "matched_budget.png").exists()
    assert cli.main(["report", ours, "--baseline", ours]) == 2
    assert "is not a BM25-R run directory" in capsys.readouterr().err
