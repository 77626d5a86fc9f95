"""How figures are written in reports: shares, decimals and 95% intervals ("–" when unknown)."""
from __future__ import annotations

from collections.abc import Sequence


def pct(value: float | None) -> str:
    """A share as a percentage, "–" when unknown."""
    return "–" if value is None else f"{value * 100:.1f}%"


def num(value: float | None, digits: int = 2) -> str:
    """A figure with `digits` decimals, "–" when unknown."""
    return "–" if value is None else f"{value:.{digits}f}"


def with_ci(value: float | None, ci: Sequence[float] | None, percent: bool = False) -> str:
    """A figure with its 95% interval: "41.2% [35.0–47.5]" or "0.63 [0.58–0.68]"."""
    if value is None:
        return "–"
    if percent:
        return pct(value) + (f" [{ci[0] * 100:.1f}–{ci[1] * 100:.1f}]" if ci else "")
    return num(value) + (f" [{ci[0]:.2f}–{ci[1]:.2f}]" if ci else "")
