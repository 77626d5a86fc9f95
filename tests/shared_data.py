"""The shared data tests read, and a skip naming what is missing when it is not here (tests run without it)."""
from __future__ import annotations

from pathlib import Path

import pytest

from frames_agent.core.paths import shared_dir, shared_lookup

CRAG_DATA = shared_dir() / "data" / "crag"
RECORDINGS = CRAG_DATA / "example_call_responses.json"
CRAG_ROWS = CRAG_DATA / "crag_example_dev.jsonl.bz2"


def reason(path: Path) -> str:
    """Why a test skipped: the shared file it reads and where shared data was looked for."""
    return f"needs the shared data file {path}; {shared_lookup()}"


needs_crag = pytest.mark.skipif(not RECORDINGS.is_file(), reason=reason(RECORDINGS))
needs_crag_rows = pytest.mark.skipif(not CRAG_ROWS.is_file(), reason=reason(CRAG_ROWS))


def require(path: Path) -> Path:
    """path, or (in a fixture) a skip of every test using it that names the missing file."""
    if not path.exists():
        pytest.skip(reason(path))
    return path
