"""A dense index: one unit-length vector per unit of a Lucene index (its title and lead), built resumably beside it."""
from __future__ import annotations

import itertools
import json
import re
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from frames_agent.core.bounded import load_file
from frames_agent.core.errors import RetrievalError
from frames_agent.retrieval.dense.encoder import DEFAULT_MAX_TOKENS, Encoder, unit_text

DENSE_FORMAT = 1
PART_DOCS = 4096  # units encoded between checkpoints: an interrupted build loses at most this much work (~1 min)
_MANIFEST, _VECTORS, _IDS, _BUILDING = "manifest.json", "vectors.npy", "ids.json", "building.json"
# Query-by-corpus products are done in slices so a large corpus never needs a float32 copy of all its vectors.
_SLICE = 65536
_IN_MEMORY = 64 * 2**20  # vector components kept as float32 in memory (256 MB); larger corpora are searched in slices


class DenseIndex:
    """Vectors of an index's units (float16 on disk) searched by inner product (= cosine: rows are unit length)."""

    def __init__(self, vectors: np.ndarray, ids: list[str], meta: dict | None = None) -> None:
        if len(vectors) != len(ids):
            raise RetrievalError(f"dense index holds {len(vectors)} vectors for {len(ids)} ids")
        self.vectors, self.ids, self.meta = vectors, ids, dict(meta or {})
        self._full: np.ndarray | None = None

    @classmethod
    def load(cls, directory: Path) -> DenseIndex:
        """The finished dense index in directory (mmap'd: opening costs no memory until searched)."""
        meta = finished(directory)
        if meta is None:
            raise RetrievalError(f"no finished dense index at {directory}: build it with `python cli.py index dense`")
        vectors = np.load(directory / _VECTORS, mmap_mode="r")
        ids = json.loads((directory / _IDS).read_text(encoding="utf-8"))
        return cls(vectors, ids, meta)

    def search(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """For each query vector, the k nearest units as (id, cosine), best first."""
        k = min(int(k), len(self.ids))
        if k <= 0 or len(queries) == 0:
            return [[] for _ in range(len(queries))]
        q = np.asarray(queries, dtype=np.float32)
        if self._full is None and self.vectors.size <= _IN_MEMORY:
            self._full = np.asarray(self.vectors, dtype=np.float32)  # converting per search cost more than the product
        if self._full is not None:
            scores = q @ self._full.T
        else:
            scores = np.concatenate([q @ np.asarray(self.vectors[i:i + _SLICE], dtype=np.float32).T
                                     for i in range(0, len(self.ids), _SLICE)], axis=1)
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        out = []
        for row, cand in zip(scores, top):
            best = sorted(cand, key=lambda j: (-row[j], j))
            out.append([(self.ids[j], float(row[j])) for j in best])
        return out


def dense_dir(fingerprint: str, encoder: Encoder) -> Path:
    """Where the dense index of a Lucene index's content lives: under the cache, by content id and encoder."""
    from frames_agent.core.paths import cache_dir

    slug = re.sub(r"[^A-Za-z0-9.]+", "-", f"{fingerprint}-{encoder.name}").strip("-").lower()
    length = getattr(encoder, "max_tokens", None)
    return cache_dir() / "dense" / f"{slug}{f'-{length}' if length else ''}"


def finished(directory: Path, identity: dict | None = None) -> dict | None:
    """The manifest of a finished dense index (of this format and identity, when one is given), or None."""
    try:
        meta = load_file(Path(directory) / _MANIFEST)
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("complete") is not True:
        return None
    wanted = {"format": DENSE_FORMAT, **identity} if identity is not None else {}
    return meta if all(meta.get(k) == v for k, v in wanted.items()) else None


def build_dense(units: Iterable, total: int, encoder: Encoder, out_dir: Path, identity: dict,
                progress: bool = True) -> dict:
    """Encode every unit (a Document) into out_dir, resuming a build of the same `identity` (another's parts go)."""
    out_dir = Path(out_dir)
    meta = {"format": DENSE_FORMAT, **identity}
    done = finished(out_dir, identity)
    if done:
        return done
    parts = _parts_dir(out_dir, meta)
    length = getattr(encoder, "max_tokens", DEFAULT_MAX_TOKENS)
    from tqdm import tqdm

    with tqdm(total=total, unit="doc", desc="encoding units", disable=not progress, file=sys.stderr) as bar:
        pending = iter(units)
        for n, chunk in enumerate(iter(lambda: list(itertools.islice(pending, PART_DOCS)), [])):
            part = parts / f"part-{n:05d}.npy"
            if not part.exists():  # ids first, vectors last and by rename: a part whose .npy exists is whole
                vectors = encoder.encode([unit_text(d.title, d.text, length) for d in chunk])
                part.with_suffix(".ids.json").write_text(json.dumps([d.id for d in chunk]), encoding="utf-8")
                tmp = part.with_suffix(".tmp.npy")
                np.save(tmp, vectors.astype(np.float16))
                tmp.replace(part)
            bar.update(len(chunk))
    return _finish(parts, out_dir, meta)


def _parts_dir(out_dir: Path, meta: dict) -> Path:
    parts = out_dir.parent / f".{out_dir.name}.parts"
    try:
        started = load_file(parts / _BUILDING)
    except (OSError, ValueError):
        started = None
    if started != meta:  # parts of another index or encoder: start over
        shutil.rmtree(parts, ignore_errors=True)
        parts.mkdir(parents=True)
        (parts / _BUILDING).write_text(json.dumps(meta), encoding="utf-8")
    return parts


def _finish(parts: Path, out_dir: Path, meta: dict) -> dict:
    files = sorted(parts.glob("part-*[0-9].npy"))
    vectors = np.concatenate([np.load(f) for f in files]) if files else np.zeros((0, 0), dtype=np.float16)
    ids = [i for f in files for i in json.loads(f.with_suffix(".ids.json").read_text(encoding="utf-8"))]
    work = out_dir.parent / f".{out_dir.name}.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    np.save(work / _VECTORS, vectors)
    (work / _IDS).write_text(json.dumps(ids), encoding="utf-8")
    manifest = {**meta, "complete": True, "docs": len(ids), "dim": int(vectors.shape[1]) if len(ids) else 0}
    (work / _MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    shutil.rmtree(out_dir, ignore_errors=True)
    work.replace(out_dir)
    shutil.rmtree(parts, ignore_errors=True)
    return manifest

