"""The FRAMES run: questions concurrently through a system, one JSONL line per finished question, resumable."""
from __future__ import annotations

import asyncio
import hashlib
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from frames_agent.agent.llm import DEFAULT_MODEL
from frames_agent.agent.llm.errors import redact, redact_url
from frames_agent.eval.frames.autorater import exact_match
from frames_agent.eval.frames.datasets import Dataset, Question
from frames_agent.eval.frames.estimate import default_concurrency, duration, judge_spec, record_rates
from frames_agent.eval.frames.metrics import RunSummary
from frames_agent.eval.frames.recording import question_fields, result_fields
from frames_agent.eval.frames.records import QuestionRecord, Tokens, frames_run_dir  # noqa: F401 (re-exported)
from frames_agent.eval.frames.systems import CoverageChecker, System
from frames_agent.eval.judge import Judge
from frames_agent.eval.rundir import RunDir

if TYPE_CHECKING:
    from frames_agent.agent.config import AgentConfig
    from frames_agent.agent.settings import AgentSettings


@dataclass
class RunSettings:
    """Everything `python cli.py frames` takes (argparse names)."""

    system: str = "multistep"
    k: int = 5
    n: int = 5
    n_docs: int = 10
    prompt: str = "planning"
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    judge: str = "same"
    judge2: str | None = None
    judge_prompt: str = "frames"
    data: str | None = None
    split: str = "all"  # eval/frames/split.py: tune, check or all questions
    limit: int | None = None
    concurrency: int | None = None
    out: str | None = None
    retrieval_only: bool = False
    index: str = "default"
    tools: str = "wiki"
    adaptive: bool = False
    answer_prompt: str | None = None
    answer_budget: int | None = None
    answer_passages: int | None = None
    calculator: bool | None = None
    no_cache: bool = False
    retry_failed: bool = False
    progress: bool = True
    timeout: float | None = None
    question_timeout: float | None = None
    # --set KEY=VALUE pairs for any AgentConfig field (AgentSettings.from_flags reads them).
    settings: list[str] = field(default_factory=list)

    @classmethod
    def from_args(cls, args) -> RunSettings:
        """Settings from an argparse Namespace (unknown attributes ignored)."""
        return cls(**{k: getattr(args, k) for k in cls.__dataclass_fields__ if hasattr(args, k)})

    def agent(self, config: AgentConfig | None = None) -> AgentSettings:
        """The agent these settings run (model, index, tools, cache; the agent flags and --set read once, by
        AgentSettings.from_flags); `config`, an AgentConfig built from them before, is used as it is."""
        from frames_agent.agent.settings import AgentSettings

        return AgentSettings.from_flags(asdict(self), config=config)


@dataclass
class Components:
    """What a run needs besides its settings; tests inject these with a ScriptedLLM and a tiny index."""

    system: System
    coverage: CoverageChecker
    rater: Judge | None = None
    rater2: Judge | None = None

    @property
    def index_fingerprint(self) -> str | None:
        """The content fingerprint of the index the run reads (None without one, or for an older index)."""
        return getattr(self.coverage.retriever, "fingerprint", None)


@dataclass
class RunOutcome:
    """Where the run wrote, what it ran now, and the summary over every finished question."""

    out: Path
    ran: int
    summary: RunSummary
    warnings: list[str] = field(default_factory=list)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:60] or "x"


def default_out(settings: RunSettings) -> Path:
    """runs/<system>[-<prompt>-k<k>-n<n>][-d<n_docs>]-<model>[-retrieval][-adaptive][-<split>][-idx<index>] under
    the cwd."""
    parts = [settings.system]
    if settings.system == "multistep":
        parts += [_slug(Path(settings.prompt).stem), f"k{settings.k}", f"n{settings.n}", f"d{settings.n_docs}"]
    elif settings.system == "bm25":
        parts.append(f"d{settings.n_docs}")
    parts.append(_slug(settings.model))
    parts += ["retrieval"] if settings.retrieval_only else []
    parts += ["adaptive"] if settings.adaptive else []
    parts += [settings.split] if settings.split != "all" else []
    parts += [f"idx{_slug(Path(settings.index).name)}"] if settings.index != "default" else []
    return Path("runs") / "-".join(parts)


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def run_config(settings: RunSettings, agent_config, dataset: Dataset) -> dict:
    """The fields two runs must share to write into the same OUT (limit, concurrency and caching may differ).

    Content, not names: the dataset's hash, and (once the index is open) the index's content fingerprint.
    """
    from frames_agent.agent.prompts import load_prompt
    from frames_agent.eval.frames.autorater import judge_prompt

    judge = judge_spec(settings)
    return {
        "system": settings.system, "model": settings.model, "base_url": redact_url(settings.base_url),
        "judge": judge, "judge2": None if settings.retrieval_only else settings.judge2,
        "judge_prompt": (_sha(judge_prompt(settings.judge_prompt).text) if judge != "none" or settings.judge2
                         else None),
        "retrieval_only": settings.retrieval_only, "index": settings.index, "tools": settings.tools,
        "data_fingerprint": dataset.fingerprint, "split": settings.split,
        "prompt_text": _sha(load_prompt(agent_config.prompt).text),
        "answer_prompt_text": _sha(load_prompt(agent_config.answer_prompt).text),
        "agent": agent_config.model_dump(exclude={"timeout", "question_timeout"}),  # deadlines may change on resume
        # Recorded, not compared: the same questions may be read from another path.
        "info": {"data": dataset.source, "judge_prompt": settings.judge_prompt},
    }


# --- one question ---------------------------------------------------------------------------------------------
async def rate_record(record: QuestionRecord, rater: Judge | None, rater2: Judge | None = None) -> QuestionRecord:
    """The record rated by the judge(s); also used by `rejudge` on an answer that was left unrated."""
    async def one(judge: Judge | None):
        return None if judge is None else await judge.arate(record.question, record.gold_answer, record.response())

    return record.with_verdicts(await one(rater), await one(rater2))


async def run_question(question: Question, components: Components, answer: bool) -> QuestionRecord:
    """The record of one question; an exception from the system becomes a failed record, not a crash."""
    started = time.perf_counter()
    name = components.system.name
    try:
        covered = await components.coverage.covered(question.gold_titles)
        output = await components.system.run(question, answer=answer)
        aliases = components.coverage.aliases(question.gold_titles)
        record = QuestionRecord(**question_fields(question), system=name, **result_fields(output, covered, question, aliases))
        if answer:
            record.exact_match = exact_match(record.response(), question.answer)
            record = await rate_record(record, components.rater, components.rater2)
    except Exception as exc:  # one bad question must not end a run of hundreds
        return failed_record(question, name, exc, time.perf_counter() - started)
    record.seconds = round(time.perf_counter() - started, 3)
    return record


def failed_record(question: Question, system: str, exc: BaseException, seconds: float = 0.0) -> QuestionRecord:
    """The record of a question that could not finish: the error's first line, keys redacted."""
    message = redact(str(exc).strip().splitlines()[0]) if str(exc).strip() else ""  # no keys in results
    return QuestionRecord(**question_fields(question), system=system, failed=True,
                          error=f"{type(exc).__name__}: {message}", seconds=round(seconds, 3), tokens=Tokens())


# --- the loop -------------------------------------------------------------------------------------------------
def _postfix(records: dict[str, QuestionRecord], answer: bool) -> str:
    done = list(records.values())
    if answer:
        right = sum(1 for r in done if r.correct)
        rated = sum(1 for r in done if not r.unrated)
        unrated = f", {len(done) - rated} unrated" if rated < len(done) else ""
        return f"acc {right}/{rated}" + (f" = {right / rated:.0%}" if rated else "") + unrated
    recalls = [r.recall for r in done if r.recall is not None]
    return f"recall {sum(recalls) / len(recalls):.2f}" if recalls else ""


async def run_all(todo: list[Question], components: Components, run_dir: RunDir, records: dict[str, QuestionRecord], *,
                  concurrency: int, answer: bool, progress: bool, steps: int | None = None,
                  echo: Callable[[str], None] | None = None) -> int:
    """Run todo questions with at most `concurrency` at a time; append each record as soon as it is done (and, with
    echo, say the time left as measured on the first finished question)."""
    from frames_agent.eval.frames.progress import Progress
    from frames_agent.eval.frames.systems import WATCH

    semaphore = asyncio.Semaphore(max(1, concurrency))
    # Baseline systems search and fetch in asyncio.to_thread; the default pool (cores + 4 threads) would cap
    # I/O-bound retrievers below the requested concurrency.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=max(8, 2 * concurrency)))
    shown = Progress(len(todo), components.system.name, steps=steps, progress=progress)

    async def one(question: Question) -> None:
        async with semaphore:
            with shown.flight(question.id) as watch:
                if shown.enabled:  # each gathered question is its own task: the watcher is this question's alone
                    WATCH.set(watch)
                record = await run_question(question, components, answer)
        run_dir.append(record)
        records[question.id] = record
        shown.finished(_postfix(records, answer))
        left = len(todo) - shown.done
        if echo is not None and shown.done == 1 and left:
            pace = shown.clock() - shown.started
            echo(f"re-estimate: ~{duration(pace * left / max(1, min(concurrency, len(todo))))} for the {left} "
                 f"question(s) left ({pace:.0f} s measured on the first)")

    async def tick() -> None:  # a local model may take minutes per question: keep the elapsed time moving
        while True:
            await asyncio.sleep(1.0)
            shown.refresh()

    ticker = asyncio.create_task(tick())
    try:
        await asyncio.gather(*(one(q) for q in todo))
    finally:
        ticker.cancel()
        shown.close()
    return len(todo)


def run_frames(settings: RunSettings, agent_config, *,
               build: Callable[[RunSettings, object], Components],
               echo: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> RunOutcome:
    """Load, check the OUT config, resume, run what is left in this process, and write summary.json + report.md."""
    from frames_agent.eval.frames.opening import open_run

    with open_run(settings, agent_config, echo) as run:
        if not run.todo:
            return run.finish()
        components = build(settings, agent_config)  # models, judges and the index resolve here, or fail
        run.start(components.index_fingerprint, echo)
        try:
            asyncio.run(run_all(run.todo, components, run.run_dir, run.records, answer=not settings.retrieval_only,
                                concurrency=settings.concurrency or default_concurrency(settings),
                                progress=settings.progress, echo=echo,
                                steps=agent_config.n if settings.system == "multistep" else None))
        finally:  # also after Ctrl-C: the summary covers every finished question
            outcome = run.finish()
            _keep_rates(settings, [run.records[q.id] for q in run.todo if q.id in run.records])
    return outcome


def _keep_rates(settings: RunSettings, done: list[QuestionRecord]) -> None:
    """A local model's rates measured by this run, for the next run's estimate."""
    from frames_agent.agent.llm.spec import ModelSpec

    if ModelSpec.of(settings.model).local:
        record_rates(settings.model, [c for r in done for c in r.calls if c.node in ("plan", "answer")])
