"""A run directory: config.json (what was run), results.jsonl (one line per finished question), resumable."""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from retrieval.errors import FramesAgentError

CONFIG_FILE, RESULTS_FILE, LOCK_FILE = "config.json", "results.jsonl", ".lock"


def _flatten(value: object, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        flat: dict[str, object] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}{key}."))
        return flat
    return {prefix.rstrip("."): value}


class RunDir:
    """OUT: config.json (what was run), results.jsonl (one line per finished question), summary and report."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.results = self.path / RESULTS_FILE

    @contextlib.contextmanager
    def locked(self):
        """Hold OUT for this process; a second run writing into it at the same time is refused."""
        import fcntl

        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / LOCK_FILE, "w") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise FramesAgentError(f"another run is writing to {self.path}; wait for it or use another --out") from None
            yield self

    def read_config(self) -> dict | None:
        """config.json, or None for a fresh directory."""
        path = self.path / CONFIG_FILE
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise FramesAgentError(f"{path} is unreadable ({exc}); delete the run directory or use another --out") from exc

    def check_config(self, config: dict) -> None:
        """Record config on first use; refuse (naming the field) to mix results of a different configuration."""
        old = self.read_config()
        if old is None:
            self.path.mkdir(parents=True, exist_ok=True)
            (self.path / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
            return
        before, now = _flatten(old), _flatten(json.loads(json.dumps(config)))
        for key in sorted(set(before) | set(now)):
            if not key.startswith("info.") and before.get(key) != now.get(key):
                raise FramesAgentError(
                    f"{self.path} holds results of a different configuration ({key} was {before.get(key)!r}, "
                    f"now {now.get(key)!r}); refusing to mix them: use another --out or delete that directory")
        if before != now:  # only info changed: keep the record current
            (self.path / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

    def load_records(self) -> tuple[dict[str, dict], list[str]]:
        """Finished records by question id (a later line wins); a torn last line from a kill is dropped."""
        if not self.results.exists():
            return {}, []
        data = self.results.read_bytes()
        lines = data.split(b"\n")
        records: dict[str, dict] = {}
        good, notes = [], []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                records[str(record["id"])] = record
                good.append(line)
            except (ValueError, KeyError, TypeError):
                where = "the last line (cut off by a kill)" if number == len(lines) else f"line {number}"
                notes.append(f"dropped {where} of {self.results}: not a complete record; that question runs again")
        if notes or (data and not data.endswith(b"\n")):
            self._rewrite(good)
        return records, notes

    def _rewrite(self, lines: list[bytes]) -> None:
        tmp = self.results.with_suffix(".jsonl.tmp")
        tmp.write_bytes(b"".join(line + b"\n" for line in lines))
        os.replace(tmp, self.results)

    def append(self, record: dict) -> None:
        """One finished question, written and flushed at once so a kill cannot lose it."""
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self.results.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
