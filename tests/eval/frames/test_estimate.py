"""A run's up-front estimate: the index build when one is needed, this machine's measured rates, the planning calls
the config makes, and the re-estimate after the first question."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from frames_agent.agent import AgentConfig
from frames_agent.agent.llm.timing import CallTiming
from frames_agent.eval.frames import estimate as est
from frames_agent.index import build
from tests.eval.frames.test_runner import run


def _settings(**overrides) -> SimpleNamespace:
    return SimpleNamespace(**{"retrieval_only": True, "n": 5, "system": "multistep", "judge": "none", "judge2": None,
                              "model": "local:qwen2.5-coder-1.5b", "index": "default", "tools": "wiki", **overrides})


@pytest.mark.lucene  # builds the default index
def test_the_estimate_includes_building_a_missing_default_index(tmp_path, monkeypatch, tiny_corpus_file):
    monkeypatch.setenv("FRAMES_AGENT_INDEXES", str(tmp_path / "indexes"))
    monkeypatch.setattr(build, "default_spec", lambda name="default": build.make_spec([tiny_corpus_file]))
    monkeypatch.setattr(est, "BUILD_BYTES_PER_SECOND", tiny_corpus_file.stat().st_size / 600)  # 10 min
    line = est.estimate(_settings(), AgentConfig(), 3, 1)
    assert "includes ~10 min to build the default index first" in line
    assert est.index_build_seconds(_settings(index=str(tmp_path / "own"))) is None, "only the default is built"
    # Built already: nothing to add.
    spec = build.default_spec()
    build.build_index(spec, build.default_index_dir("default", spec), name="default", threads=1, progress=False)
    assert est.index_build_seconds(_settings()) is None and "build" not in est.estimate(_settings(), AgentConfig(), 3, 1)


def test_a_bm25_run_without_a_model_says_the_build_too(tmp_path, monkeypatch, tiny_corpus_file):
    monkeypatch.setenv("FRAMES_AGENT_INDEXES", str(tmp_path / "indexes"))
    monkeypatch.setattr(build, "default_spec", lambda name="default": build.make_spec([tiny_corpus_file]))
    monkeypatch.setattr(est, "BUILD_BYTES_PER_SECOND", tiny_corpus_file.stat().st_size / 120)
    line = est.estimate(_settings(system="bm25"), AgentConfig(), 3, 1)
    assert "no LLM calls" in line and "roughly 2 min" in line and "build the default index" in line


def test_measured_rates_replace_the_constants(tmp_path, monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path))
    monkeypatch.setattr(est, "load", lambda: (1.0, ""))
    monkeypatch.setattr(est, "index_build_seconds", lambda settings: None)
    before = est.estimate(_settings(), AgentConfig(), 10, 1)
    assert "rates measured on 2 idle cores" in before
    calls = [CallTiming(node="plan", prompt_tokens=700, completion_tokens=70, prompt_seconds=20.0,
                        generation_seconds=10.0)] * 3
    est.record_rates("local:qwen2.5-coder-1.5b", calls)
    assert est.measured_rates("local:qwen2.5-coder-1.5b") == (35.0, 7.0)
    after = est.estimate(_settings(), AgentConfig(), 10, 1)
    assert "~35 prompt and ~7 output tokens/s, this machine's measured rates" in after
    slow = [CallTiming(node="plan", prompt_tokens=700, completion_tokens=70, prompt_seconds=70.0,
                       generation_seconds=35.0)]
    est.record_rates("local:qwen2.5-coder-1.5b", slow)  # a run on a busy machine keeps the faster rates
    assert est.measured_rates("local:qwen2.5-coder-1.5b") == (35.0, 7.0)
    (tmp_path / est.RATES_FILE).write_text("{not json")
    assert est.measured_rates("local:qwen2.5-coder-1.5b") is None  # a damaged file only loses the rates


def test_skipped_plan_calls_shorten_the_estimate(monkeypatch):
    monkeypatch.setattr(est, "load", lambda: (1.0, ""))
    monkeypatch.setattr(est, "index_build_seconds", lambda settings: None)
    monkeypatch.setattr(est, "measured_rates", lambda model: None)
    every = est.estimate(_settings(), AgentConfig(plan_calls="every_step"), 60, 1)
    when_new = est.estimate(_settings(), AgentConfig(plan_calls="when_new"), 60, 1)
    assert _seconds(when_new) < _seconds(every)


def test_a_busy_machine_is_said(monkeypatch):
    monkeypatch.setattr(est, "index_build_seconds", lambda settings: None)
    from frames_agent.agent.llm.providers import local

    monkeypatch.setattr(est, "measured_rates", lambda model: None)
    monkeypatch.setattr(local, "cores", lambda: 2)
    monkeypatch.setattr(local, "busy_cores", lambda sample=0.25: 0.0)
    idle = est.estimate(_settings(), AgentConfig(), 60, 1)
    monkeypatch.setattr(local, "busy_cores", lambda sample=0.25: 1.5)
    busy = est.estimate(_settings(), AgentConfig(), 60, 1)
    assert "the machine is busy now (~1.5 of 2 cores in use by other work): counted as 4.0× slower" in busy
    seconds = [_seconds(line) for line in (idle, busy)]
    assert seconds[1] > 3 * seconds[0]


def _seconds(line: str) -> float:
    value, unit = line.split("roughly ")[1].split(" ")[:2]
    return float(value) * {"s": 1, "min": 60, "h": 3600}[unit]


def test_the_run_re_estimates_after_its_first_question(tmp_path, tiny_retriever):
    _, lines = run(tmp_path, tiny_retriever, limit=3)
    again = [line for line in lines if line.startswith("re-estimate:")]
    assert len(again) == 1 and "for the 2 question(s) left" in again[0] and "measured on the first" in again[0]


def test_the_re_estimate_waits_for_a_question_not_served_from_the_call_cache(tmp_path, tiny_retriever):
    from frames_agent.agent.llm import cached
    from tests.eval.frames.test_runner import builder

    build = builder(tiny_retriever, llm=lambda scripted: cached(scripted, tmp_path / "calls.sqlite"))

    run(tmp_path, tiny_retriever, build=build, limit=1, concurrency=1, retrieval_only=True, out=str(tmp_path / "a"))
    outcome, lines = run(tmp_path, tiny_retriever, build=build, limit=3, concurrency=1, retrieval_only=True,
                         out=str(tmp_path / "b"))
    records = (outcome.out / "results.jsonl").read_text().splitlines()
    assert '"from_cache":true' in records[0] and '"from_cache":true' not in records[1]
    again = [line for line in lines if line.startswith("re-estimate:")]
    assert len(again) == 1 and "for the 1 question(s) left" in again[0]
    assert "measured on the first not served from the call cache" in again[0]
