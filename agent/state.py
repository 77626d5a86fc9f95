"""The agent's graph state, its typed result and its streamed events."""
from __future__ import annotations

import json
import operator
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypeVar

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from frames_agent.agent.answers import FinalAnswer
from frames_agent.agent.llm.timing import CallTiming
from frames_agent.core.terminal import plain
from frames_agent.retrieval.context import ContextEntry, ShownPassages
from frames_agent.retrieval.types import Document


class ToolCall(BaseModel):
    """A tool the planner asked for, with its arguments."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


# Where a step's query came from: the sources of Nodes._step_queries (agent/nodes.py), in their order.
QueryOrigin = Literal["model", "repeat", "proposer", "question", "fallback"]


class StepRecord(BaseModel):
    """What one planning step asked for and what it added."""

    step: int
    queries: list[str] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    new_doc_ids: list[str] = Field(default_factory=list)
    thought: str = ""
    # The plan reply was unusable and the agent fell back (e.g. to the question itself).
    fallback: bool = False
    dropped_queries: list[str] = Field(default_factory=list, description="the model's repeats of earlier "
                                       "queries, as written, that were not run again (one that repeat_docs searched "
                                       "deeper is among the queries, origin 'repeat', and not here)")
    filled_queries: list[str] = Field(default_factory=list, description="queries the proposer added")
    origins: list[QueryOrigin] = Field(
        default_factory=list, description="where each of `queries` came from, in the same order")
    query_hits: list[int] = Field(default_factory=list, description="hits each of `queries` returned, in the same "
                                  "order (before dedup against the context)")
    query_depths: list[int] = Field(default_factory=list, description="hits asked for each of `queries` where it is "
                                    "not its origin's count (a repeat's depth), in the same order; 0 or missing = "
                                    "by origin")
    new_doc_origins: list[Literal[QueryOrigin, "tool"]] = Field(
        default_factory=list, description="where the query that brought each of `new_doc_ids` came from (the first "
        "query, in query order, whose hits held it; 'tool' for tool results), in the same order")
    errors: list[str] = Field(default_factory=list)
    plan_skipped: bool = Field(False, description="the model was not asked at this step (plan_calls 'when_new'): "
                               "its last plan only repeated earlier queries and the planner's view named nothing it "
                               "had not seen, so that plan was replayed (its repeats read deeper)")
    names_shown: list[str] = Field(default_factory=list, description="the names (entity spans, by their content "
                                   "words) in the documents the planner was shown at this step, when it was asked")
    new_names: list[str] = Field(default_factory=list, description="names in this step's planner view that no "
                                 "earlier prompt showed the model (nor the question or its queries)")

    def doc_origins(self, found: Sequence[tuple[int, Document]]) -> dict[str, str]:
        """Document id -> origin of the first query whose hits (`found`, in query order, then tools) held it."""
        owners = [self.origins[i] if i < len(self.origins) else "model"
                  for i, count in enumerate(self.query_hits) for _ in range(count)]
        origins: dict[str, str] = {}
        for position, (_, doc) in enumerate(found):
            origins.setdefault(doc.id, owners[position] if position < len(owners) else "tool")
        return origins


class TokenUsage(BaseModel):
    """Prompt and completion tokens."""

    prompt: int = 0
    completion: int = 0


class ContextCut(BaseModel):
    """How much of the context a prompt could not show under its token budget."""

    documents_shown: int = 0
    documents_cut: int = 0
    tokens_cut: int = 0
    prompt: str = Field("", description="the answer prompt used (name or path)")
    budget: int = Field(0, description="context tokens the answer prompt could use")
    passages: list[ShownPassages] = Field(default_factory=list, description="which passages of which articles were "
                                          "shown (empty when articles showed their beginning)")
    shown_titles: list[str] = Field(default_factory=list, description="titles of the articles shown, in prompt order")
    selection: str = Field("", description="how the passages were chosen: context (ranked across the whole context), "
                           "article (per article, articles by search rank) or lead (each article's beginning)")
    passages_ranked: int = Field(0, description="context selection: passages sharing a term with the question")
    text: str = Field("", description="the context as the answer prompt showed it (self-ask notes included)")


class AgentResult(BaseModel):
    """Everything one question produced: answer, steps, documents, cost."""

    question: str
    answer: str = ""
    raw_answer: str = ""
    steps: list[StepRecord] = Field(default_factory=list)
    documents: list[Document] = Field(default_factory=list)
    llm_calls: int = 0
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    seconds: float = 0.0
    answer_context: ContextCut = Field(default_factory=ContextCut)
    calls: list[CallTiming] = Field(default_factory=list, description="one timing record per LLM call")
    final: FinalAnswer | None = Field(None, description="how the answer was read from raw_answer: reasoning, "
                                      "format followed, calculation")
    error: str | None = None

    def summary(self) -> dict[str, Any]:
        """The CLI's --json object."""
        return {
            "question": self.question,
            "answer": self.answer,
            "steps": [{"step": s.step, "queries": s.queries, "new_doc_ids": s.new_doc_ids} for s in self.steps],
            "documents": [{"id": d.id, "title": d.title, "source": d.source, "score": d.score} for d in self.documents],
            "llm_calls": self.llm_calls,
            "tokens": self.tokens.model_dump(),
            "seconds": round(self.seconds, 3),
            # Only when self-ask ran (config sub_questions): the key's absence keeps the object unchanged otherwise.
            **({"findings": [f.model_dump() for f in self.final.findings]} if self.final and self.final.findings else {}),
        }


Item = TypeVar("Item")


def upsert_by(key: Callable[[Any], Any], name: str) -> Callable[[list, list], list]:
    """A LangGraph reducer for keyed lists: an update replaces the item with its key in place, or appends it."""
    def reduce(current: list[Item] | None, update: list[Item] | None) -> list[Item]:
        merged = {key(item): item for item in current or []}
        merged.update((key(item), item) for item in update or [])
        return list(merged.values())

    reduce.__name__ = reduce.__qualname__ = name
    return reduce


# Module-level: LangGraph tells channels apart by reducer identity, so inline upsert_by(...) would split the schemas.
upsert_steps = upsert_by(lambda record: record.step, "upsert_steps")
upsert_context = upsert_by(lambda entry: entry.key, "upsert_context")


class AgentInput(TypedDict):
    """What the graph is started with."""

    question: str
    variables: NotRequired[dict[str, str]]  # extra prompt variables for this question
    skip_answer: NotRequired[bool]  # stop after retrieval (retrieval-only runs)


class AgentOutput(TypedDict, total=False):
    """What the graph returns: the answer, the step records and the context read."""

    question: str
    answer: str
    raw_answer: str
    steps: Annotated[list[StepRecord], upsert_steps]
    context: Annotated[list[ContextEntry], upsert_context]
    answer_context: ContextCut
    final: FinalAnswer
    # The thread's questions and answers, one pair per run (a checkpointer keeps them across runs).
    messages: Annotated[list[AnyMessage], add_messages]


# mypy does not model TypedDict's runtime merge (output's optional question over input's) that LangGraph relies on.
class AgentState(AgentInput, AgentOutput, total=False):  # type: ignore[misc]
    """LangGraph state: Algorithm 1's question, step, queries, context and answer, and the per-step hand-offs."""

    step: int
    queries: Annotated[list[str], operator.add]
    pending_queries: list[str]
    pending_tools: list[ToolCall]
    retrieved: list[tuple[int, Document]]  # (rank in its query's hits, document), tool results at rank 0


class StepStarted(BaseModel):
    """A planning step begins."""

    kind: Literal["step_started"] = "step_started"
    step: int


class QueriesPlanned(BaseModel):
    """The planner's queries and tool calls for a step."""

    kind: Literal["queries"] = "queries"
    step: int
    queries: list[str]
    tool_calls: list[ToolCall] = Field(default_factory=list)
    fallback: bool = False
    replayed: bool = False  # the model was not asked: its last plan was replayed (plan_calls 'when_new')


class DocumentsAdded(BaseModel):
    """Documents that entered the context at a step (only new ones)."""

    kind: Literal["documents_added"] = "documents_added"
    step: int
    documents: list[Document]


class AnswerReady(BaseModel):
    """The final answer and the whole result."""

    kind: Literal["answer"] = "answer"
    answer: str
    result: AgentResult


AgentEvent = StepStarted | QueriesPlanned | DocumentsAdded | AnswerReady


def progress_line(event: AgentEvent) -> str:
    """One event as a line of reasoning text."""
    if event.kind == "step_started":
        return f"Step {event.step}\n"
    if event.kind == "queries":
        calls = "".join(f" | {c.name}({json.dumps(c.args, ensure_ascii=False)})" for c in event.tool_calls)
        note = "  (fallback)" if event.fallback else ""
        return plain(f"  searching: {' | '.join(event.queries)}{calls}{note}", lines=False) + "\n"
    if event.kind == "documents_added":
        titles = ", ".join(dict.fromkeys(d.title for d in event.documents))
        return plain(f"  +{len(event.documents)} new: {titles[:300]}", lines=False) + "\n"
    return ""
