"""The FRAMES run: questions concurrently through a system, one JSONL line per finished question, resumable."""
from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from frames_agent.agent.llm.errors import redact
from frames_agent.eval.frames.autorater import exact_match
from frames_agent.eval.frames.datasets import Question
from frames_agent.eval.frames.estimate import default_concurrency, duration, record_rates
from frames_agent.eval.frames.opening import open_run
from frames_agent.eval.frames.recording import question_fields, result_fields
from frames_agent.eval.frames.records import QuestionRecord, Tokens, frames_run_dir  # noqa: F401 (re-exported)
from frames_agent.eval.frames.settings import FramesRunSettings, RunOutcome, default_out, run_config  # noqa: F401 (re-exported)
from frames_agent.eval.frames.systems import CoverageChecker, System
from frames_agent.eval.judge import Judge
from frames_agent.eval.rundir import RunDir


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
    paced = False  # re-estimated yet

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
        nonlocal paced
        # A question answered from the call cache took no model time: the pace comes from the first that did not.
        if echo is not None and not paced and left and not any(c.from_cache for c in record.calls):
            paced = True
            first = shown.done == 1
            pace = shown.clock() - shown.started if first else record.seconds
            echo(f"re-estimate: ~{duration(pace * left / max(1, min(concurrency, len(todo))))} for the {left} "
                 f"question(s) left ({pace:.0f} s measured on the first"
                 f"{'' if first else ' not served from the call cache'})")

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


def run_frames(settings: FramesRunSettings, agent_config, *,
               build: Callable[[FramesRunSettings, object], Components],
               echo: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> RunOutcome:
    """Load, check the OUT config, resume, run what is left in this process, and write summary.json + report.md."""
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


def _keep_rates(settings: FramesRunSettings, done: list[QuestionRecord]) -> None:
    """A local model's rates measured by this run, for the next run's estimate."""
    from frames_agent.agent.llm.spec import ModelSpec

    if ModelSpec.of(settings.model).local:
        record_rates(settings.model, [c for r in done for c in r.calls if c.node in ("plan", "answer")])
