"""FRAMES autorater: a normalised exact-match short-cut, then an LLM judge's TRUE/FALSE with explanation."""
from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel

from agent.llm.calls import message_text
from agent.llm.spec import ModelSpec
from agent.llm.usage import UsageTracker
from agent.prompts import Prompt, load_prompt
from eval.judge import Judge, Verdict, golds, unrated

JUDGE_PROMPT = "frames_judge"
# Longer replies that merely contain the gold answer go to the judge: they may list it as a rejected option.
_EXACT_SLACK_TOKENS = 8
_ARTICLES = {"a", "an", "the"}
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                      "eighty": "80", "ninety": "90", "hundred": "100"})
_TRUE = {"true", "correct", "yes"}
_FALSE = {"false", "incorrect", "no"}
_KEYED = re.compile(r"(?:decision|verdict|judgement|judgment|grade|final answer|result)\W{0,6}?[:=]\W{0,4}"
                    r"(not\s+)?(true|false|correct|incorrect|yes|no)\b", re.IGNORECASE)
_BARE = re.compile(r"\b(not\s+)?(true|false|correct|incorrect)\b", re.IGNORECASE)
_EXPLANATION = re.compile(r"explanation\s*[*_]*\s*[:：]\s*[*_]*\s*(.+)", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s+(thousand|million|billion))?")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}

def normalize_answer(text: str) -> str:
    """Lower case, no accents, punctuation or articles, number words as digits, "1,000" as "1000"."""
    text = unicodedata.normalize("NFKD", str(text or ""))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    text = re.sub(r"(\d+\.\d*?)0+(?!\d)", r"\1", text)
    text = re.sub(r"(\d+)\.(?!\d)", r"\1", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)|[^\w\s.]|_", " ", text)
    tokens = [_NUMBER_WORDS.get(t, t) for t in text.split() if t not in _ARTICLES]
    return " ".join(_join_compound_numbers(tokens))


def _join_compound_numbers(tokens: list[str]) -> list[str]:
    """["80", "7"] from "eighty-seven" becomes ["87"]."""
    out: list[str] = []
    for token in tokens:
        if out and len(token) == 1 and token in "123456789" and out[-1] in ("20", "30", "40", "50", "60", "70", "80", "90"):
            out[-1] = str(int(out[-1]) + int(token))
        else:
            out.append(token)
    return out


def numbers_in(text: str) -> set[float]:
    """The numbers a normalised text states ("1.5 million" is 1500000)."""
    return {float(value) * _SCALE.get(scale, 1) for value, scale in _NUMBER.findall(normalize_answer(text))}


def number_mismatch(response: str, gold: str) -> bool:
    """The gold answer is one number, the response states numbers, and none of them is it.

    A small judge model readily calls "10 years" the same as "87"; numbers can be checked without it.
    """
    gold_norm = normalize_answer(gold)
    if not re.fullmatch(r"\d+(?:\.\d+)?", gold_norm):
        return False
    if any(word in _NUMBER_WORDS for word in re.findall(r"[a-z]+", str(response).lower())):
        return False  # "nineteen sixty-two" reads as 19 62: spelled-out numbers are left to the judge
    stated = numbers_in(response)
    return bool(stated) and float(gold_norm) not in stated


def no_overlap(response: str, gold: str) -> bool:
    """The response shares no word with a gold answer that has no number in it.

    The ground truth cannot be present in such a response short of a paraphrase ("USA" for "United States"),
    and a small judge model readily calls a different name the same; used only for small judges.
    """
    gold_words = set(normalize_answer(gold).split())
    if not gold_words or any(w.replace(".", "").isdigit() for w in gold_words):
        return False
    return not gold_words & set(normalize_answer(response).split())


def exact_match(response: str, gold: str) -> bool:
    """The normalised gold answer appears, as whole words, in a response not much longer than it."""
    gold_norm, resp_norm = normalize_answer(gold), normalize_answer(response)
    if not gold_norm or not resp_norm:
        return False
    if len(resp_norm.split()) > len(gold_norm.split()) + _EXACT_SLACK_TOKENS:
        return False
    return f" {gold_norm} " in f" {resp_norm} "


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
        self.prompt = prompt or load_prompt(JUDGE_PROMPT)
        self.prompt.check({"question", "response", "ground_truth"})

    def _decided(self, correct: bool, method: str, explanation: str, **extra) -> Verdict:
        return Verdict(outcome="accurate" if correct else "incorrect", method=method, explanation=explanation,
                       judge=self.name, **extra)

    def _shortcut(self, response: str, gold: str) -> Verdict | None:
        if not response.strip():
            return self._decided(False, "empty", "empty response")
        if exact_match(response, gold):
            return self._decided(True, "exact", "normalised exact match")
        if self.llm is None:  # only a judge model may call a non-exact answer wrong
            return unrated(self.name)
        if number_mismatch(response, gold):
            stated = ", ".join(f"{n:g}" for n in sorted(numbers_in(response))[:8])
            return self._decided(False, "number-mismatch",
                                 f"the gold answer is the number {gold.strip()}; the response states {stated}")
        if self.strict and no_overlap(response, gold):
            return self._decided(False, "no-overlap", f"the response shares no word with the gold answer {gold.strip()!r}")
        return None

    def _verdict(self, raw: str) -> Verdict:
        decision, why = parse_verdict(raw)
        if decision is None:
            return self._decided(False, "unparsed", why, replies=[raw], error="judge reply has no TRUE/FALSE decision")
        return self._decided(decision, "judge", why, replies=[raw])

    async def arate(self, question: str, gold: str | Sequence[str], response: str) -> Verdict:
        """The verdict with the judge's LLM usage; a failing judge call gives a recorded error, not an exception."""
        gold_text = golds(gold)[0] if golds(gold) else ""
        verdict = self._shortcut(response, gold_text)
        if verdict is not None:
            return verdict
        tracker = UsageTracker(node="judge")
        text = self.prompt.render(question=question, response=response, ground_truth=gold_text)
        try:
            reply = await self.llm.ainvoke(text, config={"callbacks": [tracker]})
            verdict = self._verdict(message_text(reply.content))
        except Exception as exc:  # provider errors of any kind: the question keeps its answer, rated wrong
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            verdict = self._decided(False, "error", "", error=f"judge failed: {first}")
        usage = tracker.usage
        return verdict.model_copy(update={"calls": usage.calls, "prompt_tokens": usage.prompt_tokens,
                                          "completion_tokens": usage.completion_tokens, "timings": tracker.calls})


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
