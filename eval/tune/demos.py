"""Bootstrapped demonstrations for the planning prompt (DSPy's BootstrapFewShot in spirit): trajectory steps whose
queries found gold articles, candidate demo sets drawn by seed, and the prompt file carrying the chosen set."""
from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from frames_agent.agent.state import AgentResult
from frames_agent.eval.frames.datasets import normalize_title

DEMO_HEADER = "Examples from solved training questions (the queries that found the needed articles):"


@dataclass(frozen=True)
class DemoStep:
    """One step of a demonstration: the model's thought and the queries of it that found gold articles."""

    step: int
    thought: str
    queries: tuple[str, ...]


@dataclass(frozen=True)
class Demo:
    """A training question with the useful steps of the agent's own trajectory on it."""

    question_id: str
    question: str
    recall: float
    steps: tuple[DemoStep, ...] = field(default_factory=tuple)


def bootstrap_demo(question_id: str, question: str, result: AgentResult, gold: Sequence[str],
                   gold_hits: Callable[[str], bool], recall: float) -> Demo | None:
    """The trajectory's steps with a query that found a gold article (gold_hits tells); None when none did."""
    if not gold:
        return None
    steps = []
    for record in result.steps:
        useful = tuple(q for q, origin in zip(record.queries, record.origins or ["model"] * len(record.queries))
                       if origin == "model" and gold_hits(q))
        if useful:  # only the model's own queries teach the model; the proposer's come anyway
            steps.append(DemoStep(record.step, " ".join(record.thought.split())[:200], useful))
    return Demo(question_id, question, recall, tuple(steps)) if steps else None


def gold_hit_checker(search: Callable[[str], list], gold: Sequence[str],
                     aliases: dict[str, str]) -> Callable[[str], bool]:
    """Whether a query's hits (search(query)) include one of the gold articles (redirects count their target)."""
    wanted = {aliases.get(normalize_title(t), normalize_title(t)) for t in gold}
    return lambda query: any(normalize_title(doc.title) in wanted for doc in search(query))


def candidate_sets(demos: Sequence[Demo], count: int, size: int, seed: int) -> list[tuple[int, ...]]:
    """Demo index sets to try: () (the prompt as it is), the best-recall demos, then seeded random draws."""
    sets: list[tuple[int, ...]] = [()]
    if not demos or size < 1:
        return sets
    by_recall = sorted(range(len(demos)), key=lambda i: (-demos[i].recall, demos[i].question_id))
    sets.append(tuple(sorted(by_recall[:size])))
    rng = random.Random(seed)
    for _ in range(count * 10):
        if len(sets) >= count:
            break
        drawn = tuple(sorted(rng.sample(range(len(demos)), min(size, len(demos)))))
        if drawn not in sets:
            sets.append(drawn)
    return sets[:max(1, count)]


def _safe(text: str) -> str:
    """Text that cannot be read as a prompt {variable}."""
    return re.sub(r"[{}]", lambda m: "(" if m.group() == "{" else ")", text)


def render_demos(demos: Sequence[Demo]) -> str:
    """The demonstration block, in the planning prompt's own example format."""
    lines = [DEMO_HEADER]
    for n, demo in enumerate(demos, start=1):
        lines += ["", f"Training example {n}", f"Question: {_safe(' '.join(demo.question.split()))}"]
        for step in demo.steps:
            if step.thought:
                lines.append(f"Step {step.step} thought: {_safe(step.thought)}")
            lines.append(f"Step {step.step} queries: {_safe(json.dumps(list(step.queries), ensure_ascii=False))}")
    return "\n".join(lines)


def prompt_with_demos(base: str, demos: Sequence[Demo]) -> str:
    """The base prompt with the demonstrations placed before its reply format or per-question part."""
    if not demos:
        return base
    block = render_demos(demos) + "\n\n"
    for anchor in ("Reply with one JSON object", "{tools}", "Question: {question}", "{question}"):
        at = base.find(anchor)
        if at >= 0:
            line_start = base.rfind("\n", 0, at) + 1
            return base[:line_start] + block + base[line_start:]
    return block + base


def best_set(scores: dict[int, float], sets: Sequence[tuple[int, ...]]) -> int:
    """The candidate with the highest held-out recall; ties go to fewer demos, then the earlier candidate."""
    return min(scores, key=lambda i: (-scores[i], len(sets[i]), i))
