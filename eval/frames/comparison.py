"""Runs compared: paired tests of each run against the first on the questions both finished (failures left out and
counted), and all a comparison writes: comparison.md, .csv and .json, the overlay figure and report.html."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from frames_agent.core import bounded
from frames_agent.eval.frames.figures import csv_text, num, pct
from frames_agent.eval.frames.html.page import HTML_FILE, write_comparison_html
from frames_agent.eval.frames.metrics import RunSummary, judged_by
from frames_agent.eval.frames.plots import OVERLAY_PLOT, Run, plot_overlay, run_label
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.stats import PairedComparison, PairedMeans, compare_paired, compare_paired_means, p_text

TABLE_FILE, TABLE_CSV, TABLE_JSON = "comparison.md", "comparison.csv", "comparison.json"
Scored = tuple[str, RunSummary, list[QuestionRecord]]  # a run without its config


def rows(runs: Sequence[Scored]) -> list[dict]:
    """One row of figures per run: questions, failed, rated, accuracy and recall with 95% CIs, cost per question."""
    out = []
    for name, s, _ in runs:  # the summary's intervals: those of the very accuracy and recall beside them
        n = max(1, s.n)
        out.append({
            "run": name, "questions": s.n, "failed": s.failed, "rated": s.rated,
            "accuracy": s.accuracy, "accuracy_ci": s.accuracy_ci, "recall": s.recall, "recall_ci": s.recall_ci,
            "covered_recall": s.covered_recall, "calls_per_question": s.calls / n,
            "tokens_per_question": (s.tokens.prompt + s.tokens.completion) / n, "unrated": s.unrated,
            "seconds_per_question": s.seconds / n})
    return out


def _runs_table(runs: Sequence[Scored]) -> list[str]:
    """The runs' figures side by side as a Markdown table: comparison.md's, and what the terminal prints."""
    lines = ["| run | questions | failed | rated | unrated | accuracy (rated) [95% CI] | recall [95% CI] | "
             "covered recall | calls/q | tokens/q | s/q |", "|---|" + "---:|" * 10]
    for row in rows(runs):
        acc_ci, (rec_low, rec_high) = row["accuracy_ci"], row["recall_ci"] or (None, None)
        lines.append(f"| {row['run']} | {row['questions']} | {row['failed']} | {row['rated']} | {row['unrated']} | "
                     f"{pct(row['accuracy'])} {_ci(*(acc_ci or (None, None))).replace('+', '')} | "
                     f"{num(row['recall'])} {_ci(rec_low, rec_high, 1, 2).replace('+', '')} | "
                     f"{num(row['covered_recall'])} | {row['calls_per_question']:.1f} | "
                     f"{row['tokens_per_question']:.0f} | {row['seconds_per_question']:.1f} |")
    return lines


def comparison(runs: Sequence[Scored]) -> str:
    """Side-by-side table of runs (name, summary, records) and paired tests of each run against the first."""
    lines = _runs_table(runs)
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


def accuracy_numbers(result: PairedComparison | None) -> dict | None:
    """B − A accuracy on paired questions: delta, CI, McNemar p, n, wins (only B right) and losses (only A right)."""
    if result is None:
        return None
    return {"n": result.n, "baseline": result.accuracy_a, "value": result.accuracy_b, "delta": result.diff,
            "ci_low": result.ci_low, "ci_high": result.ci_high, "p": result.p_value, "wins": result.only_b,
            "losses": result.only_a}


def _of_type(reasoning_type: str) -> Callable[[QuestionRecord], bool]:
    return lambda r: reasoning_type in r.reasoning_types


def paired_numbers(base: Run, run: Run) -> dict:
    """Every paired figure of one run against the baseline, as numbers (and the console sentences beside them)."""
    base_name, base_records, name, records = base[0], base[3], run[0], run[3]
    types = sorted({t for r in base_records for t in r.reasoning_types})
    recall = paired_recall(base_records, records)
    return {
        "run": name, "baseline": base_name,
        "accuracy": accuracy_numbers(paired_accuracy(base_records, records)),
        "recall": None if recall is None else {"n": recall.n, "baseline": recall.mean_a, "value": recall.mean_b,
                                               "delta": recall.diff, "ci_low": recall.ci_low,
                                               "ci_high": recall.ci_high, "p": recall.p_value},
        "excluded": excluded(base_records, records),
        "by_reasoning_type": {t: accuracy_numbers(paired_accuracy(base_records, records, _of_type(t))) for t in types},
        "flipped": flipped(base_records, records),
        "sentences": [paired_line(base_name, base_records, name, records),
                      paired_recall_line(base_name, base_records, name, records)],
    }


def _ci(low: float | None, high: float | None, scale: float = 100, digits: int = 1) -> str:
    return "–" if low is None or high is None else f"[{low * scale:+.{digits}f}, {high * scale:+.{digits}f}]"


def _p(figures: dict) -> str:
    return p_text(figures["p"]) if figures else "–"


def markdown(runs: Sequence[Run], paired: list[dict], labels: dict[str, str], overlay: str | None,
             html_page: str | None) -> str:
    """comparison.md: what each run was, its figures, paired tests, per reasoning type, and the flipped questions."""
    base = runs[0][0]
    lines = ["# FRAMES runs compared", "", f"Baseline: `{base}` (the first run named); every difference is run − "
             "baseline, over the questions both finished (and, for accuracy, both rated).", ""]
    lines += [f"- `{name}`: {labels[name]}; {judged_by(s)}" for name, _, s, _ in runs]
    lines += ["", "## Runs", "", *_runs_table([(n, s, r) for n, _, s, r in runs])]
    lines += ["", "Unrated answers (no judge, or no readable verdict) are left out of accuracy, never counted wrong; "
              "failed questions count as wrong in a run's accuracy and are left out of every paired test.", ""]
    if paired:
        lines += ["## Paired against the baseline", ""]
        lines += [f"- {sentence}" for p in paired for sentence in p["sentences"]]  # as the terminal says them
        lines += ["", "| run | paired | accuracy Δ (points) [95% CI] | McNemar p | "
                  "wins | losses | recall paired | recall Δ [95% CI] | sign-flip p | excluded (failed, unrated) |",
                  "|---|" + "---:|" * 9]
        for p in paired:
            a, r, x = p["accuracy"] or {}, p["recall"] or {}, p["excluded"]
            lines.append(f"| {p['run']} | {a.get('n', 0)} | {_delta(a, 100, 1)} | {_p(a)} | "
                         f"{a.get('wins', '–')} | {a.get('losses', '–')} | {r.get('n', 0)} | {_delta(r, 1, 3)} | "
                         f"{_p(r)} | {x['failed']}, {x['unrated']} |")
        lines += ["", "### Accuracy by reasoning type (paired)", "",
                  "| run | reasoning type | paired | Δ (points) [95% CI] | McNemar p | wins | losses |",
                  "|---|---|" + "---:|" * 5]
        for p in paired:
            for kind, a in p["by_reasoning_type"].items():
                a = a or {}
                lines.append(f"| {p['run']} | {kind} | {a.get('n', 0)} | {_delta(a, 100, 1)} | {_p(a)} | "
                             f"{a.get('wins', '–')} | {a.get('losses', '–')} |")
        lines += ["", "### Questions that flipped", ""]
        for p in paired:
            for side, word in (("gained", "right only in"), ("lost", "right only in the baseline, not in")):
                ids = p["flipped"][side]
                links = ", ".join(f"[{i}]({html_page}#q={i})" if html_page else i for i in ids) or "none"
                lines.append(f"- {word} `{p['run']}` ({len(ids)}): {links}")
        lines.append("")
    if overlay:
        lines += [f"![gold recall after each step]({overlay})", ""]
    return "\n".join(lines)


def _delta(figures: dict, scale: float, digits: int) -> str:
    if not figures:
        return "–"
    return f"{figures['delta'] * scale:+.{digits}f} {_ci(figures['ci_low'], figures['ci_high'], scale, digits)}"


def table_csv(runs: Sequence[Run], paired: list[dict]) -> str:
    """comparison.csv: one line per run, its figures and its paired figures against the baseline."""
    by_run = {p["run"]: p for p in paired}
    fields = ["run", "baseline", "questions", "failed", "rated", "unrated", "accuracy", "accuracy_ci_low",
              "accuracy_ci_high", "recall", "recall_ci_low", "recall_ci_high", "covered_recall", "calls_per_question",
              "tokens_per_question", "seconds_per_question", "paired_n", "accuracy_delta", "accuracy_delta_ci_low",
              "accuracy_delta_ci_high", "mcnemar_p", "wins", "losses", "recall_paired_n", "recall_delta",
              "recall_delta_ci_low", "recall_delta_ci_high", "recall_p"]
    table = []
    for row in rows([(n, s, r) for n, _, s, r in runs]):
        p = by_run.get(row["run"], {})
        a, r = p.get("accuracy") or {}, p.get("recall") or {}
        acc_low, acc_high = row["accuracy_ci"] or (None, None)
        rec_low, rec_high = row["recall_ci"] or (None, None)
        table.append({
            **{k: row[k] for k in fields if k in row}, "baseline": runs[0][0], "accuracy_ci_low": acc_low,
            "accuracy_ci_high": acc_high, "recall_ci_low": rec_low, "recall_ci_high": rec_high,
            "paired_n": a.get("n"), "accuracy_delta": a.get("delta"), "accuracy_delta_ci_low": a.get("ci_low"),
            "accuracy_delta_ci_high": a.get("ci_high"), "mcnemar_p": a.get("p"), "wins": a.get("wins"),
            "losses": a.get("losses"), "recall_paired_n": r.get("n"), "recall_delta": r.get("delta"),
            "recall_delta_ci_low": r.get("ci_low"), "recall_delta_ci_high": r.get("ci_high"), "recall_p": r.get("p")})
    return csv_text(table, fields)


def write_tables(runs: Sequence[Run], out: Path, labels: dict[str, str], overlay: str | None = None,
                 html_page: str | None = None) -> list[Path]:
    """comparison.md, comparison.csv and comparison.json in out; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paired = [paired_numbers(runs[0], run) for run in runs[1:]]
    (out / TABLE_FILE).write_text(markdown(runs, paired, labels, overlay, html_page), encoding="utf-8")
    (out / TABLE_CSV).write_text(table_csv(runs, paired), encoding="utf-8")
    data = {"baseline": runs[0][0], "order": [name for name, *_ in runs], "labels": labels,
            "runs": rows([(n, s, r) for n, _, s, r in runs]), "judges": sorted({str(s.judge) for _, _, s, _ in runs}),
            "paired": paired}
    (out / TABLE_JSON).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return [out / TABLE_FILE, out / TABLE_CSV, out / TABLE_JSON]


def write_compared(runs: Sequence[tuple[str, dict, RunSummary, list[QuestionRecord], Path | None]], out: Path,
                   html: bool = True) -> list[Path]:
    """The overlay, comparison.md/.csv/.json and (html) report.html of runs with their directories, baseline first."""
    out.mkdir(parents=True, exist_ok=True)
    tabled = [(n, c, s, r) for n, c, s, r, _ in runs]
    plot_overlay(tabled, out / OVERLAY_PLOT)
    labels = {name: run_label(config) for name, config, _, _ in tabled}
    written = [out / OVERLAY_PLOT, *write_tables(tabled, out, labels, OVERLAY_PLOT, HTML_FILE if html else None)]
    if html:
        written.append(write_comparison_html([(n, c, r, p) for n, c, _, r, p in runs], out, out / TABLE_FILE))
    return written


def report_comparison(runs: list, paths: list[Path], named: Sequence[str], out: str | None, html: bool) -> list[str]:
    """`report --out DIR | --html`: the comparison files (to --out, or the one compare directory); lines to print."""
    target = Path(out) if out else Path(named[0]) if len(named) == 1 and len(runs) > 1 else None
    if target is None or (target / "config.json").exists():
        return ["note: each run has its report.html; add --out DIR for the page that shows them side by side"] \
            if html and len(runs) > 1 else []
    if len({name for name, *_ in runs}) != len(runs):  # e.g. a/planning and b/planning: name the parent too
        runs = [(f"{p.parent.name}/{p.name}", *rest) for p, (_, *rest) in zip(paths, runs)]
    return [f"wrote {p}" for p in write_compared([(*run, p) for run, p in zip(runs, paths)], target, html=html)]


def expand_runs(paths: list[Path]) -> list[Path]:
    """A compare directory stands for its variant run directories (in the order compare named them)."""
    expanded = []
    for path in paths:
        children = [p for p in path.iterdir() if (p / "config.json").exists()] if path.is_dir() else []
        if (path / "config.json").exists() or not children:
            expanded.append(path)
            continue
        try:  # in the order compare was given them (the baseline first), else by name
            order = bounded.load_file(path / TABLE_JSON).get("order") or []
        except (OSError, ValueError, AttributeError):
            order = []
        rank = {name: i for i, name in enumerate(order)}
        expanded += sorted(children, key=lambda p: (rank.get(p.name, len(rank)), p.name))
    return expanded
