"""`tune`: bootstrap planning demonstrations on train questions, pick the demo set by held-out recall, write the
prompt. Every agent run is one line in WORK/results.jsonl, so a killed tune resumes where it stopped."""
from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.prompts import load_prompt
from frames_agent.core.errors import FramesAgentError
from frames_agent.eval.frames.datasets import Question
from frames_agent.eval.frames.metrics import found_steps, recall
from frames_agent.eval.frames.systems import CoverageChecker
from frames_agent.eval.rundir import RunDir
from frames_agent.eval.tune.demos import (
    Demo,
    best_set,
    bootstrap_demo,
    candidate_sets,
    gold_hit_checker,
    prompt_with_demos,
)
from frames_agent.retrieval.types import Retriever


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


AgentFactory = Callable[[str], FramesAgent]  # prompt file path -> agent using it


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

    def __init__(self, make_agent: AgentFactory, retriever: Retriever, settings: TuneSettings, work: Path,
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
        chosen = best_set(scores, sets)
        text = prompt_with_demos(self.base, [demos[j] for j in sets[chosen]])
        return TuneOutcome(text=text, chosen=chosen, scores=scores, sets=sets, demos=demos)

    def _bootstrap(self, boot: Sequence[Question], done: dict, bar) -> list[Demo]:
        from frames_agent.agent.state import AgentResult

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
