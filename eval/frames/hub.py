"""FRAMES from the Hugging Face hub (`--data hf:<dataset>`): online when the hub answers, else from the local
cache at once, instead of half a minute of retry messages."""
from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from frames_agent.eval.errors import DataError, MissingExtraError

DEFAULT_DATASET = "google/frames-benchmark"
PROBE_SECONDS = 3.0


def hub_rows(name: str) -> list[dict]:
    """Rows of the dataset's test split; a one-line DataError when it can be neither fetched nor found cached."""
    try:
        import datasets  # only users of hf: data need it
    except ImportError as exc:
        raise MissingExtraError("hf: data needs the `datasets` package: pip install 'frames-agent[hf]'") from exc
    online = hub_reachable()
    try:
        with _offline(not online), _quiet():
            loaded = datasets.load_dataset(name or DEFAULT_DATASET, split="test")
    except Exception as exc:  # offline, unknown dataset, hub errors: all one line for the user
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        why = "needs internet" if online else "the hub is unreachable and no cached copy was found"
        raise DataError(f"cannot load Hugging Face dataset {name!r} ({why}): {first}") from exc
    return [dict(row) for row in loaded]


def hub_reachable(timeout: float = PROBE_SECONDS) -> bool:
    """Whether a TCP connection to the hub's endpoint opens within timeout."""
    try:
        from huggingface_hub import constants

        endpoint = urlsplit(constants.ENDPOINT)
    except (ImportError, AttributeError, ValueError):
        endpoint = urlsplit("https://huggingface.co")
    try:
        with socket.create_connection((endpoint.hostname or "huggingface.co", endpoint.port or 443), timeout=timeout):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def _offline(offline: bool) -> Iterator[None]:
    """The hub libraries' offline switches, for this call only (the environment is left alone)."""
    modules = [_module("huggingface_hub.constants"), _module("datasets.config")] if offline else []
    saved = [(m, m.HF_HUB_OFFLINE) for m in modules if m is not None and hasattr(m, "HF_HUB_OFFLINE")]
    for module, _ in saved:
        module.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for module, value in saved:
            module.HF_HUB_OFFLINE = value


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    loggers = [logging.getLogger(n) for n in ("huggingface_hub", "datasets", "fsspec")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _module(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        return None
