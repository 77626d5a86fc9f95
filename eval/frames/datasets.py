"""FRAMES questions: the original TSV/CSV layout (read defensively), JSONL, or the Hugging Face dataset (online when
the hub answers, else from its cache at once), as typed Questions."""
from __future__ import annotations

import ast
import contextlib
import csv
import hashlib
import importlib
import itertools
import json
import logging
import math
import os
import re
import socket
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, ConfigDict

from frames_agent.agent.limits import MAX_QUESTION_CHARS
from frames_agent.core.bounded import JSONOutOfBounds, OutOfBounds, read_file
from frames_agent.core.bounded import loads as bounded_loads
from frames_agent.core.paths import shared_dir, shared_lookup
from frames_agent.eval.errors import DataError, MissingExtraError
from frames_agent.eval.frames.split import check_split, in_split
from frames_agent.eval.rundir import file_fingerprint
from frames_agent.retrieval.lucene.titles import normalize_title

REASONING_TYPES = ("Numerical reasoning", "Tabular reasoning", "Multiple constraints", "Temporal reasoning",
                   "Post processing")
HF_PREFIX = "hf:"
_LINK_COLUMN = re.compile(r"^wikipedia_link_\d+\+?$", re.IGNORECASE)
# Titles hold commas too ("Lincoln,_Nebraska"): only a comma before another link's start separates two links.
_URL_SEPARATOR = re.compile(r"\s*,\s*(?=(?:https?://|[a-z.]*wikipedia\.org/|w\.wiki/))", re.IGNORECASE)
MAX_ID_CHARS = 200
MAX_DATA_BYTES = 512 * 1024 * 1024  # FRAMES is a few MB; far larger is not a question file
_ALIASES = {"prompt": ("prompt", "question"), "answer": ("answer", "gold_answer", "ground_truth")}
# Real wiki_links cells are under 1 KB; a cell past this is refused rather than parsed (memory and time).
MAX_LIST_CELL = 100_000
LINE_KEY = "_line"  # not a column name: the physical line a row starts on, for warnings
_QUOTED = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\"""", re.S)
_LIST_GAPS = re.compile(r"[\s,]*")
DEFAULT_DATASET = "google/frames-benchmark"
PROBE_SECONDS = 3.0


class Question(BaseModel):
    """One FRAMES question with its gold answer and gold Wikipedia articles."""

    model_config = ConfigDict(frozen=True)

    id: str
    prompt: str
    answer: str
    reasoning_types: tuple[str, ...] = ()
    gold_urls: tuple[str, ...] = ()
    gold_titles: tuple[str, ...] = ()


@dataclass
class Dataset:
    """Questions plus what loading them noticed (skipped rows, odd links, unknown reasoning types)."""

    questions: list[Question]
    source: str
    fingerprint: str
    warnings: list[str] = field(default_factory=list)


def default_data() -> str:
    """--data default: FRAMES_DATA, else the shared dev split."""
    return os.environ.get("FRAMES_DATA") or str(shared_dir() / "data" / "frames" / "frames_dev.tsv")


def title_from_url(url: str) -> str | None:
    """Article title of a Wikipedia link: URL-decoded, fragment dropped, underscores as spaces; None if none."""
    text = url.strip().strip("'\"")
    if not text:
        return None
    if "://" not in text:
        text = "https://" + text
    try:
        parts = urlsplit(text)
    except ValueError:  # "http://[x/wiki/A": a bracketed host that is no IPv6 address; the warning says which link
        return None
    if "/wiki/" in parts.path:
        raw = parts.path.split("/wiki/", 1)[1]
    else:  # /w/index.php?title=Bronco&redirect=no
        raw = (parse_qs(parts.query).get("title") or [""])[0]
    title = " ".join(unquote(raw).replace("_", " ").split())
    return title or None


def split_urls(cell: str) -> list[str]:
    """The links in one cell (several may be comma-joined)."""
    return [u.strip() for u in _URL_SEPARATOR.split(cell.strip()) if u.strip()] if cell else []


def load_questions(spec: str | os.PathLike | None = None, limit: int | None = None, split: str = "all") -> Dataset:
    """Questions from a TSV/CSV/JSONL path or `hf:<dataset>`: the first `limit` of `split`."""
    spec = str(spec) if spec is not None else default_data()
    notes: list[str] = []
    rows: Iterable[dict]
    if spec.startswith(HF_PREFIX):
        rows, fingerprint = hub_rows(spec[len(HF_PREFIX):]), spec
    else:
        path = Path(spec).expanduser()
        rows, fingerprint = _file_rows(path, notes), file_fingerprint(path)
    if limit is not None and limit < 1:
        raise DataError(f"--limit must be at least 1, got {limit}")
    return _parse_rows(rows, spec, fingerprint, limit, notes, check_split(split))


# --- reading -----------------------------------------------------------------------------------------------
def _file_rows(path: Path, notes: list[str]) -> Iterator[dict]:
    if not path.exists():
        where = f"; {shared_lookup()}" if path.is_relative_to(shared_dir()) else ""
        raise DataError(f"no data file at {path}: give --data PATH, set FRAMES_DATA, or, online, "
                        f"--data hf:google/frames-benchmark (pip install 'frames-agent[hf]'){where}")
    if path.is_dir():
        raise DataError(f"--data {path} is a directory; give a .tsv, .csv or .jsonl file")
    try:
        # A link to /dev/zero or a FIFO never ends: only a regular file of bounded size is read whole.
        text = read_file(path, MAX_DATA_BYTES).decode("utf-8-sig")
    except OutOfBounds as exc:
        raise DataError(f"cannot read data file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"data file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise DataError(f"cannot read data file {path}: {exc.strerror or exc}") from exc
    if not text.strip():
        raise DataError(f"data file {path} is empty")
    if path.suffix.lower() in (".jsonl", ".json") or text.lstrip().startswith("{"):
        return _jsonl_rows(text, path)
    return _table_rows(text, path, notes)


def _jsonl_rows(text: str, path: Path) -> Iterator[dict]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = bounded_loads(line)
        except JSONOutOfBounds as exc:
            raise DataError(f"{path} line {number}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise DataError(f"{path} line {number} is not JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise DataError(f"{path} line {number} is not a JSON object")
        yield row


def _table_rows(text: str, path: Path, warnings: list[str]) -> Iterator[dict]:
    """Rows of a TSV/CSV text as dicts (with LINE_KEY), parsed as drawn; malformed rows warned about by line."""
    first = text.split("\n", 1)[0]
    delimiter = "," if path.suffix.lower() == ".csv" or ("\t" not in first and "," in first) else "\t"
    csv.field_size_limit(sys.maxsize)
    lines = text.splitlines(keepends=True)
    reader = csv.reader(lines, delimiter=delimiter)
    try:
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
    except csv.Error as exc:
        raise DataError(f"{path} is not a readable {'CSV' if delimiter == ',' else 'TSV'} file: {exc}") from exc


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


# --- the Hugging Face hub --------------------------------------------------------------------------------
def hub_rows(name: str) -> list[dict]:
    """Rows of the dataset's test split; a one-line DataError when it can be neither fetched nor found cached."""
    try:
        import datasets  # only users of hf: data need it
    except ImportError as exc:
        raise MissingExtraError("hf: data needs the `datasets` package: pip install 'frames-agent[hf]'") from exc
    online = hub_reachable()
    try:
        with _hub_call(offline=not online):
            loaded = datasets.load_dataset(name or DEFAULT_DATASET, split="test")
    except Exception as exc:  # offline, unknown dataset, hub errors: all one line for the user
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        why = "needs internet" if online else "the hub is unreachable and no cached copy was found"
        raise DataError(f"cannot load Hugging Face dataset {name!r} ({why}): {first}") from exc
    return [dict(row) for row in loaded]


def hub_reachable(timeout: float = PROBE_SECONDS) -> bool:
    """Whether a TCP connection to the hub's endpoint opens within timeout."""
    try:
        from huggingface_hub import constants

        endpoint = urlsplit(constants.ENDPOINT)
    except (ImportError, AttributeError, ValueError):
        endpoint = urlsplit("https://huggingface.co")
    try:
        with socket.create_connection((endpoint.hostname or "huggingface.co", endpoint.port or 443), timeout=timeout):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def _hub_call(offline: bool) -> Iterator[None]:
    """The hub libraries quiet and, offline, told so, for this call only (the environment is left alone)."""
    switches: list[Any] = []
    for name in ("huggingface_hub.constants", "datasets.config") if offline else ():
        with contextlib.suppress(ImportError):
            switches.append(importlib.import_module(name))
    saved = [(m, m.HF_HUB_OFFLINE) for m in switches if hasattr(m, "HF_HUB_OFFLINE")]
    loggers = [logging.getLogger(n) for n in ("huggingface_hub", "datasets", "fsspec")]
    levels = [lg.level for lg in loggers]
    for module, _ in saved:
        module.HF_HUB_OFFLINE = True
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for module, value in saved:
            module.HF_HUB_OFFLINE = value
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


# --- parsing -----------------------------------------------------------------------------------------------
def _column(columns: Iterable[str], role: str) -> str | None:
    lowered = {c.strip().lower(): c for c in columns if c}
    return next((lowered[a] for a in _ALIASES[role] if a in lowered), None)


def _parse_rows(rows: Iterable[dict], source: str, fingerprint: str, limit: int | None = None,
                notes: list[str] | None = None, split: str = "all") -> Dataset:
    """Questions of rows, read only as far as `limit` needs (rows are parsed as they are drawn)."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        raise DataError(f"{source} holds no questions")
    rows = itertools.chain([first], rows)
    columns = [c for c in first if c != LINE_KEY]
    prompt_col, answer_col = _column(columns, "prompt"), _column(columns, "answer")
    missing = [name for name, col in (("Prompt", prompt_col), ("Answer", answer_col)) if col is None]
    if missing or prompt_col is None or answer_col is None:
        raise DataError(f"{source} lacks column(s) {', '.join(missing)} (found: {', '.join(map(str, columns[:20]))})")
    dataset = Dataset([], source, fingerprint, notes if notes is not None else [])
    link_cols = [c for c in columns if c and _LINK_COLUMN.match(c.strip())]
    if not link_cols and "wiki_links" not in columns:
        dataset.warnings.append("no wiki_links / wikipedia_link_* columns: gold-article recall cannot be measured")
    seen: set[str] = set()
    for number, row in enumerate(rows):
        question = _parse_row(row, number, prompt_col, answer_col, link_cols, dataset.warnings)
        if question is None or not in_split(question.prompt, split):
            continue
        if question.id in seen:
            base = renamed = f"{question.id}-{number}"
            suffix = 1
            while renamed in seen:  # the first free "-2", "-3", ... when another question holds it
                suffix += 1
                renamed = f"{base}-{suffix}"
            dataset.warnings.append(f"question id {question.id} repeats; the later row is kept as {renamed}")
            question = question.model_copy(update={"id": renamed})
        seen.add(question.id)
        dataset.questions.append(question)
        if limit is not None and len(dataset.questions) >= limit:
            break  # rows past the limit are not parsed, so their warnings do not show either
    if not dataset.questions and split != "all":
        raise DataError(f"{source}: no question of the {split!r} split")
    if not dataset.questions:
        raise DataError(f"{source}: no usable questions ({'; '.join(dataset.warnings[:3])})")
    return dataset


def _row_id(row: dict, number: int) -> str:
    for key in ("id", "Unnamed: 0", ""):
        value = row.get(key)
        if value is not None and str(value).strip():
            text = str(value).strip()
            # An id names a question in file names, lines and pages: a longer one is cut, with a hash kept unique.
            if len(text) <= MAX_ID_CHARS:
                return text
            return f"{text[:MAX_ID_CHARS - 17]}…{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
    return str(number)


def _parse_row(row: dict, number: int, prompt_col: str, answer_col: str, link_cols: list[str],
               warnings: list[str]) -> Question | None:
    qid = _row_id(row, number)
    prompt, answer = _text(row.get(prompt_col)), _text(row.get(answer_col))
    line = f" (line {row[LINE_KEY]})" if LINE_KEY in row else ""
    if not prompt or not answer:
        warnings.append(f"question {qid}{line}: empty {'prompt' if not prompt else 'answer'}; skipped")
        return None
    for name, text in (("question", prompt), ("answer", answer)):
        if len(text) > MAX_QUESTION_CHARS:  # the limit of every entry point (agent.limits), not sent to a model
            warnings.append(f"question {qid}{line}: the {name} has {len(text):,} characters, over "
                            f"{MAX_QUESTION_CHARS}; skipped")
            return None
    urls = _gold_urls(row, link_cols, qid, warnings)
    return Question(id=qid, prompt=prompt, answer=answer, reasoning_types=_reasoning_types(row, qid, warnings),
                    gold_urls=tuple(urls), gold_titles=tuple(_gold_titles(urls, qid, warnings)))


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):  # NaN from pandas-made rows
        return ""
    return " ".join(str(value).split())


def _reasoning_types(row: dict, qid: str, warnings: list[str]) -> tuple[str, ...]:
    raw = row.get("reasoning_types")
    if isinstance(raw, (list, tuple)):
        parts = [str(p) for p in raw]
    else:
        parts = _text(raw).split("|")
    canonical = {t.lower(): t for t in REASONING_TYPES}
    found = []
    for part in (" ".join(p.split()) for p in parts):
        if not part:
            continue
        if part.lower() not in canonical:
            warnings.append(f"question {qid}: unknown reasoning type {part!r} (kept; known: {', '.join(REASONING_TYPES)})")
        found.append(canonical.get(part.lower(), part))
    return tuple(dict.fromkeys(found))


def _listed_links(raw: object, qid: str, warnings: list[str]) -> list[str]:
    if isinstance(raw, (list, tuple)):
        return [str(u) for u in raw]
    if raw is None or not str(raw).strip():
        return []
    links, problem = list_cell(str(raw))  # never evaluates code, bounded in size
    if links is None:
        warnings.append(f"question {qid}: wiki_links {problem}; using the link columns")
        return []
    return links


def _gold_urls(row: dict, link_cols: list[str], qid: str, warnings: list[str]) -> list[str]:
    urls = [u for col in link_cols for u in split_urls(_text(row.get(col)))]
    urls += [u for item in _listed_links(row.get("wiki_links"), qid, warnings) for u in split_urls(item)]
    return list(dict.fromkeys(urls))


def _gold_titles(urls: list[str], qid: str, warnings: list[str]) -> list[str]:
    titles: dict[str, str] = {}
    for url in urls:
        title = title_from_url(url)
        if title is None:
            # Counted as a gold article nobody can match rather than dropped: the question still needs it.
            warnings.append(f"question {qid}: cannot tell the article of gold link {url!r}; counted as not found")
            title = url.strip()
        titles.setdefault(normalize_title(title), title)
    return list(titles.values())
