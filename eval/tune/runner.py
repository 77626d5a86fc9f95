"""`tune`: bootstrap planning demonstrations (DSPy's BootstrapFewShot in spirit) from the steps whose queries found
gold articles, pick the demo set by held-out recall, write the prompt; a killed tune resumes from WORK/results.jsonl."""
from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.prompts import load_prompt
from frames_agent.agent.state import AgentResult
from frames_agent.core.errors import FramesAgentError
from frames_agent.eval.frames.datasets import Question, normalize_title
from frames_agent.eval.frames.metrics import found_steps, recall
from frames_agent.eval.frames.systems import CoverageChecker
from frames_agent.eval.rundir import RunDir
from frames_agent.retrieval.types import Retriever

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


# Braces turned to parentheses: demonstration text cannot be read as a prompt {variable}.
_SAFE = str.maketrans("{}", "()")


def prompt_with_demos(base: str, demos: Sequence[Demo]) -> str:
    """The base prompt with the demonstrations, in its own example format, before its reply format or question."""
    if not demos:
        return base
    lines = [DEMO_HEADER]
    for n, demo in enumerate(demos, start=1):
        lines += ["", f"Training example {n}", f"Question: {' '.join(demo.question.split()).translate(_SAFE)}"]
        for step in demo.steps:
            if step.thought:
                lines.append(f"Step {step.step} thought: {step.thought.translate(_SAFE)}")
            queries = json.dumps(list(step.queries), ensure_ascii=False).translate(_SAFE)
            lines.append(f"Step {step.step} queries: {queries}")
    block = "\n".join(lines) + "\n\n"
    for anchor in ("Reply with one JSON object", "{tools}", "Question: {question}", "{question}"):
        at = base.find(anchor)
        if at >= 0:
            line_start = base.rfind("\n", 0, at) + 1
            return base[:line_start] + block + base[line_start:]
    return block + base


class TuneRun(BaseModel):
    """One agent run of a tune: "boot:<question id>" or "eval:<set>:<question id>", its recall and result."""

    id: str
    recall: float
    result: dict


@dataclass(frozen=True)
class TuneSettings:
    """What `tune` searches over: train questions, the base prompt, budget and seed."""

    prompt: str = "planning"
    budget: int = 20
    seed: int = 0
    candidates: int = 4
    demos: int = 2
    held_out: float = 0.35


@dataclass
class TuneOutcome:
    """The chosen prompt text and what every candidate scored on the held-out slice."""

    text: str
    chosen: int
    scores: dict[int, float]
    sets: list[tuple[int, ...]]
    demos: list[Demo]


def split(questions: Sequence[Question], settings: TuneSettings) -> tuple[list[Question], list[Question]]:
    """(bootstrap, held-out) questions: a seeded shuffle of the first `budget`-sized draw, cut by held_out."""
    usable = [q for q in questions if q.gold_titles]
    if len(usable) < 2:
        raise FramesAgentError("tune needs at least 2 train questions with gold articles")
    drawn = random.Random(settings.seed).sample(usable, min(settings.budget, len(usable)))
    held = max(1, round(len(drawn) * settings.held_out))
    held = min(held, len(drawn) - 1)
    return drawn[held:], drawn[:held]


class Tuner:
    """Runs the phases against a work directory; the agent factory and retriever are injected."""

    def __init__(self, make_agent: Callable[[str], FramesAgent], retriever: Retriever, settings: TuneSettings, work: Path,
                 progress: bool = True) -> None:
        self.make_agent, self.retriever, self.settings = make_agent, retriever, settings
        self.run_dir, self.progress = RunDir(work, TuneRun.model_validate, lambda run: run.id), progress
        self.coverage = CoverageChecker(retriever)
        self.base = load_prompt(settings.prompt).text

    def _run(self, key: str, agent: FramesAgent, question: Question, done: dict, bar) -> TuneRun:
        if key in done:
            return done[key]
        result = agent.invoke(question.prompt, answer=False)
        gold, aliases = self._gold(question)
        score = recall(found_steps(gold, result, aliases), gold) or 0.0
        record = TuneRun(id=key, recall=score, result=result.model_dump(mode="json"))
        self.run_dir.append(record)
        done[key] = record
        bar.update(1)
        return record

    def _gold(self, question: Question) -> tuple[list[str], dict[str, str]]:
        """The gold titles the index holds (all of them if none), and the redirects among them."""
        import asyncio

        covered = asyncio.run(self.coverage.covered(question.gold_titles))
        return covered or list(question.gold_titles), self.coverage.aliases(question.gold_titles)

    def _prompt_file(self, index: int, text: str) -> str:
        path = self.run_dir.path / "candidates" / f"set{index}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        return str(path)

    def tune(self, questions: Sequence[Question], config: dict) -> TuneOutcome:
        """Bootstrap on one part of the train questions, score every candidate set on the other, pick the best."""
        from tqdm import tqdm

        boot, held = split(questions, self.settings)
        with self.run_dir.locked():
            self.run_dir.check_config(config)
            self.run_dir.write_config(config)
            done, _ = self.run_dir.load_records()
            total = len(boot) + self.settings.candidates * len(held)
            with tqdm(total=total, desc="tune", unit="run", disable=not self.progress, file=sys.stderr) as bar:
                bar.update(sum(1 for k in done if k.startswith(("boot:", "eval:"))))
                demos = self._bootstrap(boot, done, bar)
                sets = candidate_sets(demos, self.settings.candidates, self.settings.demos, self.settings.seed)
                bar.total = len(boot) + len(sets) * len(held)
                scores = {}
                for i, candidate in enumerate(sets):
                    text = prompt_with_demos(self.base, [demos[j] for j in candidate])
                    agent = self.make_agent(self._prompt_file(i, text))
                    runs = [self._run(f"eval:{i}:{q.id}", agent, q, done, bar) for q in held]
                    scores[i] = sum(r.recall for r in runs) / len(runs)
        # The highest held-out recall; ties go to fewer demos, then the earlier candidate.
        chosen = min(scores, key=lambda i: (-scores[i], len(sets[i]), i))
        text = prompt_with_demos(self.base, [demos[j] for j in sets[chosen]])
        return TuneOutcome(text=text, chosen=chosen, scores=scores, sets=sets, demos=demos)

    def _bootstrap(self, boot: Sequence[Question], done: dict, bar) -> list[Demo]:
        agent = self.make_agent(self._prompt_file(0, self.base))
        demos = []
        for question in boot:
            record = self._run(f"boot:{question.id}", agent, question, done, bar)
            result = AgentResult.model_validate(record.result)
            gold, aliases = self._gold(question)
            hits = gold_hit_checker(lambda q: self.retriever.search(q, agent.config.n_docs), gold, aliases)
            demo = bootstrap_demo(question.id, question.prompt, result, gold, hits, record.recall)
            if demo is not None:
                demos.append(demo)
        return demos
