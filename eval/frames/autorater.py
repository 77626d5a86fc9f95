"""FRAMES autorater: short-cuts that decide only what is certain (docs/evaluation.md#judging), then an LLM judge's
TRUE/FALSE for everything else."""
from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from math import floor, log10

from langchain_core.language_models import BaseChatModel

from frames_agent.agent.llm.calls import message_text
from frames_agent.agent.llm.spec import ModelSpec
from frames_agent.agent.llm.timing import UsageTracker
from frames_agent.agent.prompts import Prompt, load_prompt
from frames_agent.eval.judge import Judge, Verdict, unrated

# --- the short-cuts -------------------------------------------------------------------------------------------------
_ARTICLES = {"a", "an", "the"}
_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
NUMBER_WORDS = {w: str(i) for i, w in enumerate(_UNITS)}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
                     "ninety": "90", "hundred": "100"})
# Words that state a count or amount without digits: a number check cannot read them.
_NUMBERISH = set(NUMBER_WORDS) | {"once", "twice", "thrice", "dozen", "dozens", "half", "quarter", "couple", "pair",
                                  "score", "hundreds", "thousands", "millions", "billions", "none", "nil", "no",
                                  "never", "single", "double", "triple", "both", "neither", "several", "few", "many"}
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s+(thousand|million|billion|trillion))?")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
# Ordinals and decades keep their suffix ("19th", "1990s"); other glued units are split off ("110,000cm").
_GLUED_UNIT = re.compile(r"(?<=\d)(?!(?:st|nd|rd|th|s)\b)([a-z]+)")
NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none|nobody|nothing|cannot|without|instead|rather|unlike|"
                      r"except|incorrect|wrong|false|unknown)\b|n['’]t\b", re.IGNORECASE)
HEDGE = re.compile(r"\?|\b(?:or|either|maybe|perhaps|possibly|possible|probably|likely|unlikely|might|may|could|"
                   r"unsure|uncertain|unclear|approximately|approx|about|around|roughly|nearly|almost|over|under|"
                   r"estimated|estimate|guess|think|believe|seems?|appears?|suggests?|if|unless|whether|assum\w*|"
                   r"between|range|ranging|circa|ca|some|least|most|more|less|than|before|after|until)\b",
                   re.IGNORECASE)
# Capitalised words that name no candidate answer (sentence openings, answer labels, pronouns).
_NOT_CANDIDATES = {"the", "a", "an", "it", "its", "he", "she", "they", "his", "her", "their", "this", "that", "these",
                   "those", "answer", "final", "yes", "i", "in", "on", "at", "by", "of", "for", "and", "to", "there",
                   "was", "is", "are", "were", "we", "so", "thus", "therefore", "hence"}
_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*")
# Joins of a second thing to the first ("red and blue", "red/blue", "red, blue", not "110,000"): a rival candidate.
_JOINS = re.compile(r"\b(?:and|plus|with|also|both|along|together|alongside|besides|including|as well as)\b"
                    r"|[&/;+]|,(?!\d{3}(?!\d))", re.IGNORECASE)
_SLACK_TOKENS = 8  # a longer reply that merely contains the gold answer may be weighing it against others


def normalize_answer(text: str) -> str:
    """Lower case, no accents, punctuation or articles, number words as digits, "1,000" as "1000", units unglued."""
    text = unicodedata.normalize("NFKD", str(text or ""))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    text = re.sub(r"(\d+\.\d*?)0+(?!\d)", r"\1", text)
    text = re.sub(r"(\d+)\.(?!\d)", r"\1", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)|[^\w\s.]|_", " ", text)
    text = _GLUED_UNIT.sub(r" \1", text)
    tokens = [NUMBER_WORDS.get(t, t) for t in text.split() if t not in _ARTICLES]
    return " ".join(_join_compound_numbers(tokens))


def _join_compound_numbers(tokens: list[str]) -> list[str]:
    """["80", "7"] from "eighty-seven" becomes ["87"]."""
    tens = ("20", "30", "40", "50", "60", "70", "80", "90")
    out: list[str] = []
    for token in tokens:
        if out and len(token) == 1 and token in "123456789" and out[-1] in tens:
            out[-1] = str(int(out[-1]) + int(token))
        else:
            out.append(token)
    return out


def numbers_in(text: str) -> set[float]:
    """The numbers a normalised text states ("1.5 million" is 1500000)."""
    return {float(value) * _SCALE.get(scale, 1) for value, scale in _NUMBER.findall(normalize_answer(text))}


def _other_candidates(response: str, gold_norm: str) -> bool:
    """The response names a number or a capitalised word the gold answer does not have, or joins something to it."""
    gold_words = set(gold_norm.split())
    if numbers_in(response) - numbers_in(gold_norm):
        return True
    if len(_JOINS.findall(str(response))) > len(_JOINS.findall(gold_norm)):
        return True
    for word in _CAPITALISED.findall(response):
        if any(t not in gold_words and t not in _NOT_CANDIDATES for t in normalize_answer(word).split()):
            return True
    return False


def exact_match(response: str, gold: str) -> bool:
    """Certainly right: the same normalised text, or the gold answer stated alone (no rival, negation or hedge)."""
    gold_norm, resp_norm = normalize_answer(gold), normalize_answer(response)
    if not gold_norm or not resp_norm:
        return False
    if resp_norm == gold_norm:
        return True
    if len(resp_norm.split()) > len(gold_norm.split()) + _SLACK_TOKENS or f" {gold_norm} " not in f" {resp_norm} ":
        return False
    if NEGATION.search(str(response)) or HEDGE.search(str(response)):
        return False
    return not _other_candidates(response, gold_norm)


def _significant(value: float) -> int:
    """Significant digits of a stated number (trailing zeros of a whole number are not significant)."""
    if float(value).is_integer():
        return max(1, len(str(int(abs(value))).rstrip("0")))
    return max(1, len(f"{abs(value):.10f}".rstrip("0").replace(".", "").lstrip("0")))


def _rounds_to(value: float, target: float) -> bool:
    """value is target rounded to value's precision ("1.5 million" for 1,502,000; "1970" for 1969)."""
    if target == 0 or value == 0:
        return value == target
    places = _significant(value) - 1 - floor(log10(abs(target)))
    return abs(round(target, places) - value) <= 1e-9 * max(1.0, abs(value))


def number_mismatch(response: str, gold: str) -> bool:
    """Certainly wrong: the gold is one number and the response plainly states one other number."""
    # A small judge readily calls "10 years" the same as "87"; anything approximate or hedged goes to the judge.
    gold_norm = normalize_answer(gold)
    if not re.fullmatch(r"\d+(?:\.\d+)?", gold_norm) or NEGATION.search(str(response)) or HEDGE.search(str(response)):
        return False
    if any(word in _NUMBERISH for word in re.findall(r"[a-z]+", str(response).lower())):
        return False
    stated = numbers_in(response)
    if len(stated) != 1:
        return False
    value, target = stated.pop(), float(gold_norm)
    return not _rounds_to(value, target) and not _rounds_to(target, value)


def _stems(words: set[str]) -> set[str]:
    """Words without a plural ending, so "giraffes" meets "giraffe"."""
    return {re.sub(r"(?:es|s)$", "", w) if len(w) > 3 else w for w in words}


def _initials(words: list[str]) -> set[str]:
    """Acronyms a run of words may be shortened to ("kentucky fried chicken" -> "kfc")."""
    out = set()
    for size in range(2, 7):
        for start in range(0, len(words) - size + 1):
            run = words[start:start + size]
            out.add("".join(w[0] for w in run))
            out.add("".join(w[0] for w in run if w not in {"of", "and", "for", "de", "on", "in"}))
    return out


def no_overlap(response: str, gold: str) -> bool:
    """The response shares nothing (plurals, abbreviations, initials allowed) with a gold name or phrase."""
    # Only for small judges: the ground truth cannot be in such a response short of a free paraphrase.
    gold_list, resp_list = normalize_answer(gold).split(), normalize_answer(response).split()
    if not gold_list or not resp_list or any(any(c.isdigit() for c in w) or w in _NUMBERISH for w in gold_list):
        return False
    gold_words, resp_words = set(gold_list), set(resp_list)
    if _stems(gold_words) & _stems(resp_words):
        return False
    if any(a.startswith(b) or b.startswith(a) for a in gold_words for b in resp_words if min(len(a), len(b)) >= 4):
        return False
    gold_forms, resp_forms = gold_words | _letter_runs(gold_list), resp_words | _letter_runs(resp_list)
    return not (_initials(gold_list) & resp_forms or _initials(resp_list) & gold_forms)


def _letter_runs(words: list[str]) -> set[str]:
    """Runs of single letters joined ("u s a" from "U.S.A." -> "usa") and the whole text without spaces."""
    runs = set(re.findall(r"(?:\b[a-z] )+[a-z]\b", " ".join(words)))
    return {r.replace(" ", "") for r in runs} | {"".join(words)}


# The whole response declines (narrow: "I don't know, but probably Paris" and "there were none" go to the judge).
_REFUSAL = re.compile(
    r"^(?:i (?:don'?t|do not) know|unknown|no answer|not enough information(?: (?:is )?(?:provided|given|available))?"
    r"|(?:i|we) (?:cannot|can'?t|can not|am unable to|are unable to) (?:answer|determine|calculate|say|tell|know)\b.*"
    r"|(?:the )?(?:passages?|documents?|articles?|context|information)(?: (?:provided|given|above))? (?:does|do) not "
    r"(?:provide|mention|contain|say|give|include)\b.*)$")
_TURN = re.compile(r"\b(?:but|however|although|though|probably|likely|perhaps|maybe|might|guess|believe|think)\b")


def refusal(response: str, gold: str) -> bool:
    """The response only declines to answer (and the gold answer is not itself a refusal)."""
    def declines(text: str) -> bool:
        flat = " ".join(text.lower().replace("’", "'").split()).strip(" .!")
        return bool(_REFUSAL.match(flat)) and not _TURN.search(flat)
    return declines(response) and not declines(gold)


# --- the judge ------------------------------------------------------------------------------------------------------
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

    def _verdict(self, raw: str) -> Verdict:
        decision, why = parse_verdict(raw)
        if decision is None:  # the judge did not decide: unrated (rejudge can rate it), never wrong
            return Verdict(outcome="unrated", method="unparsed", explanation=why, judge=self.name, replies=[raw],
                           error="judge reply has no TRUE/FALSE decision")
        return self._decided(decision, "judge", why, replies=[raw])

    async def arate(self, question: str, gold: str, response: str) -> Verdict:
        """The verdict with the judge's LLM usage; a failing judge call gives a recorded error, not an exception."""
        verdict = self.shortcut(response, gold)
        if self.llm is None and (verdict is None or verdict.method not in ("empty", "exact")):
            return unrated(self.name)  # only a judge model may call a non-exact answer wrong
        if verdict is not None:
            return verdict
        assert self.llm is not None, "without a judge model the short-cuts decide every answer"
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
