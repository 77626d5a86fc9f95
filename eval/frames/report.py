"""OUT/summary.json, OUT/report.md with PNG plots, and side-by-side tables of several runs with paired tests."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from eval.frames.metrics import summarize
from eval.stats import compare_paired
from retrieval.errors import FramesAgentError

SUMMARY_FILE, REPORT_FILE = "summary.json", "report.md"
ACCURACY_PLOT, RECALL_PLOT = "accuracy_by_type.png", "recall_by_step.png"
_MAX_ROWS = 100


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _natural(qid: str) -> tuple:
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def write_outputs(run_dir, config: dict, warnings: Sequence[str] = ()) -> dict:
    """summary.json, report.md and plots from every finished record in run_dir; returns the summary."""
    records, _ = run_dir.load_records()
    records = dict(sorted(records.items(), key=lambda item: _natural(item[0])))
    summary = {"system": config.get("system"), "model": config.get("model"), "judge": config.get("judge"),
               "retrieval_only": config.get("retrieval_only"), **summarize(list(records.values()))}
    summary["warnings"] = list(warnings) or summary.get("warnings", [])
    (run_dir.path / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    plots = _plots(run_dir.path, summary)
    (run_dir.path / REPORT_FILE).write_text(render_markdown(config, summary, list(records.values()), plots),
                                            encoding="utf-8")
    return summary


def rerender(path: Path) -> tuple[dict, dict, list[dict]]:
    """Re-render an existing run directory; returns (config, summary, records)."""
    from eval.rundir import RunDir

    run_dir = RunDir(Path(path))
    config = run_dir.read_config()
    if config is None or not run_dir.results.exists():
        raise FramesAgentError(f"{path} is not a frames run directory (needs config.json and results.jsonl)")
    old = {}
    if (run_dir.path / SUMMARY_FILE).exists():
        try:
            old = json.loads((run_dir.path / SUMMARY_FILE).read_text(encoding="utf-8"))
        except ValueError:
            old = {}
    with run_dir.locked():
        summary = write_outputs(run_dir, config, warnings=old.get("warnings", []))
        records, _ = run_dir.load_records()
    return config, summary, list(records.values())


# --- plots ------------------------------------------------------------------------------------------------------
def _plots(out: Path, summary: dict) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    types = {k: v for k, v in summary["by_reasoning_type"].items() if v.get("accuracy") is not None}
    if summary.get("accuracy") is not None and types:
        fig, ax = plt.subplots(figsize=(7, 3.6))
        names = [f"overall (n={summary['n']})", *(f"{k} (n={v['n']})" for k, v in types.items())]
        values = [summary["accuracy"], *(v["accuracy"] for v in types.values())]
        bars = ax.barh(names[::-1], [v * 100 for v in values[::-1]], color=["#4c72b0"] * len(types) + ["#dd8452"])
        ax.bar_label(bars, labels=[f"{v * 100:.0f}%" for v in values[::-1]], padding=3)
        ax.set_xlabel("accuracy (%)")
        ax.set_xlim(0, 100)
        ax.set_title(f"Accuracy by reasoning type ({summary['system']}, n={summary['n']})")
        fig.tight_layout()
        fig.savefig(out / ACCURACY_PLOT, dpi=110)
        plt.close(fig)
        made.append(ACCURACY_PLOT)
    curve = summary.get("recall_by_step") or []
    if curve:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        steps = list(range(1, len(curve) + 1))
        ax.plot(steps, [(v or 0) * 100 for v in curve], marker="o", label="recall (all gold articles)")
        covered = summary.get("covered_recall_by_step") or []
        if any(v is not None for v in covered):
            ax.plot(steps, [(v or 0) * 100 for v in covered], marker="s", label="covered recall (gold in index)")
        if summary.get("coverage") is not None:
            ax.axhline(summary["coverage"] * 100, color="grey", linestyle="--", linewidth=1,
                       label=f"coverage {summary['coverage'] * 100:.0f}% (ceiling of recall)")
        ax.set_xlabel("step")
        ax.set_ylabel("gold-article recall (%)")
        ax.set_xticks(steps)
        ax.set_ylim(0, 100)
        ax.legend(loc="lower right")
        ax.set_title(f"Recall after each step ({summary['system']}, n={summary['n']})")
        fig.tight_layout()
        fig.savefig(out / RECALL_PLOT, dpi=110)
        plt.close(fig)
        made.append(RECALL_PLOT)
    return made


# --- markdown ---------------------------------------------------------------------------------------------------
def _title(config: dict) -> str:
    agent = config.get("agent", {})
    what = config.get("system", "?")
    if what == "multistep":
        what += f" ({agent.get('prompt')}, k={agent.get('k')}, n={agent.get('n')}, n_docs={agent.get('n_docs')})"
    elif what == "bm25":
        what += f" (n_docs={agent.get('n_docs')})"
    return f"# FRAMES run: {what} with {config.get('model')}" + (" — retrieval only" if config.get("retrieval_only") else "")


def _coverage_line(config: dict, s: dict) -> str:
    if s.get("coverage") is None:
        return "- Coverage: unknown (no index to check the gold articles against)."
    return (f"- Index `{config.get('index')}`: **coverage {_pct(s['coverage'])}** of the {s['gold_articles']} gold "
            f"articles of these questions are in the index (mean per question {_num(s['coverage_mean'])}; "
            f"{s['fully_covered']} of {s['n']} questions have every gold article). Recall is bounded by coverage; "
            "covered recall counts only the gold articles the index holds.")


def _judge_line(s: dict) -> str:
    if s.get("retrieval_only"):
        return "- Retrieval only: no answers, no judging."
    verdicts = ", ".join(f"{k} {v}" for k, v in sorted(s.get("verdicts", {}).items())) or "none"
    line = f"- Judge: `{s.get('judge')}` after a normalised exact-match short-cut; verdicts: {verdicts}"
    if s.get("judge") == "none":
        line += " (**no LLM judge: exact match only, a lower bound on accuracy**)"
    if s.get("judge_errors"):
        line += f"; {s['judge_errors']} question(s) could not be rated (counted as wrong)"
    agree = s.get("judge_agreement")
    if agree:
        line += (f". Second judge agreement on {agree['n']} question(s): {_pct(agree['agreement'])}, "
                 f"Cohen's kappa {_num(agree['kappa'])}")
    return line + "."


def _accuracy_table(s: dict) -> list[str]:
    rows = ["| | n | accuracy | recall |", "|---|---:|---:|---:|",
            f"| **overall** | {s['n']} | {_pct(s['accuracy'])} | {_num(s['recall'])} |"]
    rows += [f"| {name} | {v['n']} | {_pct(v['accuracy'])} | {_num(v['recall'])} |"
             for name, v in s["by_reasoning_type"].items()]
    return rows


def _step_table(s: dict) -> list[str]:
    curve, covered = s.get("recall_by_step") or [], s.get("covered_recall_by_step") or []
    if not curve:
        return ["No retrieval steps (this system does not search step by step)."]
    rows = ["| step | recall | covered recall |", "|---:|---:|---:|"]
    rows += [f"| {i} | {_num(r)} | {_num(covered[i - 1] if i - 1 < len(covered) else None)} |"
             for i, r in enumerate(curve, 1)]
    return rows


def _cut(text: object, width: int = 60) -> str:
    value = " ".join(str(text or "").split()).replace("|", "\\|")
    return value if len(value) <= width else value[: width - 1] + "…"


def _question_rows(records: list[dict]) -> list[str]:
    rows = ["| id | correct | recall | answer | gold |", "|---|---|---:|---|---|"]
    for r in records[:_MAX_ROWS]:
        mark = "failed" if r.get("failed") else {True: "yes", False: "no", None: "–"}[r.get("correct")]
        rows.append(f"| {r['id']} | {mark} | {_num(r.get('recall'))} | {_cut(r.get('answer'))} | {_cut(r['gold_answer'])} |")
    if len(records) > _MAX_ROWS:
        rows.append(f"\n({len(records) - _MAX_ROWS} more in results.jsonl)")
    return rows


def render_markdown(config: dict, s: dict, records: list[dict], plots: Sequence[str]) -> str:
    """The whole report.md."""
    lines = [_title(config), "",
             (f"- Questions: {s['n']} finished ({s['failed']} failed), data `{config.get('info', {}).get('data')}` "
              f"({config.get('data_fingerprint')})."),
             _coverage_line(config, s), _judge_line(s),
             (f"- Cost: {s['calls']} LLM calls, {s['tokens']['prompt']}+{s['tokens']['completion']} tokens "
              f"(prompt+completion), {s['seconds']:.0f} s of question time; {s['judge_calls']} judge call(s)."), ""]
    if s.get("accuracy") is not None:
        lines += ["## Accuracy", "", *_accuracy_table(s), "",
                  "Accuracy counts failed questions as wrong; recall averages over the questions that finished.", ""]
        lines += [f"![accuracy by reasoning type]({ACCURACY_PLOT})", ""] if ACCURACY_PLOT in plots else []
    lines += ["## Retrieval", "", f"- Gold-article recall of the final context: {_num(s['recall'])}",
              f"- Covered recall (gold articles present in the index): {_num(s['covered_recall'])}", "",
              "### Recall after each step", "", *_step_table(s), ""]
    lines += [f"![recall vs step]({RECALL_PLOT})", ""] if RECALL_PLOT in plots else []
    if s.get("failures"):
        lines += ["## Failed questions", ""] + [f"- {f['id']}: {_cut(f['error'], 200)}" for f in s["failures"]] + [""]
    if s.get("warnings"):
        lines += ["## Data warnings", ""] + [f"- {w}" for w in s["warnings"]] + [""]
    lines += ["## Questions", "", *_question_rows(records), ""]
    return "\n".join(lines)


# --- several runs -----------------------------------------------------------------------------------------------
def comparison(runs: Sequence[tuple[str, dict, list[dict]]]) -> str:
    """Side-by-side table of runs (name, summary, records) and paired tests of each run against the first."""
    header = f"{'run':<28} {'n':>5} {'accuracy':>9} {'recall':>7} {'cov.rec':>8} {'calls/q':>8} {'tokens/q':>9}"
    lines = [header, "-" * len(header)]
    for name, s, _ in runs:
        n = max(1, s["n"])
        tokens = s["tokens"]["prompt"] + s["tokens"]["completion"]
        lines.append(f"{name[:28]:<28} {s['n']:>5} {_pct(s['accuracy']):>9} {_num(s['recall']):>7} "
                     f"{_num(s['covered_recall']):>8} {s['calls'] / n:>8.1f} {tokens / n:>9.0f}")
    base_name, _, base_records = runs[0]
    for name, _, records in runs[1:]:
        lines.append(_paired_line(base_name, base_records, name, records))
    return "\n".join(lines)


def _paired_line(name_a: str, records_a: list[dict], name_b: str, records_b: list[dict]) -> str:
    by_id_a = {r["id"]: r for r in records_a}
    by_id_b = {r["id"]: r for r in records_b}
    shared = [i for i in by_id_a if i in by_id_b]
    if not shared or any(by_id_a[i].get("correct") is None and not by_id_a[i].get("failed") for i in shared):
        return f"{name_b} vs {name_a}: no paired accuracy (no shared answered questions)"
    a = [bool(by_id_a[i].get("correct")) for i in shared]
    b = [bool(by_id_b[i].get("correct")) for i in shared]
    return compare_paired(a, b).sentence(name_a, name_b)
