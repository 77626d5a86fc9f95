"""CRAG scoring: exact match first, then an LLM judge; "i don't know" is missing; score = accuracy - hallucination.

Follows CRAG's local auto-eval (facebookresearch/CRAG local_evaluation.py and API.md), with these choices:
- The prediction is trimmed to 75 tokens with tiktoken (cl100k) instead of the Llama-2 tokenizer.
- An empty prediction counts as missing (no answer given), like "I don't know".
- A prediction of "invalid question" when the ground truth is a real answer is incorrect without asking the judge.
- Without a judge (--judge none) only exact matches are accurate; every other answer counts as incorrect and is
  flagged `unjudged`, so the score is a strict lower bound.
- A judge reply without a 0/1 "score" (or a judge call that fails) counts as incorrect and is recorded.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from agent.llm.calls import message_text
from retrieval.tokens import truncate_tokens

MAX_PREDICTION_TOKENS = 75
INVALID = "invalid question"
OUTCOMES = ("accurate", "incorrect", "missing")
_SCORE = re.compile(r'"?score"?\s*[:=]\s*"?([01])(?![\d.])"?', re.I)
_EXPLANATION = re.compile(r'"explanation"\s*:\s*"((?:[^"\\]|\\.)*)"', re.S)


@dataclass
class Verdict:
    """How one prediction was scored."""

    outcome: str  # accurate | incorrect | missing
    method: str  # empty | idk | exact | invalid_question | judge | unjudged | judge_unparsable
    prediction: str = ""  # the trimmed, lower-cased prediction that was scored
    judge_replies: list[str] = field(default_factory=list)
    explanation: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form for results.jsonl."""
        return asdict(self)


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
                     judge: BaseChatModel | None = None, template: Any = None) -> Verdict:
    """Score one prediction against the ground truth and its alternative answers."""
    pred = normalize_prediction(prediction)
    truths = [t.strip().lower() for t in [answer, *alternatives] if isinstance(t, str) and t.strip()]
    if not pred:
        return Verdict("missing", "empty", pred)
    if "i don't know" in pred:
        return Verdict("missing", "idk", pred)
    if truths and truths[0] == INVALID:
        return Verdict("accurate" if pred == INVALID else "incorrect", "invalid_question", pred)
    if pred in truths:
        return Verdict("accurate", "exact", pred)
    if pred == INVALID:
        return Verdict("incorrect", "invalid_question", pred)
    if judge is None:
        return Verdict("incorrect", "unjudged", pred)
    if template is None:
        from agent.prompts import load_prompt

        template = load_prompt("crag_judge")
    verdict = Verdict("incorrect", "judge_unparsable", pred)
    for truth in truths:
        reply = _ask_judge(judge, template, question, truth, pred)
        verdict.judge_replies.append(reply)
        score, explanation = parse_judge_reply(reply)
        if score is not None:
            verdict.method, verdict.explanation = "judge", explanation
        if score == 1:
            verdict.outcome = "accurate"
            break
    return verdict


def _metrics(outcomes: list[str]) -> dict[str, Any]:
    n = len(outcomes)
    counts = {o: outcomes.count(o) for o in OUTCOMES}
    rate = {o: (counts[o] / n if n else 0.0) for o in OUTCOMES}
    return {"n": n, **counts, "accuracy": rate["accurate"], "hallucination": rate["incorrect"],
            "missing_rate": rate["missing"], "score": rate["accurate"] - rate["incorrect"]}


def summarize(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Overall and per domain / question type metrics from result records (each with outcome, domain, question_type)."""
    scored = [r for r in records if r.get("outcome") in OUTCOMES]
    groups: dict[str, dict[str, list[str]]] = {"domain": defaultdict(list), "question_type": defaultdict(list)}
    for r in scored:
        for key in groups:
            groups[key][str(r.get(key) or "unknown")].append(r["outcome"])
    methods: dict[str, int] = defaultdict(int)
    for r in scored:
        methods[r.get("method", "")] += 1
    return {"overall": _metrics([r["outcome"] for r in scored]),
            "by_domain": {k: _metrics(v) for k, v in sorted(groups["domain"].items())},
            "by_question_type": {k: _metrics(v) for k, v in sorted(groups["question_type"].items())},
            "methods": dict(sorted(methods.items())),
            "errors": sum(1 for r in scored if r.get("error"))}


def format_table(summary: dict[str, Any]) -> str:
    """The summary as a plain-text table (overall, then per domain and per question type)."""
    head = f"{'group':<28}{'n':>4}{'accuracy':>10}{'halluc.':>9}{'missing':>9}{'score':>8}"
    lines = [head, "-" * len(head)]

    def row(name: str, m: dict[str, Any]) -> str:
        return (f"{name[:27]:<28}{m['n']:>4}{m['accuracy']:>10.3f}{m['hallucination']:>9.3f}"
                f"{m['missing_rate']:>9.3f}{m['score']:>8.3f}")

    lines.append(row("overall", summary["overall"]))
    for key, label in (("by_domain", "domain"), ("by_question_type", "type")):
        lines += [row(f"{label}: {name}", m) for name, m in summary[key].items()]
    return "\n".join(lines)
