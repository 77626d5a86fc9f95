"""The on-disk layout of an index, shared by the searcher and `index build`: where indexes live, the manifest
written last by a finished build, and how a name, path or pyserini prebuilt name resolves to a directory."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import IO

from frames_agent.core.bounded import load_file
from frames_agent.core.errors import RetrievalError
from frames_agent.core.paths import indexes_dir

MANIFEST_FILE = "frames-agent-index.json"  # written last: its presence means the build finished
FORMAT_VERSION = 4  # what each format added: docs/indexes.md
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def read_manifest(index_dir: Path) -> dict | None:
    """The build manifest of one of our indexes, None for a foreign Lucene index; an older format is refused."""
    path = index_dir / MANIFEST_FILE
    if not path.exists():
        return None
    try:
        manifest = load_file(path)
    except (OSError, ValueError) as exc:
        raise RetrievalError(
            f"corrupt index {index_dir}: unreadable {MANIFEST_FILE} ({exc}); rebuild it with --force") from exc
    if not isinstance(manifest, dict) or manifest.get("complete") is not True:
        raise RetrievalError(f"index {index_dir} is half-built (manifest not complete); rebuild it with --force")
    if not isinstance(manifest.get("format"), int) or manifest["format"] < FORMAT_VERSION:
        raise RetrievalError(f"index {index_dir} was built by an older release (format {manifest.get('format')}); "
                             "rebuild it with `python cli.py index build --force`")
    return manifest


def content_fingerprint(index_dir: Path, manifest: dict | None) -> str:
    """A short id of what the index holds: the build's content id, else "lucene:" and a hash of its files' sizes."""
    if manifest and manifest.get("content_id"):
        return str(manifest["content_id"])
    files = sorted((p.name, p.stat().st_size) for p in index_dir.iterdir() if p.is_file() and p.name != MANIFEST_FILE)
    return "lucene:" + hashlib.sha256(json.dumps(files).encode()).hexdigest()[:12]


def _readers_file(index_dir: Path) -> Path:
    return index_dir.parent / f".{index_dir.name}.readers"


def hold_reader(index_dir: Path) -> IO | None:
    """Mark index_dir held (builders refuse to swap it) until the handle closes; None where it cannot (read-only)."""
    try:
        handle = open(_readers_file(index_dir), "a")  # noqa: SIM115 - returned to the caller, who holds it
    except OSError:
        return None
    fcntl.flock(handle, fcntl.LOCK_SH)
    return handle


def in_use(index_dir: Path) -> bool:
    """Whether any process holds index_dir open through hold_reader."""
    try:
        handle = open(_readers_file(index_dir))  # noqa: SIM115 - never created here: no file, no reader
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def check_index_dir(index_dir: Path) -> Path:
    """index_dir when it holds a finished Lucene index, else a RetrievalError saying what is wrong."""
    if not index_dir.is_dir():
        raise RetrievalError(f"no index directory at {index_dir}")
    has_segments = any(index_dir.glob("segments_*"))
    manifest = read_manifest(index_dir)
    if manifest is None and not has_segments:
        raise RetrievalError(
            f"{index_dir} is not a finished index (no {MANIFEST_FILE} and no Lucene segments: half-built or corrupt); "
            "rebuild it with: python cli.py index build --force ..."
        )
    if not has_segments:
        raise RetrievalError(f"corrupt index {index_dir}: Lucene segments are missing; rebuild it with --force")
    return index_dir


def is_prebuilt_name(name: str) -> bool:
    """Whether pyserini knows a prebuilt sparse index by this name."""
    from frames_agent.retrieval.lucene.jvm import start_jvm

    start_jvm()  # pyserini's list of prebuilt indexes needs the JVM; it is cheap without torch
    from pyserini.prebuilt_index_info import TF_INDEX_INFO

    return name in TF_INDEX_INFO


def fetch_prebuilt(name: str) -> Path:
    """Download (or reuse pyserini's cached copy of) a prebuilt index; needs the internet."""
    from frames_agent.retrieval.lucene.jvm import start_jvm

    start_jvm()
    from pyserini.util import download_prebuilt_index

    try:
        return Path(download_prebuilt_index(name, verbose=True))
    except Exception as exc:  # HTTP, checksum or unpack failures all end the same way for the user
        raise RetrievalError(f"could not fetch prebuilt index {name!r}: {exc}") from exc


def known_index_names() -> list[str]:
    """Names of the indexes under indexes_dir() (finished or not)."""
    root = indexes_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def resolve_index(name_or_dir: str | os.PathLike, *, fetch: Callable[[str], Path] | None = None) -> Path:
    """Directory of a finished index given its name (under indexes_dir()), a path, or a pyserini prebuilt name."""
    value = os.fspath(name_or_dir)
    if not value.strip():
        raise RetrievalError("empty index name")
    if isinstance(name_or_dir, Path) or os.sep in value or "/" in value or value.startswith((".", "~")):
        return check_index_dir(Path(value).expanduser())
    if not NAME_PATTERN.match(value):
        raise RetrievalError(f"bad index name {value!r}: use letters, digits, '.', '_' or '-', or give a path")
    local = indexes_dir() / value
    if local.exists():
        return check_index_dir(local)
    if is_prebuilt_name(value):
        return check_index_dir(Path((fetch or fetch_prebuilt)(value)))
    known = ", ".join(known_index_names()) or "none"
    raise RetrievalError(
        f"unknown index {value!r}: not in {indexes_dir()} (built: {known}) and not a pyserini prebuilt index; "
        f"build it with: python cli.py index build --name {value} --corpus FILE"
    )
