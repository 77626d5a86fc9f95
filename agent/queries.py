"""Search queries: what the planner writes (PlanReply), salvage from broken replies, and cleaning with dedup in
substance against earlier steps."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from frames_agent.agent.evidence import substance
from frames_agent.agent.llm.json_repair import Strings
from frames_agent.agent.state import ToolCall
from frames_agent.retrieval.bm25 import normalised


class PlanReply(BaseModel):
    """What the planner writes each step."""

    thought: str = Field("", json_schema_extra={"maxLength": 300})
    # maxLength steers constrained decoding towards short entity-style queries; validation stays lenient.
    queries: Strings = Field(default_factory=list, json_schema_extra={"items": {"type": "string", "maxLength": 60}})
    tool_calls: list[ToolCall] = Field(default_factory=list)


def plan_schema(k: int, max_tool_calls: int, thought_chars: int = 300) -> dict:
    """PlanReply's JSON schema bounded to k queries, max_tool_calls calls and a short thought (none at 0)."""
    schema = PlanReply.model_json_schema()
    props = schema["properties"]
    props["queries"]["maxItems"] = k
    if thought_chars:
        props["thought"]["maxLength"] = thought_chars
    else:  # queries only: ~35 fewer tokens to generate a call (the proposer then reads no thought)
        del props["thought"]
    if max_tool_calls:
        props["tool_calls"]["maxItems"] = max_tool_calls
    else:
        del props["tool_calls"]
        schema.pop("$defs", None)
    schema["additionalProperties"] = False
    return schema


def reply_extras(tools: bool) -> dict[str, str]:
    """The {more_fields} and {more_rules} of a planning prompt: only the reply fields this run reads."""
    if not tools:
        return {"more_fields": "", "more_rules": ""}
    return {"more_fields": ', "tool_calls": [{"name": "<tool>", "args": {"<arg>": "<value>"}}]',
            "more_rules": '\nUse "tool_calls": [] when no tool fits.'}


_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,80})[\"”]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|query\s*\d*:)\s*", re.I)


def fallback_plan(raw: str) -> PlanReply:
    """Queries salvaged from a reply that is not valid JSON: quoted strings, else list-like lines."""
    quoted = [q for q in _QUOTED.findall(raw) if q.lower() not in {"queries", "thought", "tool_calls", "enough"}]
    if quoted:
        return PlanReply(queries=quoted)
    lines = [_BULLET.sub("", line).strip(" \"'`,") for line in raw.splitlines()]
    return PlanReply(queries=[line for line in lines if line and len(line.split()) <= 12 and not line.endswith(":")])


# BM25 wants short entity-style queries: longer ones are cut.
MAX_QUERY_WORDS = 12


def clean_queries(raw: Sequence[str], earlier: Sequence[str], k: int) -> tuple[list[str], list[str]]:
    """At most k short queries new in substance (content words, none is dropped), and the dropped repeats."""
    seen = {substance(q) or frozenset([normalised(q)]) for q in earlier}
    kept, dropped = [], []
    for query in raw:
        query = " ".join(_BULLET.sub("", query).strip(" \"'`").split()[:MAX_QUERY_WORDS])
        key = substance(query)
        if not normalised(query):
            continue
        if not key or key in seen:
            dropped.append(query)
            continue
        seen.add(key)
        kept.append(query)
    return kept[:k], dropped


def deeper_repeats(state: Mapping[str, Any], dropped: Sequence[str], room: int, extra: int) -> dict[str, int]:
    """Up to `room` repeated queries -> hits to fetch: all their earlier asks fetched plus the next `extra`."""
    if extra <= 0 or room <= 0:
        return {}
    fetched: dict[frozenset[str], int] = {}
    first: dict[frozenset[str], str] = {}  # searched as first written, so that the deeper hits extend one list
    for record in state.get("steps", []):
        for query, hits in zip(record.queries, record.query_hits):
            key = substance(query)
            fetched[key] = max(fetched.get(key, 0), hits)  # one list: the deepest ask reached furthest
            first.setdefault(key, query)
    chosen: dict[str, int] = {}
    for query in dropped:
        key = substance(query)
        if key in fetched and first[key] not in chosen and len(chosen) < room:
            chosen[first[key]] = fetched[key] + extra
    return chosen
