"""Per-run settings: the AgentConfig fields a run's `configurable` may change on a FramesAgent, under the one key
CONFIG_KEY so a host app's own `model`, `k` or `prompt` never reach the agent; stream modes; the typed events as
progress lines (serve's reasoning stream, MCP progress notifications).

    agent.invoke(question, config={"configurable": {"frames_agent": {"k": 3, "n": 2}}})   # one run, other settings
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
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from frames_agent.agent.config import AgentConfig
from frames_agent.agent.errors import AgentError
from frames_agent.agent.prompts import run_prompt
from frames_agent.agent.state import AgentEvent
from frames_agent.core.errors import validation_error
from frames_agent.core.terminal import plain

# The one `configurable` key the agent reads: an app's own keys (model, k, prompt, thread_id, ...) stay the app's.
CONFIG_KEY = "frames_agent"

# What a run may change without a new model, index or tools (those are the agent's own; see agent/serve/studio.py).
RUNTIME_FIELDS = ("k", "n", "n_docs", "prompt", "answer_prompt")
StreamMode = str | Sequence[str] | None


# What a run may swap of the agent's own parts (a model spec, an index name or directory, each one its owner
# listed: FramesAgent(models=, indexes=)); None keeps the agent's.
COMPONENT_FIELDS = {"model": "model spec for this run, e.g. gemini:gemini-2.5-flash (default: the agent's own model)",
                    "index": "index name or directory for this run (default: the agent's own retriever)"}


def _bounded(name: str) -> Any:
    """An optional field with an AgentConfig field's description and bounds (ge, le): schemas show the limits."""
    info = AgentConfig.model_fields[name]
    bounds = {attr: getattr(m, attr) for m in info.metadata for attr in ("ge", "le") if hasattr(m, attr)}
    return Field(None, description=info.description, **bounds)


class RunSettings(BaseModel):
    """What a run may set under `configurable["frames_agent"]`; None (or absent) keeps the agent's own. Prompts are
    shipped names or template text; a file path only inside a directory the app allowed (FramesAgent(prompt_dirs=))."""

    model_config = ConfigDict(extra="forbid")

    k: int | None = _bounded("k")
    n: int | None = _bounded("n")
    n_docs: int | None = _bounded("n_docs")
    prompt: str | None = Field(None, description="planning prompt: a shipped name or the template text")
    answer_prompt: str | None = Field(None, description="answer prompt: a shipped name or the template text")
    model: str | None = Field(None, description=COMPONENT_FIELDS["model"])
    index: str | None = Field(None, description=COMPONENT_FIELDS["index"])


def run_settings(run: RunnableConfig | None, prompt_dirs: Sequence[str] = ()) -> RunSettings:
    """The run's `configurable["frames_agent"]` (a mapping or RunSettings), checked; a bad value is a one-line
    AgentError and a prompt path outside prompt_dirs a PromptError (the file is never read)."""
    raw = ((run or {}).get("configurable") or {}).get(CONFIG_KEY)
    if raw is None:
        return RunSettings()
    try:
        settings = raw if isinstance(raw, RunSettings) else RunSettings.model_validate(raw)
    except ValidationError as exc:
        where, message = validation_error(exc)
        raise AgentError(f"configurable.{CONFIG_KEY}{'.' + where if where else ''}: {message}") from None
    prompts = {name: run_prompt(value, prompt_dirs, name) for name in ("prompt", "answer_prompt")
               if (value := getattr(settings, name)) is not None}
    return settings.model_copy(update=prompts) if prompts else settings


def config_specs(config: AgentConfig) -> list[ConfigurableFieldSpec]:
    """The one configurable field the agent reads, CONFIG_KEY: RunSettings (k, n, n_docs, prompt, answer_prompt,
    model, index; each None keeps this agent's own)."""
    own = ", ".join(f"{name}={getattr(config, name)!r}" for name in RUNTIME_FIELDS)
    return [ConfigurableFieldSpec(id=CONFIG_KEY, name="FRAMES agent settings", annotation=RunSettings | None,
                                  default=None, description=f"this run's agent settings (the agent's own: {own})")]


def component_changes(settings: RunSettings, model: str, index: str | None) -> dict[str, str]:
    """The model and index a run's settings name other than the agent's own (its spec, its index name)."""
    own = {"model": model, "index": index}
    return {name: str(value) for name in COMPONENT_FIELDS
            if (value := getattr(settings, name)) and str(value) != own[name]}


def check_listed(changes: Mapping[str, str], listed: Mapping[str, Sequence[str]]) -> None:
    """AgentError unless every model and index a run names is one the owner listed; nothing is opened first, so an
    existing path and a missing one get the same line."""
    for name, value in changes.items():
        if value not in listed.get(name, ()):
            allowed = ", ".join(listed.get(name, ())) or "none besides its own"
            raise AgentError(f"{name} {value[:80]!r}: a run may only choose a{'n' if name == 'index' else ''} {name} "
                             f"the server's owner listed (listed: {allowed})")


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


def runtime_changes(config: AgentConfig, settings: RunSettings) -> dict[str, Any]:
    """The runtime fields a run's settings set to something other than config's values."""
    return {name: value for name in RUNTIME_FIELDS
            if (value := getattr(settings, name)) is not None and value != getattr(config, name)}


# LangGraph's own stream/invoke arguments a FramesAgent call passes through to its graph (invoke: all but subgraphs);
# output_keys and version would change the chunks the agent reads its result from, so they are refused.
GRAPH_ARGS = ("context", "print_mode", "interrupt_before", "interrupt_after", "durability", "subgraphs", "debug")
_REFUSED_ARGS = ("output_keys", "version")


def graph_args(kwargs: Mapping[str, Any], stream: bool = True) -> dict[str, Any]:
    """The LangGraph arguments among a call's keyword arguments; an unknown name, or one the agent cannot honour, is a
    one-line AgentError."""
    unknown = sorted(set(kwargs) - set(GRAPH_ARGS) - set(_REFUSED_ARGS))
    if unknown:
        raise AgentError(f"unknown argument(s) {', '.join(unknown)}: the agent takes variables, answer, stream_mode "
                         f"and LangGraph's {', '.join(GRAPH_ARGS)}")
    refused = [name for name in _REFUSED_ARGS if kwargs.get(name) is not None]
    if refused or (not stream and kwargs.get("subgraphs")):
        raise AgentError(f"{', '.join(refused or ['subgraphs'])}: not supported here (the agent reads its result from "
                         "the graph's own chunks; use stream(stream_mode=...) for the graph's chunks)")
    return {name: kwargs[name] for name in GRAPH_ARGS if name in kwargs and (stream or name != "subgraphs")}


class Picker:
    """What of the graph's stream goes to a FramesAgent.stream caller: typed events (LangGraph's custom mode) and
    the AnswerReady at the end by default; with stream_mode, the graph's chunks of those modes (a chunk for one mode,
    (mode, chunk) pairs for a list; with subgraphs=True LangGraph's (namespace, ...) tuples). It keeps the last
    values chunk of the agent's own graph, the final state."""

    def __init__(self, stream_mode: StreamMode, state: Mapping[str, Any], subgraphs: bool = False) -> None:
        self.stream_mode, self.final, self.subgraphs = stream_mode, dict(state), subgraphs
        wanted = ["custom"] if stream_mode is None else [stream_mode] if isinstance(stream_mode, str) else stream_mode
        # values, for the result; LangGraph checks the names it is given.
        self.modes = cast(list[GraphStreamMode], list(dict.fromkeys([*wanted, "values"])))

    def take_item(self, item: tuple) -> list[Any]:
        """What the caller gets of one item of the graph's stream ((mode, chunk), or (namespace, mode, chunk))."""
        namespace, (mode, chunk) = (item[0], item[1:]) if self.subgraphs else ((), item)
        return self.take(mode, chunk, namespace)

    def take(self, mode: str, chunk: Any, namespace: tuple[str, ...] = ()) -> list[Any]:
        """What the caller gets of one graph chunk (nothing or one item)."""
        if mode == "values" and not namespace:
            self.final = chunk
        if self.stream_mode is None:
            return [chunk] if mode == "custom" else []
        if isinstance(self.stream_mode, str):
            if mode != self.stream_mode:
                return []
            return [(namespace, chunk)] if self.subgraphs else [chunk]
        if mode not in self.stream_mode:
            return []
        return [(namespace, mode, chunk)] if self.subgraphs else [(mode, chunk)]

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
