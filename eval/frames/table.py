"""FRAMES tables read defensively: rows keep their line numbers, a stray quote never eats its neighbours, and
list cells are parsed with bounded cost."""
from __future__ import annotations

import ast
import csv
import re
import sys
from collections.abc import Iterator

# Real wiki_links cells are under 1 KB; a cell past this is refused rather than parsed (memory and time).
MAX_LIST_CELL = 100_000
LINE_KEY = "_line"  # not a column name: the physical line a row starts on, for warnings
_QUOTED = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\"""", re.S)
_LIST_GAPS = re.compile(r"[\s,]*")


def read_table(text: str, delimiter: str, warnings: list[str]) -> Iterator[dict]:
    """Rows of a TSV/CSV text as dicts (with LINE_KEY), parsed as drawn; malformed rows warned about by line."""
    csv.field_size_limit(sys.maxsize)
    lines = text.splitlines(keepends=True)
    reader = csv.reader(lines, delimiter=delimiter)
    header = next(reader, None)
    if header is None:
        return
    width, start = len(header), reader.line_num + 1
    for fields in reader:
        end = reader.line_num
        records = [(start, fields)]
        if end > start and _swallowed(fields, lines[start:end], delimiter, width):
            warnings.append(f"line {start}: unbalanced quote (the cell runs on to line {end}); "
                            f"lines {start}-{end} read one row per line")
            records = [(n, _one_line(lines[n - 1], delimiter)) for n in range(start, end + 1)]
        for number, record in records:
            if not any(cell.strip() for cell in record):
                continue  # a blank line
            if len(record) != width:
                warnings.append(f"line {number}: {len(record)} fields where the header has {width}")
            yield {**dict(zip(header, record)), LINE_KEY: number}
        start = end + 1


def _swallowed(fields: list[str], inner: list[str], delimiter: str, width: int) -> bool:
    """Whether a record spanning several lines is a stray quote's doing rather than a quoted multi-line cell."""
    if len(fields) != width:
        return True
    # A quoted cell may hold a line break, but not a line that has a whole row's worth of separators.
    return any(line.count(delimiter) >= max(2, width - 1) for line in inner)


def _one_line(line: str, delimiter: str) -> list[str]:
    try:
        record = next(csv.reader([line], delimiter=delimiter, strict=True), [])
    except csv.Error:  # the line with the stray quote: read it literally
        record = line.rstrip("\r\n").split(delimiter)
    return record


def list_cell(text: str) -> tuple[list[str] | None, str | None]:
    """(items, None) for a list of string literals or one quoted string, in linear time; (None, why) otherwise."""
    if len(text) > MAX_LIST_CELL:
        return None, f"holds {len(text):,} characters (limit {MAX_LIST_CELL:,})"
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        body = text[1:-1]
        items = _QUOTED.findall(body)
        if _LIST_GAPS.fullmatch(_QUOTED.sub(",", body)) is None:
            return None, "is not a list literal"
    elif _QUOTED.fullmatch(text):
        items = [text]
    else:
        return None, "is not a list literal"
    try:
        return [str(ast.literal_eval(item)) for item in items], None
    except (ValueError, SyntaxError):
        return None, "is not a list literal"
