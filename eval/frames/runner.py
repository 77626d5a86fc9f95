"""The FRAMES run: questions concurrently through a system, one JSONL line per finished question, resumable."""
from __future__ import annotations

import asyncio
import hashlib
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from agent.llm import DEFAULT_MODEL
from agent.llm.errors import redact, redact_url
from eval.errors import EvalError
from eval.frames.autorater import exact_match
from eval.frames.datasets import Dataset, Question, load_questions
from eval.frames.estimate import default_concurrency, estimate, judge_spec
from eval.frames.metrics import RunSummary
from eval.frames.records import QuestionRecord, Tokens
from eval.frames.recording import question_fields, result_fields
from eval.frames.systems import CoverageChecker, System, SystemOutput
from eval.judge import Judge
from eval.rundir import RunDir


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
    # --set KEY=VALUE pairs for any AgentConfig field (agent.commands.parse_settings reads them).
    settings: list[str] = field(default_factory=list)

    @classmethod
    def from_args(cls, args) -> RunSettings:
        """Settings from an argparse Namespace (unknown attributes ignored)."""
        return cls(**{k: getattr(args, k) for k in cls.__dataclass_fields__ if hasattr(args, k)})


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
    from agent.prompts import load_prompt
    from eval.frames.autorater import judge_prompt

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
def frames_run_dir(path: Path) -> RunDir[QuestionRecord]:
    """A FRAMES run directory: QuestionRecords keyed by question id."""
    return RunDir(path, QuestionRecord.model_validate, lambda r: r.id)


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
        message = redact(str(exc).strip().splitlines()[0]) if str(exc).strip() else ""  # no keys in results
        return QuestionRecord(**question_fields(question), system=name, failed=True,
                              error=f"{type(exc).__name__}: {message}",
                              seconds=round(time.perf_counter() - started, 3), tokens=Tokens())
    record.seconds = round(time.perf_counter() - started, 3)
    return record


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
                  concurrency: int, answer: bool, progress: bool) -> int:
    """Run todo questions with at most `concurrency` at a time; append each record as soon as it is done."""
    from tqdm import tqdm

    semaphore = asyncio.Semaphore(max(1, concurrency))
    # Baseline systems search and fetch in asyncio.to_thread; the default pool (cores + 4 threads) would cap
    # I/O-bound retrievers below the requested concurrency.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=max(8, 2 * concurrency)))
    bar = tqdm(total=len(todo), unit="q", desc=components.system.name, file=sys.stderr, disable=not progress,
               dynamic_ncols=True)

    async def one(question: Question) -> None:
        async with semaphore:
            record = await run_question(question, components, answer)
        run_dir.append(record)
        records[question.id] = record
        bar.set_postfix_str(_postfix(records, answer), refresh=False)
        bar.update(1)

    async def tick() -> None:  # a local model may take minutes per question: keep the elapsed time moving
        while True:
            await asyncio.sleep(1.0)
            bar.refresh()

    ticker = asyncio.create_task(tick())
    try:
        await asyncio.gather(*(one(q) for q in todo))
    finally:
        ticker.cancel()
        bar.close()
    return len(todo)


def run_frames(settings: RunSettings, agent_config, *,
               build: Callable[[RunSettings, object], Components],
               echo: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> RunOutcome:
    """Load, check the OUT config, resume, run what is left, and write summary.json + report.md."""
    from eval.frames.report import write_outputs

    if settings.concurrency is not None and settings.concurrency < 1:
        raise EvalError(f"--concurrency must be at least 1, got {settings.concurrency}")
    if settings.system == "naive" and settings.retrieval_only:
        raise EvalError("--retrieval-only has nothing to measure for --system naive (it retrieves nothing)")
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
        _say_plan(settings, agent_config, dataset, todo, out, echo)
        if not todo:
            config = run_dir.write_config(config)
            summary = write_outputs(run_dir, config, warnings=dataset.warnings)
            return RunOutcome(out=out, ran=0, summary=summary, warnings=dataset.warnings)
        components = build(settings, agent_config)  # models, judges and the index resolve here, or fail
        config["index_fingerprint"] = components.index_fingerprint
        run_dir.check_config(config, unknown=(*_unrecorded(run_dir, config, echo), *added))
        config = run_dir.write_config(config)
        try:
            asyncio.run(run_all(todo, components, run_dir, records, answer=not settings.retrieval_only,
                                concurrency=settings.concurrency or default_concurrency(settings),
                                progress=settings.progress))
        finally:  # also after Ctrl-C: the summary covers every finished question
            summary = write_outputs(run_dir, config, warnings=dataset.warnings)
    return RunOutcome(out=out, ran=len(todo), summary=summary, warnings=dataset.warnings)


def added_at_default(old: dict | None, config: dict, agent_config) -> tuple[str, ...]:
    """Settings a run started before they existed did not record: at their default (the behaviour it had) they
    are no change, so it resumes; any other value is refused by check_config as usual."""
    if old is None:
        return ()
    fields = type(agent_config).model_fields
    added = [] if "split" in old or config["split"] != "all" else ["split"]
    return (*added, *(f"agent.{k}" for k, v in config["agent"].items()
                      if k not in old.get("agent", {}) and k in fields and v == fields[k].default))


def _unrecorded(run_dir: RunDir, config: dict, echo: Callable[[str], None]) -> tuple[str, ...]:
    """A run started before index fingerprints were recorded adopts the current one, said once."""
    old = run_dir.read_config()
    if old is None or "index_fingerprint" in old or config["index_fingerprint"] is None:
        return ()
    echo(f"note: {run_dir.path} was started before index fingerprints were recorded; recording "
         f"{config['index_fingerprint']} now (later resumes must match it)")
    return ("index_fingerprint",)


def _say_plan(settings, agent_config, dataset, todo, out, echo) -> None:
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
