"""Per-question figures (retrieval, where each gold article came from, what the answer saw: a reader failure told from
a retrieval failure, model-free) and the run summary (accuracy, recall, coverage, provenance, cost)."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from statistics import mean
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from frames_agent.agent.llm.timing import NodeTiming, by_node
from frames_agent.agent.state import AgentResult, TokenUsage
from frames_agent.eval.frames.autorater import agreement, normalize_answer, numbers_in
from frames_agent.eval.frames.datasets import REASONING_TYPES, normalize_title
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.stats import mean_ci, wilson_ci

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


def found_steps(gold_titles: Sequence[str], result: AgentResult,
                aliases: Mapping[str, str] | None = None) -> dict[str, int | None]:
    """Each gold title's first step that brought its article (0 = given up front; a redirect counts its target)."""
    found, _ = gold_arrivals(gold_titles, result, aliases)
    return {title: arrival.step if arrival else None for title, arrival in found.items()}


def recall(found: dict[str, int | None], titles: Iterable[str], upto: int | None = None) -> float | None:
    """Share of titles found (by step `upto`, if given); None when there are no titles."""
    titles = list(titles)
    if not titles:
        return None
    hits = sum(1 for t in titles if (step := found.get(t)) is not None and (upto is None or step <= upto))
    return hits / len(titles)


def retrieval_figures(gold_titles: Sequence[str], covered: Sequence[str] | None, result: AgentResult,
                      aliases: Mapping[str, str] | None = None) -> dict:
    """recall, covered_recall, per-step curves and coverage of one question (redirects count their target)."""
    arrived, by_step = gold_arrivals(gold_titles, result, aliases)
    found = {title: arrival.step if arrival else None for title, arrival in arrived.items()}
    steps = max((s.step for s in result.steps), default=0)
    covered_list = list(covered) if covered is not None else None
    return {
        "found_step": found,
        "steps_run": steps,
        "recall": recall(found, gold_titles),
        "covered_recall": recall(found, covered_list) if covered_list is not None else None,
        "recall_by_step": [recall(found, gold_titles, s) for s in range(1, steps + 1)],
        "coverage": (len(covered_list) / len(gold_titles)) if covered_list is not None and gold_titles else None,
        "found_at": {t: a.read if a else None for t, a in arrived.items()},
        "found_origin": {t: a.origin if a else None for t, a in arrived.items()},
        "articles_by_step": by_step,
    }


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


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return mean(kept) if kept else None


class Accuracy(BaseModel):
    """Accuracy over rated questions (failed ones count as wrong), next to how many are unrated."""

    n: int = 0
    rated: int = 0
    unrated: int = 0
    right: int = 0
    accuracy: float | None = None
    recall: float | None = None


def _accuracy(records: list[QuestionRecord]) -> Accuracy:
    asked = any(r.verdict is not None for r in records)  # a retrieval-only run rates nothing, failures included
    answered = [r for r in records if asked and (r.failed or r.verdict is not None)]
    rated = [r for r in answered if not r.unrated]
    right = sum(1 for r in rated if r.correct)
    return Accuracy(n=len(records), rated=len(rated), unrated=len(answered) - len(rated), right=right,
                    accuracy=right / len(rated) if rated else None,
                    recall=_mean(r.recall for r in records if not r.failed))


def _by_type(records: list[QuestionRecord]) -> dict[str, Accuracy]:
    types = list(REASONING_TYPES) + sorted({t for r in records for t in r.reasoning_types} - set(REASONING_TYPES))
    subsets = {rtype: [r for r in records if rtype in r.reasoning_types] for rtype in types}
    return {rtype: _accuracy(subset) for rtype, subset in subsets.items() if subset}


class RunSummary(BaseModel):
    """summary.json of a FRAMES run: accuracy over rated answers, retrieval, coverage, judging and cost."""

    model_config = ConfigDict(extra="ignore")

    system: str | None = None
    model: str | None = None
    judge: str | None = None
    retrieval_only: bool | None = None
    n: int = 0
    failed: int = 0
    rated: int = 0
    unrated: int = 0
    accuracy: float | None = None
    accuracy_ci: tuple[float, float] | None = None  # 95% Wilson score interval
    exact_matches: int = 0
    by_reasoning_type: dict[str, Accuracy] = {}
    recall: float | None = None
    recall_ci: tuple[float, float] | None = None
    covered_recall: float | None = None
    covered_recall_ci: tuple[float, float] | None = None
    recall_by_step: list[float | None] = []
    recall_by_step_ci: list[tuple[float, float] | None] = []
    covered_recall_by_step: list[float | None] = []
    articles_read: float | None = None  # mean distinct articles in the context at the end
    articles_by_step: list[float] = []  # mean distinct articles read after each step
    # per query origin (ORIGINS)
    queries_by_origin: dict[str, int] = {}
    articles_by_origin: dict[str, int] = {}
    gold_by_origin: dict[str, int] = {}  # gold articles found, credited to the query that first brought them
    gold_by_step_origin: dict[str, dict[str, int]] = {}
    # What the answer saw (answer_figures), over the questions answered from a context.
    answer_context_recall: float | None = None
    answer_context_recall_ci: tuple[float, float] | None = None
    shown_recall: float | None = None
    answer_in_prompt: float | None = None
    answer_in_prompt_ci: tuple[float, float] | None = None
    gold_shown: float | None = None  # mean gold articles shown per question
    # The answer reply's format followed, and answers read from a structured reply rather than the "Answer:" line.
    format_ok: float | None = None
    format_ok_ci: tuple[float, float] | None = None
    structured_answers: int = 0
    reader_failures: int = 0  # rated wrong although the gold answer was in the prompt
    retrieval_failures: int = 0  # rated wrong and the gold answer was not in the prompt
    coverage: float | None = None
    coverage_mean: float | None = None
    fully_covered: int = 0
    gold_articles: int = 0
    oracle_missing: dict[str, int] = {}  # why the oracle could not supply gold articles: reason -> count
    calls: int = 0
    tokens: TokenUsage = TokenUsage()
    seconds: float = 0.0
    judge_calls: int = 0
    timing: dict[str, NodeTiming] = {}  # per node (plan, answer, judge): calls, tokens read and generated, rates
    verdicts: dict[str, int] = {}
    judge_errors: int = 0
    exact_match: float | None = None
    judge_agreement: dict | None = None
    failures: list[dict] = []
    warnings: list[str] = []

    @property
    def exact_rate(self) -> float | None:
        """Exact matches over all questions: a lower bound on accuracy."""
        return self.exact_matches / self.n if self.n else None


def _coverage(records: list[QuestionRecord]) -> dict:
    known = [(len(r.covered_titles), len(r.gold_titles)) for r in records if r.covered_titles is not None and r.gold_titles]
    gold = sum(g for _, g in known)
    return {
        "coverage": sum(c for c, _ in known) / gold if gold else None,
        "coverage_mean": _mean(c / g for c, g in known),
        "fully_covered": sum(1 for c, g in known if c == g),
        "gold_articles": gold,
    }


def _judging(records: list[QuestionRecord]) -> dict:
    methods = Counter(r.verdict.method if r.verdict else "none" for r in records if not r.failed)
    both = [(bool(r.verdict.correct), bool(r.verdict2.correct)) for r in records  # rated: True or False
            if r.verdict and r.verdict2 and r.verdict.rated and r.verdict2.rated and not r.verdict.error
            and not r.verdict2.error]
    return {
        "verdicts": dict(methods),
        "judge_errors": methods.get("error", 0) + methods.get("unparsed", 0),
        "exact_match": _mean(float(r.exact_match) for r in records if r.exact_match is not None),
        "exact_matches": sum(1 for r in records if r.exact_match),
        "judge_agreement": agreement([a for a, _ in both], [b for _, b in both]) if both else None,
    }


def step_values(records: list[QuestionRecord], gold: bool = True) -> list[list[float]]:
    """Per step, each finished question's recall by then (a question that stopped early keeps its last value)."""
    steps = max((r.steps_run for r in records), default=0)
    out = []
    for s in range(1, steps + 1):
        values = [recall(r.found_step, r.gold_titles if gold else r.covered_titles or [], s) for r in records]
        out.append([v for v in values if v is not None])
    return out


def _intervals(records: list[QuestionRecord], overall: Accuracy) -> dict:
    """95% intervals of accuracy (Wilson's, over rated answers, failed as wrong) and of recall (finished questions)."""
    done = [r for r in records if not r.failed]
    return {"accuracy_ci": wilson_ci(overall.right, overall.rated),
            "recall_ci": mean_ci([r.recall for r in done if r.recall is not None]),
            "covered_recall_ci": mean_ci([r.covered_recall for r in done if r.covered_recall is not None]),
            "recall_by_step_ci": [mean_ci(v) for v in step_values(done)]}


def _oracle_missing(records: list[QuestionRecord]) -> dict[str, int]:
    reasons: Counter = Counter()
    for r in records:
        if r.oracle:
            for title in r.oracle.get("missing", []):
                reasons[str(r.oracle.get("reasons", {}).get(title) or "not found")] += 1
    return dict(reasons)


def _seen(records: list[QuestionRecord]) -> dict:
    """Means and intervals of what the answer saw; failures split by whether the answer was in the prompt."""
    recall_seen = [r.answer_context_recall for r in records if r.answer_context_recall is not None]
    in_prompt = [float(r.answer_in_prompt) for r in records if r.answer_in_prompt is not None]
    wrong = [r for r in records if r.correct is False]
    formats = [float(r.format_ok) for r in records if r.format_ok is not None]
    return {"format_ok": _mean(formats), "format_ok_ci": mean_ci(formats),
            "structured_answers": sum(1 for r in records if (r.final or {}).get("structured")),
            "answer_context_recall": _mean(recall_seen), "answer_context_recall_ci": mean_ci(recall_seen),
            "shown_recall": _mean(r.shown_recall for r in records),
            "answer_in_prompt": _mean(in_prompt), "answer_in_prompt_ci": mean_ci(in_prompt),
            "gold_shown": _mean(len(r.gold_shown) for r in records if r.gold_shown is not None),
            "reader_failures": sum(1 for r in wrong if r.answer_in_prompt),
            "retrieval_failures": sum(1 for r in wrong if r.answer_in_prompt is False)}


def _articles(records: list[QuestionRecord]) -> dict:
    """Mean distinct articles read at the end and after each step (a question that stopped early keeps its last)."""
    curves = [c for c in (articles_by_step(r) for r in records) if c]
    steps = max((len(c) for c in curves), default=0)
    return {"articles_read": _mean(c[-1] for c in curves),
            "articles_by_step": [mean(c[min(s, len(c) - 1)] for c in curves) for s in range(steps)]}


def run_summary(records: list[QuestionRecord], **about) -> RunSummary:
    """The run summary from per-question records (one per question id); `about` names system, model, judge."""
    done = [r for r in records if not r.failed]
    overall = _accuracy(records)
    return RunSummary(
        **about, n=len(records), failed=len(records) - len(done), rated=overall.rated, unrated=overall.unrated,
        accuracy=overall.accuracy, by_reasoning_type=_by_type(records),
        recall=_mean(r.recall for r in done), covered_recall=_mean(r.covered_recall for r in done),
        recall_by_step=[_mean(v) for v in step_values(done)],
        covered_recall_by_step=[_mean(v) for v in step_values(done, gold=False)],
        **_coverage(records), calls=sum(r.llm_calls for r in records),
        tokens=TokenUsage(prompt=sum(r.tokens.prompt for r in records),
                      completion=sum(r.tokens.completion for r in records)),
        seconds=round(sum(r.seconds for r in records), 3), judge_calls=sum(r.judge_calls for r in records),
        timing=by_node(call for r in records for call in r.calls), **_judging(records), **_intervals(records, overall),
        oracle_missing=_oracle_missing(records), **_seen(done), **_articles(done), **origin_summary(done),
        failures=[{"id": r.id, "error": r.error} for r in records if r.failed])


# Verdict methods that mean the judge model was asked (a reply, an unreadable reply, a failed call).
_ASKED = ("judge", "unparsed", "error")


def judged_by(s: RunSummary) -> str:
    """Who rated a run's answers: the judge model only when it was asked, else what decided them."""
    if s.retrieval_only:
        return "retrieval only: no answers, no judging"
    if not s.judge or s.judge == "none":
        return "no judge model: exact matches rated, other answers unrated"
    if not s.judge_calls and not any(s.verdicts.get(method) for method in _ASKED):
        return f"every answer decided by the short-cuts; the judge `{s.judge}` was never called"
    return f"judge `{s.judge}` after the short-cuts"
