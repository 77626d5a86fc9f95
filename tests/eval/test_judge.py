"""The one Verdict type and the Judge interface: both faces (rate, arate), and verdicts of older records."""
from __future__ import annotations

import asyncio

from frames_agent.eval.judge import Judge, Verdict, unrated


class Echo(Judge):
    """Implements only rate; arate follows."""

    name = "echo"

    def rate(self, question, gold, response):
        return Verdict(outcome="accurate" if response == gold else "incorrect", method="echo", judge=self.name)


class AsyncEcho(Judge):
    """Implements only arate; rate follows."""

    async def arate(self, question, gold, response):
        return Verdict(outcome="accurate" if response == gold else "incorrect", method="echo")


def test_a_judge_implementing_one_face_gets_the_other():
    assert asyncio.run(Echo().arate("q", "x", "x")).correct is True
    assert AsyncEcho().rate("q", "x", "y").correct is False


def test_unrated_is_neither_right_nor_wrong():
    verdict = unrated("none")
    assert (verdict.rated, verdict.correct, verdict.outcome) == (False, None, "unrated")


def test_verdicts_of_older_frames_records_are_read():
    judged = Verdict.model_validate({"correct": True, "method": "judge", "raw": "Decision: TRUE"})
    assert (judged.outcome, judged.replies) == ("accurate", ["Decision: TRUE"])
    wrong = Verdict.model_validate({"correct": False, "method": "number-mismatch"})
    assert wrong.outcome == "incorrect" and wrong.rated
    # before "unrated" existed a run without a judge called every non-exact answer wrong ("exact-miss")
    assert Verdict.model_validate({"correct": False, "method": "exact-miss"}).outcome == "unrated"
