"""CRAG scoring as Meta's official local_evaluation.py does it (rules and deviations: docs/crag.md; score = accuracy -
hallucination), and the typed lines it scores: one CragRecord per data row, keyed by row number, and the summary."""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, ConfigDict, model_validator

from frames_agent.agent.llm.calls import message_text
from frames_agent.eval.judge import RATED, Judge, Outcome, Verdict, unrated
from frames_agent.retrieval.tokens import truncate_tokens

MAX_PREDICTION_TOKENS = 75
_BLOCK = re.compile(r"{([^}]*)}")
_SCORE = re.compile(r'"score"\s*:\s*(\d+)')
_EXPLANATION = re.compile(r'"explanation"\s*:\s*"(.+)"')


def parse_judge_reply(reply: str) -> tuple[int | None, str]:
    """(score 0/1, explanation) as the official parse_response reads a reply's last {...}; score None for its -1."""
    blocks = _BLOCK.findall(reply or "")
    text = "{" + blocks[-1] + "}" if blocks else ""
    found = _SCORE.search(text)
    if not found or int(found.group(1)) not in (0, 1):
        return None, ""
    explanation = _EXPLANATION.search(text)
    return int(found.group(1)), explanation.group(1) if explanation else text


def _deterministic(pred: str, truth: str) -> tuple[str, str] | None:
    """(outcome, method) the official rules give without a judge for one ground truth, else None."""
    if pred == truth:
        return "accurate", "exact"
    if "invalid" in pred and "invalid" in truth:
        return "accurate", "invalid"
    if ("invalid" in pred) != ("invalid" in truth):
        return "incorrect", "invalid"
    return None


def score_prediction(question: str, prediction: str, answer: str, judge: BaseChatModel | None = None,
                     judge_name: str = "") -> Verdict:
    """Score one prediction against the ground truth (the row's main answer, as the official script does)."""
    shown = truncate_tokens(prediction or "", MAX_PREDICTION_TOKENS).strip()  # the judge sees its case as it is
    pred = shown.lower()
    verdict = Verdict(outcome="incorrect", method="invalid", prediction=pred, judge=judge_name)
    if "i don't know" in pred:  # the ASCII apostrophe only, as officially
        return verdict.model_copy(update={"outcome": "missing", "method": "idk"})
    decided = _deterministic(pred, answer.strip().lower())
    if decided is not None:
        return verdict.model_copy(update={"outcome": decided[0], "method": decided[1]})
    if judge is None:
        return unrated(judge_name, pred)
    from frames_agent.agent.prompts import load_prompt

    prompt = load_prompt("crag_judge").render(question=question, ground_truth=answer.strip(), prediction=shown)
    try:
        reply = message_text(judge.invoke([HumanMessage(content=prompt)]).content)
    except Exception as exc:  # a failing judge call is recorded like an unparsable reply
        reply = f"(judge call failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    score, explanation = parse_judge_reply(reply)
    update = {"method": "judge_unparsable"} if score is None else {"method": "judge", "explanation": explanation}
    return verdict.model_copy(update={**update, "replies": [reply], "calls": 1,
                                      "outcome": "accurate" if score == 1 else "incorrect"})


class CragJudge(Judge):
    """CRAG's rules as a Judge; with no model, non-exact answers are unrated."""

    def __init__(self, llm: BaseChatModel | None, name: str) -> None:
        self.llm, self.name = llm, name

    def rate(self, question: str, gold: str, response: str) -> Verdict:
        """The CRAG verdict on one prediction."""
        return score_prediction(question, response, gold, judge=self.llm, judge_name=self.name)


class Metrics(BaseModel):
    """CRAG figures of one group; rates are over rated rows (None when none is rated)."""

    n: int = 0
    rated: int = 0
    unrated: int = 0
    accurate: int = 0
    incorrect: int = 0
    missing: int = 0
    accuracy: float | None = None
    hallucination: float | None = None
    missing_rate: float | None = None
    score: float | None = None


def metrics(outcomes: list[str]) -> Metrics:
    """Counts and rates of a list of outcomes (accurate, incorrect, missing, unrated)."""
    counts = {o: outcomes.count(o) for o in RATED}  # "unrated" waits for a judge
    rated = sum(counts.values())
    if not rated:
        return Metrics(n=len(outcomes), unrated=len(outcomes))
    rate = {o: counts[o] / rated for o in RATED}
    return Metrics(n=len(outcomes), rated=rated, unrated=len(outcomes) - rated, **counts,
                   accuracy=rate["accurate"], hallucination=rate["incorrect"], missing_rate=rate["missing"],
                   score=rate["accurate"] - rate["incorrect"])


class Figures(BaseModel):
    """Overall and per domain / question type metrics, verdict methods and answering errors."""

    overall: Metrics
    by_domain: dict[str, Metrics]
    by_question_type: dict[str, Metrics]
    methods: dict[str, int]
    errors: int


def figures(records: Iterable[Any]) -> Figures:
    """Figures from scored records (each with outcome, method, domain, question_type, error)."""
    scored = [r for r in records if r.outcome is not None]
    groups: dict[str, dict[str, list[str]]] = {"domain": defaultdict(list), "question_type": defaultdict(list)}
    for r in scored:
        for key in groups:
            groups[key][str(getattr(r, key) or "unknown")].append(r.outcome)
    methods = Counter(r.method or "" for r in scored)
    return Figures(overall=metrics([r.outcome for r in scored]),
                   by_domain={k: metrics(v) for k, v in sorted(groups["domain"].items())},
                   by_question_type={k: metrics(v) for k, v in sorted(groups["question_type"].items())},
                   methods=dict(sorted(methods.items())), errors=sum(1 for r in scored if r.error))


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def format_table(summary: Figures) -> str:
    """The summary as a plain-text table (overall, then per domain and per question type), rates over rated rows."""
    overall = summary.overall
    head = f"{'group':<28}{'n':>4}{'rated':>6}{'accuracy':>10}{'halluc.':>9}{'missing':>9}{'score':>8}"
    lines = [head, "-" * len(head)]

    def row(name: str, m: Metrics) -> str:
        return (f"{name[:27]:<28}{m.n:>4}{m.rated:>6}{_rate(m.accuracy):>10}{_rate(m.hallucination):>9}"
                f"{_rate(m.missing_rate):>9}{_rate(m.score):>8}")

    lines.append(row("overall", overall))
    for groups, label in ((summary.by_domain, "domain"), (summary.by_question_type, "type")):
        lines += [row(f"{label}: {name}", m) for name, m in groups.items()]
    about = [f"{name}: {value}" for name, value in (("judge", getattr(summary, "judge", "")),
                                                    ("KG", getattr(summary, "kg", ""))) if value]
    return "\n".join([headline(overall), *about, *lines])


def headline(m: Metrics) -> str:
    """One line: the score, said to be over rated rows only when some are unrated."""
    if not m.unrated:
        return f"score {_rate(m.score)} (accuracy {_rate(m.accuracy)}, hallucination {_rate(m.hallucination)})"
    return (f"score over {m.rated} rated of {m.n}: {_rate(m.score)} (accuracy {_rate(m.accuracy)}, hallucination "
            f"{_rate(m.hallucination)}); {m.unrated} unrated (no judge: `python cli.py rejudge OUT --judge SPEC`)")


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
