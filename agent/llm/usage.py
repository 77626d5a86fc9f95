"""Usage accounting for LLM calls: calls and tokens per run, and a timing record per call."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage

from frames_agent.agent.llm.calls import message_text
from frames_agent.agent.llm.timing import CallTiming, runtime_timings
from frames_agent.retrieval.tokens import count_tokens


@dataclass
class Usage:
    """LLM calls and tokens (cached calls count their recorded tokens, and are also counted apart)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0
    counted_calls: int = 0  # calls whose tokens were estimated with tiktoken (no provider figures)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        """Plain numbers for reports."""
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens, "cached_calls": self.cached_calls,
                "counted_calls": self.counted_calls}


def _tokens(meta: Any, key: str) -> int:
    """A token count a server reported; 0 for anything that is not a whole number of tokens ("eleven", -3, 1e400)."""
    value = meta.get(key) if isinstance(meta, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 2**53:
        return 0
    return int(value)


class UsageTracker(BaseCallbackHandler):
    """Counts calls and tokens of one run; provider figures when reported, else tiktoken counts.

    Pass it per run (config={"callbacks": [tracker]}) so agents sharing a process keep separate counts.
    """

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
