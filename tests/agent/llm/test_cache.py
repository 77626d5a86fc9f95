"""The persistent LLM call cache: hits, misses, keys, async and concurrent callers."""
from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from frames_agent.agent.llm import UsageTracker, resolve_model, structured
from frames_agent.agent.llm.cache import LLMCallCache, with_cache
from frames_agent.agent.llm.errors import LLMError
from frames_agent.agent.llm.testing import ScriptedLLM
from tests.agent.llm.providers.test_openai_compat import FakeOpenAI, completion
from tests.agent.llm.test_calls import Queries, fallback


class Counting(ScriptedLLM):
    """Replies with the prompt's length and reports provider usage."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self._next(messages, kwargs)
        text = f"reply to {messages[-1].content}"
        msg = AIMessage(content=text, usage_metadata={"input_tokens": 10, "output_tokens": 3, "total_tokens": 13})
        return ChatResult(generations=[ChatGeneration(message=msg)])

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        return self._generate(messages, stop, **kwargs)


def counting() -> Counting:
    return Counting(responder=lambda m: "unused")


def test_second_identical_call_is_a_hit(tmp_path):
    llm = with_cache(counting(), tmp_path / "c.sqlite")
    first, second = llm.invoke("q"), llm.invoke("q")
    assert first.content == second.content == "reply to q"
    assert len(llm.calls) == 1
    assert second.response_metadata["cache_hit"] and not first.response_metadata.get("cache_hit")


def test_cache_persists_across_instances_and_processes_share_the_file(tmp_path):
    path = tmp_path / "c.sqlite"
    with_cache(counting(), path).invoke("q")
    fresh = counting()
    assert with_cache(fresh, path).invoke("q").content == "reply to q"
    assert fresh.calls == []


def test_key_covers_messages_and_parameters(tmp_path):
    llm = with_cache(Counting(responder=lambda m: "unused", supports_json_schema=True), tmp_path / "c.sqlite")
    llm.invoke("a")
    llm.invoke("b")
    llm.invoke("a", stop=["\n"])
    llm.invoke("a", max_tokens=5)
    structured(llm, "a", Queries, fallback)
    assert len(llm.calls) == 5
    structured(llm, "a", Queries, fallback)
    assert len(llm.calls) == 5


def test_usage_tracker_sees_cache_hits_with_recorded_tokens(tmp_path):
    llm = with_cache(counting(), tmp_path / "c.sqlite")
    tracker = UsageTracker()
    for _ in range(3):
        llm.invoke("q", config={"callbacks": [tracker]})
    assert tracker.usage.calls == 3 and tracker.usage.cached_calls == 2
    assert tracker.usage.prompt_tokens == 30 and tracker.usage.completion_tokens == 9


def test_async_and_threaded_callers(tmp_path):
    llm = with_cache(counting(), tmp_path / "c.sqlite")

    async def run():
        return await asyncio.gather(*(llm.ainvoke(f"q{i % 4}") for i in range(16)))

    replies = asyncio.run(run())
    assert sorted({r.content for r in replies}) == [f"reply to q{i}" for i in range(4)]
    with ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(lambda i: llm.invoke(f"q{i % 4}").content, range(32)))
    assert texts == [f"reply to q{i % 4}" for i in range(32)]
    assert len(LLMCallCache(tmp_path / "c.sqlite")) == 4


def test_concurrent_writers_keep_the_first_answer(tmp_path):
    cache = LLMCallCache(tmp_path / "c.sqlite")
    barrier = threading.Barrier(6)

    def write(i):
        barrier.wait()
        cache.update("p", "llm", [ChatGeneration(message=AIMessage(content=f"answer {i}"))])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 1 and cache.lookup("p", "llm")[0].message.content.startswith("answer ")


def test_resolve_model_caches_by_spec_and_no_cache_bypasses(tmp_path, monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cache-key")
    fake = FakeOpenAI().add(200, completion("one")).add(200, completion("two"))
    try:
        assert resolve_model("openai:m", base_url=fake.url, cache=True).invoke("x").content == "one"
        assert resolve_model("openai:m", base_url=fake.url, cache=True).invoke("x").content == "one"
        assert resolve_model("openai:m", base_url=fake.url, cache=False).invoke("x").content == "two"
        assert len(fake.requests) == 2
    finally:
        fake.close()
    stored = tmp_path / "llm-cache" / "calls.sqlite"  # the default cache, under FRAMES_AGENT_CACHE
    assert stored.is_file() and b"sk-test-cache-key" not in stored.read_bytes()


def test_with_cache_false_is_the_model_itself():
    llm = counting()
    assert with_cache(llm, False) is llm
    with pytest.raises(LLMError, match="cannot open the LLM cache"):
        with_cache(llm, "/proc/definitely/not/writable/c.sqlite")
