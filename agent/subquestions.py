"""Self-ask at answer time: the model splits a multi-hop question into sub-questions, answers each from the passages
selected for it, and the final answer reads those findings with the passages."""
from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, field_validator

# A sub-question is one fact to look up; the cap steers constrained decoding away from restating the question.
MAX_SUB_QUESTION_CHARS = 120
MAX_FINDING_CHARS = 240
_QUOTED = re.compile(r'"([^"\n]{6,200}\?)"')
_QUESTION_LINE = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)]|Q\d*[:.])?\s*(.{6,200}\?)\s*$", re.M)


class SubQuestions(BaseModel):
    """The facts a question needs, each as a short question."""

    questions: list[str] = Field(default_factory=list,
                                 json_schema_extra={"items": {"type": "string", "maxLength": MAX_SUB_QUESTION_CHARS}})

    @field_validator("questions", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        return [str(v).strip() for v in value if str(v).strip()] if isinstance(value, list) else value


class Finding(BaseModel):
    """One sub-question and what the model found for it in the passages."""

    question: str
    answer: str


def fallback_sub_questions(raw: str) -> SubQuestions:
    """Questions salvaged from a reply that is not valid JSON: quoted questions, else lines ending in '?'."""
    found = _QUOTED.findall(raw) or _QUESTION_LINE.findall(raw)
    return SubQuestions(questions=[q.strip() for q in found])


def sub_question_schema(limit: int) -> dict:
    """JSON schema for the decomposition reply, at most `limit` questions."""
    schema = SubQuestions.model_json_schema()
    schema["properties"]["questions"]["maxItems"] = limit
    return schema


def choose(questions: list[str], question: str, limit: int) -> list[str]:
    """Distinct sub-questions, at most `limit`; the question itself is not a sub-question."""
    seen, kept = {_key(question)}, []
    for q in questions:
        q = " ".join(q.split())[:MAX_SUB_QUESTION_CHARS]
        if q and _key(q) not in seen:
            seen.add(_key(q))
            kept.append(q)
    return kept[:limit]


def finding_text(reply: str) -> str:
    """The first non-empty line of a sub-answer, without its label, cut to a short sentence."""
    for line in reply.splitlines():
        line = re.sub(r"^\s*[*_#>-]*\s*(?:answer|finding|a)\s*[:：]\s*", "", line.strip(), flags=re.I).strip(" *_`")
        if line:
            return line[:MAX_FINDING_CHARS]
    return ""


def render_findings(findings: list[Finding]) -> str:
    """Findings as lines placed after the passages of the answer prompt."""
    if not findings:
        return ""
    lines = [f"- {f.question} {f.answer or '(not found)'}" for f in findings]
    return "\n\nNotes (each sub-question answered from the passages; they may be wrong):\n" + "\n".join(lines)


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())
