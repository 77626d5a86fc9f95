"""The graph's nodes: plan, retrieve, merge, answer (each with an async twin where it waits on I/O)."""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_stream_writer

from frames_agent.agent.asking import AnswerCall, PlanCall
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.errors import AgentError
from frames_agent.agent.evidence import (
    Evidence,
    matched_sentences,
    names,
    propose,
    question_evidence,
    render_evidence,
    substance,
)
from frames_agent.agent.llm.calls import Structured
from frames_agent.agent.prompts import Prompt
from frames_agent.agent.queries import PlanReply, clean_queries, deeper_repeats
from frames_agent.agent.state import (
    AgentOutput,
    AgentState,
    ContextCut,
    DocumentsAdded,
    QueriesPlanned,
    StepRecord,
    StepStarted,
    ToolCall,
)
from frames_agent.agent.subquestions import Finding, SelfAsk, render_findings
from frames_agent.agent.tools import run_tool
from frames_agent.core.errors import FramesAgentError
from frames_agent.retrieval import context as ctx
from frames_agent.retrieval.bm25 import terms
from frames_agent.retrieval.bridges import traced_batch_search
from frames_agent.retrieval.context import ContextSelection
from frames_agent.retrieval.types import Document, Retriever

PLAN_VARIABLES = {"question", "context", "previous_queries", "k", "step", "n", "tools", "more_fields", "more_rules"}
ANSWER_VARIABLES = {"question", "context"}


_IO_THREADS = 64


@dataclass(frozen=True)
class PlanInput:
    """What a plan step reads, and the last plan when it is replayed instead of asking the model (plan_calls)."""

    state: AgentState
    step: int
    evidence: list[Evidence]
    view: str
    shown: set[str]
    new_names: list[str]
    replay: Structured[PlanReply] | None


@dataclass
class StepQueries:
    """A step's queries as its sources add them, with their origins and hits to fetch (0: the origin's count)."""

    repeated: list[str]
    queries: list[str] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)

    def add(self, queries: Iterable[str] | Mapping[str, int], origin: str) -> None:
        """Queries of one source (a mapping: query -> hits to fetch)."""
        for query in queries:
            self.queries.append(query)
            self.origins.append(origin)
            self.depths.append(queries[query] if isinstance(queries, Mapping) else 0)

    def dropped(self) -> list[str]:
        """The repeats not searched again: a repeat read deeper is listed once, as searched."""
        again = {substance(q) for q, o in zip(self.queries, self.origins) if o == "repeat"}
        return [q for q in self.repeated if substance(q) not in again]


class Nodes:
    """The four nodes of FRAMES Algorithm 1, bound to their injected dependencies."""

    def __init__(self, llm: BaseChatModel, retriever: Retriever | None, tools: Sequence[BaseTool],
                 config: AgentConfig, plan_prompt: Prompt, answer_prompt: Prompt) -> None:
        self.retriever, self.config = retriever, config
        self.tools = {tool.name: tool for tool in tools}
        # Structured replies where the backend can give them (agent/asking.py): the answer may ask with its JSON twin.
        self.plan_call, self.answer_call = PlanCall(llm, tools, config), AnswerCall(llm, config, answer_prompt)
        self.plan_prompt, self.answer_prompt = plan_prompt, self.answer_call.prompt
        has_title = getattr(retriever, "has_title", None)
        self.is_title = has_title if has_title is not None else (lambda title: False)
        # The loop's default pool (cores + 4 threads) would cap concurrent ainvoke calls, so the agent brings its own.
        self._io_pool = ThreadPoolExecutor(max_workers=_IO_THREADS, thread_name_prefix="frames-retrieve")
        plan_prompt.check(PLAN_VARIABLES | set(config.variables), required={"question"})
        self.self_ask = (SelfAsk(llm, config.sub_questions, capped=config.answer_max_tokens is not None)
                         if config.sub_questions else None)
        self.answer_prompt.check(ANSWER_VARIABLES | set(config.variables), required=ANSWER_VARIABLES)

    # --- plan -------------------------------------------------------------------------------------
    def _evidence(self, state: AgentState) -> list[Evidence]:
        """The sentences matching the question and earlier queries, shown to the planner and mined by the proposer."""
        cfg = self.config
        if not (cfg.plan_sentences or cfg.propose_queries):
            return []
        return matched_sentences(state.get("context", []), [state["question"], *state.get("queries", [])],
                                 max(1, cfg.plan_sentences))

    def _plan_view(self, state: AgentState, evidence: list[Evidence]) -> str:
        """The documents the planner is shown this step (its prompt's {context})."""
        cfg = self.config
        if cfg.plan_sentences:
            return render_evidence(evidence, cfg.plan_budget, cfg.plan_doc_tokens)
        return ctx.render(state.get("context", []), cfg.plan_budget, cfg.plan_doc_tokens,
                          selection=self._selection(state["question"], state.get("queries", []), per_article=1)).text

    def _plan_text(self, inp: PlanInput) -> str:
        cfg, state = self.config, inp.state
        return self.plan_prompt.render(
            **{**cfg.variables, **state.get("variables", {})}, question=state["question"], context=inp.view,
            previous_queries="\n".join(f"- {q}" for q in state.get("queries", [])) or "(none yet)",
            k=cfg.k, step=inp.step, n=cfg.n, tools=self.plan_call.tools_text, **self.plan_call.reply_extras)

    def _replay(self, state: AgentState, step: int, shown: set[str]) -> tuple[Structured[PlanReply] | None, list[str]]:
        """The last plan to replay when asking again cannot change the search (docs/agent.md), and the new names."""
        records = state.get("steps", [])
        seen = names(state["question"]) | {" ".join(sorted(substance(q))) for q in state.get("queries", [])}
        for record in records:
            seen.update(record.names_shown)
        new = sorted(shown - seen)
        asked = [record for record in records if not record.plan_skipped]
        last = asked[-1] if asked else None
        # What the model wrote last: its repeats searched deeper (as first written) and those dropped.
        wrote = [q for q, o in zip(last.queries, last.origins) if o == "repeat"] + last.dropped_queries if last else []
        if (self.config.plan_calls == "every_step" or step < 2 or new or last is None or last.fallback
                or last.tool_calls or "model" in last.origins or not wrote):
            return None, new
        return Structured(PlanReply(queries=wrote, thought=last.thought), ""), new

    def _plan_input(self, state: AgentState) -> PlanInput:
        """The step, its evidence, the planner's view and the names in it, and the replay decision."""
        step = state.get("step", 0) + 1
        get_stream_writer()(StepStarted(step=step))
        evidence = self._evidence(state)
        view = self._plan_view(state, evidence)
        shown = names(view)
        replay, new = self._replay(state, step, shown)
        return PlanInput(state, step, evidence, view, shown, new, replay)

    def _step_queries(self, inp: PlanInput, plan: PlanReply, calls: Sequence[ToolCall]) -> StepQueries:
        """The step's queries by origin: model, repeat, proposer, question, fallback (docs/agent.md)."""
        cfg, state = self.config, inp.state
        model, repeated = clean_queries(plan.queries, state.get("queries", []), cfg.k)
        step = StepQueries(repeated=repeated)
        step.add(model, "model")
        step.add(deeper_repeats(state, repeated, cfg.k - len(model), cfg.repeat_docs), "repeat")
        if cfg.propose_queries:
            step.add(self._proposals(state, inp.evidence, step.queries, plan.thought), "proposer")
        question = " ".join(state["question"].split()[:32])
        if not step.queries and not calls:
            step.add([question], "fallback")  # a model that gives nothing usable still searches, as BM25-R would
        elif inp.step == 1 and cfg.question_query:
            step.add([question], "question")
        return step

    def _proposals(self, state: AgentState, evidence: Sequence[Evidence], taken: Sequence[str],
                   thought: str) -> list[str]:
        """Titles for the room the step's queries so far (`taken`) leave under k, new against every query so far."""
        asked, k = [*state.get("queries", []), *taken], self.config.k
        read = [entry.title for entry in state.get("context", [])]
        offered = propose([*evidence, *question_evidence(state["question"], thought)], read, asked, self.is_title, k,
                          question=state["question"])
        return clean_queries(offered, asked, k)[0][: k - len(taken)]

    def _plan_update(self, inp: PlanInput, reply: Structured[PlanReply]) -> dict:
        """The plan node's update: the step's queries and tool calls, and its record."""
        plan, step, skipped = reply.value, inp.step, reply is inp.replay
        calls = [c for c in plan.tool_calls if c.name in self.tools][: self.config.max_tool_calls] if self.tools else []
        found = self._step_queries(inp, plan, calls)
        fallback = reply.fallback or "fallback" in found.origins
        record = StepRecord(step=step, queries=found.queries, tool_calls=calls, thought=plan.thought[:500],
                            query_depths=found.depths if any(found.depths) else [],
                            fallback=fallback, dropped_queries=found.dropped(), origins=found.origins,
                            filled_queries=[q for q, o in zip(found.queries, found.origins) if o == "proposer"],
                            errors=[f"plan reply unusable: {reply.error}"] if reply.fallback and reply.error else [],
                            plan_skipped=skipped, names_shown=[] if skipped else sorted(inp.shown),
                            new_names=list(inp.new_names))
        get_stream_writer()(QueriesPlanned(step=step, queries=found.queries, tool_calls=calls, fallback=fallback,
                                           replayed=skipped))
        return {"step": step, "pending_queries": found.queries, "pending_tools": calls, "queries": found.queries,
                "steps": [record]}

    def plan(self, state: AgentState, config: RunnableConfig) -> dict:
        """Ask the model for k queries (and tool calls), unless its last plan would only be repeated (plan_calls)."""
        inp = self._plan_input(state)
        reply = inp.replay if inp.replay is not None else self.plan_call.invoke(self._plan_text(inp), config)
        return self._plan_update(inp, reply)

    async def aplan(self, state: AgentState, config: RunnableConfig) -> dict:
        """Async plan."""
        inp = self._plan_input(state)
        reply = inp.replay if inp.replay is not None else await self.plan_call.ainvoke(self._plan_text(inp), config)
        return self._plan_update(inp, reply)

    # --- retrieve ---------------------------------------------------------------------------------
    def retrieve(self, state: AgentState, config: RunnableConfig | None = None) -> dict:
        """Run the step's queries (a batch per hit count, parallel on the Java side) and tool calls (parallel threads)."""
        calls = state.get("pending_tools", [])
        with ThreadPoolExecutor(max_workers=max(1, len(calls))) as pool:
            futures = [pool.submit(self._outcome, partial(run_tool, self.tools, call, config)) for call in calls]
            queries, groups = self._groups(state)
            with self._retrieval_failure(state["step"]):
                hits = [traced_batch_search(self.retriever, [queries[i] for i in positions], size, config)
                        for size, positions in groups.items() if self.retriever is not None]
            return self._retrieved(state, queries, groups, hits, calls, [future.result() for future in futures])

    async def aretrieve(self, state: AgentState, config: RunnableConfig | None = None) -> dict:
        """Async retrieve: an abatch_search retriever searches on the loop, blocking work in the agent's threads."""
        loop = asyncio.get_running_loop()
        if not callable(getattr(self.retriever, "abatch_search", None)):
            return await loop.run_in_executor(self._io_pool, self.retrieve, state, config)
        calls = state.get("pending_tools", [])
        tools = [loop.run_in_executor(self._io_pool, self._outcome, partial(run_tool, self.tools, call, config))
                 for call in calls]
        queries, groups = self._groups(state)
        search = self.retriever.abatch_search  # type: ignore[union-attr]
        with self._retrieval_failure(state["step"]):
            hits = await asyncio.gather(*(search([queries[i] for i in positions], size, config)
                                          for size, positions in groups.items()))
        return self._retrieved(state, queries, groups, hits, calls, await asyncio.gather(*tools))

    def _groups(self, state: AgentState) -> tuple[list[str], dict[int, list[int]]]:
        """The step's queries (none without a retriever) and their positions grouped by hit count (a batch per size)."""
        queries = state.get("pending_queries", []) if self.retriever is not None else []
        record = state["steps"][-1] if state.get("steps") else StepRecord(step=state["step"])
        sizes = self.config.step_hits(len(queries), record.origins, record.query_depths, state["step"])
        return queries, {size: [i for i, n in enumerate(sizes) if n == size] for size in dict.fromkeys(sizes)}

    @staticmethod
    @contextmanager
    def _retrieval_failure(step: int) -> Iterator[None]:
        """A retriever's failure as the step's one-line AgentError."""
        try:
            yield
        except FramesAgentError as exc:
            raise AgentError(f"retrieval failed at step {step}: {exc}") from exc

    @staticmethod
    def _outcome(run: Callable[[], list[Document]]) -> list[Document] | str:
        """A tool call's documents, or its failure's one line (a failing tool is recorded; the question goes on)."""
        try:
            return run()
        except Exception as exc:
            return str(exc).splitlines()[0] if str(exc) else type(exc).__name__

    @staticmethod
    def _retrieved(state: AgentState, queries: list[str], groups: dict[int, list[int]],
                   hits: Sequence[list[list[Document]]], calls: Sequence[ToolCall],
                   outcomes: Sequence[list[Document] | str]) -> dict:
        """The retrieve node's update: (rank, hit) pairs in query order, tool documents at rank 0, failures recorded."""
        by_position = {i: docs for positions, batch in zip(groups.values(), hits) for i, docs in zip(positions, batch)}
        ordered = [by_position[i] for i in range(len(queries))]
        found = [pair for docs in ordered for pair in enumerate(docs)]
        found += [(0, doc) for out in outcomes if not isinstance(out, str) for doc in out]
        errors = [f"tool {call.name} failed: {out}" for call, out in zip(calls, outcomes) if isinstance(out, str)]
        update: dict = {"query_hits": [len(docs) for docs in ordered]} if queries else {}
        if not (errors or update) or not state.get("steps"):
            return {"retrieved": found}
        record = state["steps"][-1]
        update.update({"errors": [*record.errors, *errors]} if errors else {})
        return {"retrieved": found, "steps": [record.model_copy(update=update)]}

    # --- merge ------------------------------------------------------------------------------------
    def merge(self, state: AgentState) -> dict:
        """C <- C ∪ (D \\ C): only documents not yet in the context enter, deduped per article."""
        context = [replace(entry, documents=list(entry.documents)) for entry in state.get("context", [])]
        added = ctx.merge(context, state.get("retrieved", []), state["step"])
        record = state["steps"][-1]
        origins = record.doc_origins(state.get("retrieved", []))
        record = record.model_copy(update={"new_doc_ids": [d.id for d in added],
                                           "new_doc_origins": [origins.get(d.id, "tool") for d in added]})
        get_stream_writer()(DocumentsAdded(step=state["step"], documents=added))
        return {"context": context, "steps": [record], "retrieved": []}

    # --- answer -----------------------------------------------------------------------------------
    def _answer_text(self, state: AgentState, findings: Sequence[Finding]) -> tuple[str, ContextCut]:
        """The answer prompt for the question and context, and what of the context it showed and cut."""
        cfg, question = self.config, state["question"]
        shown = self._passages(question, state.get("context", []), state.get("queries", []), cfg.answer_budget)
        body = shown.text + render_findings(findings)
        text = self.answer_prompt.render(**{**cfg.variables, **state.get("variables", {})}, question=question,
                                         context=body)
        mode = "context" if cfg.answer_passages else "lead"
        return text, ContextCut(documents_shown=shown.shown, documents_cut=shown.cut, tokens_cut=shown.tokens_cut,
                                prompt=cfg.answer_prompt, budget=cfg.answer_budget, passages=shown.articles,
                                shown_titles=shown.shown_titles, selection=mode,
                                passages_ranked=shown.passages_ranked, text=body)

    def _passages(self, question: str, context: Sequence[ctx.ContextEntry], queries: Sequence[str],
                  budget: int) -> ctx.RenderedContext:
        cfg = self.config
        selection = self._selection(question, queries, cfg.answer_passages) if cfg.answer_passages else None
        return ctx.render(context, budget, cfg.answer_doc_tokens, empty="(no documents)", selection=selection)

    def _selection(self, question: str, queries: Sequence[str], per_article: int) -> ContextSelection:
        """Context-wide selection for a prompt: the question's terms, then the step queries' (retrieval/context.py)."""
        return ContextSelection(terms(question), [t for q in queries for t in terms(q)], per_article,
                                self.config.passage_words)

    def _sub_passages(self, state: AgentState) -> Callable[[str, Sequence[str]], str]:
        context, budget = state.get("context", []), self.config.sub_answer_budget
        return lambda sub, names: self._passages(sub, context, names, budget).text

    def _answer_update(self, reply: tuple[str, Any], cut: ContextCut, findings: list[Finding]) -> AgentOutput:
        """The answer node's update; the answer joins the thread's messages."""
        raw, final = reply
        final.findings = findings
        return {"answer": final.answer, "raw_answer": raw, "answer_context": cut, "final": final,
                "messages": [AIMessage(final.answer)]}

    def answer(self, state: AgentState, config: RunnableConfig) -> AgentOutput:
        """Answer from the question and the context under the answer budget."""
        findings = self.self_ask.run(state["question"], self._sub_passages(state), config) if self.self_ask else []
        text, cut = self._answer_text(state, findings)
        reply = self.answer_call.invoke(text, config)
        return self._answer_update(reply, cut, findings)

    async def aanswer(self, state: AgentState, config: RunnableConfig) -> AgentOutput:
        """Async answer."""
        findings = await self.self_ask.arun(state["question"], self._sub_passages(state), config) if self.self_ask else []
        text, cut = self._answer_text(state, findings)
        reply = await self.answer_call.ainvoke(text, config)
        return self._answer_update(reply, cut, findings)
