"""How figures are written in reports: shares, decimals, 95% intervals ("–" when unknown) and CSV tables."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence


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


def csv_text(rows: Sequence[Mapping], fields: Sequence[str] | None = None) -> str:
    """Rows as CSV (columns: `fields`, else every key in first-seen order); lists and dicts as JSON text."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields or dict.fromkeys(k for r in rows for k in r)), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in r.items()} for r in rows)
    return out.getvalue()
