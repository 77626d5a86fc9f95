"""FramesAgent: the one entry point for embedding the agent (sync, async, streamed, typed results)."""
from __future__ import annotations

import time
from typing import Any, AsyncIterator, Iterator, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from agent.config import AgentConfig
from agent.errors import AgentError
from agent.graph import build_graph, build_nodes
from agent.llm.usage import UsageTracker
from agent.state import (
    AgentEvent,
    AgentInput,
    AgentOutput,
    AgentResult,
    AgentState,
    AnswerReady,
    ContextCut,
    TokenUsage,
)
from retrieval import context as ctx
from retrieval.types import Document, Retriever

# Room for n steps of plan/retrieve/merge plus the answer, with margin.
_RECURSION_PER_STEP = 4


def _resolve(llm: BaseChatModel | str) -> BaseChatModel:
    if isinstance(llm, str):
        from agent.llm import resolve_model

        return resolve_model(llm)
    return llm


class FramesAgent:
    """Multi-step retrieval agent: k queries per step, n steps, then a short answer."""

    def __init__(self, llm: BaseChatModel | str, retriever: Retriever | None = None,
                 tools: Sequence[BaseTool] = (), config: AgentConfig | None = None) -> None:
        self.config = config or AgentConfig.for_model(llm)
        self.llm = _resolve(llm)
        self.retriever = retriever
        self.tools = list(tools)
        self.nodes = build_nodes(self.llm, retriever, self.tools, self.config)
        self.graph = build_graph(self.llm, retriever, self.tools, self.config, nodes=self.nodes)

    # --- plumbing ---------------------------------------------------------------------------------
    def _start(self, question: str, variables: dict[str, str] | None, answer: bool) -> tuple[AgentInput, dict, UsageTracker]:
        if not isinstance(question, str) or not question.strip():
            raise AgentError("the question is empty")
        tracker = UsageTracker()
        state: AgentInput = {"question": question.strip(), "variables": dict(variables or {}), "skip_answer": not answer}
        run = {"callbacks": [tracker], "recursion_limit": _RECURSION_PER_STEP * self.config.n + 8}
        return state, run, tracker

    @staticmethod
    def _result(state: AgentOutput, tracker: UsageTracker, started: float) -> AgentResult:
        usage = tracker.usage
        docs = [doc for entry in state.get("context", []) for doc in entry.documents]
        order = {doc_id: i for i, doc_id in enumerate(d for s in state.get("steps", []) for d in s.new_doc_ids)}
        docs.sort(key=lambda d: order.get(d.id, len(order)))
        return AgentResult(
            question=state["question"], answer=state.get("answer", ""), raw_answer=state.get("raw_answer", ""),
            steps=state.get("steps", []), documents=docs, llm_calls=usage.calls,
            tokens=TokenUsage(prompt=usage.prompt_tokens, completion=usage.completion_tokens),
            seconds=time.perf_counter() - started, stopped_early=bool(state.get("done")),
            answer_context=state.get("answer_context") or ContextCut(), calls=list(tracker.calls))

    # --- the public API ---------------------------------------------------------------------------
    def invoke(self, question: str, *, variables: dict[str, str] | None = None, answer: bool = True) -> AgentResult:
        """Run the agent on one question; answer=False stops after retrieval."""
        started = time.perf_counter()
        state, run, tracker = self._start(question, variables, answer)
        return self._result(self.graph.invoke(state, config=run), tracker, started)

    async def ainvoke(self, question: str, *, variables: dict[str, str] | None = None, answer: bool = True) -> AgentResult:
        """Async invoke; many questions can run concurrently on one agent."""
        started = time.perf_counter()
        state, run, tracker = self._start(question, variables, answer)
        return self._result(await self.graph.ainvoke(state, config=run), tracker, started)

    def stream(self, question: str, *, variables: dict[str, str] | None = None, answer: bool = True) -> Iterator[AgentEvent]:
        """Typed events as they happen: step started, queries, documents added, answer."""
        started = time.perf_counter()
        state, run, tracker = self._start(question, variables, answer)
        final: dict[str, Any] = dict(state)
        for mode, chunk in self.graph.stream(state, config=run, stream_mode=["custom", "values"]):
            if mode == "custom":
                yield chunk
            else:
                final = chunk
        yield self._answer_event(final, tracker, started)

    async def astream(self, question: str, *, variables: dict[str, str] | None = None, answer: bool = True) -> AsyncIterator[AgentEvent]:
        """Async stream."""
        started = time.perf_counter()
        state, run, tracker = self._start(question, variables, answer)
        final: dict[str, Any] = dict(state)
        async for mode, chunk in self.graph.astream(state, config=run, stream_mode=["custom", "values"]):
            if mode == "custom":
                yield chunk
            else:
                final = chunk
        yield self._answer_event(final, tracker, started)

    def _answer_event(self, final: dict[str, Any], tracker: UsageTracker, started: float) -> AnswerReady:
        result = self._result(final, tracker, started)
        return AnswerReady(answer=result.answer, result=result)

    # --- baselines: the same answer prompt and result type, without the planning loop ---------------
    def _answer_state(self, question: str, documents: Sequence[Document], variables: dict[str, str] | None):
        start, run, tracker = self._start(question, variables, True)
        context: list[ctx.ContextEntry] = []
        ctx.merge(context, [(rank, doc) for rank, doc in enumerate(documents)], step=0)
        state: AgentState = {**start, "context": context}
        return state, run, tracker

    def answer_from(self, question: str, documents: Sequence[Document], *, variables: dict[str, str] | None = None) -> AgentResult:
        """Answer from given documents ([] = no retrieval), as the naive, BM25-R and oracle baselines do."""
        started = time.perf_counter()
        state, run, tracker = self._answer_state(question, documents, variables)
        state.update(self.nodes.answer(state, run))
        return self._result(state, tracker, started)

    async def aanswer_from(self, question: str, documents: Sequence[Document], *, variables: dict[str, str] | None = None) -> AgentResult:
        """Async answer_from."""
        started = time.perf_counter()
        state, run, tracker = self._answer_state(question, documents, variables)
        state.update(await self.nodes.aanswer(state, run))
        return self._result(state, tracker, started)
