"""Per-question retrieval figures and the run summary (accuracy, recall, coverage, cost)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from statistics import mean

from agent.state import AgentResult
from eval.frames.autorater import agreement
from eval.frames.datasets import REASONING_TYPES, normalize_title


def found_steps(gold_titles: Sequence[str], result: AgentResult) -> dict[str, int | None]:
    """For each gold title, the first step whose new documents include that article (0 = given up front)."""
    step_of_doc: dict[str, int] = {}
    for record in result.steps:
        for doc_id in record.new_doc_ids:
            step_of_doc.setdefault(doc_id, record.step)
    first: dict[str, int] = {}
    for doc in result.documents:
        key = normalize_title(doc.title)
        step = step_of_doc.get(doc.id, 0)
        if key and step < first.get(key, 1 << 30):
            first[key] = step
    return {title: first.get(normalize_title(title)) for title in gold_titles}


def recall(found: dict[str, int | None], titles: Iterable[str], upto: int | None = None) -> float | None:
    """Share of titles found (by step `upto`, if given); None when there are no titles."""
    titles = list(titles)
    if not titles:
        return None
    hits = sum(1 for t in titles if found.get(t) is not None and (upto is None or found[t] <= upto))
    return hits / len(titles)


def retrieval_figures(gold_titles: Sequence[str], covered: Sequence[str] | None, result: AgentResult) -> dict:
    """recall, covered_recall, per-step curves and coverage of one question."""
    found = found_steps(gold_titles, result)
    steps = max((s.step for s in result.steps), default=0)
    covered_list = list(covered) if covered is not None else None
    return {
        "found_step": found,
        "steps_run": steps,
        "recall": recall(found, gold_titles),
        "covered_recall": recall(found, covered_list) if covered_list is not None else None,
        "recall_by_step": [recall(found, gold_titles, s) for s in range(1, steps + 1)],
        "coverage": (len(covered_list) / len(gold_titles)) if covered_list is not None and gold_titles else None,
    }


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return mean(kept) if kept else None


def _curve(records: list[dict], key: str) -> list[float | None]:
    """Mean recall after each step; questions that stopped early keep their last value."""
    steps = max((r.get("steps_run", 0) for r in records), default=0)
    curve = []
    for s in range(1, steps + 1):
        values = []
        for r in records:
            titles = r["gold_titles"] if key == "gold" else r.get("covered_titles")
            if titles:
                values.append(recall(r.get("found_step") or {}, titles, s))
        curve.append(_mean(values))
    return curve


def _accuracy(records: list[dict]) -> float | None:
    rated = [r for r in records if r.get("correct") is not None or r.get("failed")]
    return sum(1 for r in rated if r.get("correct")) / len(rated) if rated else None


def _by_type(records: list[dict]) -> dict:
    types = list(REASONING_TYPES) + sorted({t for r in records for t in r["reasoning_types"]} - set(REASONING_TYPES))
    table = {}
    for rtype in types:
        subset = [r for r in records if rtype in r["reasoning_types"]]
        if subset:
            table[rtype] = {"n": len(subset), "accuracy": _accuracy(subset),
                            "recall": _mean(r.get("recall") for r in subset if not r.get("failed"))}
    return table


def _coverage(records: list[dict]) -> dict:
    known = [r for r in records if r.get("covered_titles") is not None and r["gold_titles"]]
    gold = sum(len(r["gold_titles"]) for r in known)
    return {
        "coverage": sum(len(r["covered_titles"]) for r in known) / gold if gold else None,
        "coverage_mean": _mean(len(r["covered_titles"]) / len(r["gold_titles"]) for r in known),
        "fully_covered": sum(1 for r in known if len(r["covered_titles"]) == len(r["gold_titles"])),
        "gold_articles": gold,
    }


def _judging(records: list[dict]) -> dict:
    methods = Counter((r.get("verdict") or {}).get("method", "none") for r in records if not r.get("failed"))
    both = [(r["verdict"]["correct"], r["verdict2"]["correct"]) for r in records
            if r.get("verdict2") and r.get("verdict") and r["verdict"].get("method") not in ("unparsed", "error")
            and r["verdict2"].get("method") not in ("unparsed", "error")]
    return {
        "verdicts": dict(methods),
        "judge_errors": methods.get("error", 0) + methods.get("unparsed", 0),
        "exact_match": _mean(float(r["exact_match"]) for r in records if r.get("exact_match") is not None),
        "judge_agreement": agreement([a for a, _ in both], [b for _, b in both]) if both else None,
    }


def summarize(records: list[dict]) -> dict:
    """The run summary from per-question records (one per question id)."""
    done = [r for r in records if not r.get("failed")]
    answered = any(r.get("correct") is not None for r in records)
    tokens = [r.get("tokens") or {} for r in records]
    return {
        "n": len(records),
        "failed": len(records) - len(done),
        "accuracy": _accuracy(records) if answered else None,
        "by_reasoning_type": _by_type(records),
        "recall": _mean(r.get("recall") for r in done),
        "covered_recall": _mean(r.get("covered_recall") for r in done),
        "recall_by_step": _curve(done, "gold"),
        "covered_recall_by_step": _curve(done, "covered"),
        **_coverage(records),
        "calls": sum(r.get("llm_calls", 0) for r in records),
        "tokens": {"prompt": sum(t.get("prompt", 0) for t in tokens),
                   "completion": sum(t.get("completion", 0) for t in tokens)},
        "seconds": round(sum(r.get("seconds", 0.0) for r in records), 3),
        "judge_calls": sum(r.get("judge_calls", 0) for r in records),
        **_judging(records),
        "failures": [{"id": r["id"], "error": r.get("error")} for r in records if r.get("failed")],
    }
