"""Several FRAMES runs side by side, with paired tests of each against the first on questions every run finished (a
failed question is never scored in a paired test; the count left out is said)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from frames_agent.eval.frames.figures import num, pct
from frames_agent.eval.frames.metrics import RunSummary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.stats import PairedComparison, PairedMeans, compare_paired, compare_paired_means, mean_ci

Run = tuple[str, RunSummary, list[QuestionRecord]]


def _interval(low_high: tuple[float, float] | None, percent: bool) -> str:
    if low_high is None:
        return "–"
    low, high = low_high
    return f"[{low * 100:.0f}–{high * 100:.0f}]" if percent else f"[{low:.2f}–{high:.2f}]"


def rows(runs: Sequence[Run]) -> list[dict]:
    """One row of figures per run: questions, failed, rated, accuracy and recall with 95% CIs, cost per question."""
    out = []
    for name, s, records in runs:
        n = max(1, s.n)
        finished = [r for r in records if not r.failed]
        rated = [float(bool(r.correct)) for r in finished if r.verdict is not None and not r.unrated]
        out.append({
            "run": name, "questions": s.n, "failed": s.failed, "rated": s.rated,
            "accuracy": s.accuracy, "accuracy_ci": mean_ci(rated),
            "recall": s.recall, "recall_ci": mean_ci([r.recall for r in finished if r.recall is not None]),
            "covered_recall": s.covered_recall, "calls_per_question": s.calls / n,
            "tokens_per_question": (s.tokens.prompt + s.tokens.completion) / n, "unrated": s.unrated,
            "seconds_per_question": s.seconds / n})
    return out


def comparison(runs: Sequence[Run]) -> str:
    """Side-by-side table of runs (name, summary, records) and paired tests of each run against the first."""
    header = (f"{'run':<28} {'questions':>9} {'failed':>6} {'rated':>6} {'accuracy':>9} {'95% CI':>9} "
              f"{'recall':>7} {'95% CI':>11} {'cov.rec':>8} {'calls/q':>8} {'tokens/q':>9}")
    lines = [header, "-" * len(header)]
    for row in rows(runs):
        lines.append(f"{row['run'][:28]:<28} {row['questions']:>9} {row['failed']:>6} {row['rated']:>6} "
                     f"{pct(row['accuracy']):>9} {_interval(row['accuracy_ci'], True):>9} {num(row['recall']):>7} "
                     f"{_interval(row['recall_ci'], False):>11} {num(row['covered_recall']):>8} "
                     f"{row['calls_per_question']:>8.1f} {row['tokens_per_question']:>9.0f}")
    if any(s.unrated for _, s, _ in runs):
        lines.append("accuracy is over rated answers only; unrated answers (no judge) are left out")
    if any(s.failed for _, s, _ in runs):
        lines.append("failed questions count as wrong in a run's accuracy; the paired tests leave them out")
    base_name, _, base_records = runs[0]
    for name, _, records in runs[1:]:
        lines += [paired_line(base_name, base_records, name, records),
                  paired_recall_line(base_name, base_records, name, records)]
    return "\n".join(lines)


def _pairs(records_a: list[QuestionRecord], records_b: list[QuestionRecord]):
    """(by_a, by_b, shared ids finished in both, of them rated in both, failed in either, unrated in either)."""
    by_a, by_b = {r.id: r for r in records_a}, {r.id: r for r in records_b}
    shared = [i for i in by_a if i in by_b]
    finished = [i for i in shared if not by_a[i].failed and not by_b[i].failed]
    answered = [i for i in finished if by_a[i].verdict is not None and by_b[i].verdict is not None]
    rated = [i for i in answered if not by_a[i].unrated and not by_b[i].unrated]
    return by_a, by_b, finished, rated, len(shared) - len(finished), len(answered) - len(rated)


def _note(failed: int, unrated: int = 0) -> str:
    parts = ([f"{failed} failed in either run"] if failed else []) + ([f"{unrated} unrated in either run"]
                                                                       if unrated else [])
    total = failed + unrated
    return f" ({total} shared question(s) excluded: {', '.join(parts)})" if total else ""


def paired_accuracy(records_a: list[QuestionRecord], records_b: list[QuestionRecord],
                    only: Callable[[QuestionRecord], bool] = lambda r: True) -> PairedComparison | None:
    """McNemar and a paired bootstrap of B against A over the questions (matching `only`) both finished and rated."""
    by_a, by_b, _, rated, _, _ = _pairs(records_a, records_b)
    rated = [i for i in rated if only(by_a[i])]
    if not rated:
        return None
    return compare_paired([bool(by_a[i].correct) for i in rated], [bool(by_b[i].correct) for i in rated])


def paired_line(name_a: str, records_a: list[QuestionRecord], name_b: str, records_b: list[QuestionRecord]) -> str:
    """McNemar and a paired bootstrap over the questions both runs finished and rated; says how many were left out."""
    note = _note(**excluded(records_a, records_b))
    result = paired_accuracy(records_a, records_b)
    if result is None:
        return f"{name_b} vs {name_a}: no paired accuracy (no shared rated questions){note}"
    return result.sentence(name_a, name_b) + note


def paired_recall(records_a: list[QuestionRecord], records_b: list[QuestionRecord],
                  value: Callable[[QuestionRecord], float | None] = lambda r: r.recall) -> PairedMeans | None:
    """A recall (gold by default) of B against A over the questions both runs finished and have it, else None."""
    by_a, by_b, finished, _, _, _ = _pairs(records_a, records_b)
    known = [(a, b) for a, b in ((value(by_a[i]), value(by_b[i])) for i in finished) if a is not None and b is not None]
    if not known:
        return None
    return compare_paired_means([a for a, _ in known], [b for _, b in known])


def excluded(records_a: list[QuestionRecord], records_b: list[QuestionRecord]) -> dict[str, int]:
    """Shared questions left out of the paired accuracy test: failed in either run, unrated in either run."""
    _, _, _, _, failed, unrated = _pairs(records_a, records_b)
    return {"failed": failed, "unrated": unrated}


def flipped(records_a: list[QuestionRecord], records_b: list[QuestionRecord]) -> dict[str, list[str]]:
    """Rated in both: the questions only B got right (gained) and those only A got right (lost)."""
    by_a, by_b, _, rated, _, _ = _pairs(records_a, records_b)
    return {"gained": [i for i in rated if by_b[i].correct and not by_a[i].correct],
            "lost": [i for i in rated if by_a[i].correct and not by_b[i].correct]}


def paired_recall_line(name_a: str, records_a: list[QuestionRecord], name_b: str,
                       records_b: list[QuestionRecord]) -> str:
    """Gold recall of B against A over the questions both runs finished (retrieval-only runs get a test too)."""
    note = _note(excluded(records_a, records_b)["failed"])
    result = paired_recall(records_a, records_b)
    if result is None:
        return f"{name_b} vs {name_a}: no paired recall (no shared finished questions with gold articles){note}"
    return result.sentence(name_a, name_b, "gold recall") + note
