"""Self-ask at answer time: the model splits a multi-hop question into sub-questions, answers each from the passages
selected for it, and the final answer reads those findings with the passages."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from frames_agent.agent.llm.calls import astructured, message_text, structured
from frames_agent.agent.llm.json_repair import Strings
from frames_agent.agent.prompts import load_prompt
from frames_agent.retrieval.bm25 import normalised

# A sub-question is one fact to look up; the cap steers constrained decoding away from restating the question.
MAX_SUB_QUESTION_CHARS = 120
MAX_FINDING_CHARS = 240
# Short replies: a small model must not spend a question's time on its split or sub-answers.
SPLIT_MAX_TOKENS, SUB_ANSWER_MAX_TOKENS = 200, 80
_QUOTED = re.compile(r'"([^"\n]{6,200}\?)"')
# Possessive \s*+: two greedy runs of whitespace side by side backtracked quadratically (8,000 spaces took 11 s).
_QUESTION_LINE = re.compile(r"^\s*+(?:[-*•]|\d{1,2}[.)]|Q\d*[:.])?\s*+(.{6,200}\?)\s*$", re.M)


class SubQuestions(BaseModel):
    """The facts a question needs, each as a short question."""

    questions: Strings = Field(default_factory=list,
                               json_schema_extra={"items": {"type": "string", "maxLength": MAX_SUB_QUESTION_CHARS}})


class Finding(BaseModel):
    """One sub-question and what the model found for it in the passages."""

    question: str
    answer: str


# (sub-question, names found so far) -> the passages shown for it
Passages = Callable[[str, list[str]], str]


class SelfAsk:
    """Sub-questions of a question answered one at a time, each from its own passages and the earlier findings."""

    def __init__(self, llm: BaseChatModel, limit: int, capped: bool = True) -> None:
        self.llm, self.limit = llm, limit
        self.split_prompt, self.sub_prompt = load_prompt("subquestions"), load_prompt("subanswer")
        schema = SubQuestions.model_json_schema()
        schema["properties"]["questions"]["maxItems"] = limit
        # Caps go only where the answer is capped too (small local models): not every hosted model takes max_tokens.
        self.sub_cap: dict[str, Any] = {"max_tokens": SUB_ANSWER_MAX_TOKENS} if capped else {}
        self.split_args: dict[str, Any] = {"json_schema": schema,
                                           **({"max_tokens": SPLIT_MAX_TOKENS} if capped else {})}

    def _ask(self, question: str, sub: str, findings: list[Finding], passages: Passages) -> str:
        # The earlier findings' names pick this sub-question's passages too: "the person from question 1".
        noted = "\n".join(f"- {f.question} {f.answer}" for f in findings) or "(none yet)"
        return self.sub_prompt.render(context=passages(sub, [f.answer for f in findings]), main_question=question,
                                      findings=noted, question=sub)

    def run(self, question: str, passages: Passages, config: RunnableConfig | None = None) -> list[Finding]:
        """The findings for a question's sub-questions, in order."""
        text = self.split_prompt.render(question=question, n=self.limit)
        split = structured(self.llm, text, SubQuestions, fallback_sub_questions, config=config, **self.split_args)
        findings: list[Finding] = []
        for sub in choose(split.value.questions, question, self.limit):
            said = self.llm.invoke(self._ask(question, sub, findings, passages), config=config, **self.sub_cap)
            findings.append(Finding(question=sub, answer=finding_text(message_text(said.content))))
        return findings

    async def arun(self, question: str, passages: Passages, config: RunnableConfig | None = None) -> list[Finding]:
        """Async run."""
        text = self.split_prompt.render(question=question, n=self.limit)
        split = await astructured(self.llm, text, SubQuestions, fallback_sub_questions, config=config,
                                  **self.split_args)
        findings: list[Finding] = []
        for sub in choose(split.value.questions, question, self.limit):
            said = await self.llm.ainvoke(self._ask(question, sub, findings, passages), config=config, **self.sub_cap)
            findings.append(Finding(question=sub, answer=finding_text(message_text(said.content))))
        return findings


def fallback_sub_questions(raw: str) -> SubQuestions:
    """Questions salvaged from a reply that is not valid JSON: quoted questions, else lines ending in '?'."""
    found = _QUOTED.findall(raw) or _QUESTION_LINE.findall(raw)
    return SubQuestions(questions=[q.strip() for q in found])


def choose(questions: list[str], question: str, limit: int) -> list[str]:
    """Distinct sub-questions, at most `limit`; the question itself is not a sub-question."""
    seen, kept = {normalised(question)}, []
    for q in questions:
        q = " ".join(q.split())[:MAX_SUB_QUESTION_CHARS]
        if q and normalised(q) not in seen:
            seen.add(normalised(q))
            kept.append(q)
    return kept[:limit]


def finding_text(reply: str) -> str:
    """The first non-empty line of a sub-answer, without its label, cut to a short sentence."""
    for line in reply.splitlines():
        line = re.sub(r"^\s*[*_#>-]*\s*(?:answer|finding|a)\s*[:：]\s*", "", line.strip(), flags=re.I).strip(" *_`")
        if line:
            return line[:MAX_FINDING_CHARS]
    return ""


def render_findings(findings: Sequence[Finding]) -> str:
    """Findings as lines placed after the passages of the answer prompt."""
    if not findings:
        return ""
    lines = [f"- {f.question} {f.answer or '(not found)'}" for f in findings]
    return "\n\nNotes (each sub-question answered from the passages; they may be wrong):\n" + "\n".join(lines)
