"""Typed agent configuration, with budgets sized for the model that reads the prompts."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from frames_agent.retrieval.lucene.searcher import DEFAULT_TITLE_BOOST

# The embedded 1.5B model reads ~50-70 prompt tokens/s and writes ~19 on 2 cores: every planning step re-reads its
# documents (they come last in the prompt), so the planner's 400 tokens (~6 articles' matched sentences) are most of
# a step's reading (bench/question.py, issue 12). Half of that view (plan_budget 200, one sentence a document) took
# 0.63 of the time but lost 0.097 recall on 12 tuning questions (bench/arms.py, issue 48), so it stays.
# Answering shows each article's lead and its passages most relevant to the question (retrieval/passages.py): 3
# passages of ~80 words per article, 4 articles under 1,600 tokens; chosen on dev questions (README, issue 18).
SMALL_MODEL_BUDGETS = {"plan_budget": 400, "answer_budget": 1600, "plan_doc_tokens": 60, "answer_doc_tokens": 400,
                       "answer_passages": 3,
                       # A plan reply is a short thought and k queries of a few words; the answer prompt asks
                       # for three short sentences and an answer line.
                       "plan_max_tokens": 256, "answer_max_tokens": 320}
# Gemini-class models read a million tokens; FRAMES' oracle articles alone are tens of thousands.
LARGE_MODEL_BUDGETS = {"plan_budget": 24000, "answer_budget": 120000, "plan_doc_tokens": 600, "answer_doc_tokens": 8000,
                       "answer_passages": 70, "plan_max_tokens": None, "answer_max_tokens": None}
# A hosted model whose window is not known (an unlisted name behind openai:, say) is assumed to read this much.
ASSUMED_HOSTED_WINDOW = 32_768


def budgets_for_window(window: int) -> dict[str, int | None]:
    """Budgets for a model reading `window` tokens: at most half of it for the answer's context and a fifth for the
    plan's (the rest is prompt, thought and reply), capped at the large-model budgets."""
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


def model_budgets(model: Any) -> dict[str, int | None]:
    """Budgets for a spec string, ModelSpec or chat model: small for the embedded models and for models of unknown
    size (test fakes, objects without profile or known name), else from the context window."""
    from frames_agent.agent.llm.spec import ModelClass, ModelSpec
    from frames_agent.agent.llm.windows import model_window

    spec = ModelSpec.of(model)
    if spec.model_class is ModelClass.SMALL_LOCAL:
        return dict(SMALL_MODEL_BUDGETS)
    window = spec.context_window or (model_window(model) if not isinstance(model, (str, ModelSpec)) else None)
    if window is None and spec.model_class is ModelClass.HOSTED:
        window = ASSUMED_HOSTED_WINDOW
    return budgets_for_window(window) if window else dict(SMALL_MODEL_BUDGETS)
# Deadlines (seconds): a local (5,5,10) question takes 2-5 minutes on 2 cores and one call up to a few minutes (an
# Ollama server on a CPU too); a hosted call answers in seconds, so two minutes without a reply is a hung connection.
SMALL_MODEL_DEADLINES = {"timeout": 600.0, "question_timeout": 1800.0}
LARGE_MODEL_DEADLINES = {"timeout": 120.0, "question_timeout": 900.0}


def model_deadlines(model: Any) -> dict[str, float]:
    """Per-request and per-question deadlines: short for hosted models, long for local and unknown ones."""
    from frames_agent.agent.llm.spec import ModelClass, ModelSpec
    from frames_agent.agent.llm.windows import model_window

    spec = ModelSpec.of(model)
    if spec.model_class is ModelClass.UNKNOWN and not isinstance(model, (str, ModelSpec, type(None))):
        hosted = model_window(model) is not None  # a model object from elsewhere that knows its window
    else:
        hosted = spec.model_class is ModelClass.HOSTED and spec.provider != "ollama"
    return dict(LARGE_MODEL_DEADLINES if hosted else SMALL_MODEL_DEADLINES)


class AgentConfig(BaseModel):
    """How the agent searches and answers; defaults are the FRAMES paper's best (k, n, n_docs) = (5, 5, 10)."""

    model_config = ConfigDict(extra="forbid")

    # A field added with a default that changes what the agent does: the value that does what the agent did before
    # it existed, so a run recorded then resumes only with it (other new fields: their default).
    BEFORE_FIELD: ClassVar[dict[str, object]] = {"repeat_docs": 0, "plan_calls": "every_step"}

    k: int = Field(5, ge=1, le=20, description="search queries written per step")
    n: int = Field(5, ge=1, le=20, description="retrieval steps before answering")
    n_docs: int = Field(10, ge=1, le=100, description="hits fetched per query")
    prompt: str = Field("planning", description="planning prompt: a name in agent/prompts or a file path")
    answer_prompt: str = Field("answer", description="answer prompt: a name in agent/prompts or a file path")
    adaptive: bool = Field(False, description="stop early when the model says it has what it needs")
    max_tool_calls: int = Field(3, ge=0, le=20, description="tool calls accepted per step")
    plan_budget: int = Field(SMALL_MODEL_BUDGETS["plan_budget"], ge=0, description="context tokens shown to plan")
    answer_budget: int = Field(SMALL_MODEL_BUDGETS["answer_budget"], ge=0, description="context tokens shown to answer")
    plan_doc_tokens: int = Field(SMALL_MODEL_BUDGETS["plan_doc_tokens"], ge=1, description="tokens per document when planning")
    answer_doc_tokens: int = Field(SMALL_MODEL_BUDGETS["answer_doc_tokens"], ge=1,
                                   description="tokens per document when answering")
    answer_passages: int = Field(SMALL_MODEL_BUDGETS["answer_passages"], ge=0, le=500,
                                 description="passages shown per article when answering: its lead and those most relevant "
                                 "to the question and the step queries (BM25 within the article); 0 = the article's beginning")
    context_selection: Literal["context", "article"] = Field(
        "context", description="how a prompt picks what it reads: 'context' ranks the passages of every article "
        "together against the question (and the step queries) and shows the best, at most answer_passages per article "
        "while others have relevant ones; 'article' (before issue 27) takes articles by search rank, each with its "
        "lead and its best passages")
    # 0 by measurement (issue 18; oracle, first 40 dev questions): weight 1 showed the gold answer's words for 0.625 of
    # the prompts instead of 0.55, but the embedded model answered 10/40 against 11/40 (hand-rated).
    answer_dense_weight: float = Field(0.0, ge=0, description="weight of dense (all-MiniLM-L6-v2) similarity to the "
                                       "question when it re-ranks each article's 30 best BM25 passages for the answer "
                                       "(reciprocal-rank fusion; 0 = BM25 alone)")
    # 0 by measurement (issue 18; oracle, first 40 dev questions, hand-rated): 3 sub-questions gave 7/40 against
    # 11/40 at 52 s a question instead of 31: the 1.5B model's findings carry confident mistakes into the answer.
    sub_questions: int = Field(0, ge=0, le=6, description="self-ask at answer time: the model splits the question into "
                               "up to this many sub-questions, answers each from the passages selected for it (and the "
                               "earlier findings), and the answer prompt shows those notes after the passages (0 = off)")
    sub_answer_budget: int = Field(600, ge=50, description="context tokens shown to answer one sub-question")
    # None by replay (bench/answer_context.py, 199 tune questions): 40-word passages let a 70-article context show the
    # answer's words in 0.377 of answer prompts against 0.312 at 80 words (answer-context recall 0.899 against 0.833),
    # while the oracle's 3 articles do better whole (0.533 at 80 against 0.497 at 40).
    passage_words: int | None = Field(None, ge=10, le=1000, description="words per passage when articles are split "
                                      "for answering; unset: 80 where every article's lead fits in half the budget "
                                      "(a few articles), 40 in a larger context (more, shorter pieces of evidence)")
    # Off until it wins by measurement on numerical questions (issue 18); the answer prompt asks for the
    # "<expression> = <result>" form either way, so records allow scoring both on the same replies.
    calculator: bool = Field(False, description="arithmetic the answer writes as '<expression> = <result>' is redone "
                             "by a safe calculator (agent/calculator.py)")
    # None: on where the backend constrains the reply (local:, openai:, gemini: by JSON schema; a LangChain model with
    # its own structured output), so before/after compare with --set structured_answer=false|true (issue 31).
    structured_answer: bool | None = Field(None, description="the answer step asks for JSON {reasoning, answer} "
                                           "(the answer prompt's '<name>_json' twin; the reasoning first, the answer "
                                           "a field of its own), constrained where the backend can; the 'Answer:' "
                                           "line parser reads answers otherwise and when the reply is unusable "
                                           "(None: on where the backend constrains replies)")
    native_tools: bool = Field(True, description="a LangChain chat model with its own tool calling and structured "
                               "output gets plans through with_structured_output and tools through bind_tools "
                               "(local:, openai:, gemini: are constrained by JSON schema either way)")
    propose_queries: bool = Field(True, description="a deterministic proposer offers entity queries from the "
                                  "sentences that matched (titles first); they fill a step up to k")
    # 0 by measurement: replaying the embedded model's recorded queries, reserved slots pushed out model queries
    # that found gold articles (covered recall 0.59 with 1 or 2 slots, 0.73 with 0; 4 FRAMES dev questions).
    proposer_slots: int = Field(0, ge=0, le=20, description="queries per step kept for the proposer even when the "
                                "model writes k new ones (its queries compete with the model's)")
    # Defaults by measurement (issue 17; the embedded model's recorded queries replayed on the first 40 dev
    # questions): titles only, 2 shared question words and 3 hits per proposal read 78 articles a question, not 190,
    # with covered recall 0.776 against 0.758. Most proposals had been hubs ("United States", "English", "London")
    # named in sentences that matched a query word but not the question's subject.
    proposer_docs: int = Field(3, ge=1, le=100, description="hits fetched per proposer query: it names an article, "
                               "which the exact-title path brings first")
    proposer_min_shared: int = Field(2, ge=0, le=20, description="content words a context sentence must share with "
                                     "the question for the proposer to mine it")
    proposer_titles_only: bool = Field(True, description="the proposer offers article titles only (off: any entity "
                                       "span, titles first)")
    # "order" by default until specificity wins on check questions (issue 36): the order ranking's proposals were
    # mostly hubs ("Census", "Chicago", "Treaty of Versailles") named in sentences that matched the question.
    proposer_rank: Literal["order", "specificity"] = Field(
        "order", description="how the proposer ranks candidate titles: 'order' (sentence score, multi-word, "
        "frequency, first seen) or 'specificity' (rare titles first, by how many articles' text contains the title "
        "phrase, weighted by the question words their sentences answer that no article read so far is titled with; "
        "hubs past proposer_hub_share never proposed; needs a Lucene index, else 'order')")
    proposer_hub_share: float = Field(0.01, gt=0, le=1, description="specificity ranking: a title whose phrase "
                                      "occurs in more than this share of the index's articles is a hub, never proposed")
    feedback_queries: int = Field(0, ge=0, le=5, description="pseudo-relevance feedback (IRCoT-style): from step 2, "
                                  "this many extra queries made of the best matched sentence read so far (its content "
                                  "words), n_docs hits each, origin 'feedback' (0 = off)")
    # On by measurement on the tuning part of dev (issue 36; 199 questions, replayed without a model): the question's
    # top 20 at step 1 gave covered recall 0.723 against 0.612 for the proposer alone; on 40 questions never tuned on
    # multistep without it found less than the question's own top 70 (0.661 against 0.740). As in IRCoT and FlashRAG's
    # iterative pipelines; false is the paper's k searches a step.
    question_query: bool = Field(True, description="step 1 also searches the whole question (as BM25-R does), one "
                                 "query beyond the model's k")
    question_docs: int | None = Field(20, ge=1, le=1000, description="hits fetched for the question query "
                                      "(None: n_docs)")
    feedback_docs: int | None = Field(None, ge=1, le=100, description="hits fetched per feedback query "
                                      "(None: n_docs)")
    # 3 by measurement (issue 36; the model's recorded queries replayed on the tuning part's first 40): covered
    # recall 0.870 at 87.8 articles against 0.845 at 100.0 (paired +0.025 [0.000, 0.058], 3 better, 0 worse; 5 hits
    # read 102 articles for 0.878). Reported on the check part's first 100: 0.838 at 87.3 articles against 0.839 at
    # 99.5, BM25-R at the same depth +0.025 [-0.011, +0.063] against +0.020: the same recall from fewer articles.
    repeat_docs: int = Field(3, ge=0, le=100, description="a model query that repeats an earlier one (dropped "
                             "otherwise) is searched again for this many hits past those its earlier asks fetched, "
                             "origin 'repeat', within the step's k (0 = repeats are dropped)")
    stop_when_stale: bool = Field(False, description="from step 2, stop searching after a step none of whose new "
                                  "articles has a passage that the answer's selection for the question alone shows "
                                  "under answer_budget: a step that brought nothing worth reading ends the loop")
    max_articles: int | None = Field(None, ge=1, le=10000, description="articles the context may hold: a step "
                                     "that would pass it adds its new articles best-ranked first (every query's top "
                                     "hit before any second hit) until it is full; None = no limit")
    plan_calls: Literal["every_step", "when_new"] = Field(
        "when_new", description="when the planner model is asked: 'every_step' (the paper's loop) or 'when_new': a "
        "step after a plan that only repeated earlier queries replays that plan (its repeats read deeper, the "
        "proposer fills the rest) without a model call, until the planner's view names something the model has not "
        "seen; a model that writes new queries is asked at every step either way")
    plan_sentences: int = Field(2, ge=0, le=10, description="sentences per document shown to the planner: those "
                                "sharing most words with the queries (0 = each document's first tokens)")
    # The planning prompt asks for one short sentence; the grammar holds it to that (~35 tokens) so a small model
    # cannot spend a step's time on prose. The thought stays for the embedded model: without it (0) recall on 12
    # tuning questions fell 0.130 [0.048, 0.221] for 0.85 of the time (bench/arms.py, docs/speed.md).
    plan_thought_chars: int = Field(160, ge=0, le=4000, description="longest thought a plan reply may write "
                                    "(0: a constrained model writes queries only)")
    drop_fanout: bool = Field(False, description="drop a query that only adds one word to an earlier one")
    # The BM25 options are applied where the retriever is opened from a config (the CLI commands); a retriever
    # passed in ready-made (or shared by with_settings) keeps its own: BM25Retriever(title_boost=..., exact_title=...).
    title_boost: float = Field(DEFAULT_TITLE_BOOST, ge=0, description="weight of the title field against the body "
                               "in BM25 (0 = body only)")
    exact_title: bool = Field(True, description="a query that is an article title (or redirect) brings it first")
    # Applied like the BM25 options; the default index's dense vectors are built on first use (retrieval/dense).
    # 0 by measurement (issue 17; first 60 dev questions, (5,5,10)): 0.5 gave covered recall 0.782 against 0.768,
    # paired +0.014 [-0.023, 0.052], within noise, and costs ~25 min of encoding before the first run. With
    # question_query on, 0.3 gave 0.825 (paired +0.057 [0.014, 0.102] over the defaults; README): the best recall
    # measured, left opt-in because it needs a dense index and departs from the paper's k searches a step.
    dense_weight: float = Field(0.0, ge=0, description="weight of dense (all-MiniLM-L6-v2, title and lead) hits "
                                "fused with BM25's by reciprocal rank (0 = BM25 only)")
    max_query_words: int = Field(12, ge=1, description="longer queries are cut: BM25 wants short entity-style queries")
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

    def hits_for(self, origin: str, step: int = 1) -> int:
        """Hits fetched for a query of this origin (model, proposer, question, feedback, fallback) at this step."""
        if origin == "fallback":
            # The fallback searches the question again: deeper each step, so that it brings the next n_docs of the
            # question's own list instead of the hits already read.
            return self.n_docs * step + ((self.question_docs or self.n_docs) if self.question_query else 0)
        sizes = {"proposer": self.proposer_docs, "question": self.question_docs, "feedback": self.feedback_docs}
        return sizes.get(origin) or self.n_docs

    def step_hits(self, count: int, origins: Sequence[str], depths: Sequence[int], step: int = 1) -> list[int]:
        """Hits fetched for each of a step's `count` queries: its recorded depth (a repeat's), else its origin's
        count (a query without a recorded origin is the model's)."""
        return [(depths[i] if i < len(depths) else 0) or self.hits_for(origins[i] if i < len(origins) else "model", step)
                for i in range(count)]

    @classmethod
    def for_model(cls, model: Any, **overrides: object) -> AgentConfig:
        """Defaults with budgets and deadlines sized for the model (a spec string, ModelSpec or chat model object;
        None = unknown)."""
        defaults = {**model_budgets(model), **model_deadlines(model)}
        return cls(**{**defaults, **{k: v for k, v in overrides.items() if v is not None}})
