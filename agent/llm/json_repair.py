"""Turning a small model's reply into a pydantic value: repair what is repairable, else fall back."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, TypeVar

from langchain_core.utils.json import parse_partial_json
from pydantic import BaseModel, BeforeValidator, ValidationError
from pydantic_core import ErrorDetails

from frames_agent.core.bounded import JSONOutOfBounds, check_json
from frames_agent.core.errors import first_line
from frames_agent.core.terminal import valid_data

# Schema-shaped repairs no library makes (the json-repair package: docs/measurements.md#tried-and-not-kept).
T = TypeVar("T", bound=BaseModel)
PYTHON_LITERALS = {"True": "true", "False": "false", "None": "null"}  # a reply written as a Python dict
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\(\d+\))\s+")


def as_strings(value: Any) -> Any:
    """A reply's list of strings read leniently: one string is a list of it, other items become text."""
    if isinstance(value, str):
        return [value]
    return [v if isinstance(v, str) else str(v) for v in value] if isinstance(value, list) else value


# Blank items are dropped later (choose, clean_queries).
Strings = Annotated[list[str], BeforeValidator(as_strings)]


@dataclass
class Structured(Generic[T]):
    """A parsed reply: the value, the raw text, and whether it had to be repaired or replaced (and how)."""

    value: T
    raw: str
    repaired: bool = False
    fallback: bool = False
    error: str | None = None
    notes: list[str] = field(default_factory=list)


# A structured reply is read from its first MAX_REPLY_CHARS characters (a plan is a few hundred); the rest is cut off.
MAX_REPLY_CHARS = 32_000
_FENCED = re.compile(r"```(?:json|JSON)?\s*+(.*?)```", re.S)


def json_candidates(text: str) -> list[str]:
    """Places a JSON value may hide in a reply: code fences, from the first bracket, the whole text."""
    fenced = _FENCED.findall(text)
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    tail = [text[start:]] if start >= 0 else []
    return [c for c in dict.fromkeys(fenced + tail + [text]) if c.strip()]


def single_to_double_quotes(text: str) -> str:
    """Python-style 'strings' as JSON "strings" (apostrophes inside "strings" are left alone)."""
    out, quote, i = [], None, 0
    while i < len(text):
        ch = text[i]
        if quote is None and ch in "\"'":
            quote = ch
            out.append('"')
        elif quote is not None and ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append("'" if nxt == "'" else ch + nxt)
            i += 1
        elif quote is not None and ch == quote:
            quote = None
            out.append('"')
        elif quote == "'" and ch == '"':
            out.append('\\"')
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _decode(text: str) -> tuple[Any, bool]:
    """(value, text after the value was ignored); ValueError when nothing decodes."""
    try:
        value, end = json.JSONDecoder().raw_decode(text.strip())
    except RecursionError:  # a looping small model can open a thousand brackets
        raise ValueError("JSON nested too deeply") from None
    return value, bool(text.strip()[end:].strip())


def _decode_truncated(text: str) -> Any:
    """A reply cut off inside a value: LangChain's partial-JSON parser closes its strings and brackets."""
    try:
        value = parse_partial_json(text.strip(), strict=False)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    # The parser says None both for "null" and for brackets closed in the wrong order; only the first is a value.
    if value is None and text.strip() != "null":
        raise ValueError("mismatched brackets")
    return value


# Deeper than any reply the agent asks for; the json module's own limit differs by Python version.
MAX_DEPTH = 200


def loads_lenient(text: str) -> tuple[Any, list[str]]:
    """A JSON value from text and the repairs it took; ValueError when nothing decodes or it nests past MAX_DEPTH."""
    try:
        check_json(text, max_depth=MAX_DEPTH)  # a looping small model can open a thousand brackets
    except JSONOutOfBounds:
        raise ValueError("JSON nested too deeply") from None
    no_commas = re.sub(r",(\s*[}\]])", r"\1", text)
    quoted = re.sub(r"\b(True|False|None)\b", lambda m: PYTHON_LITERALS[m.group(1)], single_to_double_quotes(no_commas))
    attempts: list[tuple[str, list[str]]] = [(text, [])]
    if no_commas != text:
        attempts.append((no_commas, ["removed trailing commas"]))
    if quoted != no_commas:
        attempts.append((quoted, attempts[-1][1] + ["converted single quotes"]))
    for attempt, notes in attempts:
        try:
            value, junk = _decode(attempt)
            return value, notes + (["ignored text after the JSON"] if junk else [])
        except ValueError:
            continue
    for attempt, notes in attempts:
        try:
            return _decode_truncated(attempt), notes + ["closed truncated JSON"]
        except ValueError:
            continue
    raise ValueError("no JSON value found")


def _list_fields(schema: type[BaseModel]) -> list[str]:
    props = schema.model_json_schema().get("properties", {})
    return [k for k, v in props.items() if v.get("type") == "array"]


def coerce_shape(data: Any, schema: type[BaseModel]) -> tuple[Any, list[str]]:
    """A bare list where the schema has a single list field: wrap it as that field."""
    lists = _list_fields(schema)
    if isinstance(data, list) and len(lists) == 1:
        return {lists[0]: data}, [f"wrapped a bare list as '{lists[0]}'"]
    return data, []


def lines_as_list(text: str, schema: type[BaseModel]) -> tuple[Any, list[str]] | None:
    """Bulleted or numbered lines as the items of a schema's single list field (prose is not guessed at)."""
    lists = _list_fields(schema)
    if len(lists) != 1 or len(schema.model_fields) != 1:
        return None
    bulleted = [ln for ln in text.splitlines() if BULLET.match(ln)]
    items = [BULLET.sub("", ln).strip().strip('"\'').strip() for ln in bulleted]
    items = [i for i in items if i and not i.endswith(":")]
    return ({lists[0]: items}, ["read list items from plain-text lines"]) if items else None


def _walk(data: Any, loc: tuple) -> Any:
    for key in loc:
        data = data[key]
    return data


def _fix_length(data: Any, err: ErrorDetails, fallback_value: BaseModel | None) -> str | None:
    """Truncate a too-long list/string or pad a too-short list from the fallback; a note, or None."""
    loc, ctx = tuple(err["loc"]), err.get("ctx") or {}
    if not loc:
        return None
    try:
        parent, key = _walk(data, loc[:-1]), loc[-1]
        value = parent[key]
    except (KeyError, IndexError, TypeError):
        return None
    name = ".".join(map(str, loc))
    if err["type"] == "too_long" and isinstance(value, (list, str)):
        parent[key] = value[: ctx["max_length"]]
        return f"truncated '{name}' to {ctx['max_length']} items" if isinstance(value, list) else f"shortened '{name}'"
    if err["type"] == "too_short" and isinstance(value, list) and fallback_value is not None:
        try:
            extra = _walk(fallback_value.model_dump(), loc)
        except (KeyError, IndexError, TypeError):
            return None
        padded = value + [x for x in extra if x not in value]
        if len(padded) < ctx["min_length"]:
            return None
        parent[key] = padded[: max(ctx["min_length"], len(value))]
        return f"padded '{name}' from the fallback to {ctx['min_length']} items"
    return None


def validate_fixing_lengths(data: Any, schema: type[T], fallback: Callable[[], BaseModel | None]) -> tuple[T, list[str]]:
    """schema.model_validate(data), fixing list lengths the schema bounds; raises ValidationError."""
    notes: list[str] = []
    fb: list[BaseModel | None] = []
    for _ in range(8):
        try:
            return schema.model_validate(data), notes
        except ValidationError as exc:
            fixable = [e for e in exc.errors() if e["type"] in ("too_long", "too_short")]
            if not fixable:
                raise
            if not fb:
                fb.append(fallback())
            new = [n for e in fixable if (n := _fix_length(data, e, fb[0]))]
            if not new:
                raise
            notes += new
    return schema.model_validate(data), notes


def parse_structured(raw: str, schema: type[T], fallback: Callable[[str], T]) -> Structured[T]:
    """Parse a reply into schema, repairing or falling back deterministically; never raises."""
    raw = raw or ""
    if not raw.strip():
        return Structured(fallback(raw), raw, fallback=True, error="empty reply")
    text = raw[:MAX_REPLY_CHARS]  # the fallback too reads no more than this
    safe_fallback = _safe(fallback, text)
    errors: list[str] = []
    decoded_any = False
    cut = [f"read the first {MAX_REPLY_CHARS:,} characters of {len(raw):,}"] if len(raw) > MAX_REPLY_CHARS else []
    for candidate in json_candidates(text):
        try:
            data, notes = loads_lenient(candidate)
            data, decoded_any = valid_data(data), True  # a JSON "\ud800" escape decodes to text no encoder takes
            if candidate.strip() != text.strip():
                notes = ["extracted JSON from surrounding text"] + notes
            notes = cut + notes
            data, shape_notes = coerce_shape(data, schema)
            value, len_notes = validate_fixing_lengths(data, schema, safe_fallback)
            notes += shape_notes + len_notes
            return Structured(value, raw, repaired=bool(notes), notes=notes)
        except (ValueError, ValidationError) as exc:
            errors.append(first_line(exc))
    listed = None if decoded_any else lines_as_list(text, schema)
    if listed is not None:
        try:
            value, len_notes = validate_fixing_lengths(listed[0], schema, safe_fallback)
            return Structured(value, raw, repaired=True, notes=cut + listed[1] + len_notes)
        except ValidationError as exc:
            errors.append(first_line(exc))
    return Structured(fallback(text), raw, fallback=True, error=errors[0] if errors else "no JSON value found")


def _safe(fallback: Callable[[str], T], raw: str) -> Callable[[], BaseModel | None]:
    def call() -> BaseModel | None:
        try:
            return fallback(raw)
        except Exception:  # noqa: BLE001 - a broken fallback only loses the padding
            return None
    return call


