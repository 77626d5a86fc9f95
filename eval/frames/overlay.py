"""Several FRAMES runs in one place (the paper's Fig. 4 style): gold recall after each step with 95% bootstrap
intervals, overlaid, and the comparison table with paired tests, written as files by `report A B C --out DIR`."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from frames_agent.eval.frames.metrics import RunSummary, step_values
from frames_agent.eval.frames.plots import pyplot
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.frames.settings import used_model
from frames_agent.eval.stats import bootstrap_ci

OVERLAY_PLOT = "recall_overlay.png"
Run = tuple[str, dict, RunSummary, list[QuestionRecord]]


def run_label(config: dict) -> str:
    """A legend label that tells the truth: the system, its settings, and the model only if one was called."""
    agent, system = config.get("agent", {}), config.get("system", "?")
    if system == "multistep":
        label = f"multistep {agent.get('prompt')} (k={agent.get('k')}, n={agent.get('n')} steps)"
    elif system == "bm25":
        label = f"BM25-R({agent.get('n_docs')})"
    else:
        label = system
    label += f", {config.get('model')}" if used_model(config) else ", no model"
    return label + (" — retrieval only" if config.get("retrieval_only") else "")


def _curve(records: list[QuestionRecord]) -> list[tuple[float, float, float]]:
    """(mean, low, high) gold recall after each step over finished questions."""
    out = []
    for values in step_values([r for r in records if not r.failed]):
        ci = bootstrap_ci(values)
        if values and ci:
            out.append((sum(values) / len(values), *ci))
    return out


def one_shot_span(steps: int) -> list[float]:
    """The x range of the plot, over which a one-shot system's flat line is drawn: the whole axis, not the step
    ticks (with one step only, a line from step 1 to step 1 would draw nothing)."""
    return [0.75, steps + 0.25]


def plot_overlay(runs: Sequence[Run], path: Path) -> None:
    """Recall after each step of every run, 95% bands; single-shot systems as flat dashed lines over all steps."""
    plt = pyplot()

    curves = {name: _curve(records) for name, _, _, records in runs}
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
    ax.set_title("Gold recall after each step (shaded: 95% bootstrap CI)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, frameon=False)  # below: never on data
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
