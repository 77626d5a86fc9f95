"""The report's "What the answer could see" section: gold articles shown, the gold answer in the prompt, and
wrong answers split into reader and retrieval failures."""
from __future__ import annotations

from frames_agent.eval.frames.datasets import normalize_title
from frames_agent.eval.frames.figures import num, pct, with_ci
from frames_agent.eval.frames.metrics import RunSummary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.retrieval.context import LARGE_CONTEXT_WORDS, PASSAGE_WORDS


def visibility_lines(config: dict, records: list[QuestionRecord], summary: RunSummary) -> list[str]:
    """How much of each gold article the answer prompt showed (passage mode records which passages it showed)."""
    agent = config.get("agent") or {}
    shown, seen, in_context = [], 0, 0
    for record in records:
        gold = {normalize_title(t) for t in record.gold_titles}
        in_context += len(gold & {normalize_title(t) for t in record.retrieved_titles})
        for article in (record.answer_context or {}).get("passages") or []:
            if normalize_title(article.get("title", "")) in gold and article.get("article_tokens"):
                seen += 1
                # the shown text carries a title line and separators: a short article can come out above 100%
                shown.append(min(1.0, article["tokens"] / article["article_tokens"]))
    if not agent.get("answer_passages") or not in_context:
        return _seen_lines(summary)
    shown.sort()
    median = shown[len(shown) // 2] if shown else 0.0
    how = ("passages ranked across the whole context, at most" if agent.get("context_selection", "context") == "context"
           else "articles by search rank, each with")
    return ["## What the answer could see", "",
            f"- Answer budget {agent.get('answer_budget')} tokens: {how} {agent.get('answer_passages')} passages of "
            f"{_words(agent.get('passage_words'))} per article (more when few articles leave room).",
            f"- Gold articles in the context: {in_context}; shown to the answer: {seen}; share of each shown gold "
            f"article's tokens the answer saw: median {pct(median)}, range {pct(shown[0] if shown else 0)}–"
            f"{pct(shown[-1] if shown else 0)}.", *_seen_lines(summary)[2:]]


def _seen_lines(s: RunSummary) -> list[str]:
    """Answer-context recall, the gold answer in the prompt, and wrong answers split by reader and retrieval."""
    formats = [] if s.format_ok is None else [
        f"- Answer format followed (format_ok: a usable structured reply, or the 'Answer:' line): "
        f"{with_ci(s.format_ok, s.format_ok_ci)}; read from a structured reply: {s.structured_answers}."]
    if s.answer_in_prompt is None and s.answer_context_recall is None:
        return ["## What the answer could see", "", *formats, ""] if formats else []
    return ["## What the answer could see", "", *formats,
            f"- Answer-context recall (gold articles found that the answer prompt showed): "
            f"{with_ci(s.answer_context_recall, s.answer_context_recall_ci)}; gold articles shown per question: "
            f"{num(s.gold_shown, 1)}; shown among all covered gold articles: {num(s.shown_recall)}.",
            f"- Gold answer in the answer prompt (its words or number; model-free): "
            f"{with_ci(s.answer_in_prompt, s.answer_in_prompt_ci)}.",
            f"- Wrong answers: {s.reader_failures} with the gold answer in the prompt (reader failures), "
            f"{s.retrieval_failures} without it (retrieval failures).", ""]


def _words(words: object) -> str:
    """The passage size a run's config names (unset: chosen by the context's size)."""
    if words is None:
        return f"~{PASSAGE_WORDS} words (few articles) or ~{LARGE_CONTEXT_WORDS} words (a larger context)"
    return f"~{words} words"
