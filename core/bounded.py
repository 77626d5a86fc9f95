"""JSON and files from outside read within bounds: size and nesting depth are checked before a parser sees them, so a
hostile body is one ValueError, never a RecursionError or a parse that runs out of memory."""
from __future__ import annotations

import json
import os
import re
import stat
from typing import Any

import numpy as np

# Deep enough for any reply, tool call or record we read, far below the recursion of whatever walks the value next.
MAX_DEPTH = 64
MAX_JSON_BYTES = 16 * 1024 * 1024  # a model reply or a data record; larger is not a reply, it is an attack or a bug

_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")
_STRING_STOP = re.compile(rb'["\\]')


class OutOfBounds(ValueError):
    """Input over a size or depth limit, or a file that is not a regular file (a ValueError, as JSONDecodeError is)."""


class JSONOutOfBounds(OutOfBounds):
    """A JSON text over the size or depth limit."""


class DepthGuard:
    """The nesting depth of JSON text fed in chunks (linear, no recursion); JSONOutOfBounds once past max_depth."""

    def __init__(self, max_depth: int = MAX_DEPTH) -> None:
        self.max_depth, self.depth = max_depth, 0
        self._in_string = self._escaped = False

    def feed(self, chunk: bytes) -> None:
        """Account for the next bytes of the text."""
        at, end = 0, len(chunk)
        while at < end:
            if self._in_string:
                at = self._skip_string(chunk, at)
                continue
            quote = chunk.find(b'"', at)
            stop = end if quote < 0 else quote
            self._outside(chunk[at:stop])
            if quote < 0:
                return
            self._in_string, at = True, quote + 1

    def _skip_string(self, chunk: bytes, at: int) -> int:
        """Past the string's end (or the chunk's), honouring escapes that may straddle chunks."""
        if self._escaped:
            self._escaped = False
            return at + 1
        found = _STRING_STOP.search(chunk, at)
        if found is None:
            return len(chunk)
        if found.group() == b"\\":
            self._escaped = True
            return found.end()
        self._in_string = False
        return found.end()

    def _outside(self, segment: bytes) -> None:
        opens = segment.count(b"[") + segment.count(b"{")
        closes = segment.count(b"]") + segment.count(b"}")
        if not opens:
            self.depth = max(0, self.depth - closes)
            return
        if closes <= self.depth and self.depth + opens <= self.max_depth:  # never below 0, never past the bound
            self.depth += opens - closes
            return
        if closes:  # the running depth, never below 0 (a stray close must not hide the opens after it)
            codes = np.frombuffer(segment, dtype=np.uint8)
            steps = np.isin(codes, list(_OPEN)).astype(np.int64) - np.isin(codes, list(_CLOSE)).astype(np.int64)
            running = self.depth + np.cumsum(steps)
            running -= np.minimum(0, np.minimum.accumulate(running))
            peak, self.depth = int(running.max()), int(running[-1])
        else:
            peak = self.depth = self.depth + opens
        if peak > self.max_depth:
            raise JSONOutOfBounds(f"JSON nested deeper than {self.max_depth} levels")


def check_json(data: str | bytes, *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_DEPTH) -> bytes:
    """data as UTF-8 bytes; JSONOutOfBounds when it is over max_bytes or nests deeper than max_depth."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise JSONOutOfBounds(f"JSON text of {len(raw):,} bytes, over the limit of {max_bytes:,}")
    DepthGuard(max_depth).feed(raw)
    return raw


def loads(data: str | bytes, *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads within bounds: JSONOutOfBounds past them, json.JSONDecodeError (a ValueError) when not JSON."""
    if isinstance(data, str):
        if len(data) > max_bytes:  # a character is at least one byte: refuse before encoding a huge text
            raise JSONOutOfBounds(f"JSON text of {len(data):,} characters, over the limit of {max_bytes:,} bytes")
        check_json(data, max_bytes=max_bytes, max_depth=max_depth)
        return json.loads(data)
    return json.loads(check_json(data, max_bytes=max_bytes, max_depth=max_depth))


def regular_file(path: str | os.PathLike) -> None:
    """OutOfBounds unless path is a regular file (a link to /dev/zero or a FIFO never ends, or blocks on open)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OutOfBounds(f"{os.fspath(path)} is not a regular file")


def read_file(path: str | os.PathLike, max_bytes: int) -> bytes:
    """A regular file's bytes, at most max_bytes (OutOfBounds past them); OSError as open() raises it."""
    regular_file(path)
    if os.stat(path).st_size > max_bytes:
        raise OutOfBounds(f"{os.fspath(path)} is over the limit of {max_bytes:,} bytes")
    with open(path, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OutOfBounds(f"{os.fspath(path)} is over the limit of {max_bytes:,} bytes")
    return data


def read_text(path: str | os.PathLike, max_bytes: int = MAX_JSON_BYTES) -> str:
    """A regular file's UTF-8 text within max_bytes (a byte that is not UTF-8 becomes U+FFFD)."""
    return read_file(path, max_bytes).decode("utf-8", errors="replace")


def load_file(path: str | os.PathLike, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """A small JSON file (a manifest, a config) read and parsed within bounds."""
    return loads(read_file(path, max_bytes), max_bytes=max_bytes)
