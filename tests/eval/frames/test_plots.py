"""The run's figures carry their 95% intervals: Wilson error bars on accuracy by type, the bootstrap band on recall
by step. Checked on the drawn artists and the data behind them, not on pixels."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.container import ErrorbarContainer

from frames_agent.eval.frames.metrics import Accuracy, RunSummary
from frames_agent.eval.frames.plots import (
    ACCURACY_PLOT,
    RECALL_PLOT,
    accuracy_bars,
    accuracy_figure,
    recall_figure,
    write_plots,
)
from frames_agent.eval.stats import wilson_ci


def summary(**changes) -> RunSummary:
    values = {"system": "multistep", "n": 10, "rated": 10, "accuracy": 0.6, "accuracy_ci": (0.3, 0.9),
              "by_reasoning_type": {"Numerical reasoning": Accuracy(n=4, rated=4, right=1, accuracy=0.25),
                                    "Temporal reasoning": Accuracy(n=3, rated=3, right=3, accuracy=1.0),
                                    "Tabular reasoning": Accuracy(n=2, rated=0, unrated=2)},  # unrated: no bar
              "recall_by_step": [0.2, 0.5, 0.55], "recall_by_step_ci": [(0.1, 0.3), (0.35, 0.65), None],
              "covered_recall_by_step": [0.25, 0.6, 0.65], "coverage": 0.9}
    return RunSummary(**{**values, **changes})


def test_wilson_interval_matches_the_textbook_and_stays_honest_at_the_edges():
    low, high = wilson_ci(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert wilson_ci(3, 3)[1] == 1.0 and wilson_ci(3, 3)[0] == pytest.approx(0.4385, abs=1e-4)  # not [1, 1]
    assert wilson_ci(0, 1) == (0.0, pytest.approx(0.7935, abs=1e-4)) and wilson_ci(0, 0) is None
    # 1 of 1 rated (a judge-free run): rounding must not leave 100% outside its own interval (a negative error bar).
    assert all(low <= k / n <= high for n in range(1, 60) for k in range(n + 1) for low, high in [wilson_ci(k, n)])


def test_accuracy_bars_have_wilson_intervals_for_overall_and_each_rated_type():
    bars = accuracy_bars(summary())
    assert [b.label for b in bars] == ["overall (10 rated)", "Numerical reasoning (4 rated)",
                                       "Temporal reasoning (3 rated)"]
    assert (bars[0].low, bars[0].high) == wilson_ci(6, 10)
    assert (bars[1].low, bars[1].high) == wilson_ci(1, 4) and (bars[2].low, bars[2].high) == wilson_ci(3, 3)
    assert all(b.low <= b.accuracy <= b.high for b in bars)
    assert accuracy_bars(summary(accuracy=None)) == []


def test_accuracy_figure_draws_an_error_bar_per_bar_spanning_its_interval():
    fig = accuracy_figure(summary())
    ax = fig.axes[0]
    errorbars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(errorbars) == 1
    _, _, (whiskers,) = errorbars[0].lines
    spans = sorted((min(seg[:, 0]), max(seg[:, 0])) for seg in whiskers.get_segments())
    expected = sorted((b.low * 100, b.high * 100) for b in accuracy_bars(summary()))
    assert np.allclose(spans, expected)
    assert "95%" in ax.get_xlabel()
    plt.close(fig)


def test_recall_figure_draws_the_bootstrap_band_where_steps_have_an_interval():
    fig = recall_figure(summary())
    ax = fig.axes[0]
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert band.get_label() == "95% interval"
    points = band.get_paths()[0].vertices
    on_step = {x: sorted({y for px, y in points if px == x}) for x in (1, 2)}
    assert np.allclose(on_step[1], [10, 30]) and np.allclose(on_step[2], [35, 65])
    assert points[:, 0].max() == 2  # step 3 has no interval: the band stops where they end
    assert "95% interval" in [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(fig)


def test_recall_and_a_100_percent_coverage_line_show_when_they_meet_other_lines():
    full = [1.0, 1.0, 1.0]
    fig = recall_figure(summary(recall_by_step=full, covered_recall_by_step=full, coverage=1.0))
    ax = fig.axes[0]
    recall, covered = ax.lines[0], ax.lines[1]
    coverage = next(line for line in ax.lines if "coverage" in line.get_label())
    # Covered recall under recall (open markers and dashes around it), coverage thin and dotted over both.
    assert coverage.get_zorder() > recall.get_zorder() > covered.get_zorder()
    assert covered.get_linestyle() == "--" and covered.get_markerfacecolor() == "none"
    assert coverage.get_linewidth() < recall.get_linewidth() and coverage.get_linestyle() not in ("-", "solid")
    assert ax.get_ylim()[1] > 100  # 100% inside the frame, not on its edge
    plt.close(fig)


def test_recall_figure_without_intervals_has_no_band_and_no_steps_no_figure():
    fig = recall_figure(summary(recall_by_step_ci=[]))
    assert not [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    plt.close(fig)
    assert recall_figure(summary(recall_by_step=[])) is None


def test_write_plots_writes_both_figures(tmp_path):
    assert write_plots(tmp_path, summary()) == [ACCURACY_PLOT, RECALL_PLOT]
    assert (tmp_path / ACCURACY_PLOT).stat().st_size > 1000 and (tmp_path / RECALL_PLOT).stat().st_size > 1000
    assert write_plots(tmp_path / "none", summary(accuracy=None, recall_by_step=[])) == []


def test_labels_are_text_not_mathtext(tmp_path):
    odd = {r"$\frac{$ reasoning": Accuracy(n=2, rated=2, right=1, accuracy=0.5),
           "costs $5 and $": Accuracy(n=1, rated=1, right=1, accuracy=1.0)}
    assert write_plots(tmp_path, summary(system="$x^{$", by_reasoning_type=odd)) == [ACCURACY_PLOT, RECALL_PLOT]
    assert (tmp_path / ACCURACY_PLOT).stat().st_size and (tmp_path / RECALL_PLOT).stat().st_size


def test_the_sweep_heat_map_draws_labels_as_text(tmp_path):
    from frames_agent.eval.frames.plots import plot_heatmap

    rows, cols = ("prompt", (r"$\frac{$ odd",)), ("k", ("1", "$2"))
    path = plot_heatmap(rows, cols, {(r"$\frac{$ odd", "1"): (0.5, 2)}, "accuracy", tmp_path / "heat.png")
    assert path.stat().st_size > 1000
