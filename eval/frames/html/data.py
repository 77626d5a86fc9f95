"""What the HTML report embeds: a small row per question for the table, and its trace, parsed only when opened."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from frames_agent.eval.frames.datasets import normalize_title
from frames_agent.eval.frames.recording import QUERY_CAP, truncated_queries
from frames_agent.eval.frames.records import QuestionRecord, mark
from frames_agent.eval.frames.shown import shown_titles

# Characters of an answer kept in the table row (searchable at once); the whole answer is in the trace.
ROW_ANSWER_CHARS = 300
_VERDICT = {"yes": "correct", "no": "wrong", "–": "none"}
_HEADER = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


def verdict_class(record: QuestionRecord) -> str:
    """correct, wrong, unrated, failed, or none (retrieval only: nothing was answered)."""
    word = mark(record)
    return _VERDICT.get(word, word)


def row(record: QuestionRecord) -> dict:
    """The table's figures of one question in one run (short keys: 824 of them are parsed when the page opens)."""
    verdict = verdict_class(record)
    shown = record.gold_shown
    found = sum(1 for t in record.found_step.values() if t is not None)
    return {
        "v": verdict, "r": record.covered_recall if record.covered_recall is not None else record.recall,
        "gs": None if shown is None else len(shown), "gf": found,
        "fns": record.answer_context_recall is not None and record.answer_context_recall < 1,
        "sw": bool(shown) and verdict == "wrong",
        "s": round(record.seconds, 1), "t": record.tokens.prompt + record.tokens.completion,
        "a": (record.answer or record.raw_answer)[:ROW_ANSWER_CHARS],
        "tq": len(record.truncated_queries or truncated_queries(record.steps)),
    }


def question_row(record: QuestionRecord) -> dict:
    """The columns that name a question, the same in every run."""
    return {"id": record.id, "q": record.question, "types": record.reasoning_types, "g": record.gold_answer}


def _step_titles(record: QuestionRecord) -> list[list[str]]:
    """Titles of the documents each step added; records before new_doc_titles slice retrieved_titles in order."""
    steps = record.steps
    if all("new_doc_titles" in s for s in steps):
        return [list(s["new_doc_titles"]) for s in steps]
    counts = [int(s.get("new_docs") or len(s.get("new_doc_ids") or [])) for s in steps]
    if sum(counts) == len(record.retrieved_titles):  # one document per article: the context's order is step order
        starts = [sum(counts[:i]) for i in range(len(counts))]
        return [record.retrieved_titles[a:a + n] for a, n in zip(starts, counts)]
    return [list(s.get("new_doc_ids") or []) for s in steps]


def _steps(record: QuestionRecord, gold: set[str]) -> list[dict]:
    found = {step: [t for t, s in record.found_step.items() if s == step] for step in record.found_step.values()}
    out = []
    for s, titles in zip(record.steps, _step_titles(record)):
        queries, origins, hits = s.get("queries") or [], s.get("origins") or [], s.get("query_hits") or []
        out.append({
            "step": s.get("step"),
            "queries": [{"text": q, "origin": origins[i] if i < len(origins) else "",
                         "hits": hits[i] if i < len(hits) else None,
                         "cut": (origins[i] if i < len(origins) else "") == "model" and len(q) >= QUERY_CAP}
                        for i, q in enumerate(queries)],
            "tools": s.get("tool_calls") or [], "dropped": s.get("dropped_queries") or [],
            "errors": s.get("errors") or [], "fallback": bool(s.get("fallback")),
            "replayed": bool(s.get("plan_skipped")),
            "new": [{"title": t, "gold": normalize_title(t) in gold} for t in titles],
            "hits": sum(hits) if hits else None, "gold_found": found.get(s.get("step"), []),
        })
    return out


def passages(answer_context: Mapping | None, gold: set[str]) -> list[dict]:
    """The answer prompt's text split by article ("[i] Title" headers), gold articles marked."""
    if not answer_context:
        return []
    text = answer_context.get("text") or ""
    titles = shown_titles(answer_context)
    heads = [m for m in _HEADER.finditer(text)
             if not titles or (int(m.group(1)) <= len(titles) and titles[int(m.group(1)) - 1] == m.group(2))]
    if not heads:
        return [{"title": "", "gold": False, "text": text}] if text else []
    out = [{"title": "", "gold": False, "text": text[:heads[0].start()].strip()}] if heads[0].start() else []
    for m, nxt in zip(heads, [*heads[1:], None]):
        body = text[m.end():nxt.start() if nxt else len(text)].strip("\n")
        out.append({"title": m.group(2), "gold": normalize_title(m.group(2)) in gold, "text": body})
    return out


def _verdict(verdict) -> dict | None:
    if verdict is None:
        return None
    return {"outcome": verdict.outcome, "method": verdict.method, "explanation": verdict.explanation,
            "judge": verdict.judge, "error": verdict.error}


def trace(record: QuestionRecord, aliases: Mapping[str, str] | None = None) -> dict:
    """Everything the trace view shows of one question in one run."""
    gold = {normalize_title(t) for t in record.gold_titles}
    gold |= {normalize_title(v) for v in (aliases or {}).values()}
    shown = set(record.gold_shown or [])
    context = record.answer_context or {}
    return {
        "id": record.id, "question": record.question, "gold_answer": record.gold_answer,
        "gold": [{"title": t, "step": record.found_step.get(t), "origin": record.found_origin.get(t),
                  "at": record.found_at.get(t), "shown": t in shown,
                  "covered": record.covered_titles is None or t in record.covered_titles}
                 for t in record.gold_titles],
        "steps": _steps(record, gold), "passages": passages(context, gold),
        "text_cut": bool(context.get("text_cut")), "budget": context.get("budget"),
        "reasoning": (record.final or {}).get("reasoning") or "", "answer": record.answer,
        "raw_answer": record.raw_answer, "verdict_class": verdict_class(record),
        "verdict": _verdict(record.verdict), "verdict2": _verdict(record.verdict2),
        "error": record.error, "answer_in_prompt": record.answer_in_prompt,
        "seconds": record.seconds, "tokens": record.tokens.prompt + record.tokens.completion,
        "llm_calls": record.llm_calls, "truncated": record.truncated_queries or truncated_queries(record.steps),
    }


def question_ids(runs: Sequence[Sequence[QuestionRecord]]) -> list[str]:
    """Every question of any run, in the first run's order, then the others' new ones."""
    return list(dict.fromkeys(r.id for records in runs for r in records))
