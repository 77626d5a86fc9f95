"""A persistent cache of LLM calls (sqlite) keyed by model, messages and parameters: a LangChain BaseCache set on one
model instance, safe across threads, tasks and processes (streamed calls bypass it, as in LangChain)."""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, messages_from_dict, messages_to_dict
from langchain_core.outputs import ChatGeneration, Generation

from frames_agent.agent.llm.errors import LLMError
from frames_agent.core.paths import cache_dir

SCHEMA = """CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, llm_string TEXT NOT NULL, generations TEXT NOT NULL, created REAL NOT NULL)"""


def cache_key(prompt: str, llm_string: str) -> str:
    """The row key of one call."""
    return hashlib.sha256(f"{llm_string}\x00{prompt}".encode()).hexdigest()


class LLMCallCache(BaseCache):
    """sqlite-backed BaseCache; first writer wins, so concurrent identical calls store one answer."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else cache_dir() / "llm-cache" / "calls.sqlite"
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connect().execute(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise LLMError(f"cannot open the LLM cache {self.path}: {exc} (use --no-cache to run without)") from None

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:  # one connection per thread: sqlite connections are not shared across threads
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def lookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        """Cached generations of this call, marked cache_hit, or None."""
        row = self._connect().execute("SELECT generations FROM calls WHERE key = ?",
                                      (cache_key(prompt, llm_string),)).fetchone()
        return None if row is None else _decode(row[0])

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Store a call's generations (kept if another caller stored it first)."""
        self._connect().execute("INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?)",
                                (cache_key(prompt, llm_string), llm_string, _encode(return_val), time.time()))

    def clear(self, **kwargs: Any) -> None:
        """Forget every cached call."""
        self._connect().execute("DELETE FROM calls")

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM calls").fetchone()[0]


def _encode(generations: Sequence[Generation]) -> str:
    rows = []
    for gen in generations:
        message = gen.message if isinstance(gen, ChatGeneration) else AIMessage(content=gen.text)
        rows.append({"message": messages_to_dict([message.model_copy(update={"id": None})])[0],
                     "info": gen.generation_info})
    return json.dumps(rows, default=str)


def _decode(text: str) -> list[Generation]:
    generations: list[Generation] = []
    for row in json.loads(text):
        message = messages_from_dict([row["message"]])[0]
        message.response_metadata = {**message.response_metadata, "cache_hit": True}
        generations.append(ChatGeneration(message=message, generation_info=row.get("info")))
    return generations


def with_cache(llm: BaseChatModel, cache: LLMCallCache | str | Path | bool | None = True) -> BaseChatModel:
    """A copy of llm whose invoke/ainvoke calls go through a persistent cache (False: llm as is)."""
    if cache is False or cache is None:
        return llm
    store = cache if isinstance(cache, LLMCallCache) else LLMCallCache(None if cache is True else cache)
    return llm.model_copy(update={"cache": store})
