"""Matched budget: a multistep run's covered recall against BM25-R(m) on the same questions, m the articles each
question read, from a BM25-R(100) run's recorded hit order (its figure: plots.plot_budget)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import fmean

from frames_agent.eval.frames.datasets import normalize_title
from frames_agent.eval.frames.metrics import articles_by_step, recall
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.stats import NO_TEST, compare_paired_means


def gold_ranks(record: QuestionRecord) -> dict[str, int | None]:
    """A BM25-R record's rank (1-based) of each covered gold title among its hits (None: not in them)."""
    # Records before `found_at` rank by the title's place in the hits; one found under a redirect's title ranks last.
    covered = record.covered_titles or []
    if record.found_at:
        return {t: record.found_at.get(t) for t in covered}
    places: dict[str, int] = {}
    for place, title in enumerate(record.retrieved_titles, 1):
        places.setdefault(normalize_title(title), place)
    last = len(record.retrieved_titles)
    return {t: places.get(normalize_title(t), last if record.found_step.get(t) is not None else None) for t in covered}


def bm25_curve(records: Iterable[QuestionRecord], depth: int = 100) -> dict[str, list[float]]:
    """Question id -> covered recall of its top m hits, m = 1..depth (finished questions with covered gold only)."""
    curves = {}
    for r in records:
        if r.failed or not r.covered_titles:
            continue
        ranks = [rank for rank in gold_ranks(r).values() if rank is not None]
        curves[r.id] = [sum(1 for rank in ranks if rank <= m) / len(r.covered_titles) for m in range(1, depth + 1)]
    return curves


@dataclass
class MatchedBudget:
    """Multistep against BM25-R at each question's own number of articles read (paired by question)."""

    n: int
    unpaired: int  # finished multistep questions with covered gold but no BM25-R figure
    capped: int  # questions that read more articles than the BM25-R run's depth (compared at its depth)
    articles: float
    multistep: float
    bm25: float
    diff: float
    ci: tuple[float, float]
    p_value: float | None  # None: too few questions for a test
    steps: list[tuple[float, float]] = field(default_factory=list)  # (mean articles read, covered recall) per step
    curve: list[float] = field(default_factory=list)  # mean BM25-R covered recall at m = 1..depth, same questions

    def sentence(self, name: str = "multistep") -> str:
        """One line: the paired difference with its 95% interval."""
        notes = [f"{self.unpaired} multistep question(s) without a BM25-R figure left out"] if self.unpaired else []
        notes += [f"{self.capped} read more than the baseline's depth (compared at its depth)"] if self.capped else []
        return (f"{name} vs BM25-R at the same articles read: covered recall {self.multistep:.3f} vs {self.bm25:.3f} "
                f"with {self.articles:.1f} articles a question, {self.diff:+.3f} [{self.ci[0]:+.3f}, {self.ci[1]:+.3f}] "
                f"(95% paired bootstrap) on {self.n} paired questions, "
                + (NO_TEST if self.p_value is None else f"sign-flip p = {self.p_value:.3g}")
                + (f" ({'; '.join(notes)})" if notes else ""))


def matched_budget(multistep_records: Sequence[QuestionRecord], curve: dict[str, list[float]]) -> MatchedBudget:
    """Paired covered recall of multistep and BM25-R(m), m the articles each question read (at most the depth)."""
    rows = [(r, articles_by_step(r)) for r in multistep_records
            if not r.failed and r.covered_titles and r.covered_recall is not None]
    paired = [(r, read) for r, read in rows if r.id in curve and read]
    if not paired:
        raise ValueError("no question has both a multistep and a BM25-R figure (same questions and gold articles?)")
    depth = min(len(curve[r.id]) for r, _ in paired)
    ours = [r.covered_recall for r, _ in paired if r.covered_recall is not None]  # every one (rows above)
    theirs = [curve[r.id][min(read[-1], depth) - 1] if read[-1] else 0.0 for r, read in paired]
    test = compare_paired_means(theirs, ours)
    steps = max(len(read) for _, read in paired)
    points = [(fmean(read[min(s, len(read) - 1)] for _, read in paired),
               fmean(recall(r.found_step, r.covered_titles or [], s + 1) or 0.0 for r, _ in paired)) for s in range(steps)]
    return MatchedBudget(n=len(paired), unpaired=len(rows) - len(paired),
                         capped=sum(1 for _, read in paired if read[-1] > depth),
                         articles=fmean(read[-1] for _, read in paired), multistep=test.mean_b, bm25=test.mean_a,
                         diff=test.diff, ci=(test.ci_low, test.ci_high), p_value=test.p_value, steps=points,
                         curve=[fmean(curve[r.id][m] for r, _ in paired) for m in range(depth)])
