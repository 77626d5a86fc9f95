"""What the answer saw, model-free: gold articles shown in the answer prompt and whether the gold answer was in it,
which tell a reader failure from a retrieval failure."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from frames_agent.eval.frames.autorater import normalize_answer, numbers_in
from frames_agent.eval.frames.datasets import normalize_title

# Gold answers are short; a long one ("X, because ...") is matched by its content words alone.
_FILLER = frozenset("a an and are as at be by for from in is it of on or that the to was were with".split())
# Characters of a recorded answer context kept in results.jsonl (a local model's is ~7k; a hosted one's can be MBs).
MAX_RECORDED_CONTEXT = 64_000


def shown_titles(answer_context: Mapping | None) -> list[str]:
    """Titles of the articles the answer prompt showed (any selection mode)."""
    if not answer_context:
        return []
    titles = answer_context.get("shown_titles") or [p.get("title", "") for p in answer_context.get("passages") or []]
    return [t for t in titles if t]


def gold_shown(gold_titles: Sequence[str], shown: Sequence[str], aliases: Mapping[str, str] | None = None) -> list[str]:
    """The gold titles (as given) with at least one passage in the answer prompt; a redirect counts as its target."""
    aliases = aliases or {}
    seen = {normalize_title(t) for t in shown}
    return [t for t in gold_titles if aliases.get(normalize_title(t), normalize_title(t)) in seen]


def answer_in_text(gold_answer: str, text: str) -> bool:
    """The gold answer's phrase, number or content words are in the text: a ceiling for a reader, not a verdict."""
    gold, body = normalize_answer(gold_answer), normalize_answer(text)
    if not gold or not body:
        return False
    if f" {gold} " in f" {body} ":
        return True
    if re.fullmatch(r"\d+(?:\.\d+)?", gold):
        return float(gold) in numbers_in(text)
    words = [w for w in gold.split() if w not in _FILLER]
    have = set(body.split())
    return bool(words) and all(w in have for w in words)


def answer_figures(gold_titles: Sequence[str], covered: Sequence[str] | None, found_step: Mapping[str, int | None],
                   gold_answer: str, answer_context: Mapping | None, aliases: Mapping[str, str] | None = None) -> dict:
    """gold_shown, answer_context_recall, shown_recall and answer_in_prompt of a question; None if not answered."""
    if not answer_context or not answer_context.get("budget"):
        return {"gold_shown": None, "answer_context_recall": None, "shown_recall": None, "answer_in_prompt": None}
    shown = gold_shown(gold_titles, shown_titles(answer_context), aliases)
    pool = list(covered) if covered is not None else list(gold_titles)
    found = [t for t in pool if found_step.get(t) is not None]
    text = answer_context.get("text")
    return {
        "gold_shown": shown,
        "answer_context_recall": (len(set(shown) & set(found)) / len(found)) if found else None,
        "shown_recall": (len(set(shown) & set(pool)) / len(pool)) if pool else None,
        "answer_in_prompt": answer_in_text(gold_answer, text) if isinstance(text, str) else None,
    }


def recorded_context(answer_context: dict) -> dict:
    """The answer context as results.jsonl keeps it: the shown text capped at MAX_RECORDED_CONTEXT characters."""
    text = answer_context.get("text")
    if isinstance(text, str) and len(text) > MAX_RECORDED_CONTEXT:
        return {**answer_context, "text": text[:MAX_RECORDED_CONTEXT], "text_cut": True}
    return answer_context
