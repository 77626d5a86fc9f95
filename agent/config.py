"""Typed agent configuration, with budgets sized for the model that reads the prompts."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from frames_agent.retrieval.lucene.searcher import DEFAULT_TITLE_BOOST

# Sized for the embedded 1.5B model on 2 cores. Measured: docs/measurements.md#budgets
SMALL_MODEL_BUDGETS = {"plan_budget": 400, "answer_budget": 1600, "plan_doc_tokens": 60, "answer_doc_tokens": 400,
                       "answer_passages": 3,
                       # A plan reply is a thought and k short queries; an answer three sentences and a line.
                       "plan_max_tokens": 256, "answer_max_tokens": 320}
# Gemini-class models read a million tokens; FRAMES' oracle articles alone are tens of thousands.
LARGE_MODEL_BUDGETS = {"plan_budget": 24000, "answer_budget": 120000, "plan_doc_tokens": 600, "answer_doc_tokens": 8000,
                       "answer_passages": 70, "plan_max_tokens": None, "answer_max_tokens": None}
# A hosted model whose window is not known (an unlisted name behind openai:, say) is assumed to read this much.
ASSUMED_HOSTED_WINDOW = 32_768


def budgets_for_window(window: int) -> dict[str, int | None]:
    """Budgets for a `window`-token model: half for the answer's context, a fifth for the plan's, capped at large."""
    large = {key: value for key, value in LARGE_MODEL_BUDGETS.items() if value is not None}  # the capped ones
    plan, answer = min(large["plan_budget"], window // 5), min(large["answer_budget"], window // 2)
    return {"plan_budget": plan, "answer_budget": answer,
            "plan_doc_tokens": max(SMALL_MODEL_BUDGETS["plan_doc_tokens"], min(large["plan_doc_tokens"], plan // 40)),
            "answer_doc_tokens": max(SMALL_MODEL_BUDGETS["answer_doc_tokens"],
                                     min(large["answer_doc_tokens"], answer // 15)),
            # ~110 tokens per passage: as many passages per article as its share of the budget holds.
            "answer_passages": max(SMALL_MODEL_BUDGETS["answer_passages"],
                                   min(large["answer_passages"], answer // 15 // 110)),
            # Hosted models generate fast: their replies are not capped unless the user asks.
            "plan_max_tokens": None, "answer_max_tokens": None}


# Deadlines (seconds): long for local models on a CPU; a hosted call silent for two minutes is a hung connection.
SMALL_MODEL_DEADLINES = {"timeout": 600.0, "question_timeout": 1800.0}
LARGE_MODEL_DEADLINES = {"timeout": 120.0, "question_timeout": 900.0}


def model_defaults(model: Any) -> dict[str, Any]:
    """Budgets and deadlines for a spec, ModelSpec or chat model, by its class and window."""
    from frames_agent.agent.llm.spec import ModelClass, ModelSpec, context_window

    spec = ModelSpec.of(model)
    window = context_window(model)
    if window is None and spec.model_class is ModelClass.HOSTED:
        window = ASSUMED_HOSTED_WINDOW
    if spec.model_class is ModelClass.UNKNOWN and not isinstance(model, (str, ModelSpec, type(None))):
        hosted = window is not None  # a model object from elsewhere that knows its window
    else:
        hosted = spec.model_class is ModelClass.HOSTED and spec.provider != "ollama"
    small = spec.model_class is ModelClass.SMALL_LOCAL
    return {**(SMALL_MODEL_BUDGETS if small or not window else budgets_for_window(window)),
            **(LARGE_MODEL_DEADLINES if hosted else SMALL_MODEL_DEADLINES)}


# Settings tried and not kept (docs/measurements.md#tried-and-not-kept) -> the value that did what the agent does now.
RETIRED: dict[str, object] = {
    "adaptive": False, "context_selection": "context", "answer_dense_weight": 0.0, "proposer_slots": 0,
    "proposer_rank": "order", "proposer_hub_share": 0.01, "proposer_titles_only": True, "proposer_min_shared": 2,
    "proposer_docs": 3, "feedback_queries": 0, "feedback_docs": None, "stop_when_stale": False, "max_articles": None,
    "drop_fanout": False, "max_query_words": 12,
}
# Hits fetched per proposer query: it names an article, which the exact-title path brings first.
PROPOSER_DOCS = 3


def retired(name: str, value: object) -> bool:
    """Whether `name` is a retired setting at its current behaviour's value; any other value is an AgentError."""
    from frames_agent.agent.errors import AgentError

    if name not in RETIRED:
        return False
    if value != RETIRED[name]:
        raise AgentError(f"{name}={json.dumps(value)}: a retired setting (tried and not kept: "
                         "docs/measurements.md#tried-and-not-kept); run it with the commit listed there")
    return True


class AgentConfig(BaseModel):
    """How the agent searches and answers; defaults are the FRAMES paper's best (k, n, n_docs) = (5, 5, 10)."""

    model_config = ConfigDict(extra="forbid")

    # A newer field's value that does what the agent did before it existed, so older runs resume only with it.
    BEFORE_FIELD: ClassVar[dict[str, object]] = {"repeat_docs": 0, "plan_calls": "every_step"}

    k: int = Field(5, ge=1, le=20, description="search queries written per step")
    n: int = Field(5, ge=1, le=20, description="retrieval steps before answering")
    n_docs: int = Field(10, ge=1, le=100, description="hits fetched per query")
    prompt: str = Field("planning", description="planning prompt: a name in agent/prompts or a file path")
    answer_prompt: str = Field("answer", description="answer prompt: a name in agent/prompts or a file path")
    max_tool_calls: int = Field(3, ge=0, le=20, description="tool calls accepted per step")
    # Measured: docs/measurements.md#budgets
    plan_budget: int = Field(SMALL_MODEL_BUDGETS["plan_budget"], ge=0, description="context tokens shown to plan")
    answer_budget: int = Field(SMALL_MODEL_BUDGETS["answer_budget"], ge=0, description="context tokens shown to answer")
    plan_doc_tokens: int = Field(SMALL_MODEL_BUDGETS["plan_doc_tokens"], ge=1, description="tokens per document when planning")
    answer_doc_tokens: int = Field(SMALL_MODEL_BUDGETS["answer_doc_tokens"], ge=1,
                                   description="tokens per document when answering")
    answer_passages: int = Field(SMALL_MODEL_BUDGETS["answer_passages"], ge=0, le=500,
                                 description="passages shown per article when answering, the passages of every "
                                 "article ranked together against the question (and the step queries); 0 = each "
                                 "article's beginning")
    # Measured: docs/measurements.md#what-the-answer-reads-settings-kept-by-measurement
    sub_questions: int = Field(0, ge=0, le=6, description="self-ask at answer time: the model splits the question into "
                               "up to this many sub-questions, answers each from the passages selected for it (and the "
                               "earlier findings), and the answer prompt shows those notes after the passages (0 = off)")
    sub_answer_budget: int = Field(600, ge=50, description="context tokens shown to answer one sub-question")
    # Measured: docs/measurements.md#passage-size
    passage_words: int | None = Field(None, ge=10, le=1000, description="words per passage when articles are split "
                                      "for answering; unset: 80 where every article's lead fits in half the budget "
                                      "(a few articles), 40 in a larger context (more, shorter pieces of evidence)")
    # The answer prompt asks for "<expression> = <result>" either way, so records allow scoring both on the same replies.
    calculator: bool = Field(False, description="arithmetic the answer writes as '<expression> = <result>' is redone "
                             "by a safe calculator (agent/calculator.py)")
    structured_answer: bool | None = Field(None, description="the answer step asks for JSON {reasoning, answer} "
                                           "(the answer prompt's '<name>_json' twin; the reasoning first, the answer "
                                           "a field of its own), constrained where the backend can; the 'Answer:' "
                                           "line parser reads answers otherwise and when the reply is unusable "
                                           "(None: on where the backend constrains replies)")
    native_tools: bool = Field(True, description="a LangChain chat model with its own tool calling and structured "
                               "output gets plans through with_structured_output and tools through bind_tools "
                               "(local:, openai:, gemini: are constrained by JSON schema either way)")
    # Measured: docs/measurements.md#the-query-proposer
    propose_queries: bool = Field(True, description="a deterministic proposer offers article titles named in the "
                                  "sentences that matched the question; they fill a step up to k")
    # Measured: docs/measurements.md#the-question-query
    question_query: bool = Field(True, description="step 1 also searches the whole question (as BM25-R does), one "
                                 "query beyond the model's k (off: the paper's k searches a step)")
    question_docs: int | None = Field(20, ge=1, le=1000, description="hits fetched for the question query "
                                      "(None: n_docs)")
    # Measured: docs/measurements.md#repeats-read-deeper
    repeat_docs: int = Field(3, ge=0, le=100, description="a model query that repeats an earlier one (dropped "
                             "otherwise) is searched again for this many hits past those its earlier asks fetched, "
                             "origin 'repeat', within the step's k (0 = repeats are dropped)")
    plan_calls: Literal["every_step", "when_new"] = Field(
        "when_new", description="when the planner model is asked: 'every_step' (the paper's loop) or 'when_new': a "
        "step after a plan that only repeated earlier queries replays that plan (its repeats read deeper, the "
        "proposer fills the rest) without a model call, until the planner's view names something the model has not "
        "seen; a model that writes new queries is asked at every step either way")
    plan_sentences: int = Field(2, ge=0, le=10, description="sentences per document shown to the planner: those "
                                "sharing most words with the queries (0 = each document's best passage)")
    # Holds a small model's thought to one short sentence. Measured: docs/measurements.md#plan-budget
    plan_thought_chars: int = Field(160, ge=0, le=4000, description="longest thought a plan reply may write "
                                    "(0: a constrained model writes queries only)")
    # Applied only where the retriever is opened from a config (the CLI); a ready-made retriever keeps its own.
    title_boost: float = Field(DEFAULT_TITLE_BOOST, ge=0, description="weight of the title field against the body "
                               "in BM25 (0 = body only)")
    exact_title: bool = Field(True, description="a query that is an article title (or redirect) brings it first")
    # Applied like the BM25 options. Measured: docs/measurements.md#retrieval-alone-bm25-r-hybrid-search-the-question-query
    dense_weight: float = Field(0.0, ge=0, description="weight of dense (all-MiniLM-L6-v2, title and lead) hits "
                                "fused with BM25's by reciprocal rank (0 = BM25 only)")
    variables: dict[str, str] = Field(default_factory=dict, description="extra prompt variables and their defaults")
    # Generated tokens are the slowest part on a CPU (~10 tok/s): a call that runs on cannot cost more than this.
    plan_max_tokens: int | None = Field(SMALL_MODEL_BUDGETS["plan_max_tokens"], ge=16,
                                        description="cap on a plan reply's tokens (None: the model's own limit); "
                                        "the plan schema also asks for at most k queries")
    answer_max_tokens: int | None = Field(SMALL_MODEL_BUDGETS["answer_max_tokens"], ge=16,
                                          description="cap on an answer reply's tokens (None: the model's own limit)")
    timeout: float | None = Field(SMALL_MODEL_DEADLINES["timeout"], gt=0,
                                  description="seconds per LLM request of a model given by spec (None: no limit)")
    question_timeout: float | None = Field(SMALL_MODEL_DEADLINES["question_timeout"], gt=0,
                                           description="seconds per question; past it the question fails (None: no limit)")

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: Any) -> Any:
        """A retired setting at the value that does what the agent does now is dropped; any other is refused."""
        if isinstance(data, Mapping) and any(key in RETIRED for key in data):
            return {key: value for key, value in data.items() if not retired(key, value)}
        return data

    @classmethod
    def bounds(cls, name: str) -> dict[str, Any]:
        """A field's numeric bounds as pydantic Field arguments ({"ge": 1, "le": 20}), for schemas that reuse it."""
        return {attr: getattr(m, attr) for attr in ("ge", "le") for m in cls.model_fields[name].metadata
                if hasattr(m, attr)}

    def hits_for(self, origin: str, step: int = 1) -> int:
        """Hits fetched for a query of this origin (model, proposer, question, fallback) at this step."""
        if origin == "fallback":
            # Deeper each step: the next n_docs of the question's own list, not the hits already read.
            return self.n_docs * step + ((self.question_docs or self.n_docs) if self.question_query else 0)
        sizes: dict[str, int | None] = {"proposer": PROPOSER_DOCS, "question": self.question_docs}
        return sizes.get(origin) or self.n_docs

    def step_hits(self, count: int, origins: Sequence[str], depths: Sequence[int], step: int = 1) -> list[int]:
        """Hits fetched for each of a step's queries: its recorded depth (a repeat's), else its origin's count."""
        return [(depths[i] if i < len(depths) else 0) or self.hits_for(origins[i] if i < len(origins) else "model", step)
                for i in range(count)]

    @classmethod
    def for_model(cls, model: Any, **overrides: object) -> AgentConfig:
        """Defaults with budgets and deadlines sized for the model (a spec, ModelSpec, chat model, or None)."""
        return cls(**{**model_defaults(model), **{k: v for k, v in overrides.items() if v is not None}})
