"""Where the project reads shared data and keeps its caches; every place overridable by env."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import platformdirs

# Only for checking the project as an installed package sees it (tests without `../shared`): skip the checkout's.
NO_CHECKOUT_SHARED = "FRAMES_AGENT_NO_CHECKOUT_SHARED"


def project_root() -> Path:
    """The checkout this code runs from (site-packages when installed as a package)."""
    return Path(__file__).resolve().parents[1]


def checkout_shared() -> Path | None:
    """`../shared` beside the checkout; None when installed as a package (no pyproject.toml above the code)."""
    root = project_root()
    if os.environ.get(NO_CHECKOUT_SHARED) or not (root / "pyproject.toml").is_file():
        return None
    return root.parent / "shared"


def user_shared_dir() -> Path:
    """Shared data in the user's data directory (platformdirs), where an installed package looks last."""
    return Path(platformdirs.user_data_dir("frames-agent")) / "shared"


def shared_dir() -> Path:
    """Read-only shared data: FRAMES_AGENT_SHARED, else the checkout's `../shared`, else the user's data directory."""
    env = os.environ.get("FRAMES_AGENT_SHARED")
    if env:
        return Path(env)
    beside = checkout_shared()
    return beside if beside is not None and beside.is_dir() else user_shared_dir()


def shared_lookup() -> str:
    """Where shared data was looked for, for one-line errors (says what applies to an installed package)."""
    env = os.environ.get("FRAMES_AGENT_SHARED")
    if env:
        return f"shared data is read from FRAMES_AGENT_SHARED={env}"
    beside = checkout_shared()
    checkout = f"{beside} (beside this checkout), then " if beside is not None else ""
    return (f"shared data is looked for in FRAMES_AGENT_SHARED (unset), then {checkout}{user_shared_dir()} "
            "(an installed package: set FRAMES_AGENT_SHARED or put the shared data there)")


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


def write_atomic(path: Path, text: str) -> None:
    """A whole file by a rename: a reader, a kill or a racing writer (process or thread) never sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
