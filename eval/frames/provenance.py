"""Where the gold came from: for each gold article, the step, the number of articles read and the query origin
(model, proposer, question, fallback, repeat) with which it entered the context; per run, totals per origin."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from frames_agent.agent.state import AgentResult
from frames_agent.eval.frames.datasets import normalize_title
from frames_agent.eval.frames.figures import num
from frames_agent.eval.frames.records import QuestionRecord

ORIGINS = ("model", "proposer", "question", "fallback", "repeat", "tool")


class Arrival(NamedTuple):
    """When an article entered the context: its step (0 = up front), the articles read by then, the query's origin."""

    step: int
    read: int
    origin: str | None


def gold_arrivals(gold_titles: Sequence[str], result: AgentResult,
                  aliases: Mapping[str, str] | None = None) -> tuple[dict[str, Arrival | None], list[int]]:
    """Each gold title's Arrival (None: never read; a redirect counts its target), and articles read per step."""
    by_id = {d.id: d for d in result.documents}
    stepped = [(doc_id, record.step, record.new_doc_origins[i] if i < len(record.new_doc_origins) else None)
               for record in result.steps for i, doc_id in enumerate(record.new_doc_ids)]
    listed = {doc_id for doc_id, _, _ in stepped}
    upfront = [(d.id, 0, None) for d in result.documents if d.id not in listed]
    articles: set[str] = set()
    first: dict[str, Arrival] = {}
    after: dict[int, int] = {}
    for doc_id, step, origin in sorted(upfront + stepped, key=lambda item: item[1]):
        doc = by_id.get(doc_id)
        if doc is None:
            continue
        articles.add(doc.key)
        after[step] = len(articles)
        key = normalize_title(doc.title)
        if key and key not in first:
            first[key] = Arrival(step, len(articles), origin)
    steps, read = max((s.step for s in result.steps), default=0), after.get(0, 0)
    by_step = []
    for step in range(1, steps + 1):
        read = after.get(step, read)
        by_step.append(read)
    aliases = aliases or {}
    return {t: first.get(aliases.get(normalize_title(t), normalize_title(t))) for t in gold_titles}, by_step


def articles_by_step(record: QuestionRecord) -> list[int]:
    """Distinct articles read after each step; for records written before it was recorded, new documents summed."""
    if record.articles_by_step:
        return list(record.articles_by_step)
    total, out = 0, []
    for step in record.steps:
        total += len(step.get("new_doc_ids") or []) or int(step.get("new_docs") or 0)
        out.append(total)
    return out


def origin_summary(records: Iterable[QuestionRecord]) -> dict:
    """Per origin: queries run, new articles, gold articles found (also per step), over finished questions."""
    queries: Counter = Counter()
    articles: Counter = Counter()
    gold: Counter = Counter()
    by_step: dict[str, Counter] = {}
    for r in records:
        for step in r.steps:
            origins = step.get("origins") or []
            queries.update(origins or [])
            articles.update(step.get("new_doc_origins") or ["unknown"] * len(step.get("new_doc_ids") or []))
        for title, found in r.found_step.items():
            if found is None:
                continue
            origin = r.found_origin.get(title) or ("given" if found == 0 else "unknown")
            gold[origin] += 1
            by_step.setdefault(str(found), Counter())[origin] += 1
    return {"queries_by_origin": dict(queries), "articles_by_origin": dict(articles), "gold_by_origin": dict(gold),
            "gold_by_step_origin": {s: dict(c) for s, c in sorted(by_step.items(), key=lambda kv: int(kv[0]))}}


def origin_lines(s) -> list[str]:
    """report.md's "Where the gold came from" section (a RunSummary with origin totals), or nothing."""
    if not s.gold_by_origin and not s.queries_by_origin:
        return []
    names = [o for o in (*ORIGINS, "given", "unknown") if o in {*s.queries_by_origin, *s.articles_by_origin,
                                                                   *s.gold_by_origin}]
    rows = ["## Where the gold came from", "",
            "Gold articles found, by the origin of the query that first brought them (new articles are credited to "
            "the first query, in query order, whose hits held them).", "",
            "| origin | queries | new articles | gold found | gold per 100 new articles |", "|---|---:|---:|---:|---:|"]
    for name in names:
        new, found = s.articles_by_origin.get(name, 0), s.gold_by_origin.get(name, 0)
        rows.append(f"| {name} | {s.queries_by_origin.get(name, 0)} | {new} | {found} | "
                    f"{num(100 * found / new if new else None, 1)} |")
    steps = s.gold_by_step_origin
    if steps:
        rows += ["", "| step | " + " | ".join(names) + " |", "|---:|" + "---:|" * len(names)]
        rows += [f"| {step} | " + " | ".join(str(counts.get(n, 0)) for n in names) + " |" for step, counts in steps.items()]
    return rows + [""]
