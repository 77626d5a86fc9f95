"""How a system's output on one question becomes the fields of its QuestionRecord."""
from __future__ import annotations

from frames_agent.agent.queries import PlanReply
from frames_agent.eval.frames.datasets import Question
from frames_agent.eval.frames.metrics import retrieval_figures
from frames_agent.eval.frames.shown import answer_figures, recorded_context
from frames_agent.eval.frames.systems import SystemOutput

# The plan schema's length cap on a query (constrained decoding stops a model's query there, mid-phrase if need be).
QUERY_CAP: int = PlanReply.model_json_schema()["properties"]["queries"]["items"]["maxLength"]


def truncated_queries(steps: list[dict]) -> list[str]:
    """The model's queries that reached the plan schema's length cap: likely cut off by constrained decoding."""
    return [q for s in steps for q, origin in zip(s.get("queries") or [], s.get("origins") or [])
            if origin == "model" and len(q) >= QUERY_CAP]


def question_fields(question: Question) -> dict:
    """The record fields that say which question it is."""
    return {"id": question.id, "question": question.prompt, "gold_answer": question.answer,
            "reasoning_types": list(question.reasoning_types), "gold_titles": list(question.gold_titles)}


def result_fields(output: SystemOutput, covered: list[str] | None, question: Question, aliases: dict) -> dict:
    """The record fields of what a system did: answer, steps, retrieval figures and what the answer saw."""
    result = output.result
    figures = retrieval_figures(question.gold_titles, covered, result, aliases)
    context = result.answer_context.model_dump()
    titles = {d.id: d.title for d in result.documents}
    seen = answer_figures(question.gold_titles, covered, figures["found_step"], question.answer, context, aliases)
    return {
        "answer": result.answer, "raw_answer": result.raw_answer, "error": result.error,
        "retrieved_titles": list(dict.fromkeys(d.title for d in result.documents)),
        "steps": [{"step": s.step, "queries": s.queries, "tool_calls": [c.name for c in s.tool_calls],
                   "new_docs": len(s.new_doc_ids), "fallback": s.fallback, "filled_queries": s.filled_queries,
                   "dropped_queries": s.dropped_queries, "errors": s.errors, "origins": s.origins,
                   "new_doc_ids": s.new_doc_ids, "new_doc_titles": [titles.get(i, i) for i in s.new_doc_ids],
                   "query_hits": s.query_hits, "query_depths": s.query_depths, "new_doc_origins": s.new_doc_origins,
                   "plan_skipped": s.plan_skipped, "new_names": s.new_names}
                  for s in result.steps],
        "truncated_queries": truncated_queries([s.model_dump() for s in result.steps]),
        "covered_titles": covered, **figures, **seen,
        "llm_calls": result.llm_calls, "tokens": result.tokens.model_dump(), "calls": result.calls,
        "answer_context": recorded_context(context),
        "oracle": output.oracle, "final": result.final.model_dump() if result.final else None,
    }
