"""The answer step's reply -> the final answer: a fixed final line, a tolerant fallback, and arithmetic by the calculator."""
from __future__ import annotations

import re

from pydantic import BaseModel

from frames_agent.agent.calculator import calculate, format_number
from frames_agent.agent.errors import CalculatorError
from frames_agent.agent.llm.json_repair import Structured
from frames_agent.agent.subquestions import Finding

MAX_ANSWER_CHARS = 300
# A reply is read from its last MAX_REPLY_CHARS characters; whitespace runs are squeezed so the patterns stay linear.
MAX_REPLY_CHARS = 50_000
# A short lead-in ("Final line:", "So the") may precede the answer label on its line.
_FINAL_LINE = re.compile(r"^[\s>*#_-]*(?:[\w\s]{0,20}?[:\s]\s*)?(?:the\s+)?(?:final\s+)?answer\s*(?:is)?"
                         r"\s*[*_]*\s*[:：]\s*[*_]*\s*(.*?)\s*$", re.I | re.M)
_ANSWER_IS = re.compile(r"\b(?:final\s+)?answer\s+is\s*+:?\s*+(.+?)(?:\.\s|\.?$)", re.I | re.M)
# "… the rest of the paragraph. Answer: Triceratops": the label inline, at the end of the last paragraph.
_INLINE = re.compile(r"(?:^|[.!?]\s+)(?:final\s+)?answer\s*+[:：]\s*+(\S(?:[^\n]*\S)?)\s*$", re.I)
_BOXED = re.compile(r"\\boxed\{([^{}]+)\}")
_REASONING = re.compile(r"^\s*[*_]*(?:reasoning|reason|explanation)[*_]*\s*[:：]\s*", re.I)
# "<expression> = <result>": the model shows its arithmetic; the calculator redoes it.
_SHOWN_SUM = re.compile(r"^(?P<expr>[\d\s.,+\-*/×÷−()^]+|\w+_between\([^)]*\))\s*=\s*(?P<rest>.+)$")
_ARITHMETIC = re.compile(r"^[\d\s.,+\-*/×÷−()^]+$|^\w+_between\([^)]*\)$")
_YEAR_RANGE = re.compile(r"^\s*\d{4}[-–]\d{2,4}\s*$")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
# "- x", "2. x", and the labelled items a small model numbers itself ("Fact 6: x", "Step 2", cut off as "Fact 1").
_LIST_ITEM = re.compile(r"^\s*(?:(?:[-*•]|\d{1,2}[.)])\s|(?:fact|step|point|item)\s*\d{1,3}\b)", re.I)
_BARE_NUMBER = re.compile(r"^\s*-?\d[\d,]*(?:\.\d+)?\s*$")
# "Final answer: Answer: 72": a small model repeats the label it was asked for.
_LABEL = re.compile(r"^(?:(?:the\s+)?(?:final\s+)?answer\s*+(?:is)?\s*+[:：]\s*+)+", re.I)


class FinalAnswer(BaseModel):
    """What the answer step concluded, and how the conclusion was read from the reply."""

    answer: str = ""
    reasoning: str = ""
    format_ok: bool = False
    # "<expression> = <value>" when the calculator computed the answer; the model's own result is in `model_answer`.
    calculation: str | None = None
    model_answer: str = ""
    # Self-ask (config sub_questions): the sub-questions and what the model found for each before answering.
    findings: list[Finding] = []
    # Read from a structured reply's answer field (config structured_answer), not from free text.
    structured: bool = False


class AnswerReply(BaseModel):
    """The answer step's structured reply: the reasoning first, then the short answer as a field of its own."""

    reasoning: str = ""
    answer: str = ""


def answer_schema(reasoning_chars: int = 600, answer_chars: int = MAX_ANSWER_CHARS) -> dict:
    """AnswerReply's JSON schema, reasoning first and bounded so a constrained model always reaches its answer."""
    schema = AnswerReply.model_json_schema()
    schema["properties"]["reasoning"]["maxLength"] = reasoning_chars
    schema["properties"]["answer"]["maxLength"] = answer_chars
    schema["required"] = ["reasoning", "answer"]
    schema["additionalProperties"] = False
    return schema


def no_answer(raw: str) -> AnswerReply:
    """The fallback of an unusable structured reply: nothing read (parse_reply then reads the raw text)."""
    return AnswerReply()


def _squeezed(text: str) -> str:
    """text with each run of whitespace as one space: what keeps the line patterns linear."""
    return " ".join(text.split())


def _clean(text: str) -> str:
    text = _LABEL.sub("", _squeezed(text).strip("*_`\"' ").strip())
    return text.rstrip(".").strip()[:MAX_ANSWER_CHARS]


def _final_line(reply: str) -> tuple[str, str, bool]:
    """(answer, reasoning before it, whether the fixed format was followed)."""
    lines = reply.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        match = _FINAL_LINE.match(_squeezed(lines[i]))
        if not match:
            continue
        answer = match.group(1)
        if not _clean(answer):  # "Answer:" alone, the answer on the next line
            answer = next((line for line in lines[i + 1:] if line.strip()), "")
        if _clean(answer):
            return _clean(answer), "\n".join(lines[:i]).strip(), True
    text = reply.strip()
    # Only the last line can end the text: searching from it avoids rereading every earlier "answer:" line.
    inline = _INLINE.search(text, text.rfind("\n") + 1) if "\n" in text else _INLINE.search(text)
    if inline and _clean(inline.group(1)):
        return _clean(inline.group(1)), text[: inline.start(1)].strip(), False
    for pattern in (_BOXED, _ANSWER_IS):
        found = pattern.findall(reply)
        if found:
            return _clean(found[-1]), reply.strip(), False
    rest = [line for line in lines if line.strip()]
    last = _REASONING.sub("", rest[-1]) if rest else ""
    if _LIST_ITEM.match(last) and _REASONING.match(rest[0]) and not _LIST_ITEM.match(_REASONING.sub("", rest[0])):
        # Cut off inside a list of facts: a small model states its conclusion in the reasoning's opening paragraph.
        return _clean(_tail(_REASONING.sub("", rest[0]))), "\n".join(rest).strip(), False
    return _clean(_tail(last)), "\n".join(rest[:-1]).strip(), False


def _tail(text: str) -> str:
    """A long unlabelled paragraph's closing sentences (up to MAX_ANSWER_CHARS), where its conclusion stands."""
    if len(text) <= MAX_ANSWER_CHARS:
        return text
    kept: list[str] = []
    for sentence in reversed(re.split(r"(?<=[.!?])\s+", text.strip())):
        if kept and len(sentence) + sum(len(s) + 1 for s in kept) > MAX_ANSWER_CHARS:
            break
        kept.insert(0, sentence)
    return " ".join(kept)


def parse_reply(reply: str, calculator: bool = False) -> FinalAnswer:
    """The final answer of a reply: its last "Answer:" line, else a tolerant guess; arithmetic redone by the tool."""
    answer, reasoning, ok = _final_line((reply or "")[-MAX_REPLY_CHARS:])
    reasoning = _REASONING.sub("", reasoning)
    return _finish(FinalAnswer(answer=answer, reasoning=reasoning, format_ok=ok, model_answer=answer), calculator)


def read_structured(reply: Structured[AnswerReply], calculator: bool = False) -> FinalAnswer:
    """The final answer of a structured reply: its answer field, else parse_reply of what it has (not format_ok)."""
    value = reply.value
    answer = _clean(value.answer[:MAX_REPLY_CHARS])
    if reply.fallback or not answer:
        final = parse_reply(value.reasoning or reply.raw, calculator)
        return final.model_copy(update={"format_ok": False})
    reasoning = _REASONING.sub("", value.reasoning[-MAX_REPLY_CHARS:]).strip()
    # A reply cut off at its token cap keeps what its answer field holds, but did not follow the format.
    cut = any(note.startswith(("closed truncated", "read the first")) for note in reply.notes)
    final = FinalAnswer(answer=answer, reasoning=reasoning, format_ok=not cut, model_answer=answer, structured=True)
    return _finish(final, calculator)


def _finish(out: FinalAnswer, calculator: bool) -> FinalAnswer:
    """out with the model's arithmetic redone (when asked) and "<x> = <y>" chains read to their result."""
    answer = out.answer
    shown = _SHOWN_SUM.match(answer)
    if shown and _has_operator(shown.group("expr")):
        expr, rest = shown.group("expr"), shown.group("rest").strip()
        out.answer = rest  # the model's own result, unless the calculator can do better
        value = _compute(expr) if calculator else None
        if value is not None:
            out.answer = _NUMBER.sub(value, rest, count=1) if _NUMBER.search(rest) else value
            out.calculation = f"{expr.strip()} = {value}"
    elif " = " in answer:
        # "<entity> = <answer>" chains end in the result; "<name> = <number>" is a label and value, so both stay.
        head, last = answer.rsplit(" = ", 1)
        pair = _BARE_NUMBER.match(last) and not re.search(r"\d", head) and re.search(r"[^\W\d_]", head)
        out.answer = answer if pair else (_clean(last) or answer)
    elif calculator and _ARITHMETIC.match(answer) and _has_operator(answer) and not _YEAR_RANGE.match(answer):
        value = _compute(answer)
        if value is not None:
            out.answer, out.calculation = value, f"{answer} = {value}"
    return out


def _has_operator(expr: str) -> bool:
    return bool(re.search(r"\d\s*[-+*/×÷−^]\s*\(?\s*\d|_between\(", expr))


def _compute(expr: str) -> str | None:
    try:
        return format_number(calculate(expr))
    except CalculatorError:
        return None
