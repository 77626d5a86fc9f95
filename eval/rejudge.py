"""Rate the unrated answers of a finished FRAMES or CRAG run with a judge model, resumably, without re-running it."""
from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from frames_agent.eval.errors import EvalError
from frames_agent.eval.judge import Judge

if TYPE_CHECKING:
    from frames_agent.eval.crag.score import CragRecord
    from frames_agent.eval.rundir import RunDir


@dataclass
class Rejudged:
    """What a rejudge did: the run's kind, how many answers it rated, and the refreshed summary."""

    kind: str
    rated: int
    summary: object


def rejudge(path: Path, spec: str, make_judge: Callable[[str, str], Judge], concurrency: int = 1,
            echo: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> Rejudged:
    """Rate every unrated answer in the run at `path` with the judge `spec`; refresh its summary."""
    from frames_agent.eval.crag.runner import crag_run_dir
    from frames_agent.eval.frames.runner import frames_run_dir
    from frames_agent.eval.rundir import read_config

    if spec in ("", "none", "same"):
        raise EvalError(f"rejudge needs a judge model spec (e.g. openai:gpt-4o-mini), not {spec!r}")
    before = read_config(path)
    if before is None:  # refused before the lock, which would create the directory
        raise EvalError(f"{path} is not a run directory (no config.json)")
    kind = "crag" if before.get("kind") == "crag" else "frames"
    run_dir = crag_run_dir(path) if kind == "crag" else frames_run_dir(path)
    with run_dir.locked():
        config = run_dir.read_config()
        if config is None:  # gone since
            raise EvalError(f"{path} is not a run directory (no config.json)")
        records, notes = run_dir.load_records()
        for note in notes:
            echo(f"note: {note}")
        if kind == "crag":
            from frames_agent.eval.crag.runner import check_retired

            check_retired(config, path)
        todo = [r for r in records.values() if r.unrated]
        echo(f"{path}: {len(todo)} unrated answer(s) of {len(records)} to rate with {spec}")
        if todo:
            judge = make_judge(kind, spec)  # resolve the judge before anything is written
            rejudged = config.setdefault("info", {}).setdefault("rejudged_by", [])
            if spec not in rejudged:
                rejudged.append(spec)
            run_dir.write_config(config)
            asyncio.run(_rate_all(kind, todo, judge, run_dir, concurrency))
        if kind == "crag":
            from frames_agent.eval.crag.runner import refresh_summary

            summary: object = refresh_summary(cast("RunDir[CragRecord]", run_dir), config)  # kind crag
    if kind == "frames":
        from frames_agent.eval.frames.report import rerender

        _, summary, _ = rerender(path)
    return Rejudged(kind=kind, rated=len(todo), summary=summary)


async def _rate_all(kind: str, todo: list, judge: Judge, run_dir, concurrency: int) -> None:
    """Rate with at most `concurrency` judge calls in flight; each record is appended as soon as it is rated."""
    from frames_agent.eval.frames.runner import rate_record

    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(record) -> None:
        async with semaphore:
            if kind == "crag":
                rated = record.scored(await judge.arate(record.query, record.answer, record.prediction))
            else:
                rated = await rate_record(record, judge)
        run_dir.append(rated)

    await asyncio.gather(*(one(r) for r in todo))

