"""Text from models, questions and data made safe for a terminal: control characters (ESC, BEL, NUL, CR) and direction
overrides shown escaped (`\\x1b`), never acted on; and text valid for any encoder (valid_text: no lone surrogates)."""
from __future__ import annotations

from typing import Any

_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_LINE = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in _CONTROLS}
_TEXT = {code: escaped for code, escaped in _LINE.items() if code not in (0x09, 0x0A)}  # tabs and new lines kept


def plain(text: object, *, lines: bool = True) -> str:
    """str(text) with control characters escaped; new lines and tabs kept unless lines=False."""
    return str(text).translate(_TEXT if lines else _LINE)


def valid_text(text: str) -> str:
    """text as valid Unicode: a lone surrogate (a JSON "\\ud800" escape) becomes U+FFFD; a split pair is joined."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def valid_data(value: Any) -> Any:
    """A parsed JSON value with every string (keys too) made valid_text."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_data(key): valid_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [valid_data(item) for item in value]
    return value
