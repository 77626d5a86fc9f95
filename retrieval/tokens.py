"""Token counting with tiktoken, offline-safe."""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from frames_agent.core.paths import ensure_tiktoken_cache

if TYPE_CHECKING:
    import tiktoken

DEFAULT_ENCODING = "cl100k_base"


@functools.lru_cache(maxsize=4)
def _encoding(name: str) -> tiktoken.Encoding | None:
    ensure_tiktoken_cache()
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except Exception:  # no cached file and no network: fall back to a length estimate
        return None


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Number of tokens in text (≈ len/4 when no encoding can be loaded)."""
    enc = _encoding(encoding)
    if enc is None:
        return max(1, len(text) // 4) if text else 0
    return len(enc.encode(text, disallowed_special=()))


def truncate_tokens(text: str, max_tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """The longest prefix of text that fits in max_tokens."""
    enc = _encoding(encoding)
    if enc is None:
        return text[: max_tokens * 4]
    ids = enc.encode(text, disallowed_special=())
    return text if len(ids) <= max_tokens else enc.decode(ids[:max_tokens])
