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

from agent.llm.spec import DEFAULT_MODEL, ModelSpec
from eval.frames.autorater import Autorater, exact_match
from eval.frames.datasets import Dataset, Question, default_data, load_questions
from eval.frames.metrics import retrieval_figures
from eval.frames.systems import CoverageChecker, System, SystemOutput
from eval.rundir import RunDir
from retrieval.errors import FramesAgentError



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
    data: str | None = None
    limit: int | None = None
    concurrency: int | None = None
    out: str | None = None
    retrieval_only: bool = False
    index: str = "default"
    tools: str = "wiki"
    adaptive: bool = False
    no_cache: bool = False
    retry_failed: bool = False
    progress: bool = True

    @classmethod
    def from_args(cls, args) -> RunSettings:
        """Settings from an argparse Namespace (unknown attributes ignored)."""
        return cls(**{k: getattr(args, k) for k in cls.__dataclass_fields__ if hasattr(args, k)})


@dataclass
class Components:
    """What a run needs besides its settings; tests inject these with a ScriptedLLM and a tiny index."""

    system: System
    coverage: CoverageChecker
    rater: Autorater | None = None
    rater2: Autorater | None = None


@dataclass
class RunOutcome:
    """Where the run wrote, what it ran now, and the summary over every finished question."""

    out: Path
    ran: int
    summary: dict
    warnings: list[str] = field(default_factory=list)


def judge_spec(settings: RunSettings) -> str:
    """The judge model actually used: --judge, with "same" meaning the --model."""
    if settings.retrieval_only:
        return "none"
    return settings.model if settings.judge in (None, "", "same") else settings.judge


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:60] or "x"


def default_out(settings: RunSettings) -> Path:
    """runs/<system>[-<prompt>-k<k>-n<n>][-d<n_docs>]-<model>[-retrieval][-adaptive][-idx<index>] under the cwd."""
    parts = [settings.system]
    if settings.system == "multistep":
        parts += [_slug(Path(settings.prompt).stem), f"k{settings.k}", f"n{settings.n}", f"d{settings.n_docs}"]
    elif settings.system == "bm25":
        parts.append(f"d{settings.n_docs}")
    parts.append(_slug(settings.model))
    parts += ["retrieval"] if settings.retrieval_only else []
    parts += ["adaptive"] if settings.adaptive else []
    parts += [f"idx{_slug(Path(settings.index).name)}"] if settings.index != "default" else []
    return Path("runs") / "-".join(parts)


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def run_config(settings: RunSettings, agent_config, dataset: Dataset) -> dict:
    """The fields two runs must share to write into the same OUT (limit, concurrency and caching may differ)."""
    from agent.prompts import load_prompt

    judge = judge_spec(settings)
    return {
        "system": settings.system, "model": settings.model, "base_url": settings.base_url,
        "judge": judge, "judge2": None if settings.retrieval_only else settings.judge2,
        "judge_prompt": _sha(load_prompt("frames_judge").text) if judge != "none" or settings.judge2 else None,
        "retrieval_only": settings.retrieval_only, "index": settings.index, "tools": settings.tools,
        "data_fingerprint": dataset.fingerprint,
        "prompt_text": _sha(load_prompt(agent_config.prompt).text),
        "answer_prompt_text": _sha(load_prompt(agent_config.answer_prompt).text),
        "agent": agent_config.model_dump(),
        # Recorded, not compared: the same questions may be read from another path.
        "info": {"data": dataset.source},
    }


def default_concurrency(settings: RunSettings) -> int:
    """1 for the local model (2 cores serve one generation at a time), 8 for hosted models."""
    if settings.system in ("bm25", "oracle") and settings.retrieval_only:
        return 4
    return 1 if ModelSpec.of(settings.model).local else 8


def calls_per_question(settings: RunSettings) -> tuple[int, int]:
    """(system LLM calls, judge calls at most) per question."""
    answer = 0 if settings.retrieval_only else 1
    system = settings.n + answer if settings.system == "multistep" else answer
    judges = (judge_spec(settings) != "none") + bool(settings.judge2 and not settings.retrieval_only)
    return system, judges


# Measured here for the embedded 1.5B model on 2 cores (llama.cpp): a plan call reads ~1,200 tokens and writes
# ~300 (thought + queries) in ~38 s; an answer reads ~1,600 and writes ~70.
LOCAL_PROMPT_TPS, LOCAL_OUTPUT_TPS = 80.0, 12.0
PLAN_OUTPUT_TOKENS, ANSWER_OUTPUT_TOKENS, JUDGE_OUTPUT_TOKENS, QUESTION_TOKENS = 300, 70, 50, 45
HOSTED_SECONDS_PER_CALL = 3.0


def estimate(settings: RunSettings, agent_config, questions: int, concurrency: int) -> str:
    """A one-line up-front estimate of the run time on this machine (said to be an estimate)."""
    from agent.prompts import load_prompt
    from retrieval.tokens import count_tokens

    system_calls, judge_calls = calls_per_question(settings)
    calls = f"{system_calls} LLM call(s)" + (f" + up to {judge_calls} judge call(s)" if judge_calls else "")
    if not ModelSpec.of(settings.model).local:
        total = questions * (system_calls + judge_calls) * HOSTED_SECONDS_PER_CALL / max(1, concurrency)
        return (f"{questions} question(s) × {calls}; at ~{HOSTED_SECONDS_PER_CALL:.0f} s a hosted call and concurrency "
                f"{concurrency}: roughly {_duration(total)} (an estimate; provider speed varies)")

    def call_seconds(prompt_tokens: int, output_tokens: int) -> float:
        return prompt_tokens / LOCAL_PROMPT_TPS + output_tokens / LOCAL_OUTPUT_TPS

    plan = call_seconds(count_tokens(load_prompt(agent_config.prompt).text) + QUESTION_TOKENS + agent_config.plan_budget,
                        PLAN_OUTPUT_TOKENS)
    context = 0 if settings.system == "naive" else agent_config.answer_budget
    answer = call_seconds(count_tokens(load_prompt(agent_config.answer_prompt).text) + QUESTION_TOKENS + context,
                          ANSWER_OUTPUT_TOKENS)
    judge = call_seconds(count_tokens(load_prompt("frames_judge").text) + 2 * QUESTION_TOKENS, JUDGE_OUTPUT_TOKENS)
    plans = settings.n if settings.system == "multistep" else 0
    per_question = plans * plan + (0 if settings.retrieval_only else answer) + judge_calls * judge
    return (f"{questions} question(s) × {calls} with {settings.model} on this machine: roughly "
            f"{_duration(questions * per_question)} (an estimate from ~{LOCAL_PROMPT_TPS:.0f} prompt and "
            f"~{LOCAL_OUTPUT_TPS:.0f} output tokens/s measured on 2 idle cores, full token budgets, judge calls only "
            "when the short-cuts miss; other jobs on the machine slow it down; --limit N for a quick look)")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# --- the run directory -------------------------------------------------------------------------------------------


# --- one question ---------------------------------------------------------------------------------------------
def _failed_record(question: Question, system: str, error: str, seconds: float) -> dict:
    return {**_question_fields(question), "system": system, "failed": True, "error": error, "correct": None,
            "seconds": round(seconds, 3), "llm_calls": 0, "tokens": {"prompt": 0, "completion": 0}}


def _question_fields(question: Question) -> dict:
    return {"id": question.id, "question": question.prompt, "gold_answer": question.answer,
            "reasoning_types": list(question.reasoning_types), "gold_titles": list(question.gold_titles)}


def _result_fields(output: SystemOutput, covered: list[str] | None, question: Question) -> dict:
    result = output.result
    return {
        "answer": result.answer, "raw_answer": result.raw_answer, "error": result.error,
        "retrieved_titles": list(dict.fromkeys(d.title for d in result.documents)),
        "steps": [{"step": s.step, "queries": s.queries, "tool_calls": [c.name for c in s.tool_calls],
                   "new_docs": len(s.new_doc_ids), "fallback": s.fallback, "filled_queries": s.filled_queries,
                   "dropped_queries": s.dropped_queries, "errors": s.errors} for s in result.steps],
        "covered_titles": covered, **retrieval_figures(question.gold_titles, covered, result),
        "llm_calls": result.llm_calls, "tokens": result.tokens.model_dump(),
        "answer_context": result.answer_context.model_dump(), "stopped_early": result.stopped_early,
        "oracle": output.oracle,
    }


async def _rate(components: Components, question: Question, response: str) -> dict:
    fields: dict = {"exact_match": exact_match(response, question.answer), "judge_calls": 0,
                    "judge_tokens": {"prompt": 0, "completion": 0}}
    for key, rater in (("verdict", components.rater), ("verdict2", components.rater2)):
        if rater is None:
            continue
        verdict, usage = await rater.arate(question.prompt, response, question.answer)
        fields[key] = verdict.model_dump()
        fields["judge_calls"] += usage.calls
        fields["judge_tokens"]["prompt"] += usage.prompt_tokens
        fields["judge_tokens"]["completion"] += usage.completion_tokens
    fields["correct"] = fields["verdict"]["correct"] if "verdict" in fields else None
    return fields


async def run_question(question: Question, components: Components, answer: bool) -> dict:
    """The record of one question; an exception from the system becomes a failed record, not a crash."""
    started = time.perf_counter()
    name = components.system.name
    try:
        covered = await components.coverage.covered(question.gold_titles)
        output = await components.system.run(question, answer=answer)
        record = {**_question_fields(question), "system": name, "failed": False,
                  **_result_fields(output, covered, question)}
        if answer:
            record.update(await _rate(components, question, output.result.answer or output.result.raw_answer))
        else:
            record["correct"] = None
    except Exception as exc:  # one bad question must not end a run of hundreds
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return _failed_record(question, name, f"{type(exc).__name__}: {message}", time.perf_counter() - started)
    record["seconds"] = round(time.perf_counter() - started, 3)
    return record


# --- the loop -------------------------------------------------------------------------------------------------
def _postfix(records: dict[str, dict], answer: bool) -> str:
    done = list(records.values())
    if answer:
        right = sum(1 for r in done if r.get("correct"))
        return f"acc {right}/{len(done)}" + (f" = {right / len(done):.0%}" if done else "")
    recalls = [r["recall"] for r in done if r.get("recall") is not None]
    return f"recall {sum(recalls) / len(recalls):.2f}" if recalls else ""


async def run_all(todo: list[Question], components: Components, run_dir: RunDir, records: dict[str, dict], *,
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
        raise FramesAgentError(f"--concurrency must be at least 1, got {settings.concurrency}")
    if settings.system == "naive" and settings.retrieval_only:
        raise FramesAgentError("--retrieval-only has nothing to measure for --system naive (it retrieves nothing)")
    dataset = load_questions(settings.data or default_data(), settings.limit)
    out = Path(settings.out) if settings.out else default_out(settings)
    run_dir = RunDir(out)
    with run_dir.locked():
        config = run_config(settings, agent_config, dataset)
        run_dir.check_config(config)
        records, repairs = run_dir.load_records()
        for note in repairs:
            echo(f"note: {note}")
        todo = [q for q in dataset.questions
                if q.id not in records or (settings.retry_failed and records[q.id].get("failed"))]
        _say_plan(settings, agent_config, dataset, records, todo, out, echo)
        if todo:
            concurrency = settings.concurrency or default_concurrency(settings)
            components = build(settings, agent_config)
            try:
                asyncio.run(run_all(todo, components, run_dir, records, concurrency=concurrency,
                                    answer=not settings.retrieval_only, progress=settings.progress))
            finally:  # also after Ctrl-C: the summary covers every finished question
                summary = write_outputs(run_dir, config, warnings=dataset.warnings)
        else:
            summary = write_outputs(run_dir, config, warnings=dataset.warnings)
    return RunOutcome(out=out, ran=len(todo), summary=summary, warnings=dataset.warnings)


def _say_plan(settings, agent_config, dataset, records, todo, out, echo) -> None:
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
