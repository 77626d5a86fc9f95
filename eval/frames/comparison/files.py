"""Everything a comparison of runs writes: the overlay figure, comparison.md/.csv/.json and the side-by-side
report.html. Above the pieces it puts together (overlay, comparison, html), which do not import it back."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from frames_agent.eval.frames.comparison.tables import TABLE_FILE, write_tables
from frames_agent.eval.frames.html import HTML_FILE, write_comparison_html
from frames_agent.eval.frames.metrics import RunSummary
from frames_agent.eval.frames.overlay import OVERLAY_PLOT, Run, plot_overlay, run_label
from frames_agent.eval.frames.records import QuestionRecord


def write_comparison(runs: Sequence[Run], out: Path, html_page: str | None = None) -> list[Path]:
    """The overlay figure, comparison.md (Markdown tables), comparison.csv and comparison.json in out; returns the
    paths. The first run is the baseline; html_page names the report page the flipped questions link into."""
    out.mkdir(parents=True, exist_ok=True)
    plot_overlay(runs, out / OVERLAY_PLOT)
    labels = {name: run_label(config) for name, config, _, _ in runs}
    return [out / OVERLAY_PLOT, *write_tables(runs, out, labels, OVERLAY_PLOT, html_page)]


def write_compared(runs: Sequence[tuple[str, dict, RunSummary, list[QuestionRecord], Path | None]], out: Path,
                   html: bool = True) -> list[Path]:
    """Everything a comparison writes to out: the overlay, comparison.md/.csv/.json and (html) report.html with
    every run's trace side by side; runs are (name, config, summary, records, run directory), the baseline first."""
    written = write_comparison([(n, c, s, r) for n, c, s, r, _ in runs], out, html_page=HTML_FILE if html else None)
    if html:
        written.append(write_comparison_html([(n, c, r, p) for n, c, _, r, p in runs], out, out / TABLE_FILE))
    return written


def report_comparison(runs: list, paths: list[Path], named: Sequence[str], out: str | None, html: bool) -> list[str]:
    """`report ... [--out DIR] [--html]`: write the comparison files (to --out, or with --html to the one compare
    directory named); the lines to print."""
    target = Path(out) if out else Path(named[0]) if len(named) == 1 and len(runs) > 1 else None
    if target is None or (target / "config.json").exists():
        return ["note: each run has its report.html; add --out DIR for the page that shows them side by side"] \
            if html and len(runs) > 1 else []
    if len({name for name, *_ in runs}) != len(runs):  # e.g. a/planning and b/planning: name the parent too
        runs = [(f"{p.parent.name}/{p.name}", *rest) for p, (_, *rest) in zip(paths, runs)]
    return [f"wrote {p}" for p in write_compared([(*run, p) for run, p in zip(runs, paths)], target, html=html)]
