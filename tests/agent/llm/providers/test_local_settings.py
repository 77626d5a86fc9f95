"""Local runtime settings reach llama.cpp's parameters (no model is loaded)."""
from __future__ import annotations

import pytest

from frames_agent.agent.llm.providers.local import LocalRuntime, RuntimePool, RuntimeSettings

xllamacpp = pytest.importorskip("xllamacpp")


def test_settings_map_onto_llama_cpp_params(tmp_path):
    settings = RuntimeSettings(threads=1, batch_threads=2, flash_attn="off", n_batch=1024, n_ubatch=256)
    params = LocalRuntime(tmp_path / "m.gguf", name="m", settings=settings)._params(xllamacpp)
    assert (params.cpuparams.n_threads, params.cpuparams_batch.n_threads) == (1, 2)
    assert params.flash_attn_type == xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED
    assert (params.n_batch, params.n_ubatch, params.cache_prompt) == (1024, 256, True)


def test_the_pool_keeps_one_runtime_per_model_and_settings(tmp_path):
    pool = RuntimePool(RuntimeSettings(flash_attn="off"))
    first = pool.get(tmp_path / "m.gguf", name="m")
    assert pool.get(tmp_path / "m.gguf", name="m") is first
    other = pool.get(tmp_path / "m.gguf", name="m", settings=RuntimeSettings(flash_attn="auto"))
    assert other is not first and other.settings.flash_attn == "auto"
    assert not first.started  # nothing loads until the first call


def test_generation_threads_follow_the_idle_cores(monkeypatch):
    from frames_agent.agent.llm.providers import local

    monkeypatch.delenv("FRAMES_AGENT_LLM_THREADS", raising=False)
    monkeypatch.setattr(local, "cores", lambda: 2)
    monkeypatch.setattr(local, "busy_cores", lambda sample=0.25: 0.1)
    assert RuntimeSettings().resolved_threads() == (2, 2)  # an idle machine: both cores generate
    monkeypatch.setattr(local, "busy_cores", lambda sample=0.25: 1.2)
    assert RuntimeSettings().resolved_threads() == (1, 2)  # other work holds a core: one thread, never stalled
    monkeypatch.setattr(local, "busy_cores", lambda sample=0.25: 3.0)
    assert RuntimeSettings().resolved_threads() == (1, 2)
    assert RuntimeSettings(threads=2).resolved_threads() == (2, 2)
    monkeypatch.setenv("FRAMES_AGENT_LLM_THREADS", "1")
    assert RuntimeSettings().resolved_threads() == (1, 1)


def test_busy_cores_reads_the_machine():
    from frames_agent.agent.llm.providers.local import busy_cores, cores

    assert 0.0 <= busy_cores(0.05) <= cores() + 0.01
