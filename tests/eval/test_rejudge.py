"""rejudge: rates only unrated answers, resumes after a kill, and refreshes the summary (FRAMES and CRAG)."""
from __future__ import annotations

import json

import pytest

from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.eval.crag.runner import CragSettings, run
from frames_agent.eval.errors import EvalError
from frames_agent.eval.judge import Judge, Verdict
from frames_agent.eval.rejudge import rejudge
from tests.eval.crag.test_runner import read_results


class Killed(BaseException):
    """Stands in for a kill in the middle of rejudging."""


class Counting(Judge):
    """Calls everything accurate; dies after `die_after` verdicts when asked to."""

    def __init__(self, die_after: int | None = None):
        self.seen: list[str] = []
        self.die_after = die_after

    async def arate(self, question, gold, response):
        if self.die_after is not None and len(self.seen) >= self.die_after:
            raise Killed()
        self.seen.append(response)
        return Verdict(outcome="accurate", method="judge", judge="counting", calls=1)


def _crag_run(tmp_path):
    rows = tmp_path / "rows.jsonl"
    row = {"interaction_id": "x", "query": "who directed it?", "answer": "guy ritchie", "domain": "movie",
           "search_results": []}
    rows.write_text("\n".join(json.dumps({**row, "interaction_id": f"id-{i}"}) for i in range(4)) + "\n")
    llm = ScriptedLLM(["Answer: guy ritchie", "Answer: Ritchie, Guy", "Answer: G. Ritchie", "Answer: the director"])
    summary = run(rows, tmp_path / "out", llm, None, CragSettings(model="s"), log=lambda s: None)
    assert (summary.overall.rated, summary.overall.unrated) == (1, 3)
    return tmp_path / "out"


def test_a_killed_rejudge_resumes_with_what_is_left(tmp_path):
    out = _crag_run(tmp_path)
    first = Counting(die_after=1)
    with pytest.raises(Killed):
        rejudge(out, "judge:a", lambda kind, spec: first, echo=lambda s: None)
    assert len(first.seen) == 1
    second = Counting()
    done = rejudge(out, "judge:a", lambda kind, spec: second, echo=lambda s: None)
    assert len(second.seen) == 2 and done.rated == 2 and done.kind == "crag"
    assert (done.summary.overall.rated, done.summary.overall.unrated, done.summary.overall.accurate) == (4, 0, 4)
    assert {r.row: r.outcome for r in read_results(out / "results.jsonl")} == {i: "accurate" for i in range(4)}
    assert json.loads((out / "summary.json").read_text())["overall"]["unrated"] == 0


def test_the_judge_is_resolved_before_anything_is_written(tmp_path):
    out = _crag_run(tmp_path)
    before = (out / "results.jsonl").read_bytes(), (out / "config.json").read_bytes()

    def broken(kind, spec):
        raise EvalError("unknown provider 'nosuch'")

    with pytest.raises(EvalError, match="nosuch"):
        rejudge(out, "nosuch:x", broken, echo=lambda s: None)
    assert ((out / "results.jsonl").read_bytes(), (out / "config.json").read_bytes()) == before
