"""CRAG scoring: exact match first, then an LLM judge; "i don't know" is missing; score = accuracy - hallucination.

Follows CRAG's local auto-eval (facebookresearch/CRAG local_evaluation.py and API.md), with these choices:
- The prediction is trimmed to 75 tokens with tiktoken (cl100k) instead of the Llama-2 tokenizer.
- An empty prediction counts as missing (no answer given), like "I don't know".
- A prediction of "invalid question" when the ground truth is a real answer is incorrect without asking the judge.
- Without a judge (--judge none) only exact matches are accurate; every other answer is `unrated` (never
  incorrect): metrics are over rated rows and say how many are unrated; `rejudge` rates them later.
- A judge reply without a 0/1 "score" (or a judge call that fails) counts as incorrect and is recorded.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from agent.llm.calls import message_text
from eval.judge import RATED, Judge, Verdict, golds, unrated
from retrieval.tokens import truncate_tokens

MAX_PREDICTION_TOKENS = 75
INVALID = "invalid question"
OUTCOMES = RATED  # accurate | incorrect | missing; "unrated" waits for a judge
_SCORE = re.compile(r'"?score"?\s*[:=]\s*"?([01])(?![\d.])"?', re.I)
_EXPLANATION = re.compile(r'"explanation"\s*:\s*"((?:[^"\\]|\\.)*)"', re.S)


def normalize_prediction(prediction: str, max_tokens: int = MAX_PREDICTION_TOKENS) -> str:
    """Trim to max_tokens, strip, lower-case; typographic apostrophes become plain ones."""
    text = truncate_tokens(prediction or "", max_tokens).strip().lower()
    return text.replace("\u2019", "'").replace("\u2018", "'")


def parse_judge_reply(reply: str) -> tuple[int | None, str]:
    """(score 0/1, explanation) from a judge reply; score None when none can be found."""
    blocks = re.findall(r"\{[^{}]*\}", reply or "")
    for text in reversed(blocks or [reply or ""]):  # the last JSON object wins, as in CRAG's parser
        try:
            data = json.loads(text)
            if isinstance(data, dict) and str(data.get("score")) in ("0", "1"):
                return int(data["score"]), str(data.get("explanation", ""))
        except ValueError:
            pass
        found = _SCORE.search(text)
        if found:
            explanation = _EXPLANATION.search(text)
            return int(found.group(1)), explanation.group(1) if explanation else ""
    return None, ""


def _ask_judge(judge: BaseChatModel, template: Any, question: str, truth: str, prediction: str) -> str:
    prompt = template.render(question=question, ground_truth=truth, prediction=prediction)
    try:
        return message_text(judge.invoke([HumanMessage(content=prompt)]).content)
    except Exception as exc:  # a failing judge call is recorded like an unparsable reply
        return f"(judge call failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"


def score_prediction(question: str, prediction: str, answer: str, alternatives: Sequence[str] = (),
                     judge: BaseChatModel | None = None, template: Any = None, judge_name: str = "") -> Verdict:
    """Score one prediction against the ground truth and its alternative answers."""
    pred = normalize_prediction(prediction)
    truths = [t.strip().lower() for t in [answer, *alternatives] if isinstance(t, str) and t.strip()]

    def decided(outcome: str, method: str) -> Verdict:
        return Verdict(outcome=outcome, method=method, prediction=pred, judge=judge_name)

    if not pred:
        return decided("missing", "empty")
    if "i don't know" in pred:
        return decided("missing", "idk")
    if truths and truths[0] == INVALID:
        return decided("accurate" if pred == INVALID else "incorrect", "invalid_question")
    if pred in truths:
        return decided("accurate", "exact")
    if pred == INVALID:
        return decided("incorrect", "invalid_question")
    if judge is None:
        return unrated(judge_name, pred)
    if template is None:
        from agent.prompts import load_prompt

        template = load_prompt("crag_judge")
    verdict = decided("incorrect", "judge_unparsable")
    for truth in truths:
        reply = _ask_judge(judge, template, question, truth, pred)
        verdict.replies.append(reply)
        verdict.calls += 1
        score, explanation = parse_judge_reply(reply)
        if score is not None:
            verdict.method, verdict.explanation = "judge", explanation
        if score == 1:
            verdict.outcome = "accurate"
            break
    return verdict


class CragJudge(Judge):
    """CRAG's rules as a Judge: gold is [answer, *alternatives]; with no model, non-exact answers are unrated."""

    def __init__(self, llm: BaseChatModel | None, name: str) -> None:
        self.llm, self.name = llm, name

    def rate(self, question: str, gold: str | Sequence[str], response: str) -> Verdict:
        """The CRAG verdict on one prediction."""
        answers = golds(gold)
        return score_prediction(question, response, answers[0] if answers else "", answers[1:], judge=self.llm,
                                judge_name=self.name)


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
    counts = {o: outcomes.count(o) for o in OUTCOMES}
    rated = sum(counts.values())
    if not rated:
        return Metrics(n=len(outcomes), unrated=len(outcomes))
    rate = {o: counts[o] / rated for o in OUTCOMES}
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
    methods: dict[str, int] = defaultdict(int)
    for r in scored:
        for key in groups:
            groups[key][str(getattr(r, key) or "unknown")].append(r.outcome)
        methods[r.method or ""] += 1
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
    return "\n".join([headline(overall), *lines])


def headline(m: Metrics) -> str:
    """One line: the score, said to be over rated rows only when some are unrated."""
    if not m.unrated:
        return f"score {_rate(m.score)} (accuracy {_rate(m.accuracy)}, hallucination {_rate(m.hallucination)})"
    return (f"score over {m.rated} rated of {m.n}: {_rate(m.score)} (accuracy {_rate(m.accuracy)}, hallucination "
            f"{_rate(m.hallucination)}); {m.unrated} unrated (no judge: `python cli.py rejudge OUT --judge SPEC`)")
