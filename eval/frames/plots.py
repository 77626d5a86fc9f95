"""A run's PNG figures with their 95% intervals: accuracy by reasoning type (Wilson error bars) and recall after each
step (the bootstrap band of summary.json's recall_by_step_ci)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frames_agent.eval.frames.metrics import RunSummary
from frames_agent.eval.stats import wilson_ci

ACCURACY_PLOT, RECALL_PLOT = "accuracy_by_type.png", "recall_by_step.png"


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
    # Recall solid and wide; covered recall dashed with large open markers under it; coverage a thin dotted line
    # over both: with every gold article in the index all three meet, and each must still show.
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
