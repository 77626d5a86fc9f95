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


@pytest.fixture(autouse=True)
def no_load_seen(monkeypatch):
    """No load factor carried over from another test's estimate."""
    monkeypatch.setattr(est._Seen, "slower", None)


def _at_load(monkeypatch, others: float, cores: int = 2) -> None:
    """The machine as load() sees it: `others` cores' worth of other work, no real sampling."""
    from frames_agent.agent.llm.providers import local

    monkeypatch.setattr(local, "cores", lambda: cores)
    monkeypatch.setattr(local, "busy_cores", lambda sample=0.25: min(others, cores))
    monkeypatch.setattr(est, "load_average", lambda: others)


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
    monkeypatch.setattr(est, "measured_rates", lambda model: None)
    _at_load(monkeypatch, 0.0)
    idle = est.estimate(_settings(), AgentConfig(), 60, 1)
    _at_load(monkeypatch, 1.5)
    busy = est.estimate(_settings(), AgentConfig(), 60, 1)
    assert "the machine is busy now (~1.5 cores' worth of other work on 2 cores): counted as 1.8× slower" in busy
    seconds = [_seconds(line) for line in (idle, busy)]
    assert seconds[1] == pytest.approx(1.75 * seconds[0], rel=0.02)


def test_the_load_factor_grows_with_the_load_without_a_cap(monkeypatch):
    factors = []
    for others in (0.0, 2.0, 3.5, 6.0, 14.0):
        _at_load(monkeypatch, others)
        factors.append(est.load()[0])
    # Fair shares of 2 cores: the run's 2 threads against the others' runnable ones (it once stopped at 4x).
    assert factors == [1.0, 2.0, 2.75, 4.0, 8.0]


def test_rates_measured_on_a_busy_machine_count_the_load_once(tmp_path, monkeypatch):
    """A run at load 3.5 recorded its (slow) rates; the next estimate at that load says what the run took, not
    that time scaled by the load again ("roughly 61 min" for 2 questions)."""
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path))
    monkeypatch.setattr(est, "index_build_seconds", lambda settings: None)
    model, settings = "local:qwen2.5-coder-1.5b", _settings(tools="crag")  # no index to open: calls alone
    calls = [CallTiming(node="plan", prompt_tokens=700, completion_tokens=70, prompt_seconds=20.0,
                        generation_seconds=10.0)] * 3  # 35 prompt and 7 output tokens/s, as measured under the load
    _at_load(monkeypatch, 3.5)
    est.estimate(settings, AgentConfig(), 2, 1)  # the run's estimate measures the load ...
    est.record_rates(model, calls)  # ... and its rates are kept as on an idle machine
    assert est.measured_rates(model) == (pytest.approx(35 * 2.75, abs=0.1), pytest.approx(7 * 2.75, abs=0.1))
    busy = est.estimate(settings, AgentConfig(), 2, 1)
    # The same rates measured on an idle machine, estimated on an idle machine: the same time.
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "idle"))
    _at_load(monkeypatch, 0.0)
    est.estimate(settings, AgentConfig(), 2, 1)
    est.record_rates(model, calls)
    assert est.measured_rates(model) == (35.0, 7.0)
    idle = est.estimate(settings, AgentConfig(), 2, 1)
    assert _seconds(busy) == pytest.approx(_seconds(idle), rel=0.02)


def test_every_kind_of_model_counts_opening_the_index(monkeypatch):
    monkeypatch.setattr(est, "index_build_seconds", lambda settings: None)
    monkeypatch.setattr(est, "measured_rates", lambda model: None)
    _at_load(monkeypatch, 0.0)
    for model in ("openai:gpt-4o-mini", "local:qwen2.5-coder-1.5b"):
        wiki = _seconds(est.estimate(_settings(model=model), AgentConfig(), 1, 8))
        crag = _seconds(est.estimate(_settings(model=model, tools="crag"), AgentConfig(), 1, 8))
        assert wiki - crag == pytest.approx(est.OPEN_SECONDS, abs=1), model


def _seconds(line: str) -> float:
    value, unit = line.split("roughly ")[1].split(" ")[:2]
    return float(value) * {"s": 1, "min": 60, "h": 3600}[unit]


def test_the_run_re_estimates_after_its_first_question(tmp_path, tiny_retriever):
    _, lines = run(tmp_path, tiny_retriever, limit=3)
    again = [line for line in lines if line.startswith("re-estimate:")]
    assert len(again) == 1 and "for the 2 question(s) left" in again[0] and "measured on the first" in again[0]


def test_the_re_estimate_waits_for_a_question_not_served_from_the_call_cache(tmp_path, tiny_retriever):
    from frames_agent.agent.llm import with_cache
    from tests.eval.frames.test_runner import builder

    build = builder(tiny_retriever, llm=lambda scripted: with_cache(scripted, tmp_path / "calls.sqlite"))

    run(tmp_path, tiny_retriever, build=build, limit=1, concurrency=1, retrieval_only=True, out=str(tmp_path / "a"))
    outcome, lines = run(tmp_path, tiny_retriever, build=build, limit=3, concurrency=1, retrieval_only=True,
                         out=str(tmp_path / "b"))
    records = (outcome.out / "results.jsonl").read_text().splitlines()
    assert '"from_cache":true' in records[0] and '"from_cache":true' not in records[1]
    again = [line for line in lines if line.startswith("re-estimate:")]
    assert len(again) == 1 and "for the 1 question(s) left" in again[0]
    assert "measured on the first not served from the call cache" in again[0]
