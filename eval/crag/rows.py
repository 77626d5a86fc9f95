"""Reading CRAG rows (.jsonl, .jsonl.bz2, .jsonl.gz) robustly: bad lines and truncated files become per-row errors."""
from __future__ import annotations

import bz2
import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from frames_agent.core.errors import FramesAgentError


@dataclass
class CragRow:
    """One CRAG question with its ground truth and search results."""

    index: int
    interaction_id: str
    query: str
    answer: str
    query_time: str = ""
    domain: str = "unknown"
    question_type: str = "unknown"
    static_or_dynamic: str = "unknown"
    pages: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class RowError:
    """A line that could not become a row (or the point where the file broke off)."""

    index: int
    interaction_id: str
    message: str


def _open(path: Path) -> BinaryIO:
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")  # type: ignore[return-value]
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def parse_row(index: int, data: Any, warnings: list[str] | None = None) -> CragRow | RowError:
    """A CragRow from one decoded JSON line, or a RowError naming the missing field."""
    warnings = list(warnings or [])
    if not isinstance(data, dict):
        return RowError(index, f"row-{index}", f"line {index + 1}: not a JSON object")
    row_id = str(data.get("interaction_id") or f"row-{index}")
    for name in ("query", "answer"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            return RowError(index, row_id, f"line {index + 1} ({row_id}): missing field '{name}'")
    pages = data.get("search_results")
    if not isinstance(pages, list):
        warnings.append("no search_results; answering without pages")
        pages = []
    text = {k: str(data.get(k) or "unknown") for k in ("domain", "question_type", "static_or_dynamic")}
    return CragRow(index=index, interaction_id=row_id, query=data["query"].strip(), answer=data["answer"],
                   query_time=str(data.get("query_time") or ""), pages=pages, warnings=warnings, **text)


def _decode(line: bytes) -> tuple[str, list[str]]:
    try:
        return line.decode("utf-8"), []
    except UnicodeDecodeError:
        return line.decode("utf-8", errors="replace"), ["non-UTF-8 bytes replaced by U+FFFD"]


def iter_rows(path: str | Path) -> Iterator[CragRow | RowError]:
    """Rows in file order; a broken line or a truncated/corrupt compressed file yields a RowError, never raises."""
    path = Path(path)
    if not path.is_file():
        raise FramesAgentError(f"no CRAG data file {path}")
    index = 0
    try:
        with _open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                text, warnings = _decode(line)
                try:
                    data = json.loads(text)
                except json.JSONDecodeError as exc:
                    yield RowError(index, f"row-{index}", f"line {index + 1}: not valid JSON ({exc.msg})")
                else:
                    yield parse_row(index, data, warnings)
                index += 1
    except (EOFError, OSError, zlib.error) as exc:
        reason = "file ends early (truncated)" if isinstance(exc, EOFError) else f"cannot read it ({exc})"
        yield RowError(index, f"row-{index}", f"{path.name}: {reason} after {index} rows; later rows are lost")
