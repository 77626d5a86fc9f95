"""Grid parsing, cell names and settings, the baseline, and the judge-free answer measures."""
from __future__ import annotations

from pathlib import Path

import pytest

from frames_agent.core.errors import UsageError
from frames_agent.eval.frames.runner import FramesRunSettings
from frames_agent.eval.sweep.grid import cells, find_baseline, parse_grid, value_slug


def test_cells_cover_the_product_first_axis_slowest_with_typed_settings():
    axes = parse_grid(["k=1,3", "plan_budget=500", "tools=wiki|wiki,crag"], systems=["multistep", "bm25"])
    grid = cells(axes)
    assert [c.name for c in grid][:3] == ["system=multistep_k=1_plan_budget=500_tools=wiki",
                                         "system=multistep_k=1_plan_budget=500_tools=wiki-crag",
                                         "system=multistep_k=3_plan_budget=500_tools=wiki"]
    assert len(grid) == 8
    settings = grid[1].settings(FramesRunSettings(settings=["n_docs=3"]), Path("/s"))
    assert (settings.system, settings.k, settings.tools, settings.out) == ("multistep", 1, "wiki,crag", f"/s/{grid[1].name}")
    assert settings.settings == ["n_docs=3", "plan_budget=500"]


def test_flags_are_read_as_their_type_and_prompt_files_by_their_stem():
    grid = cells(parse_grid(["calculator=true,no", "prompt=planning,/tmp/x/my_prompt.txt"]))
    assert [c.name for c in grid] == ["calculator=true_prompt=planning", "calculator=true_prompt=my-prompt",
                                      "calculator=no_prompt=planning", "calculator=no_prompt=my-prompt"]
    assert grid[2].settings(FramesRunSettings(), Path("s")).calculator is False
    with pytest.raises(UsageError, match="expected true or false"):
        parse_grid(["calculator=maybe"])


def test_baseline_by_name_or_values_and_refused_when_ambiguous():
    axes = parse_grid(["k=1,3", "n=1,3"])
    grid = cells(axes)
    assert find_baseline(None, grid, axes).name == "k=1_n=1"
    assert find_baseline("k=3_n=1", grid, axes).name == find_baseline("n=1,k=3", grid, axes).name == "k=3_n=1"
    with pytest.raises(UsageError, match="matches 2 cells"):
        find_baseline("k=3", grid, axes)
    with pytest.raises(UsageError, match="over the grid's keys"):
        find_baseline("z=1", grid, axes)


def test_two_files_with_one_stem_would_share_a_cell_directory():
    with pytest.raises(UsageError, match="share the directory"):
        cells(parse_grid(["prompt=a/p.txt,b/p.txt"]))


@pytest.mark.parametrize("grid, message", [
    ("k=-1", "--grid k=-1: Input should be greater than or equal to 1"),  # once run and reported as cell k=1
    ("k=1,01", "--grid 'k=1,01': a value is repeated (1 and 01 are the same k)"),  # once two identical cells
    ("question_query=true,yes", "a value is repeated (true and yes are the same question_query)"),
    ("n=\u0661,2", "--grid n=\u0661: not a whole number"),  # an Arabic-Indic one, once read as 1
    ("k=1_0", "--grid k=1_0: not a whole number"),
    ("plan_budget=\u0665\u0660\u0660", "--grid plan_budget=\u0665\u0660\u0660: Input should be a valid integer"),
    ("plan_calls=sometimes", "--grid plan_calls=sometimes: Input should be 'every_step' or 'when_new'"),
    ("n_docs=0,10", "--grid n_docs=0: Input should be greater than or equal to 1"),
])
def test_grid_values_are_checked_against_the_config_and_repeats_refused(grid, message):
    with pytest.raises(UsageError) as refused:
        parse_grid([grid])
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_cell_names_keep_the_spelling_given():
    assert [c.name for c in cells(parse_grid(["k=01,2", "plan_budget=500,800.0"]))] == [
        "k=01_plan_budget=500", "k=01_plan_budget=800.0", "k=2_plan_budget=500", "k=2_plan_budget=800.0"]
    assert value_slug("-1") == "-1" and value_slug("1") == "1"  # a negative value keeps its sign in a cell name


def test_a_cells_results_are_read_within_bounds_when_planning(tmp_path):
    import os
    import threading

    from frames_agent.eval.errors import EvalError
    from frames_agent.eval.sweep.runner import _done_ids

    (tmp_path / "results.jsonl").write_bytes(b'{"id": "1"}\n' + b"[" * 100_000 + b"]" * 100_000 + b'\n{"id": "2"}\n')
    assert _done_ids(tmp_path) == {"1", "2"}  # a 100,000-deep line is one unreadable line, not a RecursionError
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "results.jsonl")  # open() would wait for a writer for ever
    failed: list = []

    def plan() -> None:
        try:
            _done_ids(fifo)
        except EvalError as exc:
            failed.append(str(exc))

    reader = threading.Thread(target=plan, daemon=True)
    reader.start()
    reader.join(120)  # a hang detector, not a time bound
    assert failed and "not a regular file" in failed[0]
