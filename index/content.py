"""Content identity of a corpus: each input's size and SHA-256 of all its bytes (a sample misses a same-size edit),
a large file's hash memoised per (real path, size, mtime, inode) beside the indexes."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from frames_agent.core.bounded import load_file
from frames_agent.core.paths import indexes_dir, write_atomic

MEMO_FILE = ".content-hashes.json"
MEMO_MIN_BYTES = 16 << 20  # smaller files re-hash in well under 0.1 s: not worth a memo entry
SHORT_ID = 12  # hex digits: 48 bits, ample for the handful of corpora one machine holds
MAX_MEMO_BYTES = 1 << 20


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, memoised while the file's size, mtime and inode stay the same."""
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}"
    memo = _read_memo()
    if key in memo:
        return memo[key]
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    if stat.st_size >= MEMO_MIN_BYTES:
        _write_memo({**memo, key: digest})
    return digest


def describe_file(path: Path, kind: str) -> dict:
    """The content identity of one input file: its file name, kind, size and SHA-256 (no directory, no mtime)."""
    return {"name": path.name, "kind": kind, "size": path.stat().st_size, "sha256": file_sha256(path)}


def short_id(fingerprint: dict) -> str:
    """A short stable id for a fingerprint dict (hash of its canonical JSON)."""
    canonical = json.dumps(fingerprint, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:SHORT_ID]


def _read_memo() -> dict[str, str]:
    try:  # bounded: a memo is a few KB, and a FIFO or a link to /dev/zero in its place is no memo
        memo = load_file(indexes_dir() / MEMO_FILE, MAX_MEMO_BYTES)
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _write_memo(memo: dict[str, str]) -> None:
    """Best effort: a read-only or racing cache only costs a re-hash next time."""
    try:
        indexes_dir().mkdir(parents=True, exist_ok=True)
        write_atomic(indexes_dir() / MEMO_FILE, json.dumps(memo, indent=2) + "\n")
    except OSError:
        pass
