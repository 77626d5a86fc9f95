"""How far a FRAMES judge agrees with hand labels (agreement, Cohen's kappa, confusion, short-cut decisions), the
short-cuts scored alone and the judge with them in front, as in a run (docs/evaluation.md#judging)."""
from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from frames_agent.core import bounded
from frames_agent.eval.errors import EvalError
from frames_agent.eval.frames.autorater import Autorater, agreement
from frames_agent.eval.judge import Verdict

SHIPPED_LABELS = Path(__file__).resolve().parent / "labels" / "judge_check.jsonl"
# What the project measured for shipped judges on SHIPPED_LABELS: reports state it until the user measures their own.
SHIPPED_AGREEMENT = SHIPPED_LABELS.parent / "agreement.json"


class Labelled(BaseModel):
    """One hand-labelled answer."""

    question: str
    gold: str
    prediction: str
    label: bool
    # What makes the item hard to rate (hedge, negation, paraphrase, unit, date, refusal, partial, number, ...):
    # agreement is also given per kind, so a judge that fails only on hedges shows it.
    kinds: list[str] = []


def load_labelled(path: Path) -> list[Labelled]:
    """The labelled answers of a JSONL file; a bad line is a one-line error naming it."""
    try:
        lines = bounded.read_file(path, bounded.MAX_JSON_BYTES).decode("utf-8").splitlines()
    except (OSError, ValueError) as exc:
        raise EvalError(f"cannot read labelled answers {path}: {exc}") from None
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            items.append(Labelled.model_validate(bounded.loads(line)))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise EvalError(f"{path} line {number}: expected {{question, gold, prediction, label}} ({first})") from None
    if not items:
        raise EvalError(f"{path} holds no labelled answers")
    return items


def _confusion(pairs: Sequence[tuple[bool, bool]]) -> dict[str, int]:
    """Counts of (judge, label): true/false positives and negatives, the label being the truth."""
    counts = Counter(pairs)
    return {"true_positive": counts[True, True], "false_positive": counts[True, False],
            "false_negative": counts[False, True], "true_negative": counts[False, False]}


def _shortcuts(items: list[Labelled]) -> dict:
    checker = Autorater(None, "none", strict=True)
    checked = [(item, checker.shortcut(item.prediction, item.gold)) for item in items]
    decided = [(item, v) for item, v in checked if v is not None]
    wrong = [{**i.model_dump(exclude={"kinds"}), "method": v.method} for i, v in decided if v.correct != i.label]
    return {"shortcut_decided": len(decided), "shortcut_correct": len(decided) - len(wrong),
            "shortcut_methods": dict(Counter(v.method for _, v in decided)), "shortcut_wrong": wrong}


async def _rate_all(judge: Autorater, items: list[Labelled]) -> list[Verdict]:
    return [await judge.arate(item.question, item.gold, item.prediction) for item in items]


def _by_kind(items: list[Labelled], verdicts: Sequence[Verdict] | None) -> dict[str, dict]:
    """Per kind of item: how many, how many labelled correct, and (with a judge) how many it rated as labelled."""
    out: dict[str, dict] = {}
    for n, item in enumerate(items):
        for kind in item.kinds or ["plain"]:
            row = out.setdefault(kind, {"n": 0, "labelled_correct": 0})
            row["n"] += 1
            row["labelled_correct"] += item.label
            if verdicts is not None and verdicts[n].correct is not None:
                row["judge_agrees"] = row.get("judge_agrees", 0) + (verdicts[n].correct == item.label)
    return dict(sorted(out.items()))


def check(items: list[Labelled], judge: Autorater | None = None) -> dict:
    """The report: n, positives, the short-cuts alone, and (with a judge) agreement, kappa and confusion counts."""
    report = {"n": len(items), "labelled_correct": sum(i.label for i in items), **_shortcuts(items)}
    if judge is None:
        return {**report, "by_kind": _by_kind(items, None)}
    verdicts = asyncio.run(_rate_all(judge, items))
    report["by_kind"] = _by_kind(items, verdicts)
    rated = [(v.correct, i.label) for v, i in zip(verdicts, items) if v.correct is not None]
    figures = agreement([j for j, _ in rated], [t for _, t in rated])
    disagreements = [{**i.model_dump(exclude={"kinds"}), "method": v.method, "explanation": v.explanation[:200]}
                     for v, i in zip(verdicts, items) if v.correct is not None and v.correct != i.label]
    return {**report, "judge": judge.name, "rated": len(rated), "agreement": figures["agreement"],
            "kappa": figures["kappa"], "confusion": _confusion(rated),
            "judge_calls": sum(v.calls for v in verdicts), "judge_errors": sum(1 for v in verdicts if v.error),
            "disagreements": disagreements}


def format_report(report: dict) -> str:
    """The report as a few lines of text."""
    lines = [f"{report['n']} labelled answers ({report['labelled_correct']} correct by the labels)",
             f"short-cuts decided {report['shortcut_decided']}, right on {report['shortcut_correct']} "
             f"({', '.join(f'{k} {v}' for k, v in sorted(report['shortcut_methods'].items())) or 'none'})"]
    lines += [f"  short-cut WRONG ({w['method']}): gold {w['gold']!r}, prediction {w['prediction'][:80]!r}"
              for w in report["shortcut_wrong"]]
    kinds = report.get("by_kind", {})
    if len(kinds) > 1:
        lines.append("by kind: " + "; ".join(
            f"{k} {v['n']} ({v['labelled_correct']} correct" + (f", judge agrees on {v['judge_agrees']}" if "judge_agrees" in v
                                                              else "") + ")" for k, v in kinds.items()))
    if "agreement" in report:
        kappa = "undefined" if report["kappa"] is None else f"{report['kappa']:.3f}"
        agree = "–" if report["agreement"] is None else f"{report['agreement'] * 100:.1f}%"
        c = report["confusion"]
        lines += [f"judge {report['judge']}: agreement {agree} on {report['rated']} rated, Cohen's kappa {kappa}, "
                  f"{report['judge_calls']} judge calls, {report['judge_errors']} errors",
                  f"  judge TRUE: {c['true_positive']} labelled correct, {c['false_positive']} labelled wrong; "
                  f"judge FALSE: {c['false_negative']} labelled correct, {c['true_negative']} labelled wrong"]
        lines += [f"  disagrees ({d['method']}): gold {d['gold']!r}, prediction {d['prediction'][:80]!r}, "
                  f"label {d['label']}" for d in report["disagreements"][:20]]
    return "\n".join(lines)


def _agreement_file() -> Path:
    from frames_agent.core.paths import cache_dir

    return cache_dir() / "judge_agreement.json"


def remember(report: dict, labels: Path, prompt: str) -> None:
    """Keep a judge's measured agreement so that reports of runs it judged can state it."""
    path = _agreement_file()
    try:
        known = bounded.load_file(path) if path.exists() else {}
    except (OSError, ValueError):
        known = {}
    known[report["judge"]] = {"n": report["rated"], "agreement": report["agreement"], "kappa": report["kappa"],
                              "labels": str(labels), "judge_prompt": prompt}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=2) + "\n", encoding="utf-8")


def agreement_note(judge: str | None) -> str:
    """What is known of this judge's agreement with hand labels (from judge-check), for a report."""
    spec = (judge or "none").split(",")[0].strip()
    if spec == "none":
        return "no judge model, so no judge agreement to state"
    entry = None
    for source in (_agreement_file(), SHIPPED_AGREEMENT):
        try:
            entry = bounded.load_file(source).get(spec)
        except (OSError, ValueError):
            continue
        if entry:  # the user's own measurement wins; the shipped file is not read then
            break
    if not entry or entry.get("agreement") is None:
        return f"its agreement with hand labels is unknown (measure it: python cli.py judge-check --judge {spec})"
    kappa = "undefined" if entry["kappa"] is None else f"{entry['kappa']:.2f}"
    return (f"agreement with {entry['n']} hand-labelled answers ({Path(entry['labels']).name}, judge-check, prompt "
            f"{entry['judge_prompt']}): {entry['agreement'] * 100:.1f}%, Cohen's kappa {kappa}")
