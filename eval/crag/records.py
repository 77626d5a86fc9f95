"""The typed line of a CRAG results.jsonl (one CragRecord per data row, keyed by row number) and the run summary."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from frames_agent.eval.crag.score import Figures
from frames_agent.eval.judge import Outcome, Verdict


class CragRecord(BaseModel):
    """One CRAG row: the question and gold, the prediction and what was retrieved, and how it was scored."""

    model_config = ConfigDict(extra="ignore")

    row: int  # the row's position in the data file: the key (interaction ids may repeat)
    interaction_id: str
    domain: str = "unknown"
    question_type: str = "unknown"
    static_or_dynamic: str = "unknown"
    query: str = ""
    query_time: str = ""
    answer: str = ""
    task: int = 1
    model: str = ""
    judge: str = ""
    error: str | None = None
    prediction: str = ""
    raw_answer: str = ""
    documents: list[dict] = []
    tool_calls: list[dict] = []
    step_errors: list[str] = []
    pages: dict[str, Any] = {}
    warnings: list[str] = []
    llm_calls: int = 0
    tokens: dict[str, int] = {}
    seconds: float = 0.0
    outcome: Outcome | None = None  # None: the row could not be read, so it is not scored
    method: str | None = None
    scored_prediction: str = ""
    judge_replies: list[str] = []
    judge_explanation: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_old_records(cls, data):
        """Rows scored before the unrated outcome existed called an unjudged answer incorrect."""
        if isinstance(data, dict) and data.get("method") == "unjudged":
            data = {**data, "outcome": "unrated", "method": "unrated"}
        return data

    @property
    def unrated(self) -> bool:
        """Answered, but no judge has looked at the answer yet."""
        return self.outcome == "unrated"

    def scored(self, verdict: Verdict) -> CragRecord:
        """A copy carrying the verdict (an answering error stays recorded as the method)."""
        return self.model_copy(update={
            "outcome": verdict.outcome, "method": "error" if self.error else verdict.method,
            "scored_prediction": verdict.prediction, "judge_replies": verdict.replies,
            "judge_explanation": verdict.explanation})


class CragSummary(Figures):
    """summary.json of a CRAG run: figures over rated rows, next to the number unrated."""

    data: str
    task: int
    model: str
    judge: str
    kg: str = ""  # which knowledge graph answered task 2: a CRAG_SERVER URL or the local recordings
    settings: dict[str, Any]
    rows: int
    resumed: int = 0
    unscorable: list[str] = []
    repeated_ids: list[str] = []
    seconds: float = 0.0
