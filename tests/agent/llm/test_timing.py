"""Per-call timing: the runtime's own split of prompt reading and generation reaches the run's records."""
from __future__ import annotations

from frames_agent.agent.llm import CallTiming, UsageTracker, by_node, resolve_model
from frames_agent.agent.llm.timing import runtime_timings
from tests.agent.llm.providers.test_openai_compat import FakeOpenAI, completion


def llama_reply(text: str, *, prompt: int, cached: int, out: int, prompt_ms: float, gen_ms: float) -> dict:
    """A llama.cpp server reply: OpenAI fields plus its `timings`."""
    body = completion(text, prompt_tokens=prompt, completion_tokens=out)
    body["timings"] = {"cache_n": cached, "prompt_n": prompt - cached, "prompt_ms": prompt_ms,
                       "predicted_n": out, "predicted_ms": gen_ms}
    return body


def test_a_llama_cpp_reply_gives_read_and_cached_tokens_and_both_rates():
    fake = FakeOpenAI()
    try:
        fake.script.append((200, llama_reply("hi", prompt=1000, cached=600, out=50, prompt_ms=8000, gen_ms=5000), {}, 0))
        llm = resolve_model("openai:fake", base_url=fake.url, env={"OPENAI_API_KEY": "x"})
        tracker = UsageTracker(node="judge")
        llm.invoke("hello", config={"callbacks": [tracker]})
    finally:
        fake.close()
    [call] = tracker.calls
    assert (call.node, call.prompt_tokens, call.cached_tokens, call.read_tokens) == ("judge", 1000, 600, 400)
    assert (call.prompt_seconds, call.generation_seconds) == (8.0, 5.0)
    assert (by_node([call])["judge"].prompt_tps, by_node([call])["judge"].generation_tps) == (50.0, 10.0)
    assert call.finish_reason == "stop" and call.seconds > 0


def test_a_provider_without_timings_still_records_tokens_and_wall_time():
    fake = FakeOpenAI()
    try:
        fake.script.append((200, completion("hi", prompt_tokens=30, completion_tokens=4), {}, 0))
        llm = resolve_model("openai:fake", base_url=fake.url, env={"OPENAI_API_KEY": "x"})
        tracker = UsageTracker()
        llm.invoke("hello", config={"callbacks": [tracker]})
    finally:
        fake.close()
    [call] = tracker.calls
    assert (call.prompt_tokens, call.completion_tokens, call.prompt_seconds) == (30, 4, None)
    assert by_node([call])["other"].prompt_tps is None


def test_by_node_sums_calls_and_rates_over_timed_calls_only():
    calls = [CallTiming(node="plan", prompt_tokens=1000, cached_tokens=500, completion_tokens=100, seconds=20,
                        prompt_seconds=10, generation_seconds=10),
             CallTiming(node="plan", prompt_tokens=1000, cached_tokens=900, completion_tokens=100, seconds=12,
                        prompt_seconds=2, generation_seconds=10),
             CallTiming(node="answer", prompt_tokens=300, completion_tokens=20, seconds=3)]
    nodes = by_node(calls)
    assert nodes["plan"].calls == 2 and nodes["plan"].read_tokens == 600 and nodes["plan"].seconds == 32
    assert nodes["plan"].prompt_tps == 50.0 and nodes["plan"].generation_tps == 10.0
    assert nodes["answer"].prompt_tps is None and nodes["answer"].read_tokens == 300


def test_runtime_timings_ignores_missing_or_odd_metadata():
    assert runtime_timings(None) == {"finish_reason": None}
    assert runtime_timings({"timings": "garbled", "finish_reason": "length"}) == {"finish_reason": "length"}
