"""Several FRAMES runs side by side, with paired tests of each against the first on the questions rated in both."""
from __future__ import annotations

from collections.abc import Sequence

from eval.frames.metrics import RunSummary
from eval.frames.records import QuestionRecord
from eval.frames.report import num, pct
from eval.stats import compare_paired


def comparison(runs: Sequence[tuple[str, RunSummary, list[QuestionRecord]]]) -> str:
    """Side-by-side table of runs (name, summary, records) and paired tests of each run against the first."""
    header = (f"{'run':<28} {'n':>5} {'rated':>6} {'accuracy':>9} {'recall':>7} {'cov.rec':>8} {'calls/q':>8} "
              f"{'tokens/q':>9}")
    lines = [header, "-" * len(header)]
    for name, s, _ in runs:
        n = max(1, s.n)
        tokens = s.tokens.prompt + s.tokens.completion
        lines.append(f"{name[:28]:<28} {s.n:>5} {s.rated:>6} {pct(s.accuracy):>9} {num(s.recall):>7} "
                     f"{num(s.covered_recall):>8} {s.calls / n:>8.1f} {tokens / n:>9.0f}")
    if any(s.unrated for _, s, _ in runs):
        lines.append("accuracy is over rated answers only; unrated answers (no judge) are left out")
    base_name, _, base_records = runs[0]
    for name, _, records in runs[1:]:
        lines.append(paired_line(base_name, base_records, name, records))
    return "\n".join(lines)


def paired_line(name_a: str, records_a: list[QuestionRecord], name_b: str, records_b: list[QuestionRecord]) -> str:
    """McNemar and a paired bootstrap over the questions both runs rated; says how many shared ones were left out."""
    by_id_a = {r.id: r for r in records_a}
    by_id_b = {r.id: r for r in records_b}
    answered = [i for i in by_id_a if i in by_id_b and _answered(by_id_a[i]) and _answered(by_id_b[i])]
    rated = [i for i in answered if not by_id_a[i].unrated and not by_id_b[i].unrated]
    excluded = len(answered) - len(rated)
    note = f" ({excluded} shared question(s) excluded: unrated in either run)" if excluded else ""
    if not rated:
        return f"{name_b} vs {name_a}: no paired accuracy (no shared rated questions){note}"
    a = [bool(by_id_a[i].correct) for i in rated]
    b = [bool(by_id_b[i].correct) for i in rated]
    return compare_paired(a, b).sentence(name_a, name_b) + note


def _answered(record: QuestionRecord) -> bool:
    return record.failed or record.verdict is not None
