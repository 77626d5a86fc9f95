"""Per-run settings: the AgentConfig fields a run's `configurable` may change on a FramesAgent; stream modes; the
typed events as progress lines (serve's reasoning stream, MCP progress notifications).

    agent.invoke(question, config={"configurable": {"k": 3, "n": 2}})   # one run with other settings
    agent.config_specs                                                  # what may be set, with descriptions
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.utils import ConfigurableFieldSpec
from langgraph.types import StreamMode as GraphStreamMode

from frames_agent.agent.config import AgentConfig
from frames_agent.agent.state import AgentEvent
from frames_agent.retrieval.plain import plain

# What a run may change without a new model, index or tools (those are the agent's own; see agent/serve/studio.py).
RUNTIME_FIELDS = ("k", "n", "n_docs", "prompt", "answer_prompt")
StreamMode = str | Sequence[str] | None


# What a run may swap of the agent's own parts (a model spec, an index name or directory); None keeps the agent's.
COMPONENT_FIELDS = {"model": "model spec for this run, e.g. gemini:gemini-2.5-flash (default: the agent's own model)",
                    "index": "index name or directory for this run (default: the agent's own retriever)"}


def config_specs(config: AgentConfig) -> list[ConfigurableFieldSpec]:
    """One ConfigurableFieldSpec per runtime field, with its AgentConfig type, description and this agent's value,
    then model and index (default None: the agent's own)."""
    fields = AgentConfig.model_fields
    return [*(ConfigurableFieldSpec(id=name, name=name, annotation=fields[name].annotation,
                                    description=fields[name].description, default=getattr(config, name))
              for name in RUNTIME_FIELDS),
            *(ConfigurableFieldSpec(id=name, name=name, annotation=str | None, description=text, default=None)
              for name, text in COMPONENT_FIELDS.items())]


def component_changes(run: RunnableConfig | None, model: str, index: str | None) -> dict[str, str]:
    """The model and index a run's `configurable` names other than the agent's own (its spec, its index name)."""
    configurable = (run or {}).get("configurable") or {}
    own = {"model": model, "index": index}
    return {name: str(configurable[name]) for name in COMPONENT_FIELDS
            if configurable.get(name) and str(configurable[name]) != own[name]}


def components(changes: dict[str, str], config: AgentConfig, llm: Any, retriever: Any) -> tuple[Any, Any]:
    """(model, retriever) with the run's changes applied: a spec resolved as the CLI does, an index opened with the
    agent's BM25 options; either failing is a one-line FramesAgentError."""
    if changes.get("model"):
        from frames_agent.agent.llm import resolve_model

        llm = resolve_model(changes["model"], timeout=config.timeout)
    if changes.get("index"):
        from frames_agent.index.build import open_index

        retriever = open_index(changes["index"], title_boost=config.title_boost, exact_title=config.exact_title,
                               progress=False)
    return llm, retriever


class Variants:
    """The last few agents with other settings or parts, by key: asking again for the same costs nothing."""

    def __init__(self, kept: int) -> None:
        self.kept, self._lock = kept, threading.Lock()  # batch() runs questions in threads
        self._items: dict[Any, Any] = {}

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        """The variant of key, made (and the oldest dropped past `kept`) if new."""
        with self._lock:
            if key not in self._items:
                item = make()
                if len(self._items) >= self.kept:
                    self._items.pop(next(iter(self._items)))
                self._items[key] = item
            return self._items[key]


def runtime_changes(config: AgentConfig, run: RunnableConfig | None) -> dict[str, Any]:
    """The runtime fields a run's `configurable` sets to something other than config's values."""
    configurable = (run or {}).get("configurable") or {}
    return {name: configurable[name] for name in RUNTIME_FIELDS
            if configurable.get(name) is not None and configurable[name] != getattr(config, name)}


class Picker:
    """What of the graph's stream goes to a FramesAgent.stream caller: typed events (LangGraph's custom mode) and
    the AnswerReady at the end by default; with stream_mode, the graph's chunks of those modes (a chunk for one mode,
    (mode, chunk) pairs for a list). It keeps the last values chunk, the final state."""

    def __init__(self, stream_mode: StreamMode, state: Mapping[str, Any]) -> None:
        self.stream_mode, self.final = stream_mode, dict(state)
        wanted = ["custom"] if stream_mode is None else [stream_mode] if isinstance(stream_mode, str) else stream_mode
        # values, for the result; LangGraph checks the names it is given.
        self.modes = cast(list[GraphStreamMode], list(dict.fromkeys([*wanted, "values"])))

    def take(self, mode: str, chunk: Any) -> list[Any]:
        """What the caller gets of one graph chunk (nothing or one item)."""
        if mode == "values":
            self.final = chunk
        if self.stream_mode is None:
            return [chunk] if mode == "custom" else []
        if isinstance(self.stream_mode, str):
            return [chunk] if mode == self.stream_mode else []
        return [(mode, chunk)] if mode in self.stream_mode else []

    def finish(self, answer: Any) -> list[Any]:
        """The last item: the AnswerReady event for typed streams, nothing for LangGraph modes."""
        return [answer] if self.stream_mode is None else []


def progress_line(event: AgentEvent) -> str:
    """One event as a line of reasoning text."""
    if event.kind == "step_started":
        return f"Step {event.step}\n"
    if event.kind == "queries":
        calls = "".join(f" | {c.name}({json.dumps(c.args, ensure_ascii=False)})" for c in event.tool_calls)
        return plain(f"  searching: {' | '.join(event.queries)}{calls}", lines=False) + "\n"
    if event.kind == "documents_added":
        titles = ", ".join(dict.fromkeys(d.title for d in event.documents))
        return plain(f"  +{len(event.documents)} new: {titles[:300]}", lines=False) + "\n"
    return ""
