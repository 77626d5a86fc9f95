"""The sweep report in SWEEP_DIR: sweep.md (every cell, paired tests and one-factor effects against the baseline),
sweep_table.json, and the heat map and recall overlay."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from frames_agent.eval.frames.comparison import paired_accuracy, paired_line, paired_recall, paired_recall_line
from frames_agent.eval.frames.figures import csv_text, num, pct
from frames_agent.eval.frames.metrics import RunSummary
from frames_agent.eval.frames.plots import HEATMAP_PLOT, OVERLAY_PLOT, plot_heatmap, plot_overlay
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.rundir import SUMMARY_FILE, write_atomic
from frames_agent.eval.stats import p_text
from frames_agent.eval.sweep.runner import Sweep

REPORT_FILE, TABLE_FILE, CSV_FILE = "sweep.md", "sweep_table.json", "sweep_table.csv"


@dataclass
class CellRun:
    """A cell's finished run: its name, values, config, summary and records."""

    name: str
    values: dict[str, str]
    config: dict
    summary: RunSummary
    records: list[QuestionRecord]


def load_cells(sweep: Sweep) -> list[CellRun]:
    """Every cell that has a summary (a cell never started is left out)."""
    from frames_agent.eval.frames.runner import frames_run_dir

    runs = []
    for cell in sweep.cells:
        run_dir = frames_run_dir(sweep.root / cell.name)
        summary_path = run_dir.path / SUMMARY_FILE
        if not summary_path.exists():
            continue
        records, _ = run_dir.load_records()
        runs.append(CellRun(cell.name, dict(cell.values), run_dir.read_config() or {},
                            RunSummary.model_validate_json(summary_path.read_text(encoding="utf-8")),
                            list(records.values())))
    return runs


def row(run: CellRun) -> dict:
    """The figures of one cell, per question where a cost."""
    s, n = run.summary, max(1, run.summary.n)
    return {"cell": run.name, **run.values, "questions": s.n, "failed": s.failed, "accuracy": s.accuracy,
            "rated": s.rated, "unrated": s.unrated, "covered_recall": s.covered_recall, "recall": s.recall,
            "recall_by_step": s.recall_by_step, "answer_context_recall": s.answer_context_recall,
            "answer_in_prompt": s.answer_in_prompt,
            "calls_per_question": s.calls / n, "tokens_per_question": (s.tokens.prompt + s.tokens.completion) / n,
            "seconds_per_question": s.seconds / n}


def table(rows: list[dict]) -> str:
    """The markdown table of every cell."""
    head = ("| cell | questions | failed | accuracy (rated / unrated) | covered recall | recall by step | "
            "answer-context recall | answer in prompt | calls/q | tokens/q | s/q |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        steps = "→".join(num(v) for v in r["recall_by_step"]) or "–"
        accuracy = f"{pct(r['accuracy'])} ({r['rated']} / {r['unrated']})" if r["rated"] or r["unrated"] else "–"
        lines.append(f"| {r['cell']} | {r['questions']} | {r['failed']} | {accuracy} | {num(r['covered_recall'])} | "
                     f"{steps} | {num(r['answer_context_recall'])} | {pct(r['answer_in_prompt'])} | "
                     f"{r['calls_per_question']:.1f} | "
                     f"{r['tokens_per_question']:.0f} | {r['seconds_per_question']:.2f} |")
    return "\n".join(lines)


def effect(base: CellRun, other: CellRun) -> dict:
    """B minus the baseline on paired questions: accuracy (McNemar) and covered recall (sign-flip)."""
    out: dict = {}
    for key, test in (("accuracy", paired_accuracy(base.records, other.records)),  # compare's pairing
                      ("covered_recall", paired_recall(base.records, other.records, lambda r: r.covered_recall))):
        if test is not None:
            out[key] = {"diff": test.diff, "ci": [test.ci_low, test.ci_high], "p": test.p_value, "n": test.n}
    return out


def effects(sweep: Sweep, runs: list[CellRun]) -> list[dict]:
    """One factor at a time (CRUD-RAG style): each other value of each axis, all else at the baseline's values."""
    by_values = {tuple(sorted(r.values.items())): r for r in runs}
    base = by_values.get(tuple(sorted(sweep.baseline.values)))
    out = []
    for axis in sweep.axes:
        for value in axis.values:
            wanted = {**dict(sweep.baseline.values), axis.key: value}
            other = by_values.get(tuple(sorted(wanted.items())))
            if base is None or other is None or other is base:
                continue
            out.append({"component": axis.key, "from": sweep.baseline.value(axis.key), "to": value,
                        "cell": other.name, **effect(base, other)})
    return out


def _shown(figure: dict | None, scale: float, unit: str) -> str:
    if not figure:
        return "–"
    low, high = (v * scale for v in figure["ci"])
    test = "no test" if figure["p"] is None else f"p={p_text(figure['p'], 2)}"
    digits = 1 if unit else 3
    return f"{figure['diff'] * scale:+.{digits}f}{unit} [{low:+.{digits}f}, {high:+.{digits}f}] {test} (n={figure['n']})"


def effects_table(found: list[dict]) -> str:
    """The effect table in markdown."""
    lines = ["| component | change | cell | Δ accuracy (points) | Δ covered recall |", "|---|---|---|---|---|"]
    for e in found:
        lines.append(f"| {e['component']} | {e['from']} → {e['to']} | {e['cell']} | {_shown(e.get('accuracy'), 100, ' pts')} "
                     f"| {_shown(e.get('covered_recall'), 1, '')} |")
    return "\n".join(lines)


def heatmap(sweep: Sweep, runs: list[CellRun]) -> tuple[Path | None, str]:
    """heatmap.png when exactly two axes vary (accuracy if rated, else covered recall), or why not."""
    varied = [a for a in sweep.axes if len(a.values) > 1]
    if len(varied) != 2:
        return None, f"no heat map: it needs exactly two axes with several values ({len(varied)} here)"
    rated = any(r.summary.accuracy is not None for r in runs)
    measure = "accuracy (rated answers)" if rated else "covered recall"
    values = {(r.values[varied[0].key], r.values[varied[1].key]):
              (r.summary.accuracy if rated else r.summary.covered_recall, r.summary.n) for r in runs}
    path = plot_heatmap((varied[0].key, varied[0].values), (varied[1].key, varied[1].values), values, measure,
                        sweep.root / HEATMAP_PLOT)
    return path, f"heat map of {measure}: {HEATMAP_PLOT}"


def write_report(sweep: Sweep) -> tuple[str, list[Path]]:
    """sweep.md, sweep_table.json and the figures; returns the table with the paired tests and the paths written."""
    runs = load_cells(sweep)
    rows = [row(r) for r in runs]
    base = next((r for r in runs if r.name == sweep.baseline.name), None)
    paired = []
    for other in [r for r in runs if base is not None and r is not base]:
        assert base is not None
        if base.summary.rated + base.summary.unrated and other.summary.rated + other.summary.unrated:  # answered
            paired.append(paired_line(base.name, base.records, other.name, other.records))
        paired.append(paired_recall_line(base.name, base.records, other.name, other.records))
    found = effects(sweep, runs)
    written = [sweep.root / REPORT_FILE, sweep.root / TABLE_FILE, sweep.root / CSV_FILE]
    figure, figure_note = heatmap(sweep, runs) if runs else (None, "no heat map: no cell has finished")
    if runs:
        plot_overlay([(r.name, r.config, r.summary, r.records) for r in runs], sweep.root / OVERLAY_PLOT)
        written.append(sweep.root / OVERLAY_PLOT)
    written += [figure] if figure else []
    note = ("Accuracy is over rated answers only (failed questions count as wrong); paired tests and effects use the "
            "questions both cells finished.")
    text = "\n\n".join([table(rows), note, f"Paired tests against the baseline {sweep.baseline.name}:",
                        "\n".join(f"- {line}" for line in paired) or "- (no other cell)",
                        "Effect of each component, one factor at a time (all else at the baseline's values):",
                        effects_table(found) if found else "(no one-factor neighbours of the baseline)"])
    images = "".join(f"\n\n![{p.stem}]({p.name})" for p in written[3:])
    write_atomic(sweep.root / REPORT_FILE, f"# Sweep {sweep.root.name}\n\n{figure_note}\n\n{text}{images}\n")
    write_atomic(sweep.root / TABLE_FILE, json.dumps({"baseline": sweep.baseline.name, "cells": rows, "paired": paired,
                                                      "effects": found}, indent=2, ensure_ascii=False) + "\n")
    write_atomic(sweep.root / CSV_FILE, csv_text(rows))
    return text, written
