"""report.html: one self-contained page (inline script, styles and figures; no network) of one run or several."""
from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from frames_agent.core import bounded
from frames_agent.eval.frames.html.data import question_ids, question_row, row, trace
from frames_agent.eval.frames.html.markdown import figures, to_html
from frames_agent.eval.frames.plots import ACCURACY_PLOT, OVERLAY_PLOT, RECALL_PLOT
from frames_agent.eval.frames.recording import QUERY_CAP
from frames_agent.eval.frames.records import QuestionRecord

HTML_FILE = "report.html"
# The figures a page inlines: the run's own plots (report.md) and the comparison's overlay (comparison.md).
FIGURES = frozenset({ACCURACY_PLOT, RECALL_PLOT, OVERLAY_PLOT})
# Per run: verdict, covered recall, gold shown / found, seconds, tokens, queries at the length cap.
_COLUMNS = [("v", "verdict"), ("r", "recall"), ("gs", "gold shown/found"), ("s", "s"), ("t", "tokens"),
            ("tq", "cut queries")]


@dataclass
class RunPage:
    """One run as the page shows it: its name, a label saying what it was, its records and its summary."""

    name: str
    label: str
    records: list[QuestionRecord]
    summary_html: str = ""


def run_page(name: str, config: dict, records: Sequence[QuestionRecord], run_dir: Path | None) -> RunPage:
    """A run's page part; its summary is its report.md with the figures inlined."""
    from frames_agent.eval.frames.plots import run_label
    from frames_agent.eval.frames.records import REPORT_FILE

    text = ""
    if run_dir is not None and (run_dir / REPORT_FILE).is_file():
        text = _own_text(run_dir / REPORT_FILE).split("\n## Questions\n")[0]  # the page's table
    summary = to_html(text, figures(run_dir, FIGURES))
    return RunPage(name=name, label=run_label(config), records=list(records), summary_html=summary)


def embed(value: object) -> str:
    """JSON safe inside a <script> element: no "<" survives, so no "</script>" or "<!--" can end it early."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _asset(name: str) -> str:
    return resources.files("frames_agent.eval.frames.html").joinpath(name).read_text(encoding="utf-8")


def _header(runs: Sequence[RunPage]) -> str:
    top = "".join(f"<th class='run' colspan='{len(_COLUMNS)}'>{html.escape(r.name)}</th>" for r in runs)
    cells = "".join(f"<th data-key='{k}:{key}'>{label}</th>" for k in range(len(runs)) for key, label in _COLUMNS)
    first = "<th data-key='id'>id</th><th data-key='types'>reasoning types</th><th data-key='q'>question</th>"
    if len(runs) == 1:
        return f"<tr>{first}{cells}</tr>"
    return f"<tr><th colspan='3'></th>{top}</tr><tr>{first}{cells}</tr>"


_FILTERS = """<div class="filters">
<label id="run-wrap">filters look at <select id="f-run"></select></label>
<label>verdict <select id="f-verdict"><option value="all">all</option><option>correct</option><option>wrong</option>
<option>unrated</option><option>failed</option><option value="none">not answered</option></select></label>
<label>reasoning type <select id="f-type"><option value="all">all</option></select></label>
<label><input type="checkbox" id="f-fns"> gold found but not shown</label>
<label><input type="checkbox" id="f-sw"> gold shown but wrong answer</label>
<label><input type="checkbox" id="f-cut"> queries at the length cap</label>
<label id="disagree-wrap" hidden><input type="checkbox" id="f-disagree"> runs disagree</label>
<label id="sbs-wrap" hidden><input type="checkbox" id="sbs" checked> traces side by side</label>
<input type="search" id="f-search" placeholder="search questions and answers">
<span id="count"></span></div>"""


def render(runs: Sequence[RunPage], title: str, preface_html: str = "") -> str:
    """The whole page: summaries, the question table, and each question's trace as JSON parsed when opened."""
    ids = question_ids([r.records for r in runs])
    by_run = [{rec.id: rec for rec in r.records} for r in runs]
    first = {i: next(b[i] for b in by_run if i in b) for i in ids}
    index = {"runs": [{"name": r.name, "label": r.label} for r in runs],
             "questions": [question_row(first[i]) for i in ids],
             "rows": [[row(b[i]) if i in b else None for b in by_run] for i in ids],
             "types": sorted({t for rec in first.values() for t in rec.reasoning_types}), "cap": QUERY_CAP}
    traces = [f'<script type="application/json" id="t-{qi}-{k}">{embed(trace(b[i]))}</script>'
              for qi, i in enumerate(ids) for k, b in enumerate(by_run) if i in b]
    summaries = "".join(f"<details{' open' if len(runs) == 1 else ''}><summary>{html.escape(r.name)}: "
                        f"{html.escape(r.label)}</summary>{r.summary_html}</details>" for r in runs)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # No network: the page may load nothing from anywhere (images are data URIs, script and styles inline).
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
        f"<title>{html.escape(title)}</title><style>{_asset('page.css')}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>", preface_html, f'<div class="summary">{summaries}</div>',
        "<h2>Questions</h2>", _FILTERS,
        f'<div class="tablewrap"><table id="questions"><thead>{_header(runs)}</thead><tbody></tbody></table></div>',
        '<div id="trace"><p class="meta">Click a question to see its trace.</p></div>',
        f'<script type="application/json" id="frames-index">{embed(index)}</script>', *traces,
        f"<script>{_asset('page.js')}</script>", "</body></html>", ""])


def write_page(path: Path, runs: Sequence[RunPage], title: str, preface_html: str = "") -> Path:
    """Write the page to path (atomically: a reader never sees half a page); returns path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(render(runs, title, preface_html), encoding="utf-8")
    partial.replace(path)
    return path


def write_run_html(run_dir: Path, config: dict, records: Sequence[QuestionRecord]) -> Path:
    """RUN/report.html: one run's summary (its report.md), question table and traces."""
    from frames_agent.eval.frames.plots import run_label

    page = run_page(run_dir.name, config, records, run_dir)
    return write_page(run_dir / HTML_FILE, [page], f"FRAMES run {run_dir.name}: {run_label(config)}")


def _own_text(path: Path) -> str:
    """A report file the run wrote, read within bounds: one replaced by a FIFO or a huge file is left out."""
    try:
        return bounded.read_text(path)
    except (OSError, ValueError):
        return ""


def write_comparison_html(runs: Sequence[tuple[str, dict, Sequence[QuestionRecord], Path | None]], out: Path,
                          table: Path) -> Path:
    """OUT/report.html: runs on the same questions, the first the baseline, under comparison.md's table."""
    preface = to_html(_own_text(table), figures(out, FIGURES)) if table.is_file() else ""
    pages = [run_page(name, config, records, path) for name, config, records, path in runs]
    names = ", ".join(name for name, *_ in runs)
    return write_page(out / HTML_FILE, pages, f"FRAMES runs compared: {names}", f"<div class='compare'>{preface}</div>")
