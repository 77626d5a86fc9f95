"""The honest split: every question is in `tune` (~60%) or `check` (~40%) by a SHA-256 of its normalised text, stable
across runs, machines, row order and ids (docs/evaluation.md#the-honest-split)."""
from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from typing import TypeVar

from frames_agent.core.errors import UsageError

SPLITS = ("all", "tune", "check")
TUNE_SHARE = 0.6  # share of the hash space that is `tune`
_SCALE = 1 << 64

Q = TypeVar("Q")


def normalise(text: str) -> str:
    """The question text the split hashes: NFKC, case folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def split_of(question: str) -> str:
    """'tune' or 'check' for a question's text."""
    digest = hashlib.sha256(normalise(question).encode("utf-8")).digest()
    return "tune" if int.from_bytes(digest[:8], "big") < TUNE_SHARE * _SCALE else "check"


def check_split(split: str) -> str:
    """The split name itself, or a one-line UsageError."""
    if split not in SPLITS:
        raise UsageError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}")
    return split


def in_split(question: str, split: str) -> bool:
    """Whether a question's text belongs to `split` ('all' holds every question)."""
    return check_split(split) == "all" or split_of(question) == split


def select(questions: Iterable[Q], split: str, text=lambda q: q.prompt) -> list[Q]:
    """The questions of `split`, in their given order (`text` reads a question's text; default `.prompt`)."""
    return [q for q in questions if in_split(text(q), split)]


def refuse_check(split: str, command: str, report_only: bool = False) -> None:
    """A command that chooses settings never sees `check` questions, unless it only reports."""
    if check_split(split) == "check" and not report_only:
        raise UsageError(f"{command} chooses settings, so it refuses --split check (the held-out questions); "
                         "use --split tune" + (", or --report-only to only measure" if command != "tune" else ""))
