"""report.html: one self-contained page (inline script, styles and figures; no network) of one run or several: a
small row per question, its trace parsed only when opened, and the reports' Markdown rendered with raw HTML off."""
from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from frames_agent.core import bounded
from frames_agent.core.paths import write_atomic
from frames_agent.eval.frames.datasets import normalize_title
from frames_agent.eval.frames.metrics import shown_titles
from frames_agent.eval.frames.plots import ACCURACY_PLOT, OVERLAY_PLOT, RECALL_PLOT, run_label
from frames_agent.eval.frames.records import QUERY_CAP, REPORT_FILE, QuestionRecord, mark, truncated_queries
from frames_agent.eval.judge import Verdict

HTML_FILE = "report.html"
# The figures a page inlines: the run's own plots (report.md) and the comparison's overlay (comparison.md).
FIGURES = frozenset({ACCURACY_PLOT, RECALL_PLOT, OVERLAY_PLOT})
# Per run: verdict, covered recall, gold shown / found, seconds, tokens, queries at the length cap.
_COLUMNS = [("v", "verdict"), ("r", "recall"), ("gs", "gold shown/found"), ("s", "s"), ("t", "tokens"),
            ("tq", "cut queries")]


# --- what the page embeds ---------------------------------------------------------------------------------
# Characters of an answer kept in the table row (searchable at once); the whole answer is in the trace.
ROW_ANSWER_CHARS = 300
_VERDICT = {"yes": "correct", "no": "wrong", "–": "none"}
_HEADER = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


def verdict_class(record: QuestionRecord) -> str:
    """correct, wrong, unrated, failed, or none (retrieval only: nothing was answered)."""
    word = mark(record)
    return _VERDICT.get(word, word)


def row(record: QuestionRecord) -> dict:
    """The table's figures of one question in one run (short keys: 824 of them are parsed when the page opens)."""
    verdict = verdict_class(record)
    shown = record.gold_shown
    found = sum(1 for t in record.found_step.values() if t is not None)
    return {
        "v": verdict, "r": record.covered_recall if record.covered_recall is not None else record.recall,
        "gs": None if shown is None else len(shown), "gf": found,
        "fns": record.answer_context_recall is not None and record.answer_context_recall < 1,
        "sw": bool(shown) and verdict == "wrong",
        "s": round(record.seconds, 1), "t": record.tokens.prompt + record.tokens.completion,
        "a": (record.answer or record.raw_answer)[:ROW_ANSWER_CHARS],
        "tq": len(record.truncated_queries or truncated_queries(record.steps)),
    }


def _step_titles(record: QuestionRecord) -> list[list[str]]:
    """Titles of the documents each step added; records before new_doc_titles slice retrieved_titles in order."""
    steps = record.steps
    if all("new_doc_titles" in s for s in steps):
        return [list(s["new_doc_titles"]) for s in steps]
    counts = [int(s.get("new_docs") or len(s.get("new_doc_ids") or [])) for s in steps]
    if sum(counts) == len(record.retrieved_titles):  # one document per article: the context's order is step order
        starts = [sum(counts[:i]) for i in range(len(counts))]
        return [record.retrieved_titles[a:a + n] for a, n in zip(starts, counts)]
    return [list(s.get("new_doc_ids") or []) for s in steps]


def _steps(record: QuestionRecord, gold: set[str]) -> list[dict]:
    found = {step: [t for t, s in record.found_step.items() if s == step] for step in record.found_step.values()}
    out = []
    for s, titles in zip(record.steps, _step_titles(record)):
        queries, origins, hits = s.get("queries") or [], s.get("origins") or [], s.get("query_hits") or []
        out.append({
            "step": s.get("step"),
            "queries": [{"text": q, "origin": origins[i] if i < len(origins) else "",
                         "hits": hits[i] if i < len(hits) else None,
                         "cut": (origins[i] if i < len(origins) else "") == "model" and len(q) >= QUERY_CAP}
                        for i, q in enumerate(queries)],
            "tools": s.get("tool_calls") or [], "dropped": s.get("dropped_queries") or [],
            "errors": s.get("errors") or [], "fallback": bool(s.get("fallback")),
            "replayed": bool(s.get("plan_skipped")),
            "new": [{"title": t, "gold": normalize_title(t) in gold} for t in titles],
            "hits": sum(hits) if hits else None, "gold_found": found.get(s.get("step"), []),
        })
    return out


def passages(answer_context: Mapping | None, gold: set[str]) -> list[dict]:
    """The answer prompt's text split by article ("[i] Title" headers), gold articles marked."""
    if not answer_context:
        return []
    text = answer_context.get("text") or ""
    titles = shown_titles(answer_context)
    heads = [m for m in _HEADER.finditer(text)
             if not titles or (int(m.group(1)) <= len(titles) and titles[int(m.group(1)) - 1] == m.group(2))]
    if not heads:
        return [{"title": "", "gold": False, "text": text}] if text else []
    out = [{"title": "", "gold": False, "text": text[:heads[0].start()].strip()}] if heads[0].start() else []
    for m, nxt in zip(heads, [*heads[1:], None]):
        body = text[m.end():nxt.start() if nxt else len(text)].strip("\n")
        out.append({"title": m.group(2), "gold": normalize_title(m.group(2)) in gold, "text": body})
    return out


def _verdict(verdict: Verdict | None) -> dict | None:
    return None if verdict is None else verdict.model_dump(include={"outcome", "method", "explanation", "judge", "error"})


def trace(record: QuestionRecord) -> dict:
    """Everything the trace view shows of one question in one run."""
    gold = {normalize_title(t) for t in record.gold_titles}
    shown = set(record.gold_shown or [])
    context = record.answer_context or {}
    return {
        "id": record.id, "question": record.question, "gold_answer": record.gold_answer,
        "gold": [{"title": t, "step": record.found_step.get(t), "origin": record.found_origin.get(t),
                  "at": record.found_at.get(t), "shown": t in shown,
                  "covered": record.covered_titles is None or t in record.covered_titles}
                 for t in record.gold_titles],
        "steps": _steps(record, gold), "passages": passages(context, gold),
        "text_cut": bool(context.get("text_cut")), "budget": context.get("budget"),
        "reasoning": (record.final or {}).get("reasoning") or "", "answer": record.answer,
        "raw_answer": record.raw_answer, "verdict_class": verdict_class(record),
        "verdict": _verdict(record.verdict), "verdict2": _verdict(record.verdict2),
        "error": record.error, "answer_in_prompt": record.answer_in_prompt,
        "seconds": record.seconds, "tokens": record.tokens.prompt + record.tokens.completion,
        "llm_calls": record.llm_calls, "truncated": record.truncated_queries or truncated_queries(record.steps),
    }


# --- Markdown as HTML: markdown-it-py with raw HTML off, so every text is escaped ------------------------
class _Markdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        # Relative targets only (the page opens with no server): no scheme, so no javascript:, and no //host.
        return ":" not in url and not url.startswith("//")


def _heading(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].tag = f"h{min(int(tokens[idx].tag[1]) + 1, 6)}"  # the page's own title is the h1
    return self.renderToken(tokens, idx, options, env)


def _table(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("class", "md")  # page.css styles these tables, not the page's question table
    return self.renderToken(tokens, idx, options, env)


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    alt = escapeHtml(self.renderInlineAsText(tokens[idx].children or [], options, env))
    uri = env.get("images", lambda name: None)(str(tokens[idx].attrGet("src")))
    return f'<img class="figure" alt="{alt}" src="{escapeHtml(uri)}">' if uri else f"[{alt}]"


_MD = _Markdown("commonmark", {"html": False}).enable("table")
_MD.add_render_rule("heading_open", _heading)
_MD.add_render_rule("heading_close", _heading)
_MD.add_render_rule("table_open", _table)
_MD.add_render_rule("image", _image)


def image_uri(path: Path) -> str | None:
    """A PNG or SVG file as a data URI (the page must open with no other file beside it)."""
    kind = {".png": "image/png", ".svg": "image/svg+xml"}.get(path.suffix.lower())
    if kind is None or not path.is_file():
        return None
    return f"data:{kind};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def figures(directory: Path | None, names: Collection[str]) -> Callable[[str], str | None]:
    """images() for to_html inlining only the named figures of directory; any other name stays its alt text."""
    return lambda name: image_uri(directory / name) if directory is not None and name in names else None


def to_html(markdown: str, images: Callable[[str], str | None] = lambda name: None) -> str:
    """HTML of a report's Markdown; images(name) gives an image's data URI (None: the alt text stays)."""
    return _MD.render(markdown, {"images": images})


# --- the page --------------------------------------------------------------------------------------------
@dataclass
class RunPage:
    """One run as the page shows it: its name, a label saying what it was, its records and its summary."""

    name: str
    label: str
    records: list[QuestionRecord]
    summary_html: str = ""


def run_page(name: str, config: dict, records: Sequence[QuestionRecord], run_dir: Path | None) -> RunPage:
    """A run's page part; its summary is its report.md with the figures inlined."""
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


def render(runs: Sequence[RunPage], title: str, preface_html: str = "") -> str:
    """The whole page: summaries, the question table, and each question's trace as JSON parsed when opened."""
    ids = list(dict.fromkeys(rec.id for r in runs for rec in r.records))  # the first run's order, then new ones
    by_run = [{rec.id: rec for rec in r.records} for r in runs]
    first = {i: next(b[i] for b in by_run if i in b) for i in ids}
    index = {"runs": [{"name": r.name, "label": r.label} for r in runs],
             "questions": [{"id": i, "q": first[i].question, "types": first[i].reasoning_types,
                            "g": first[i].gold_answer} for i in ids],
             "rows": [[row(b[i]) if i in b else None for b in by_run] for i in ids],
             "types": sorted({t for rec in first.values() for t in rec.reasoning_types}), "cap": QUERY_CAP}
    traces = [f'<script type="application/json" id="t-{qi}-{k}">{embed(trace(b[i]))}</script>'
              for qi, i in enumerate(ids) for k, b in enumerate(by_run) if i in b]
    summaries = "".join(f"<details{' open' if len(runs) == 1 else ''}><summary>{html.escape(r.name)}: "
                        f"{html.escape(r.label)}</summary>{r.summary_html}</details>" for r in runs)
    # page.html's policy lets the page load nothing from anywhere: images are data URIs, script and styles inline.
    return Template(_asset("page.html")).substitute(
        title=html.escape(title), css=_asset("page.css"), js=_asset("page.js"), preface=preface_html,
        summaries=summaries, header=_header(runs), index=embed(index), traces="".join("\n" + t for t in traces))


def write_page(path: Path, runs: Sequence[RunPage], title: str, preface_html: str = "") -> Path:
    """Write the page to path (atomically: a reader never sees half a page); returns path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, render(runs, title, preface_html))
    return path


def write_run_html(run_dir: Path, config: dict, records: Sequence[QuestionRecord]) -> Path:
    """RUN/report.html: one run's summary (its report.md), question table and traces."""
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
