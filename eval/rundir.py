"""A run directory, shared by FRAMES and CRAG: config.json (what was run), results.jsonl (one typed record per line),
summary and report written atomically; locked while a run writes, resumable after a kill."""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from frames_agent.core.bounded import OutOfBounds, load_file, read_file
from frames_agent.core.bounded import loads as bounded_loads
from frames_agent.core.errors import validation_error
from frames_agent.core.paths import write_atomic
from frames_agent.eval.errors import EvalError

CONFIG_FILE, RESULTS_FILE, SUMMARY_FILE, LOCK_FILE = "config.json", "results.jsonl", "summary.json", ".lock"
# A run's identity, in config.json's info and on every results line, so a line copied from another run is told apart.
RUN_KEY = "run_id"
MAX_CONFIG_BYTES = 1 << 20  # a config is a few KB
MAX_RESULTS_BYTES = 1 << 30  # a full FRAMES run with every trace is under 100 MB
R = TypeVar("R", bound=BaseModel)


def _flatten(value: object, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        flat: dict[str, object] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}{key}."))
        return flat
    return {prefix.rstrip("."): value}


def file_fingerprint(path: Path) -> str:
    """sha256 of a file's bytes (short form), the identity of a dataset whatever its path."""
    with Path(path).open("rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()[:16]


def read_config(path: Path) -> dict | None:
    """config.json of the run directory at path, or None when there is none."""
    return RunDir[Any](path, dict, str).read_config()


def _run_id(config: dict) -> str:
    """A run's identity when its config is first written: the digest of its settings."""
    settings = {k: v for k, v in config.items() if k != "info"}
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


def _unwritable(path: Path, exc: OSError) -> Exception:
    """An unwritable run directory as one line (a full disk stays an OSError for the command line's message)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return exc
    return EvalError(f"cannot write to {path} ({exc.strerror or exc}); copy the run somewhere writable or use "
                     "another --out")


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        where, message = validation_error(exc)
        return f"not a valid record ({where + ': ' if where else ''}{message})"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg})"
    return f"not a record ({exc})"


class RunDir(Generic[R]):
    """OUT: config.json, results.jsonl of `parse`d records keyed by `key` (a later line wins), summary, report."""

    def __init__(self, path: Path, parse: Callable[[dict], R], key: Callable[[R], str]) -> None:
        self.path = Path(path)
        self.results = self.path / RESULTS_FILE
        self.parse, self.key = parse, key
        self._run: str | None = None

    def make(self) -> None:
        """Create OUT (and its parents); a path that cannot hold a directory is a one-line EvalError."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # /proc/x, a read-only disk, a file in the way, no permission
            raise EvalError(f"cannot use {self.path} as the run directory ({exc.strerror or exc}); "
                            "use another --out") from None

    @contextlib.contextmanager
    def locked(self):
        """Hold OUT for this process; a second run writing into it at the same time is refused."""
        import fcntl

        self.make()
        try:
            handle = open(self.path / LOCK_FILE, "w")  # noqa: SIM115 (closed by the with below)
        except OSError as exc:
            raise _unwritable(self.path, exc) from None
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise EvalError(f"another run is writing to {self.path}; wait for it or use another --out") from None
            yield self

    def read_config(self) -> dict | None:
        """config.json, or None for a fresh directory."""
        path = self.path / CONFIG_FILE
        if not path.exists():
            return None
        try:
            config = load_file(path, MAX_CONFIG_BYTES)  # a regular file, bounded in size and nesting
        except (OSError, ValueError) as exc:
            raise EvalError(f"{path} is unreadable ({exc}); delete the run directory or use another --out") from None
        if not isinstance(config, dict) or not isinstance(config.get("info", {}), dict):
            raise EvalError(f"{path} is not a run's config (a JSON object); delete the run directory or use "
                            "another --out")
        return config

    def check_config(self, config: dict, unknown: tuple[str, ...] = ()) -> None:
        """Refuse, naming the field and both values, to mix results of another config (keys in `unknown` skipped)."""
        old = self.read_config()
        if old is None:
            if self.results.exists() and self.results.stat().st_size:
                raise EvalError(f"{self.path} has {RESULTS_FILE} but no {CONFIG_FILE}, so its configuration is "
                                "unknown; refusing to add to it: use another --out or delete that directory")
            return
        before, now = _flatten(old), _flatten(json.loads(json.dumps(config)))
        for key in sorted(set(before) | set(now)):
            if key.startswith("info.") or key in unknown or self._retired(key, before.get(key), key in now):
                continue
            if before.get(key) != now.get(key):
                raise EvalError(
                    f"{self.path} holds results of a different configuration ({key} was {before.get(key)!r}, "
                    f"now {now.get(key)!r}); refusing to mix them: use another --out or delete that directory")

    def _retired(self, key: str, value: object, still: bool) -> bool:
        """Whether `key` is a retired agent setting recorded at today's behaviour (another value is refused)."""
        from frames_agent.agent.config import retired
        from frames_agent.agent.errors import AgentError

        if still or not key.startswith("agent."):
            return False
        try:
            return retired(key.removeprefix("agent."), value)
        except AgentError as exc:
            raise EvalError(f"{self.path} was run with {exc}, or use another --out") from None

    def write_config(self, config: dict) -> dict:
        """Record config (its info merged into the old one's) once everything resolved; what was written."""
        old = self.read_config() or {}
        merged = {**old, **config, "info": {**old.get("info", {}), **config.get("info", {})}}
        merged["info"][RUN_KEY] = self._run = old.get("info", {}).get(RUN_KEY) or _run_id(merged)
        self.make()
        self.write(CONFIG_FILE, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
        return merged

    def write(self, name: str, text: str) -> None:
        """One output file (summary.json, report.md) written atomically."""
        try:
            write_atomic(self.path / name, text)
        except OSError as exc:
            raise _unwritable(self.path, exc) from None

    def load_records(self) -> tuple[dict[str, R], list[str]]:
        """Records by key (a later line wins); only a torn last line is dropped, any other bad line raises."""
        if not self.results.exists():
            return {}, []
        try:
            data = read_file(self.results, MAX_RESULTS_BYTES)  # a regular file (no FIFO, no /dev/zero), bounded
        except (OSError, OutOfBounds) as exc:
            raise EvalError(f"cannot read {self.results} ({exc}); the file is left as it is") from None
        run = (self.read_config() or {}).get("info", {}).get(RUN_KEY)
        lines = data.split(b"\n")
        torn = not data.endswith(b"\n") and bool(data)
        records: dict[str, R] = {}
        notes: list[str] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = bounded_loads(line)  # nesting bounded: a 100,000-deep line is one bad line, not a crash
                stamp = row.pop(RUN_KEY, None) if isinstance(row, dict) else None
                record = self.parse(row)
            except OutOfBounds as exc:
                raise EvalError(f"{self.results} line {number}: {exc}; the file is left as it is: fix or delete "
                                "that line") from None
            except (ValueError, TypeError) as exc:
                if torn and number == len(lines):
                    notes.append(f"dropped the last line of {self.results} (cut off by a kill); that item runs again")
                    with self.results.open("r+b") as handle:
                        handle.truncate(len(data) - len(line))
                    break
                raise EvalError(f"{self.results} line {number}: {_why(exc)}; the file is left as it is: fix or "
                                "delete that line") from None
            if run is not None and stamp is not None and stamp != run:
                raise EvalError(f"{self.results} line {number} comes from another run's configuration ({RUN_KEY} "
                                f"{stamp}, this run's is {run}); refusing to mix them: delete the lines of that run")
            records[self.key(record)] = record
        else:
            if torn:
                with self.results.open("ab") as handle:  # a complete last record that lacks its newline
                    handle.write(b"\n")
        return records, notes

    def append(self, record: BaseModel) -> None:
        """One finished record, written and flushed at once so a kill cannot lose it; stamped with the run's id."""
        if self._run is None:
            self._run = (self.read_config() or {}).get("info", {}).get(RUN_KEY)
        line = record.model_dump_json()
        if self._run and line.endswith("}") and line != "{}":
            line = f'{line[:-1]},"{RUN_KEY}":{json.dumps(self._run)}}}'
        line += "\n"
        with self.results.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
