"""Helpers shared by the index tests: an empty index home and JSONL corpora written on the spot."""
from __future__ import annotations

import json
from pathlib import Path

import pytest


def write_jsonl(path: Path, docs: list[dict]) -> Path:
    """docs as a JSONL corpus file at path."""
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


@pytest.fixture
def index_home(tmp_path, monkeypatch) -> Path:
    """An empty FRAMES_AGENT_INDEXES for named builds."""
    home = tmp_path / "indexes"
    monkeypatch.setenv("FRAMES_AGENT_INDEXES", str(home))
    return home
