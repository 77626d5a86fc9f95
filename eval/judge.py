"""One judge interface, `Judge.rate(question, gold, response) -> Verdict`, for the FRAMES and CRAG judges; an answer
no judge model looked at is `unrated`, never wrong."""
from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel, model_validator

from frames_agent.agent.llm.timing import CallTiming

Outcome = Literal["accurate", "incorrect", "missing", "unrated"]
RATED = ("accurate", "incorrect", "missing")
# Methods of records written before the unrated outcome existed: "no judge" was then counted as wrong.
_OLD_UNRATED_METHODS = {"exact-miss", "unjudged"}


class Verdict(BaseModel):
    """How one response was rated against the gold answer(s): outcome, method, and the judge's words and cost."""

    outcome: Outcome
    method: str
    explanation: str = ""
    replies: list[str] = []  # the judge's replies
    judge: str = ""
    error: str | None = None
    prediction: str = ""  # what was actually compared (CRAG trims and lower-cases)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    timings: list[CallTiming] = []  # one per judge call: where the judge's time went

    @model_validator(mode="before")
    @classmethod
    def _from_old_records(cls, data):
        """FRAMES records before the one Verdict type stored `correct: bool` instead of an outcome."""
        if isinstance(data, dict) and "outcome" not in data and "correct" in data:
            data = dict(data)
            data["replies"] = [data.pop("raw")] if data.get("raw") else []
            correct = data.pop("correct", False)
            if data.get("method") in _OLD_UNRATED_METHODS:
                data["outcome"] = "unrated"
            else:
                data["outcome"] = "accurate" if correct else "incorrect"
        return data

    @property
    def rated(self) -> bool:
        """A decision was reached (an unrated answer waits for a judge)."""
        return self.outcome != "unrated"

    @property
    def correct(self) -> bool | None:
        """True/False once rated, None while unrated."""
        return None if self.outcome == "unrated" else self.outcome == "accurate"


def unrated(judge: str, prediction: str = "") -> Verdict:
    """The verdict of an answer no judge model has looked at."""
    return Verdict(outcome="unrated", method="unrated", explanation="not an exact match; no judge model",
                   judge=judge, prediction=prediction)


def judge_label(judge: str, config: dict) -> str:
    """The run's judge, and the judges `rejudge` rated its unrated answers with."""
    rejudged = config.get("info", {}).get("rejudged_by")
    return f"{judge}, unrated answers rejudged by {', '.join(rejudged)}" if rejudged else judge


class Judge:
    """Rates a response against the gold answer; implement `rate` or `arate`, the other follows."""

    name: str = "none"

    def rate(self, question: str, gold: str, response: str) -> Verdict:
        """The verdict on one response."""
        return asyncio.run(self.arate(question, gold, response))

    async def arate(self, question: str, gold: str, response: str) -> Verdict:
        """The verdict on one response, without blocking the event loop."""
        return await asyncio.to_thread(self.rate, question, gold, response)


