"""A reply's text: message content as providers send it (a string, or a list of content blocks).

Below both calls (structured output) and native (with_structured_output, bind_tools), which read replies alike.
"""
from __future__ import annotations

from typing import Any


def message_text(content: Any) -> str:
    """Message content as text (providers may return a list of content blocks)."""
    if isinstance(content, list):
        return "".join(_block_text(b) for b in content)
    return "" if content is None else str(content)


def _block_text(block: Any) -> str:
    """A content block's text: {"text": None} is no text, a number is its digits, images are nothing."""
    if isinstance(block, str):
        return block
    value = block.get("text") if isinstance(block, dict) else None
    return "" if value is None or isinstance(value, (dict, list)) else str(value)
