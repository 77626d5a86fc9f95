"""Where the project reads shared data and keeps its caches; every place overridable by env."""
from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The checkout this code runs from."""
    return Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """Read-only shared data (`../shared` beside the checkout, or FRAMES_AGENT_SHARED)."""
    env = os.environ.get("FRAMES_AGENT_SHARED")
    return Path(env) if env else project_root().parent / "shared"


def cache_dir() -> Path:
    """Writable cache root (FRAMES_AGENT_CACHE, else ~/.cache/frames-agent)."""
    env = os.environ.get("FRAMES_AGENT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "frames-agent"


def indexes_dir() -> Path:
    """Where named indexes live (FRAMES_AGENT_INDEXES, else <cache>/indexes)."""
    env = os.environ.get("FRAMES_AGENT_INDEXES")
    return Path(env) if env else cache_dir() / "indexes"


def ensure_tiktoken_cache() -> None:
    """Point tiktoken at offline encodings when the user has not chosen a cache."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    offline = shared_dir() / "tiktoken"
    if offline.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(offline)
