"""Where an LLM call's time goes: prompt tokens read (and served from the runtime's prompt cache), tokens
generated, and the prompt-reading and generation rates, per call and summed per node (plan, answer, judge)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field


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

    @property
    def prompt_tps(self) -> float | None:
        """Prompt tokens read per second, when the runtime reported its timings."""
        return _rate(self.read_tokens, self.prompt_seconds)

    @property
    def generation_tps(self) -> float | None:
        """Tokens generated per second, when the runtime reported its timings."""
        return _rate(self.completion_tokens, self.generation_seconds)


def _rate(tokens: int, seconds: float | None) -> float | None:
    return round(tokens / seconds, 2) if seconds and tokens else None


def runtime_timings(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """(cached_tokens, prompt_seconds, generation_seconds, finish_reason) fields from a reply's response_metadata.

    llama.cpp servers add `timings` (prompt_n read, cache_n reused, prompt_ms, predicted_ms) to each reply; other
    providers report cached prompt tokens in usage details, and no split of the time.
    """
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
