"""The FRAMES run: its settings, directory and config; questions concurrently through a system, one JSONL line per
finished question, resumable."""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from frames_agent.agent.llm import DEFAULT_MODEL
from frames_agent.agent.llm.errors import redact, redact_url
from frames_agent.agent.state import TokenUsage
from frames_agent.eval.errors import EvalError
from frames_agent.eval.frames.autorater import exact_match
from frames_agent.eval.frames.datasets import Dataset, Question, load_questions
from frames_agent.eval.frames.estimate import default_concurrency, duration, estimate, judge_spec, record_rates
from frames_agent.eval.frames.metrics import RunSummary, answer_figures, recorded_context, retrieval_figures
from frames_agent.eval.frames.records import QuestionRecord, frames_run_dir, truncated_queries
from frames_agent.eval.frames.systems import WATCH, CoverageChecker, System, SystemOutput
from frames_agent.eval.judge import Judge
from frames_agent.eval.rundir import RunDir

if TYPE_CHECKING:
    from frames_agent.agent.config import AgentConfig
    from frames_agent.agent.settings import AgentSettings


@dataclass
class FramesRunSettings:
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
    def from_args(cls, args) -> FramesRunSettings:
        """Settings from an argparse Namespace (unknown attributes ignored)."""
        return cls(**{k: getattr(args, k) for k in cls.__dataclass_fields__ if hasattr(args, k)})

    def agent(self, config: AgentConfig | None = None) -> AgentSettings:
        """The agent these settings run (AgentSettings.from_flags); `config`, built from them before, as is."""
        from frames_agent.agent.settings import AgentSettings

        return AgentSettings.from_flags(asdict(self), config=config)


@dataclass
class RunOutcome:
    """Where the run wrote, what it ran now, and the summary over every finished question."""

    out: Path
    ran: int
    summary: RunSummary


def slug(text: str, limit: int | None = 60) -> str:
    """text as part of a directory name: runs of other characters as one "-", at most `limit` characters."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:limit] or "x"


def default_out(settings: FramesRunSettings) -> Path:
    """runs/<system>[-<prompt>-k<k>-n<n>][-d<n_docs>]-<model>[-retrieval][-<split>][-idx<index>] under the cwd."""
    parts = [settings.system]
    if settings.system == "multistep":
        parts += [slug(Path(settings.prompt).stem), f"k{settings.k}", f"n{settings.n}", f"d{settings.n_docs}"]
    elif settings.system == "bm25":
        parts.append(f"d{settings.n_docs}")
    parts.append(slug(settings.model))
    parts += ["retrieval"] if settings.retrieval_only else []
    parts += [settings.split] if settings.split != "all" else []
    parts += [f"idx{slug(Path(settings.index).name)}"] if settings.index != "default" else []
    return Path("runs") / "-".join(parts)


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def run_config(settings: FramesRunSettings, agent_config, dataset: Dataset) -> dict:
    """What two runs must share to write into one OUT, by content: the data's hash and the index fingerprint."""
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


# --- the run directory held open: locked, config-checked and resumed; any executor runs its todo questions ---
Echo = Callable[[str], None]


@dataclass
class OpenRun:
    """A locked run directory: its settings, questions, config, finished records and the questions left to run."""

    settings: FramesRunSettings
    agent_config: object
    dataset: Dataset
    run_dir: RunDir[QuestionRecord]
    config: dict
    records: dict[str, QuestionRecord]
    todo: list[Question]
    added: tuple[str, ...]
    started: bool = False

    @property
    def out(self) -> Path:
        """The run directory."""
        return self.run_dir.path

    def start(self, fingerprint: str | None, echo: Echo) -> None:
        """Check and record the config with the index fingerprint the system's index reported; call before running."""
        self.config["index_fingerprint"] = fingerprint
        unrecorded = _unrecorded(self.run_dir, self.config, echo)
        self.run_dir.check_config(self.config, unknown=(*unrecorded, *self.added))
        self.config = self.run_dir.write_config(self.config)
        self.started = True

    def add(self, record: QuestionRecord) -> None:
        """One finished question: appended at once (a kill cannot lose it) and counted."""
        self.run_dir.append(record)
        self.records[record.id] = record

    def finish(self) -> RunOutcome:
        """summary.json and report.md over every finished question; also after an interrupted run."""
        from frames_agent.eval.frames.report import write_outputs

        if not self.todo:  # nothing ran: record the config as it is (a finished run re-rendered)
            self.config = self.run_dir.write_config(self.config)
        summary, _ = write_outputs(self.run_dir, self.config, warnings=self.dataset.warnings)
        return RunOutcome(out=self.out, ran=len(self.todo) if self.started else 0, summary=summary)


def check_settings(settings: FramesRunSettings) -> None:
    """Refuse settings no run can use, before anything is loaded."""
    if settings.concurrency is not None and settings.concurrency < 1:
        raise EvalError(f"--concurrency must be at least 1, got {settings.concurrency}")
    if settings.system == "naive" and settings.retrieval_only:
        raise EvalError("--retrieval-only has nothing to measure for --system naive (it retrieves nothing)")


@contextlib.contextmanager
def open_run(settings: FramesRunSettings, agent_config, echo: Echo) -> Iterator[OpenRun]:
    """Load the questions, lock OUT, refuse a different config, resume its records and say what is left to run."""
    check_settings(settings)
    dataset = load_questions(settings.data, settings.limit, settings.split)
    out = Path(settings.out) if settings.out else default_out(settings)
    run_dir = frames_run_dir(out)
    with run_dir.locked():
        config = run_config(settings, agent_config, dataset)
        added = added_at_default(run_dir.read_config(), config, agent_config)
        run_dir.check_config(config, unknown=("index_fingerprint", *added))  # refuse before anything is loaded
        records, repairs = run_dir.load_records()
        for note in repairs:
            echo(f"note: {note}")
        todo = [q for q in dataset.questions if q.id not in records or (settings.retry_failed and records[q.id].failed)]
        say_plan(settings, agent_config, dataset, todo, out, echo)
        yield OpenRun(settings=settings, agent_config=agent_config, dataset=dataset, run_dir=run_dir, config=config,
                      records=records, todo=todo, added=added)


def added_at_default(old: dict | None, config: dict, agent_config) -> tuple[str, ...]:
    """Settings a run predates, at the value that does what it did (so it resumes; another value is refused)."""
    if old is None:
        return ()
    fields, before = type(agent_config).model_fields, getattr(type(agent_config), "BEFORE_FIELD", {})
    added = [] if "split" in old or config["split"] != "all" else ["split"]
    return (*added, *(f"agent.{k}" for k, v in config["agent"].items()
                      if k not in old.get("agent", {}) and k in fields and v == before.get(k, fields[k].default)))


def _unrecorded(run_dir: RunDir, config: dict, echo: Echo) -> tuple[str, ...]:
    """A run started before index fingerprints were recorded adopts the current one, said once."""
    old = run_dir.read_config()
    if old is None or "index_fingerprint" in old or config["index_fingerprint"] is None:
        return ()
    echo(f"note: {run_dir.path} was started before index fingerprints were recorded; recording "
         f"{config['index_fingerprint']} now (later resumes must match it)")
    return ("index_fingerprint",)


def say_plan(settings, agent_config, dataset: Dataset, todo: list[Question], out: Path, echo: Echo) -> None:
    """The data warnings, how many questions are done and left, and the time estimate."""
    for warning in dataset.warnings[:5]:
        echo(f"warning: {warning}")
    if len(dataset.warnings) > 5:
        echo(f"warning: ... and {len(dataset.warnings) - 5} more data warnings (listed in report.md)")
    done = len(dataset.questions) - len(todo)
    echo(f"{settings.system}: {len(dataset.questions)} question(s) from {dataset.source}; "
         f"{done} already done in {out}, {len(todo)} to run")
    if todo:
        concurrency = settings.concurrency or default_concurrency(settings)
        echo("estimate: " + estimate(settings, agent_config, len(todo), concurrency))


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
def question_fields(question: Question) -> dict:
    """The record fields that say which question it is."""
    return {"id": question.id, "question": question.prompt, "gold_answer": question.answer,
            "reasoning_types": list(question.reasoning_types), "gold_titles": list(question.gold_titles)}


def result_fields(output: SystemOutput, covered: list[str] | None, question: Question, aliases: dict) -> dict:
    """The record fields of what a system did: answer, steps, retrieval figures and what the answer saw."""
    result = output.result
    figures = retrieval_figures(question.gold_titles, covered, result, aliases)
    context = result.answer_context.model_dump()
    titles = {d.id: d.title for d in result.documents}
    seen = answer_figures(question.gold_titles, covered, figures["found_step"], question.answer, context, aliases)
    return {
        "answer": result.answer, "raw_answer": result.raw_answer, "error": result.error,
        "retrieved_titles": list(dict.fromkeys(d.title for d in result.documents)),
        "steps": [{"step": s.step, "queries": s.queries, "tool_calls": [c.name for c in s.tool_calls],
                   "new_docs": len(s.new_doc_ids), "fallback": s.fallback, "filled_queries": s.filled_queries,
                   "dropped_queries": s.dropped_queries, "errors": s.errors, "origins": s.origins,
                   "new_doc_ids": s.new_doc_ids, "new_doc_titles": [titles.get(i, i) for i in s.new_doc_ids],
                   "query_hits": s.query_hits, "query_depths": s.query_depths, "new_doc_origins": s.new_doc_origins,
                   "plan_skipped": s.plan_skipped, "new_names": s.new_names}
                  for s in result.steps],
        "truncated_queries": truncated_queries([s.model_dump() for s in result.steps]),
        "covered_titles": covered, **figures, **seen,
        "llm_calls": result.llm_calls, "tokens": result.tokens.model_dump(), "calls": result.calls,
        "answer_context": recorded_context(context),
        "oracle": output.oracle, "final": result.final.model_dump() if result.final else None,
    }


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
                          error=f"{type(exc).__name__}: {message}", seconds=round(seconds, 3), tokens=TokenUsage())


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
    """Run todo questions, `concurrency` at a time, appending each record when done; with echo, re-estimate once."""
    from frames_agent.eval.frames.progress import Progress

    semaphore = asyncio.Semaphore(max(1, concurrency))
    # Baselines search in asyncio.to_thread: the default pool (cores + 4) would cap them below the concurrency.
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
            done = [run.records[q.id] for q in run.todo if q.id in run.records]
            record_rates(settings.model, [c for r in done for c in r.calls if c.node in ("plan", "answer")])
    return outcome
