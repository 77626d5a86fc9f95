"""Every PNG figure, with its 95% intervals: a run's accuracy by type and recall by step, the runs' recall overlay
(the paper's Fig. 4), matched budget against BM25-R, and the sweep's heat map."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frames_agent.eval.frames.budget import MatchedBudget
from frames_agent.eval.frames.metrics import RunSummary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.stats import wilson_ci

ACCURACY_PLOT, RECALL_PLOT, OVERLAY_PLOT = "accuracy_by_type.png", "recall_by_step.png", "recall_overlay.png"
BUDGET_PLOT, HEATMAP_PLOT = "matched_budget.png", "heatmap.png"
CURVE_FROM = 5  # BM25-R(n) is drawn for n = 5 .. depth
Run = tuple[str, dict, RunSummary, list[QuestionRecord]]


@dataclass(frozen=True)
class Bar:
    """One bar of the accuracy figure: its label, accuracy and 95% Wilson interval (shares, 0-1)."""

    label: str
    accuracy: float
    low: float
    high: float


def accuracy_bars(summary: RunSummary) -> list[Bar]:
    """Overall, then each reasoning type with rated answers, with Wilson intervals."""
    # Wilson, not the bootstrap: a type may have few questions, and a bootstrap of 3/3 is the interval [100%, 100%].
    types = {k: v for k, v in summary.by_reasoning_type.items() if v.accuracy is not None}
    if summary.accuracy is None or not types:
        return []
    right = round(summary.accuracy * summary.rated)
    rows = [(f"overall ({summary.rated} rated)", summary.accuracy, right, summary.rated),
            *((f"{k} ({v.rated} rated)", v.accuracy, v.right, v.rated) for k, v in types.items())]
    bars = []
    for label, accuracy, hits, n in rows:
        interval = wilson_ci(hits, n)
        assert accuracy is not None and interval is not None, "an accuracy has rated answers"
        bars.append(Bar(label, accuracy, *interval))
    return bars


def pyplot() -> Any:
    """pyplot on the Agg backend (figures are files, never windows), labels drawn as written, never as mathtext."""
    import matplotlib

    matplotlib.use("Agg")
    # Labels come from data (reasoning types, system names): a "$" in one must not be parsed as mathtext.
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


def accuracy_figure(summary: RunSummary) -> Any:
    """The accuracy-by-type figure with 95% error bars (None without rated answers by type)."""
    plt = pyplot()
    bars = accuracy_bars(summary)[::-1]  # barh draws bottom-up: overall on top
    if not bars:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.6))
    values = [b.accuracy * 100 for b in bars]
    errors = [[(b.accuracy - b.low) * 100 for b in bars], [(b.high - b.accuracy) * 100 for b in bars]]
    drawn = ax.barh([b.label for b in bars], values, xerr=errors, capsize=3, error_kw={"ecolor": "#333333", "lw": 1},
                    color=["#4c72b0"] * (len(bars) - 1) + ["#dd8452"])
    # Labels sit past the interval's end, so no whisker runs through the number.
    for rect, bar in zip(drawn, bars):
        ax.text(bar.high * 100 + 1.5, rect.get_y() + rect.get_height() / 2, f"{bar.accuracy * 100:.0f}%",
                va="center", fontsize=9)
    ax.set_xlabel("accuracy over rated answers (%), 95% Wilson interval")
    ax.set_xlim(0, 112)
    unrated = f", {summary.unrated} unrated" if summary.unrated else ""
    ax.set_title(f"Accuracy by reasoning type ({summary.system}, {summary.n} questions{unrated})")
    fig.tight_layout()
    return fig


def recall_figure(summary: RunSummary) -> Any:
    """Recall after each step with its 95% band, covered recall and coverage (None without steps)."""
    plt = pyplot()
    curve = summary.recall_by_step
    if not curve:
        return None
    fig, ax = plt.subplots(figsize=(6, 3.6))
    steps = list(range(1, len(curve) + 1))
    # Three styles, so each line still shows where all three meet (every gold article in the index).
    line, = ax.plot(steps, [(v or 0) * 100 for v in curve], marker="o", linewidth=2, zorder=4,
                    label="recall (all gold articles)")
    band = [(s, ci) for s, ci in zip(steps, summary.recall_by_step_ci) if ci is not None]
    if band:
        ax.fill_between([s for s, _ in band], [ci[0] * 100 for _, ci in band], [ci[1] * 100 for _, ci in band],
                        color=line.get_color(), alpha=0.2, linewidth=0, zorder=1, label="95% interval")
    covered = summary.covered_recall_by_step
    if any(v is not None for v in covered):
        ax.plot(steps, [(v or 0) * 100 for v in covered], marker="s", markersize=9, markerfacecolor="none",
                linestyle="--", linewidth=1.5, zorder=3, label="covered recall (gold in index)")
    if summary.coverage is not None:
        # On top, thin and dotted: at 100% it runs along the recall line and still shows through.
        ax.axhline(summary.coverage * 100, color="black", linestyle=(0, (1, 2)), linewidth=1.2, zorder=5,
                   label=f"coverage {summary.coverage * 100:.0f}% (ceiling of recall)")
    ax.set_xlabel("step")
    ax.set_ylabel("gold-article recall (%)")
    ax.set_xticks(steps)
    ax.set_ylim(-3, 105)  # 0% and 100% lines inside the frame, not on its edge
    ax.set_yticks(range(0, 101, 20))
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, fontsize=8)  # outside: never on data
    ax.set_title(f"Recall after each step ({summary.system}, {summary.n} questions)")
    fig.tight_layout()
    return fig


def write_plots(out: Path, summary: RunSummary) -> list[str]:
    """The figures this run has data for, written into out; their file names."""
    plt = pyplot()
    made = []
    for name, make, tight in ((ACCURACY_PLOT, accuracy_figure, False), (RECALL_PLOT, recall_figure, True)):
        fig = make(summary)
        if fig is None:
            continue
        fig.savefig(out / name, dpi=110, **({"bbox_inches": "tight"} if tight else {}))  # the legend sits outside
        plt.close(fig)
        made.append(name)
    return made


def run_label(config: dict) -> str:
    """A legend label that tells the truth: the system, its settings, and the model only if one was called."""
    agent, system = config.get("agent", {}), config.get("system", "?")
    if system == "multistep":
        label = (f"multistep {agent.get('prompt')} (k={agent.get('k')} queries/step, n={agent.get('n')} steps, "
                 f"n_docs={agent.get('n_docs')})")
    elif system == "bm25":
        label = f"BM25-R({agent.get('n_docs')})"
    else:
        label = system
    called = not (config.get("retrieval_only") and system in ("bm25", "oracle"))  # these baselines never ask a model
    label += f", {config.get('model')}" if called else ", no model"
    return label + (" — retrieval only" if config.get("retrieval_only") else "")


def one_shot_span(steps: int) -> list[float]:
    """The whole x axis, over which a one-shot system's flat line is drawn (one step's ticks would draw nothing)."""
    return [0.75, steps + 0.25]


def plot_overlay(runs: Sequence[Run], path: Path) -> None:
    """Recall after each step of every run, 95% bands; single-shot systems as flat dashed lines over all steps."""
    plt = pyplot()

    # Steps with a mean and its interval (metrics.run_summary's, the per-run figure's too).
    curves = {name: [(m, *ci) for m, ci in zip(s.recall_by_step, s.recall_by_step_ci) if m is not None and ci]
              for name, _, s, _ in runs}
    steps = max([len(c) for c in curves.values()] + [1])
    xs = list(range(1, steps + 1))
    fig, ax = plt.subplots(figsize=(8, 4.2 + 0.22 * len(runs)))
    for (name, config, summary, records), color in zip(runs, plt.cm.tab10.colors * 3):
        curve, questions = curves[name], sum(1 for r in records if not r.failed)
        label = f"{run_label(config)} [{questions} questions]"
        if len(curve) > 1:
            x = list(range(1, len(curve) + 1))
            ax.plot(x, [m * 100 for m, _, _ in curve], marker="o", color=color, label=label)
            ax.fill_between(x, [lo * 100 for _, lo, _ in curve], [hi * 100 for _, _, hi in curve], color=color,
                            alpha=0.15, linewidth=0)
        elif summary.recall is not None:
            low, high = summary.recall_ci or (summary.recall, summary.recall)
            span = one_shot_span(steps)
            ax.plot(span, [summary.recall * 100] * 2, linestyle="--", color=color, label=label + ", one shot")
            ax.fill_between(span, [low * 100] * 2, [high * 100] * 2, color=color, alpha=0.12, linewidth=0)
    ax.set_xlabel("step")
    ax.set_ylabel("gold-article recall (%)")
    ax.set_xticks(xs)
    ax.set_xlim(*one_shot_span(steps))
    ax.set_ylim(0, 100)
    ax.set_title("Gold recall after each step (shaded: 95% interval)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, frameon=False)  # below: never on data
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def plot_budget(result: MatchedBudget, path: Path, name: str = "multistep") -> Path:
    """Covered recall against articles read: BM25-R(n) for n = 5..depth as a curve, the multistep steps as points."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = list(range(CURVE_FROM, len(result.curve) + 1))
    ax.plot(xs, [result.curve[n - 1] * 100 for n in xs], color="#4c72b0",
            label=f"BM25-R(n), n = {CURVE_FROM}..{len(result.curve)}")
    ax.plot([a for a, _ in result.steps], [r * 100 for _, r in result.steps], marker="o", color="#dd8452",
            label=f"{name}, after each step")
    for step, (articles, value) in enumerate(result.steps, 1):
        ax.annotate(str(step), (articles, value * 100), textcoords="offset points", xytext=(4, -10), fontsize=8)
    ax.set_xlabel("articles read (distinct articles in the context)")
    ax.set_ylabel("covered recall (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"Covered recall against articles read ({result.n} questions); "
                 f"matched budget {result.diff:+.3f} [{result.ci[0]:+.3f}, {result.ci[1]:+.3f}]", fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_heatmap(rows: tuple[str, tuple[str, ...]], cols: tuple[str, tuple[str, ...]],
                 values: dict[tuple[str, str], tuple[float | None, int]], measure: str, path: Path) -> Path:
    """Rows × columns of (value, questions); a missing value is grey and says so."""
    plt = pyplot()
    import numpy as np

    (row_key, row_values), (col_key, col_values) = rows, cols
    grid = np.full((len(row_values), len(col_values)), np.nan)
    for i, rv in enumerate(row_values):
        for j, cv in enumerate(col_values):
            value = values.get((rv, cv), (None, 0))[0]
            grid[i, j] = np.nan if value is None else value
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(col_values), 1.4 + 0.9 * len(row_values)))
    cmap = plt.get_cmap("viridis").with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for i, rv in enumerate(row_values):
        for j, cv in enumerate(col_values):
            value, n = values.get((rv, cv), (None, 0))
            text = "–" if value is None else f"{value:.2f}"
            ax.text(j, i, f"{text}\n({n} q)", ha="center", va="center", fontsize=9,
                    color="white" if value is not None and value < 0.6 else "black")
    ax.set_xticks(range(len(col_values)), labels=list(col_values))
    ax.set_yticks(range(len(row_values)), labels=list(row_values))
    ax.set_xlabel(col_key)
    ax.set_ylabel(row_key)
    ax.set_title(f"{measure} by {row_key} × {col_key}", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.05)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
