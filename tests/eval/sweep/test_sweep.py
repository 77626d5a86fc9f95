"""`sweep` in this process on the real tiny index with the scripted model: cells, resume after a kill, report."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frames_agent import cli
from tests.eval.sweep.helpers import results, sweep_args, write_script

pytestmark = pytest.mark.slow  # CLI subprocesses

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def scripted(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FRAMES_AGENT_TEST_SCRIPT", str(write_script(tmp_path / "script.json")))
    return tmp_path


def test_two_axis_retrieval_sweep_writes_cells_table_heatmap_and_overlay(scripted, tiny_index, capsys):
    out = scripted / "sweep"
    code = cli.main(sweep_args(tiny_index, out, "--grid", "k=1,2", "--grid", "n=1,2", "--retrieval-only",
                               "--limit", "4", "--baseline", "k=2,n=2"))
    printed = capsys.readouterr().out
    assert code == 0, printed
    cells = ["k=1_n=1", "k=1_n=2", "k=2_n=1", "k=2_n=2"]
    for cell in cells:
        assert sorted(r["id"] for r in results(out / cell)) == ["0", "1", "2", "3"]
        config = json.loads((out / cell / "config.json").read_text())
        assert (config["agent"]["k"], config["agent"]["n"]) == (int(cell[2]), int(cell[-1]))
    for name in ("sweep.md", "sweep_table.json", "heatmap.png", "recall_overlay.png", "sweep.json"):
        assert (out / name).stat().st_size > 100, name
    table = json.loads((out / "sweep_table.json").read_text())
    assert [c["cell"] for c in table["cells"]] == cells and table["baseline"] == "k=2_n=2"
    assert {(e["component"], e["to"]) for e in table["effects"]} == {("k", "1"), ("n", "1")}
    assert all(len(c["recall_by_step"]) == int(c["n"]) for c in table["cells"])
    import csv

    with (out / "sweep_table.csv").open() as handle:  # the same rows for a spreadsheet, beside the JSON
        listed = list(csv.DictReader(handle))
    assert [r["cell"] for r in listed] == cells and json.loads(listed[0]["recall_by_step"]) == table["cells"][0][
        "recall_by_step"]
    assert "k=1_n=1 vs k=2_n=2" in printed and "heat map of covered recall" in (out / "sweep.md").read_text()


def test_a_grid_over_a_set_field_answers_and_scores_without_a_judge(scripted, tiny_index, capsys):
    out = scripted / "budget"
    code = cli.main(sweep_args(tiny_index, out, "--grid", "answer_budget=800,1600", "--grid", "plan_budget=300",
                               "--k", "1", "--n", "1", "--limit", "2"))
    printed = capsys.readouterr().out
    assert code == 0, printed
    for budget in ("800", "1600"):
        config = json.loads((out / f"answer_budget={budget}_plan_budget=300" / "config.json").read_text())
        assert config["agent"]["answer_budget"] == int(budget) and config["agent"]["plan_budget"] == 300
    table = json.loads((out / "sweep_table.json").read_text())
    first = table["cells"][0]
    assert first["rated"] + first["unrated"] == 2 and "token_f1" not in first  # answered; no judge-free score
    assert "Accuracy is over rated answers only" in printed and not (out / "heatmap.png").exists()


def test_a_one_question_sweep_writes_its_tables_and_says_no_test(scripted, tiny_index, capsys):
    out = scripted / "one"
    code = cli.main(sweep_args(tiny_index, out, "--systems", "bm25", "--grid", "n_docs=1,3", "--retrieval-only",
                               "--limit", "1", "--baseline", "n_docs=3"))
    printed = capsys.readouterr().out
    assert code == 0, printed
    table = json.loads((out / "sweep_table.json").read_text())
    [found] = table["effects"]
    assert found["covered_recall"]["n"] == 1 and found["covered_recall"]["diff"] < 0 and found["covered_recall"]["p"] is None
    assert "no test (fewer than 2 paired questions)" in printed and "no test (n=1)" in (out / "sweep.md").read_text()


def test_plan_prints_cells_and_estimates_and_runs_nothing(scripted, tiny_index, capsys):
    out = scripted / "plan"
    assert cli.main(sweep_args(tiny_index, out, "--grid", "k=1,3", "--systems", "multistep", "bm25", "--plan",
                               "--limit", "3")) == 0
    printed = capsys.readouterr().out
    # Commas, as --grid takes values, name the same cells.
    assert cli.main(sweep_args(tiny_index, out, "--grid", "k=1,3", "--systems", "multistep,bm25", "--plan",
                               "--limit", "3")) == 0
    assert capsys.readouterr().out == printed
    with pytest.raises(SystemExit) as refused:
        cli.main(sweep_args(tiny_index, out, "--systems", "bm25,nope", "--plan"))
    assert refused.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err
    assert "4 cell(s)" in printed and "system=bm25_k=3: 3 question(s), 0 done, 3 to run" in printed
    assert "12 question run(s) to go" in printed and not out.exists()


@pytest.mark.parametrize("argv, message", [
    (["--grid", "nonsense=1,2"], "--grid nonsense: not a run setting or agent config field"),
    (["--grid", "k=1,x"], "--grid k=x: not a whole number"),
    (["--grid", "k=1,1"], "a value is repeated"),
    (["--grid", "k=1", "--grid", "k=2"], "--grid k is given twice"),
    ([], "sweep needs at least one --grid"),
    (["--grid", "k=1,2", "--baseline", "k=5"], "--baseline 'k=5' matches 0 cells"),
    (["--grid", "plan_budget=1,2", "--set", "plan_budget=3"], "--set plan_budget and --grid plan_budget"),
    (["--grid", "k=0,2"], "--grid k=0: Input should be greater than or equal to 1"),
    (["--grid", "k=1", "--address", "127.0.0.1:1"], "--address needs --executor ray"),
])
def test_bad_grids_are_one_line_errors(scripted, tiny_index, capsys, argv, message):
    code = cli.main(sweep_args(tiny_index, scripted / "bad", *argv, "--plan"))
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_a_killed_sweep_resumes_every_cell_without_repeating_a_question(tmp_path, tiny_index):
    env = {**os.environ, "FRAMES_AGENT_CACHE": str(tmp_path / "cache"),
           "FRAMES_AGENT_TEST_SCRIPT": str(write_script(tmp_path / "script.json", delay=0.3))}
    out = tmp_path / "sweep"
    argv = [sys.executable, "cli.py", *sweep_args(tiny_index, out, "--grid", "k=1,2", "--grid", "n=1,2",
                                                  "--retrieval-only", "--limit", "4", "--concurrency", "1")]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = out / "k=1_n=2" / "results.jsonl"
    deadline = time.monotonic() + 240
    while not (first.exists() and first.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = {cell.name: len(results(cell)) for cell in out.iterdir() if (cell / "results.jsonl").exists()}
    assert done_before["k=1_n=1"] == 4 and 1 <= done_before["k=1_n=2"] < 4 and "k=2_n=2" not in done_before
    assert subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=300).returncode == 0
    for cell in ("k=1_n=1", "k=1_n=2", "k=2_n=1", "k=2_n=2"):
        ids = [r["id"] for r in results(out / cell)]
        assert sorted(ids) == ["0", "1", "2", "3"], (cell, ids)  # every question once: none lost, none repeated
