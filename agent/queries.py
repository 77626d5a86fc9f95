"""Search queries: what the planner writes (PlanReply), salvage from broken replies, cleaning and dedup against
earlier steps, and entity-style candidates that top a step up to k."""
from __future__ import annotations

import re
from typing import Any, Sequence

from pydantic import BaseModel, Field, field_validator

from agent.state import ToolCall


class PlanReply(BaseModel):
    """What the planner writes each step."""

    thought: str = Field("", json_schema_extra={"maxLength": 300})
    # maxLength steers constrained decoding towards short entity-style queries; validation stays lenient.
    queries: list[str] = Field(default_factory=list, json_schema_extra={"items": {"type": "string", "maxLength": 60}})
    tool_calls: list[ToolCall] = Field(default_factory=list)
    enough: bool = False

    @field_validator("queries", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        return [v if isinstance(v, str) else str(v) for v in value] if isinstance(value, list) else value


def plan_schema(k: int, max_tool_calls: int) -> dict:
    """PlanReply's JSON schema bounded to k queries and max_tool_calls calls.

    A grammar-constrained model then closes the list after k queries instead of writing on to its token limit.
    """
    schema = PlanReply.model_json_schema()
    schema["properties"]["queries"]["maxItems"] = k
    schema["properties"]["tool_calls"]["maxItems"] = max_tool_calls
    return schema


_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,80})[\"”]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|query\s*\d*:)\s*", re.I)


def fallback_plan(raw: str) -> PlanReply:
    """Queries salvaged from a reply that is not valid JSON: quoted strings, else list-like lines."""
    quoted = [q for q in _QUOTED.findall(raw) if q.lower() not in {"queries", "thought", "tool_calls", "enough"}]
    if quoted:
        return PlanReply(queries=quoted)
    lines = [_BULLET.sub("", line).strip(" \"'`,") for line in raw.splitlines()]
    return PlanReply(queries=[line for line in lines if line and len(line.split()) <= 12 and not line.endswith(":")])


def normalise_query(query: str) -> str:
    """Lower-cased, whitespace-collapsed form used to spot repeated queries."""
    return " ".join(re.sub(r"[^\w\s]", " ", query.lower()).split())


def clean_queries(raw: Sequence[str], earlier: Sequence[str], k: int, max_words: int) -> tuple[list[str], list[str]]:
    """At most k short, distinct, new queries; returns (kept, dropped repeats)."""
    seen = {normalise_query(q) for q in earlier}
    kept, dropped = [], []
    for query in raw:
        query = " ".join(_BULLET.sub("", query).strip(" \"'`").split()[:max_words])
        norm = normalise_query(query)
        if not norm:
            continue
        if norm in seen:
            dropped.append(query)
            continue
        seen.add(norm)
        kept.append(query)
    return kept[:k], dropped


# Capitalised spans ("University of Oxford", "Jørn Utzon") and quoted titles name entities: good BM25 queries.
_SPAN = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|du|von|van|and|for|in|on)\s+)*[A-Z0-9][\w'’.-]*)*")
_SPAN_STOP = {"a", "an", "the", "in", "on", "of", "if", "i", "what", "which", "who", "whom", "whose", "when", "where",
              "why", "how", "as", "at", "by", "for", "and", "or", "but", "step", "now", "then", "this", "that",
              "these", "those", "it", "its", "my", "we", "they", "he", "she", "his", "her", "their", "documents",
              "question", "answer", "first", "next", "also"}


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2 and w not in _SPAN_STOP}


def candidate_queries(question: str, thought: str, titles: Sequence[str]) -> list[str]:
    """Entity-like queries to top a step up to k: quoted and capitalised spans, then titles read so far.

    Only titles sharing enough words with the question or the thought qualify: BM25 also returns off-topic hits,
    and searching their titles would pull the context further off topic.
    """
    spans = []
    for text in (question, thought):
        spans += _QUOTED.findall(text)
        clauses = re.split(r"[.,;:?!()]+(?:\s+|$)|\n", text)
        for span in (found for clause in clauses for found in _SPAN.findall(clause)):
            span = re.sub(r"(?:'s|’s|['’])$", "", span)
            words = span.split()
            while words and words[0].lower() in _SPAN_STOP:
                words.pop(0)
            if words and not (len(words) == 1 and words[0].lower() in _SPAN_STOP):
                spans.append(" ".join(words))
    topic = _content_words(f"{question} {thought}")
    return [*spans, *(title for title in titles if _on_topic(title, topic))]


def _on_topic(title: str, topic: set[str]) -> bool:
    """Two shared words, or every word of the title: one common word ("name", "state") is not enough."""
    words = _content_words(title)
    shared = words & topic
    return len(shared) >= 2 or (bool(shared) and shared == words)
