"""The sweep's heat map: one measure over a two-axis grid, each square labelled with its value and questions."""
from __future__ import annotations

from pathlib import Path

from frames_agent.eval.frames.plots import pyplot

HEATMAP_PLOT = "heatmap.png"


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
