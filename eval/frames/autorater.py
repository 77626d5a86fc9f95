"""FRAMES autorater: short-cuts for the certain cases (eval.frames.shortcuts), then an LLM judge's TRUE/FALSE."""
from __future__ import annotations

import json
import re
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel

from frames_agent.agent.llm.calls import message_text
from frames_agent.agent.llm.spec import ModelSpec
from frames_agent.agent.llm.timing import UsageTracker
from frames_agent.agent.prompts import Prompt, load_prompt
from frames_agent.eval.frames.shortcuts import exact_match, no_overlap, number_mismatch, numbers_in, refusal
from frames_agent.eval.judge import Judge, Verdict, unrated

# "frames": the paper's autorater prompt (Krishna et al. 2024, arXiv:2409.12941, Appendix B), its wording and order.
JUDGE_PROMPT = "frames_judge"
_TRUE = {"true", "correct", "yes"}
_FALSE = {"false", "incorrect", "no"}
_KEYED = re.compile(r"(?:decision|verdict|judgement|judgment|grade|final answer|result)\W{0,6}?[:=]\W{0,4}"
                    r"(not\s+)?(true|false|correct|incorrect|yes|no)\b", re.IGNORECASE)
_BARE = re.compile(r"\b(not\s+)?(true|false|correct|incorrect)\b", re.IGNORECASE)
_EXPLANATION = re.compile(r"explanation\s*[*_]*\s*[:：]\s*[*_]*\s*(.+)", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def judge_prompt(name: str = "frames") -> Prompt:
    """A FRAMES judge prompt: "frames" (the paper's, default) or a prompt file."""
    return load_prompt(JUDGE_PROMPT if name == "frames" else name)


def _decision_word(negated: str | None, word: str) -> bool:
    value = word.lower() in _TRUE
    return not value if negated else value


def _from_json(raw: str) -> bool | None:
    match = _JSON_OBJECT.search(raw)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for key in ("decision", "verdict", "correct", "is_correct", "result", "grade", "answer"):
        value = data.get(key)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
    return None


def _from_bare_words(text: str) -> bool | None:
    lines = [line for line in text.splitlines() if line.strip()]
    for scope in (lines[-1:] if lines else [], [text]):
        found = {_decision_word(neg, word) for line in scope for neg, word in _BARE.findall(line)}
        if len(found) == 1:
            return found.pop()
    return None


def parse_verdict(raw: str) -> tuple[bool | None, str]:
    """(decision or None when unreadable, explanation) from a judge reply of any shape; never raises."""
    text = str(raw or "")
    explanation = _EXPLANATION.search(text)
    why = (explanation.group(1) if explanation else text).strip()[:500]
    decision = _from_json(text)
    if decision is None:
        keyed = _KEYED.findall(text)
        decision = _decision_word(*keyed[-1]) if keyed else _from_bare_words(text)
    return decision, why


class Autorater(Judge):
    """The FRAMES judge: exact match first, then (if any) the judge model's TRUE/FALSE; without one, unrated."""

    def __init__(self, llm: BaseChatModel | None, name: str, prompt: Prompt | None = None,
                 strict: bool | None = None) -> None:
        self.llm, self.name = llm, name
        # Small local judges get the deterministic no-overlap check before they are asked.
        self.strict = ModelSpec.of(name).local if strict is None else strict
        self.prompt = prompt or judge_prompt()
        self.prompt.check({"question", "response", "ground_truth"})

    def _decided(self, correct: bool, method: str, explanation: str, **extra) -> Verdict:
        return Verdict(outcome="accurate" if correct else "incorrect", method=method, explanation=explanation,
                       judge=self.name, **extra)

    def shortcut(self, response: str, gold: str) -> Verdict | None:
        """The verdict of the deterministic checks alone, as if a judge were there; None: only a judge can tell."""
        if not response.strip():
            return self._decided(False, "empty", "empty response")
        if exact_match(response, gold):
            return self._decided(True, "exact", "the gold answer, stated alone (normalised)")
        if refusal(response, gold):
            return self._decided(False, "refusal", "the response declines to answer")
        if number_mismatch(response, gold):
            stated = ", ".join(f"{n:g}" for n in sorted(numbers_in(response))[:8])
            return self._decided(False, "number-mismatch",
                                 f"the gold answer is the number {gold.strip()}; the response states {stated}")
        if self.strict and no_overlap(response, gold):
            return self._decided(False, "no-overlap", f"the response shares no word with the gold answer {gold.strip()!r}")
        return None

    def _shortcut(self, response: str, gold: str) -> Verdict | None:
        verdict = self.shortcut(response, gold)
        if self.llm is None and (verdict is None or verdict.method not in ("empty", "exact")):
            return unrated(self.name)  # only a judge model may call a non-exact answer wrong
        return verdict

    def _verdict(self, raw: str) -> Verdict:
        decision, why = parse_verdict(raw)
        if decision is None:  # the judge did not decide: unrated (rejudge can rate it), never wrong
            return Verdict(outcome="unrated", method="unparsed", explanation=why, judge=self.name, replies=[raw],
                           error="judge reply has no TRUE/FALSE decision")
        return self._decided(decision, "judge", why, replies=[raw])

    async def arate(self, question: str, gold: str, response: str) -> Verdict:
        """The verdict with the judge's LLM usage; a failing judge call gives a recorded error, not an exception."""
        verdict = self._shortcut(response, gold)
        if verdict is not None:
            return verdict
        assert self.llm is not None, "without a judge model _shortcut decides every answer"
        tracker = UsageTracker(node="judge")
        text = self.prompt.render(question=question, response=response, ground_truth=gold)
        try:
            reply = await self.llm.ainvoke(text, config={"callbacks": [tracker]})
            verdict = self._verdict(message_text(reply.content))
        except Exception as exc:  # provider errors of any kind: the question keeps its answer, left unrated
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            verdict = Verdict(outcome="unrated", method="error", judge=self.name, error=f"judge failed: {first}")
        usage = tracker.usage
        return verdict.model_copy(update={"calls": usage.calls, "prompt_tokens": usage.prompt_tokens,
                                          "completion_tokens": usage.completion_tokens, "timings": tracker.calls})


def autorater(spec: str, prompt: str = "frames", cache: bool = False, llm: BaseChatModel | None = None) -> Autorater:
    """The FRAMES judge over the model `spec` (`llm`, when already resolved); "none": the short-cuts alone."""
    if spec != "none" and llm is None:
        from frames_agent.agent.llm import resolve_model

        llm = resolve_model(spec, cache=cache)
    return Autorater(None if spec == "none" else llm, spec, prompt=judge_prompt(prompt))


def agreement(first: Sequence[bool], second: Sequence[bool]) -> dict:
    """Raw agreement and Cohen's kappa of two judges over the same questions (kappa None when undefined)."""
    pairs = list(zip(first, second))
    n = len(pairs)
    if n == 0:
        return {"n": 0, "agreement": None, "kappa": None}
    observed = sum(a == b for a, b in pairs) / n
    p1, p2 = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    expected = p1 * p2 + (1 - p1) * (1 - p2)
    kappa = None if expected == 1 else (observed - expected) / (1 - expected)
    return {"n": n, "agreement": observed, "kappa": kappa}
