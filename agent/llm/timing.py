"""What LLM calls cost: calls and tokens per run, and per call (summed per node) tokens read, generated and their
rates."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from frames_agent.agent.llm.calls import message_text
from frames_agent.retrieval.tokens import count_tokens


class CallTiming(BaseModel):
    """One LLM call: tokens and seconds, with the runtime's own split into prompt reading and generation."""

    node: str = Field("", description="the graph node or role that made the call: plan, answer, judge, ...")
    prompt_tokens: int = 0
    cached_tokens: int = Field(0, description="prompt tokens the runtime reused from its prompt cache (not read)")
    completion_tokens: int = 0
    seconds: float = Field(0.0, description="wall time of the call as the caller saw it")
    prompt_seconds: float | None = Field(None, description="runtime time reading the prompt (llama.cpp timings)")
    generation_seconds: float | None = Field(None, description="runtime time generating (llama.cpp timings)")
    finish_reason: str | None = None
    from_cache: bool = Field(False, description="served from the on-disk call cache: it took no model time")

    @property
    def read_tokens(self) -> int:
        """Prompt tokens the runtime actually had to read."""
        return max(0, self.prompt_tokens - self.cached_tokens)


def _rate(tokens: int, seconds: float | None) -> float | None:
    return round(tokens / seconds, 2) if seconds and tokens else None


def runtime_timings(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """(cached_tokens, prompt_seconds, generation_seconds, finish_reason) from a reply's metadata (llama.cpp `timings`)."""
    metadata = metadata or {}
    fields: dict[str, Any] = {"finish_reason": metadata.get("finish_reason")}
    timings = metadata.get("timings")
    if isinstance(timings, Mapping):
        fields["cached_tokens"] = int(timings.get("cache_n") or 0)
        if timings.get("prompt_ms") is not None:
            fields["prompt_seconds"] = round(float(timings["prompt_ms"]) / 1000, 3)
        if timings.get("predicted_ms") is not None:
            fields["generation_seconds"] = round(float(timings["predicted_ms"]) / 1000, 3)
    return fields


class NodeTiming(BaseModel):
    """Calls of one node summed: how many, tokens, seconds, and overall rates."""

    calls: int = 0
    prompt_tokens: int = 0
    read_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    prompt_tps: float | None = None
    generation_tps: float | None = None


def by_node(calls: Iterable[CallTiming]) -> dict[str, NodeTiming]:
    """Per-node sums of calls, with rates over the calls whose runtime reported timings."""
    groups: dict[str, list[CallTiming]] = {}
    for call in calls:
        groups.setdefault(call.node or "other", []).append(call)
    return {node: _sum(items) for node, items in sorted(groups.items())}


def _sum(calls: list[CallTiming]) -> NodeTiming:
    timed = [c for c in calls if c.prompt_seconds is not None and c.generation_seconds is not None]
    return NodeTiming(
        calls=len(calls), prompt_tokens=sum(c.prompt_tokens for c in calls),
        read_tokens=sum(c.read_tokens for c in calls), completion_tokens=sum(c.completion_tokens for c in calls),
        seconds=round(sum(c.seconds for c in calls), 3),
        prompt_tps=_rate(sum(c.read_tokens for c in timed), sum(c.prompt_seconds or 0 for c in timed)),
        generation_tps=_rate(sum(c.completion_tokens for c in timed), sum(c.generation_seconds or 0 for c in timed)))


@dataclass
class Usage:
    """LLM calls and tokens (cached calls count their recorded tokens, and are also counted apart)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0
    counted_calls: int = 0  # calls whose tokens were estimated with tiktoken (no provider figures)


def _tokens(meta: Any, key: str) -> int:
    """A token count a server reported; 0 for anything that is not a whole number of tokens ("eleven", -3, 1e400)."""
    value = meta.get(key) if isinstance(meta, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 2**53:
        return 0
    return int(value)


class UsageTracker(BaseCallbackHandler):
    """Counts calls and tokens of one run (pass it per run as a callback): provider figures, else tiktoken counts."""

    def __init__(self, node: str = "") -> None:
        self.usage = Usage()
        self.calls: list[CallTiming] = []  # one per finished call, in finishing order
        self.node = node  # the role of every call this tracker sees, when it is not inside a graph node
        self._lock = threading.Lock()
        self._prompts: dict[Any, tuple[int, float, str]] = {}

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], *, run_id: Any,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        text = "\n".join(message_text(m.content) for batch in messages for m in batch)
        node = (metadata or {}).get("langgraph_node") or self.node
        with self._lock:
            self._prompts[run_id] = (count_tokens(text), time.perf_counter(), str(node))

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
        with self._lock:
            self._prompts.pop(run_id, None)

    def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
        with self._lock:
            prompt, started, node = self._prompts.pop(run_id, (0, time.perf_counter(), self.node))
        completion, counted, cached = 0, False, False
        runtime: dict[str, Any] = {}
        for gens in response.generations:
            for gen in gens:
                message = getattr(gen, "message", None)
                meta = getattr(message, "usage_metadata", None)
                metadata = getattr(message, "response_metadata", None) or {}
                cached = cached or bool(metadata.get("cache_hit"))
                runtime = runtime or runtime_timings(metadata)
                given, made = _tokens(meta, "input_tokens"), _tokens(meta, "output_tokens")
                if given or made:
                    prompt, completion = given or prompt, completion + made
                else:
                    completion, counted = completion + count_tokens(gen.text or ""), True
        with self._lock:
            self.usage.calls += 1
            self.usage.prompt_tokens += prompt
            self.usage.completion_tokens += completion
            self.usage.cached_calls += int(cached)
            self.usage.counted_calls += int(counted)
            # A reply from the call cache took no runtime time: its recorded timings would mislead.
            self.calls.append(CallTiming(node=node, prompt_tokens=prompt, completion_tokens=completion,
                                         seconds=round(time.perf_counter() - started, 3), from_cache=cached,
                                         **({} if cached else runtime)))
