"""FramesAgent: the one entry point for embedding the agent, a LangChain Runnable with typed results and events."""
from __future__ import annotations

import copy
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, cast

from langchain_core.documents import Document as LCDocument
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda, RunnablePick, RunnableSerializable
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    patch_config,
)
from langchain_core.runnables.utils import ConfigurableField, ConfigurableFieldSpec
from langchain_core.tools import BaseTool
from langgraph.types import StreamMode as GraphStreamMode
from pydantic import BaseModel, ValidationError

from frames_agent.agent.config import AgentConfig
from frames_agent.agent.configurable import (
    CONFIG_KEY,
    RUNTIME_FIELDS,
    RunSettings,
    check_listed,
    component_changes,
    components,
    run_settings,
)
from frames_agent.agent.deadline import aiterate_within, await_within, call_within, iterate_within
from frames_agent.agent.errors import AgentError
from frames_agent.agent.graph import build_graph, build_nodes
from frames_agent.agent.llm.spec import ModelSpec
from frames_agent.agent.llm.timing import UsageTracker
from frames_agent.agent.state import (
    AgentInput,
    AgentResult,
    AgentState,
    AnswerReady,
    ContextCut,
    TokenUsage,
)
from frames_agent.agent.tools import ToolErrors, agent_tool
from frames_agent.core.errors import first_line
from frames_agent.retrieval import context as ctx
from frames_agent.retrieval.bridges import as_documents, as_retriever
from frames_agent.retrieval.types import Document, Retriever

# Room for n steps of plan/retrieve/merge plus the answer, with margin.
_RECURSION_PER_STEP = 4
_KEPT_VARIANTS = 16  # agents with other settings kept for reuse (per-run configurable, serve's per-request fields)
StreamMode = str | Sequence[str] | None
Question = str | AgentInput | dict[str, Any]  # a question, or {"question", "variables"?, "skip_answer"?|"answer"?}


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


# LangGraph arguments passed through to the graph; output_keys and version would change the chunks read, so refused.
GRAPH_ARGS = ("context", "print_mode", "interrupt_before", "interrupt_after", "durability", "subgraphs", "debug")
_REFUSED_ARGS = ("output_keys", "version")


def graph_args(kwargs: Mapping[str, Any], stream: bool = True) -> dict[str, Any]:
    """The LangGraph arguments among a call's keywords; an unknown or unsupported one is a one-line AgentError."""
    unknown = sorted(set(kwargs) - set(GRAPH_ARGS) - set(_REFUSED_ARGS))
    if unknown:
        raise AgentError(f"unknown argument(s) {', '.join(unknown)}: the agent takes variables, answer, stream_mode "
                         f"and LangGraph's {', '.join(GRAPH_ARGS)}")
    refused = [name for name in _REFUSED_ARGS if kwargs.get(name) is not None]
    if refused or (not stream and kwargs.get("subgraphs")):
        raise AgentError(f"{', '.join(refused or ['subgraphs'])}: not supported here (the agent reads its result from "
                         "the graph's own chunks; use stream(stream_mode=...) for the graph's chunks)")
    return {name: kwargs[name] for name in GRAPH_ARGS if name in kwargs}


class Picker:
    """What a stream caller gets of the graph's stream (typed events or stream_mode's chunks), and the final state."""

    def __init__(self, stream_mode: StreamMode, start: AgentInput, kwargs: Mapping[str, Any]) -> None:
        self.stream_mode, self.start = stream_mode, start
        self.final: dict[str, Any] = dict(start)
        self.extra = graph_args(kwargs)  # the LangGraph arguments passed through
        self.subgraphs = bool(self.extra.get("subgraphs"))
        self.wanted = (["custom"] if stream_mode is None else [stream_mode] if isinstance(stream_mode, str)
                       else stream_mode)
        # values, for the result; LangGraph checks the names it is given.
        self.modes = cast(list[GraphStreamMode], list(dict.fromkeys([*self.wanted, "values"])))

    def take(self, item: tuple) -> list[Any]:
        """What the caller gets of one stream item, (mode, chunk) or (namespace, mode, chunk): nothing or one item."""
        namespace, (mode, chunk) = (item[0], item[1:]) if self.subgraphs else ((), item)
        if mode == "values" and not namespace:
            self.final = chunk
        if mode not in self.wanted:
            return []
        if self.stream_mode is None:
            return [chunk]
        if isinstance(self.stream_mode, str):
            return [(namespace, chunk)] if self.subgraphs else [chunk]
        return [(namespace, mode, chunk)] if self.subgraphs else [(mode, chunk)]

    def finish(self, result: AgentResult) -> list[Any]:
        """The last item: the AnswerReady event for typed streams, nothing for LangGraph modes."""
        return [AnswerReady(answer=result.answer, result=result)] if self.stream_mode is None else []

    def paused(self) -> str | None:
        """What a run given breakpoints (interrupt_before/after) did when it ended before its answer, else None."""
        extra, final = self.extra, self.final
        points = [f"{name}={extra[name]!r}" for name in ("interrupt_before", "interrupt_after") if extra.get(name)]
        if not points or self.start.get("skip_answer") or final.get("answer") or final.get("final"):
            return None
        return (f"stopped at a breakpoint ({', '.join(points)}) after {len(final.get('steps') or [])} step(s), "
                "before the answer (build_graph with a checkpointer resumes a thread from its breakpoint)")


class FramesAgent(Runnable[str | AgentInput, AgentResult]):
    """Multi-step retrieval agent (k queries per step, n steps, then a short answer) as a typed LangChain Runnable."""

    name: str | None = "FramesAgent"

    def __init__(self, llm: BaseChatModel | str, retriever: Retriever | Any | None = None,
                 tools: Sequence[BaseTool] = (), config: AgentConfig | None = None, *,
                 prompt_dirs: Sequence[str | Path] = (), models: Sequence[str] = (),
                 indexes: Sequence[str] = ()) -> None:
        self.config = config or AgentConfig.for_model(llm)
        self.prompt_dirs = [str(Path(d).expanduser().resolve()) for d in prompt_dirs]
        self.listed = {"model": [str(m) for m in models], "index": [str(i) for i in indexes]}
        if isinstance(llm, str):
            from frames_agent.agent.llm import resolve_model

            llm = resolve_model(llm, timeout=self.config.timeout)
        self.llm = llm
        self.retriever = as_retriever(retriever)  # a LangChain BaseRetriever is adapted; anything else is checked
        self.tools = list(tools)
        self.nodes = build_nodes(self.llm, self.retriever, self.tools, self.config)
        # The inner graph's run, under the agent's own in a trace (LangGraph's default name is "LangGraph").
        self.graph = build_graph(self.llm, self.retriever, self.tools, self.config, nodes=self.nodes,
                                 name="frames_agent_graph")
        self._variants = Variants(_KEPT_VARIANTS)
        self._fields: dict[str, ConfigurableField] = {}  # run settings under the app's own configurable ids

    def with_settings(self, **changes: Any) -> FramesAgent:
        """The same model, retriever and tools with some AgentConfig fields changed (the last few variants kept)."""
        current = self.config.model_dump()
        changes = {key: value for key, value in changes.items() if value is not None and value != current.get(key)}
        if not changes:
            return self

        def make() -> FramesAgent:
            try:
                config = AgentConfig.model_validate({**current, **changes})
            except ValidationError as exc:
                raise AgentError(first_line(exc)) from None
            return FramesAgent(self.llm, self.retriever, self.tools, config, prompt_dirs=self.prompt_dirs,
                               models=self.listed["model"], indexes=self.listed["index"])

        return self._variants.get(repr(sorted(changes.items())), make)

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        """What a run's `configurable` may set: RunSettings under CONFIG_KEY, and the ids configurable_fields gave."""
        own = ", ".join(f"{name}={getattr(self.config, name)!r}" for name in RUNTIME_FIELDS)
        agent = ConfigurableFieldSpec(id=CONFIG_KEY, name="FRAMES agent settings", annotation=RunSettings | None,
                                      default=None, description=f"this run's agent settings (the agent's own: {own})")
        named = [ConfigurableFieldSpec(id=field.id, name=field.name or name, description=field.description or
                                       RunSettings.model_fields[name].description, default=None,
                                       annotation=RunSettings.model_fields[name].annotation)
                 for name, field in self._fields.items()]
        return [agent, *named]

    def configurable_fields(self, **fields: ConfigurableField) -> FramesAgent:
        """This agent also reading RunSettings from the app's `configurable` ids: k=ConfigurableField(id="search_k")."""
        unknown = sorted(set(fields) - set(RunSettings.model_fields))
        if unknown:
            raise AgentError(f"configurable_fields: {', '.join(unknown)} cannot be set per run; these can: "
                             f"{', '.join(RunSettings.model_fields)}")
        agent = copy.copy(self)
        agent._fields = {**self._fields, **fields}
        return agent

    def _configured(self, config: RunnableConfig | None) -> FramesAgent:
        """This agent, or its variant for the run's `configurable["frames_agent"]` settings and parts."""
        configurable = (config or {}).get("configurable") or {}
        named = {name: configurable[field.id] for name, field in self._fields.items() if field.id in configurable}
        if named:  # the app's own ids, under the agent's key (what is set there wins)
            own = configurable.get(CONFIG_KEY) or {}
            own = own.model_dump(exclude_none=True) if isinstance(own, RunSettings) else dict(own)
            config = {**(config or {}), "configurable": {**configurable, CONFIG_KEY: {**named, **own}}}
        settings = run_settings(config, self.prompt_dirs)
        own_index = getattr(self.retriever, "name", None)
        agent, parts = self, component_changes(settings, str(ModelSpec.of(self.llm)), own_index)
        check_listed(parts, self.listed)
        if parts:
            agent = self._variants.get(repr(sorted(parts.items())), lambda: FramesAgent(
                *components(parts, self.config, self.llm, self.retriever), self.tools, self.config,
                prompt_dirs=self.prompt_dirs, models=self.listed["model"], indexes=self.listed["index"]))
        return agent.with_settings(**settings.model_dump(include=set(RUNTIME_FIELDS)))  # unchanged ones are dropped

    def pick(self, keys: str | list[str]) -> RunnableSerializable[Any, Any]:
        """One field of the AgentResult (a key) or a dict of some (a list), as Runnable.pick gives of a dict output."""
        return self | RunnableLambda(dict, name="fields") | RunnablePick(keys)

    def get_graph(self, config: RunnableConfig | None = None) -> Any:
        """The agent's LangGraph graph for drawing (plan, retrieve, merge, answer and the named edges)."""
        return self.graph.get_graph(config)

    # --- plumbing ---------------------------------------------------------------------------------
    @staticmethod
    def _start(input: Question, variables: dict[str, str] | None, answer: bool) -> tuple[AgentInput, UsageTracker]:
        """The graph's input from a question string or a {"question", "variables"?, "answer"?} dict."""
        if isinstance(input, dict):
            variables = {**input.get("variables", {}), **(variables or {})}
            answer = not input["skip_answer"] if "skip_answer" in input else answer
            answer = bool(input.get("answer", answer))
            input = input.get("question", "")
        if not isinstance(input, str) or not input.strip():
            raise AgentError("the question is empty")
        state: AgentInput = {"question": input.strip(), "variables": dict(variables or {}), "skip_answer": not answer}
        return state, UsageTracker()

    def _child(self, config: RunnableConfig, run: Any, tracker: UsageTracker) -> RunnableConfig:
        """The graph's config: the caller's tags, metadata and callbacks under this run, plus our usage tracker."""
        callbacks = run.get_child()
        callbacks.add_handler(tracker, inherit=True)
        return patch_config(config, callbacks=callbacks, recursion_limit=_RECURSION_PER_STEP * self.config.n + 8)

    @contextmanager
    def _traced(self, config: RunnableConfig | None, state: AgentInput,
                tracker: UsageTracker) -> Iterator[tuple[RunnableConfig, dict]]:
        """One chain run around the graph, so a tracer sees the agent with the caller's name, tags and metadata."""
        config = ensure_config(config)
        run = get_callback_manager_for_config(config).on_chain_start(
            None, {"question": state["question"]}, name=config.get("run_name") or self.get_name(),
            run_id=config.pop("run_id", None))
        out: dict = {}
        try:
            yield self._child(config, run, tracker), out
        except BaseException as exc:
            run.on_chain_error(exc)
            raise
        run.on_chain_end(out)

    @asynccontextmanager
    async def _atraced(self, config: RunnableConfig | None, state: AgentInput,
                       tracker: UsageTracker) -> AsyncIterator[tuple[RunnableConfig, dict]]:
        """Async _traced."""
        config = ensure_config(config)
        run = await get_async_callback_manager_for_config(config).on_chain_start(
            None, {"question": state["question"]}, name=config.get("run_name") or self.get_name(),
            run_id=config.pop("run_id", None))
        out: dict = {}
        try:
            yield self._child(config, run, tracker), out
        except BaseException as exc:
            await run.on_chain_error(exc)
            raise
        await run.on_chain_end(out)

    @staticmethod
    def _result(state: Mapping[str, Any], tracker: UsageTracker, started: float, out: dict,
                error: str | None = None) -> AgentResult:
        """The AgentResult of a final state; `out` gets its summary, the traced run's output."""
        usage = tracker.usage
        docs = [doc for entry in state.get("context", []) for doc in entry.documents]
        order = {doc_id: i for i, doc_id in enumerate(d for s in state.get("steps", []) for d in s.new_doc_ids)}
        docs.sort(key=lambda d: order.get(d.id, len(order)))
        result = AgentResult(
            question=state["question"], answer=state.get("answer", ""), raw_answer=state.get("raw_answer", ""),
            steps=state.get("steps", []), documents=docs, llm_calls=usage.calls,
            tokens=TokenUsage(prompt=usage.prompt_tokens, completion=usage.completion_tokens),
            seconds=time.perf_counter() - started,
            answer_context=state.get("answer_context") or ContextCut(), calls=list(tracker.calls),
            final=state.get("final"), error=error)
        out.update(result.summary())
        return result

    # --- the public API ---------------------------------------------------------------------------
    def invoke(self, input: Question, config: RunnableConfig | None = None, *,
               variables: dict[str, str] | None = None, answer: bool = True, **kwargs: Any) -> AgentResult:
        """Run the agent on one question; answer=False stops after retrieval."""
        graph_args(kwargs, stream=False)
        events = list(self.stream(input, config, variables=variables, answer=answer, **kwargs))
        return events[-1].result  # the typed stream ends with its AnswerReady

    async def ainvoke(self, input: Question, config: RunnableConfig | None = None, *,
                      variables: dict[str, str] | None = None, answer: bool = True, **kwargs: Any) -> AgentResult:
        """Async invoke; many questions can run concurrently on one agent."""
        graph_args(kwargs, stream=False)
        events = [event async for event in self.astream(input, config, variables=variables, answer=answer, **kwargs)]
        return events[-1].result

    def stream(self, input: Question, config: RunnableConfig | None = None, *,  # type: ignore[override]
               variables: dict[str, str] | None = None, answer: bool = True, stream_mode: StreamMode = None,
               **kwargs: Any) -> Iterator[Any]:
        """Typed events as they happen, or the graph's chunks of stream_mode; LangGraph's GRAPH_ARGS pass through."""
        started, agent = time.perf_counter(), self._configured(config)
        state, tracker = self._start(input, variables, answer)
        picker = Picker(stream_mode, state, kwargs)
        with agent._traced(config, state, tracker) as (run, out):
            for item in iterate_within(agent.graph.stream(state, config=run, stream_mode=picker.modes, **picker.extra),
                                       agent.config.question_timeout):
                yield from picker.take(item)
            yield from picker.finish(self._result(picker.final, tracker, started, out, picker.paused()))

    async def astream(self, input: Question, config: RunnableConfig | None = None, *,  # type: ignore[override]
                      variables: dict[str, str] | None = None, answer: bool = True, stream_mode: StreamMode = None,
                      **kwargs: Any) -> AsyncIterator[Any]:
        """Async stream."""
        started, agent = time.perf_counter(), self._configured(config)
        state, tracker = self._start(input, variables, answer)
        picker = Picker(stream_mode, state, kwargs)
        async with agent._atraced(config, state, tracker) as (run, out):
            events = agent.graph.astream(state, config=run, stream_mode=picker.modes, **picker.extra)
            async for chunk in aiterate_within(events, agent.config.question_timeout):
                for item in picker.take(chunk):
                    yield item
            for item in picker.finish(self._result(picker.final, tracker, started, out, picker.paused())):
                yield item

    def transform(self, input: Iterator[Question], config: RunnableConfig | None = None,
                  **kwargs: Any) -> Iterator[AgentResult]:
        """In a streamed chain: the last input chunk is the question, the one output chunk the AgentResult."""
        final = None
        for chunk in input:
            final = chunk
        if final is not None:
            yield self.invoke(final, config, **kwargs)

    async def atransform(self, input: AsyncIterator[Question], config: RunnableConfig | None = None,
                         **kwargs: Any) -> AsyncIterator[AgentResult]:
        """Async transform."""
        final = None
        async for chunk in input:
            final = chunk
        if final is not None:
            yield await self.ainvoke(final, config, **kwargs)

    def as_tool(self, args_schema: type[BaseModel] | None = None, *, name: str | None = None,
                description: str | None = None, arg_types: dict[str, type] | None = None, sources: int = 3,
                handle_tool_error: ToolErrors = True) -> BaseTool:
        """This agent as a LangChain tool for other agents (agent/tools.py); arg_types may only be {"question": str}."""
        if arg_types is not None and arg_types != {"question": str}:
            raise AgentError(f"arg_types {sorted(arg_types)}: the agent's tool takes one argument, question (str); "
                             "pass args_schema for another schema with a question field")
        return agent_tool(self, args_schema, name, description, sources, handle_tool_error)

    def assign(self, **kwargs: Any) -> RunnableSerializable[Any, Any]:
        """The AgentResult's fields as a dict with more keys computed from it (Runnable.assign of a dict output)."""
        return (self | RunnableLambda(dict, name="fields")).assign(**kwargs)

    # --- baselines: the same answer prompt and result type, without the planning loop ---------------
    def _answer_state(self, question: str, documents: Sequence[Any],
                      variables: dict[str, str] | None) -> tuple[AgentState, UsageTracker]:
        start, tracker = self._start(question, variables, True)
        tracker.node = "answer"  # no graph node names the call here, and per-node timings should still add up
        context: list[ctx.ContextEntry] = []
        ctx.merge(context, list(enumerate(as_documents(documents))), step=0)
        state: AgentState = {**start, "context": context}
        return state, tracker

    def answer_from(self, question: str, documents: Sequence[Document | LCDocument], *,
                    variables: dict[str, str] | None = None, config: RunnableConfig | None = None) -> AgentResult:
        """Answer from given documents, ours or LangChain's ([] = none), as the naive, BM25-R and oracle baselines."""
        started, agent = time.perf_counter(), self._configured(config)
        state, tracker = self._answer_state(question, documents, variables)
        with agent._traced(config, state, tracker) as (run, out):
            state.update(call_within(lambda: agent.nodes.answer(state, run), agent.config.question_timeout))
            return self._result(state, tracker, started, out)

    async def aanswer_from(self, question: str, documents: Sequence[Document | LCDocument], *,
                           variables: dict[str, str] | None = None, config: RunnableConfig | None = None) -> AgentResult:
        """Async answer_from."""
        started, agent = time.perf_counter(), self._configured(config)
        state, tracker = self._answer_state(question, documents, variables)
        async with agent._atraced(config, state, tracker) as (run, out):
            answered = await await_within(agent.nodes.aanswer(state, run), agent.config.question_timeout)
            state.update(answered)
            return self._result(state, tracker, started, out)
