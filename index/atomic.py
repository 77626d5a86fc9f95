"""Directory operations that keep an index usable while it is rebuilt: one builder at a time, work in a partial
directory, swap it in with renames, clean up what crashed builds left."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from pathlib import Path

from frames_agent.core.paths import write_atomic
from frames_agent.index.errors import CorpusError


def swap_in(new: Path, out_dir: Path) -> None:
    """Replace out_dir with new using renames, so readers never see a partial directory at out_dir."""
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    if out_dir.exists():
        os.replace(out_dir, old)
    os.replace(new, out_dir)
    shutil.rmtree(old, ignore_errors=True)


def remove_stale_partials(out_dir: Path) -> None:
    """Delete work directories left by builds that crashed (their process is gone)."""
    for path in out_dir.parent.glob(f".{out_dir.name}.partial-*"):
        pid = path.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def build_lock(out_dir: Path):
    """One builder per index at a time; a second one waits and then finds the index finished."""
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        handle = open(out_dir.parent / f".{out_dir.name}.lock", "w")  # noqa: SIM115 - held as the lock
    except OSError as exc:
        raise CorpusError(f"cannot write indexes under {out_dir.parent} ({exc.strerror or exc}); "
                          "set FRAMES_AGENT_INDEXES to a writable directory") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_json(path: Path, data: dict) -> None:
    """data as JSON at path, written atomically."""
    write_atomic(path, json.dumps(data, indent=2) + "\n")
