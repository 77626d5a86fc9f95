"""A reply's text: message content as providers send it (a string, or a list of content blocks).

Below both calls (structured output) and native (with_structured_output, bind_tools), which read replies alike.
"""
from __future__ import annotations

from typing import Any

from frames_agent.core.terminal import valid_text


def message_text(content: Any) -> str:
    """Message content as valid text (providers may return a list of content blocks; a lone surrogate becomes U+FFFD)."""
    if isinstance(content, list):
        return valid_text("".join(_block_text(b) for b in content))
    return "" if content is None else valid_text(str(content))


def _block_text(block: Any) -> str:
    """A content block's text: {"text": None} is no text, a number is its digits, images are nothing."""
    if isinstance(block, str):
        return block
    value = block.get("text") if isinstance(block, dict) else None
    return "" if value is None or isinstance(value, (dict, list)) else str(value)
