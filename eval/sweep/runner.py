"""A sweep: every grid cell as an ordinary FRAMES run directory under one sweep directory, run by one executor
(in this process, or on a Ray cluster), then the sweep report. A killed sweep resumes every cell where it stopped."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from frames_agent.core import bounded
from frames_agent.core.errors import FramesAgentError, UsageError
from frames_agent.eval.errors import EvalError
from frames_agent.eval.frames.executors import Build, InProcess, Job, RayCluster
from frames_agent.eval.frames.runner import FramesRunSettings, RunOutcome, check_settings
from frames_agent.eval.rundir import MAX_RESULTS_BYTES, RESULTS_FILE, write_atomic
from frames_agent.eval.sweep.grid import Axis, Cell, cells, check_sets, find_baseline, value_slug

SWEEP_FILE = "sweep.json"


@dataclass
class Sweep:
    """The grid's cells, each with its frames settings and agent config, the baseline cell, and the sweep directory."""

    root: Path
    axes: list[Axis]
    cells: list[Cell]
    jobs: list[Job]
    baseline: Cell


def plan_sweep(base: FramesRunSettings, axes: list[Axis], baseline: str | None = None) -> Sweep:
    """Every cell's settings and agent config, checked before anything runs (a bad cell is one line naming it)."""
    from frames_agent.eval.frames.split import SPLITS
    from frames_agent.eval.frames.systems import SYSTEMS

    check_sets(axes, base)
    parts = ["sweep", *(a.key.replace("_", "-") for a in axes), value_slug(base.model)]
    root = Path(base.out) if base.out else Path("runs") / "-".join(parts + (["retrieval"] if base.retrieval_only else []))
    grid = cells(axes)
    jobs: list[Job] = []
    for cell in grid:
        settings = cell.settings(base, root)
        if settings.system not in SYSTEMS or settings.split not in SPLITS:
            bad = ("system", settings.system, SYSTEMS) if settings.system not in SYSTEMS else ("split", settings.split, SPLITS)
            raise UsageError(f"--grid {bad[0]}={bad[1]}: choose from {', '.join(bad[2])}")
        try:
            check_settings(settings)
            jobs.append((settings, settings.agent().config))
        except FramesAgentError as exc:
            raise type(exc)(f"cell {cell.name}: {exc}") from None
    return Sweep(root=root, axes=axes, cells=grid, jobs=jobs, baseline=find_baseline(baseline, grid, axes))


def describe(sweep: Sweep, executor: InProcess | RayCluster) -> list[str]:
    """--plan: the cells, their questions (done and left) and each cell's time estimate, without running."""
    from frames_agent.eval.frames.datasets import Dataset, load_questions
    from frames_agent.eval.frames.estimate import default_concurrency, estimate

    datasets: dict[tuple, Dataset] = {}
    lines = [f"sweep {sweep.root}: {len(sweep.cells)} cell(s) over "
             + " × ".join(f"{a.key} ({', '.join(a.values)})" for a in sweep.axes) + f"; baseline {sweep.baseline.name}"]
    total = 0
    for cell, (settings, config) in zip(sweep.cells, sweep.jobs):
        key = (settings.data, settings.limit, settings.split)
        if key not in datasets:
            datasets[key] = load_questions(*key)
        questions = datasets[key].questions
        assert settings.out is not None, "every cell has its directory"
        todo = len(questions) - len(_done_ids(Path(settings.out)) & {q.id for q in questions})
        total += todo
        concurrency = settings.concurrency or default_concurrency(settings)
        line = f"  {cell.name}: {len(questions)} question(s), {len(questions) - todo} done, {todo} to run"
        lines.append(line + (f"; {estimate(settings, config, todo, concurrency)}" if todo else ""))
    where = ("in this process, one cell after another" if isinstance(executor, InProcess) else
             "as Ray tasks: the model time divides by about the cluster's worker processes")
    lines.append(f"{total} question run(s) to go, {where}")
    return lines


def _done_ids(out: Path) -> set[str]:
    """Ids already recorded in a cell (read only: --plan never repairs or locks)."""
    ids = set()
    path = out / RESULTS_FILE
    if path.exists():
        try:
            data = bounded.read_file(path, MAX_RESULTS_BYTES)  # as a resume reads it: no FIFO, no endless file
        except (OSError, bounded.OutOfBounds) as exc:
            raise EvalError(f"cannot read {path} ({exc}); the file is left as it is") from None
        for line in data.splitlines():
            try:
                ids.add(str(bounded.loads(line)["id"]))
            except (ValueError, KeyError, TypeError):
                continue
    return ids


def run_sweep(sweep: Sweep, executor: InProcess | RayCluster, build: Build, echo: Callable[[str], None]) -> list[RunOutcome]:
    """Write SWEEP_DIR/sweep.json (the grid, the baseline, each cell's values), then run (or resume) every cell."""
    try:
        sweep.root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot use {sweep.root} as the sweep directory ({exc.strerror or exc}); use another --out") from None
    manifest = {"axes": {a.key: list(a.values) for a in sweep.axes}, "baseline": sweep.baseline.name,
                "cells": {c.name: dict(c.values) for c in sweep.cells}}
    write_atomic(sweep.root / SWEEP_FILE, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return executor.run(sweep.jobs, build, echo)
