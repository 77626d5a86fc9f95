"""The typed line of a FRAMES results.jsonl: one QuestionRecord per finished question (schema in docs/evaluation.md)."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, computed_field, field_validator

from frames_agent.agent.llm.timing import CallTiming
from frames_agent.agent.queries import PlanReply
from frames_agent.agent.state import TokenUsage
from frames_agent.eval.judge import Verdict
from frames_agent.eval.rundir import RunDir

REPORT_FILE = "report.md"  # beside rundir's config, results and summary
# The plan schema's length cap on a query (constrained decoding stops a model's query there, mid-phrase if need be).
QUERY_CAP: int = PlanReply.model_json_schema()["properties"]["queries"]["items"]["maxLength"]


class QuestionRecord(BaseModel):
    """One finished FRAMES question: the question, what the system did and found, and how its answer was rated."""

    model_config = ConfigDict(extra="ignore")

    id: str
    question: str = ""
    gold_answer: str = ""
    reasoning_types: list[str] = []
    gold_titles: list[str] = []
    system: str = ""
    failed: bool = False
    error: str | None = None
    answer: str = ""
    raw_answer: str = ""
    retrieved_titles: list[str] = []
    steps: list[dict] = []
    # The model's queries that reached the plan schema's length cap (truncated_queries; likely cut short).
    truncated_queries: list[str] = []
    covered_titles: list[str] | None = None
    found_step: dict[str, int | None] = {}
    # metrics.gold_arrivals: articles read when each gold title entered, its query's origin; read per step
    found_at: dict[str, int | None] = {}
    found_origin: dict[str, str | None] = {}
    articles_by_step: list[int] = []
    steps_run: int = 0
    recall: float | None = None
    covered_recall: float | None = None
    recall_by_step: list[float | None] = []
    coverage: float | None = None
    llm_calls: int = 0
    tokens: TokenUsage = TokenUsage()
    answer_context: dict | None = None  # AgentResult.answer_context: cut, budget, prompt, passages shown, text shown
    # What the answer saw (metrics.answer_figures); None: not answered.
    gold_shown: list[str] | None = None
    answer_context_recall: float | None = None
    shown_recall: float | None = None
    answer_in_prompt: bool | None = None
    final: dict | None = None  # AgentResult.final: reasoning, whether the answer line was followed, calculation
    oracle: dict | None = None
    exact_match: bool | None = None
    verdict: Verdict | None = None
    verdict2: Verdict | None = None
    judge_calls: int = 0
    judge_tokens: TokenUsage = TokenUsage()
    calls: list[CallTiming] = []  # every LLM call of the question, judge calls included, in order
    seconds: float = 0.0

    @field_validator("verdict", "verdict2")
    @classmethod
    def _undecided_is_unrated(cls, verdict: Verdict | None) -> Verdict | None:
        """Records from before an unreadable or failed judge reply was unrated counted it wrong: read it unrated."""
        if verdict is not None and verdict.method in ("unparsed", "error") and verdict.outcome == "incorrect":
            return verdict.model_copy(update={"outcome": "unrated"})
        return verdict

    @computed_field  # type: ignore[prop-decorator]  # written for readers of results.jsonl; recomputed on reading
    @property
    def correct(self) -> bool | None:
        """True/False once rated; None while unrated, failed (counted wrong in accuracy) or not answered."""
        return None if self.failed or self.verdict is None else self.verdict.correct

    @computed_field  # type: ignore[prop-decorator]  # from `final`, so runs recorded before the field have it too
    @property
    def format_ok(self) -> bool | None:
        """Whether the answer reply followed its format (structured, or the "Answer:" line); None when not answered."""
        return None if self.failed or not self.final else bool(self.final.get("format_ok"))

    @property
    def unrated(self) -> bool:
        """Answered, but no judge has looked at the answer yet."""
        return not self.failed and self.verdict is not None and not self.verdict.rated

    def response(self) -> str:
        """The text that was rated: the extracted answer, else the model's raw reply."""
        return self.answer or self.raw_answer

    def with_verdicts(self, verdict: Verdict | None, verdict2: Verdict | None = None) -> QuestionRecord:
        """A copy rated by (new) verdicts, their judge cost added to the record's."""
        given = [v for v in (verdict, verdict2) if v is not None]
        return self.model_copy(update={
            "verdict": verdict, "verdict2": verdict2 if verdict2 is not None else self.verdict2,
            "judge_calls": self.judge_calls + sum(v.calls for v in given),
            "calls": [*self.calls, *(t for v in given for t in v.timings)],
            "judge_tokens": TokenUsage(prompt=self.judge_tokens.prompt + sum(v.prompt_tokens for v in given),
                                   completion=self.judge_tokens.completion + sum(v.completion_tokens for v in given))})


def truncated_queries(steps: list[dict]) -> list[str]:
    """The model's queries that reached the plan schema's length cap: likely cut off by constrained decoding."""
    return [q for s in steps for q, origin in zip(s.get("queries") or [], s.get("origins") or [])
            if origin == "model" and len(q) >= QUERY_CAP]


def mark(r: QuestionRecord) -> str:
    """A question's outcome in one word: yes, no, unrated, failed, or – (not answered)."""
    if r.failed:
        return "failed"
    if r.unrated:
        return "unrated"
    return {True: "yes", False: "no", None: "–"}[r.correct]


def frames_run_dir(path: Path) -> RunDir[QuestionRecord]:
    """A FRAMES run directory: QuestionRecords keyed by question id."""
    return RunDir(path, QuestionRecord.model_validate, lambda r: r.id)
