"""Where FRAMES runs execute: in this process, or as (run, question) tasks on a Ray cluster (and what its workers run)
whose records stream back to this process, the one writer of every run directory."""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from frames_agent.core.errors import Terminated, first_line
from frames_agent.eval.errors import EvalError, MissingExtraError
from frames_agent.eval.frames.datasets import Question
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.frames.runner import (
    Components,
    Echo,
    FramesRunSettings,
    OpenRun,
    RunOutcome,
    failed_record,
    open_run,
    run_frames,
    run_question,
)
from frames_agent.retrieval.lucene.jvm import java_signals_kept

Build = Callable[[FramesRunSettings, object], Components]
Job = tuple[FramesRunSettings, object]  # a run's settings (its --out set) and its AgentConfig


def make_executor(args: argparse.Namespace) -> InProcess | RayCluster:
    """The executor the flags ask for; Ray flags without --executor ray are a one-line error."""
    if getattr(args, "executor", "local") != "ray":
        if getattr(args, "address", None):
            raise EvalError("--address needs --executor ray")
        return InProcess()
    if args.max_retries < 0:
        raise EvalError(f"--max-retries must be 0 or more, got {args.max_retries}")
    return RayCluster(address=args.address, max_retries=args.max_retries)


class InProcess:
    """Runs one run after another in this process, each with its own --concurrency."""

    def run(self, jobs: Sequence[Job], build: Build, echo: Echo) -> list[RunOutcome]:
        """Every run to its end (resumable), in order."""
        return [run_frames(settings, config, build=build, echo=echo) for settings, config in jobs]


class RayCluster:
    """(run, question) tasks on a Ray cluster; each worker opens its own read-only index and model."""

    def __init__(self, address: str | None = None, max_retries: int = 3) -> None:
        self.address, self.max_retries = address, max_retries

    def run(self, jobs: Sequence[Job], build: Build, echo: Echo) -> list[RunOutcome]:
        """Every run's questions as tasks on the cluster at once; a run's records are appended as they arrive."""
        try:
            import ray
        except ImportError:
            raise MissingExtraError("--executor ray needs Ray: pip install 'frames-agent[ray]' "
                                    "(or pip install 'ray>=2.40')") from None
        connected = self._connect(ray)
        try:
            with contextlib.ExitStack() as stack:
                stack.enter_context(_sigterm_noted())
                runs = [stack.enter_context(open_run(settings, config, echo)) for settings, config in jobs]
                try:
                    self._execute(ray, runs, build, echo, cancel=connected != "local")
                finally:  # also after Ctrl-C: every started run's summary covers its finished questions
                    outcomes = [run.finish() for run in runs if run.started or not run.todo]
            return outcomes
        finally:
            if connected:
                with java_signals_kept():  # shutdown resets the JVM's signal handlers (see java_signals_kept)
                    ray.shutdown()

    def _connect(self, ray) -> str | None:
        """Join (or start) the cluster unless this process already has: "joined", "local" (started here) or None."""
        if ray.is_initialized():
            return None
        joined = self.address or os.environ.get("RAY_ADDRESS")
        # Our own temporary directory: without an address Ray joins whatever cluster the shared /tmp/ray names.
        target = {"address": self.address} if joined else {"address": "local", "_temp_dir": str(ray_temp_dir()),
                                                           "_node_ip_address": "127.0.0.1"}
        try:
            with java_signals_kept():  # the driver may already search a Lucene index in this process
                ray.init(**target, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local cluster"
            raise EvalError(f"cannot reach the Ray cluster at {where}: {first_line(exc, 300)} (start one with "
                            "`ray start --head`, or leave out --address for a local one)") from None
        return "joined" if joined else "local"

    def _execute(self, ray, runs: list[OpenRun], build: Build, echo: Echo, cancel: bool) -> None:
        from tqdm import tqdm

        from frames_agent.eval.frames.progress import shown

        options = {"max_retries": self.max_retries, "num_cpus": 1}  # one question per task CPU
        probe = ray.remote(**options)(fingerprint_task)
        task = ray.remote(**options)(question_task)
        live = [run for run in runs if run.todo]
        jobs = {id(run): ray.put((build, *_portable(run.settings, run.agent_config))) for run in live}
        probes = {run.out: probe.remote(jobs[id(run)]) for run in live}
        for run in live:  # every worker-side build failure is one line here, before any question runs
            try:
                fingerprint = ray.get(probes[run.out])
            except ray.exceptions.RayError as exc:
                raise EvalError(f"{run.out}: a Ray worker could not build the run: {_cause(exc)}") from None
            run.start(fingerprint, echo)
        pending = {task.remote(jobs[id(run)], question, not run.settings.retrieval_only): (run, question)
                   for run in live for question in run.todo}
        # Per question only: a question's steps happen in a worker process, which sends back its record alone.
        progress = shown(any(run.settings.progress for run in live), sys.stderr)
        bar = tqdm(total=len(pending), unit="q", desc="ray", file=sys.stderr, disable=not progress, dynamic_ncols=True)
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)  # a SIGTERM is seen within 0.5 s
                if _TERM.is_set():
                    raise Terminated()
                more, _ = ray.wait([r for r in pending if r not in ready], num_returns=len(pending) - 1, timeout=0) \
                    if len(pending) > 1 else ([], [])
                for ref in [*ready, *more]:
                    run, question = pending.pop(ref)
                    run.add(self._record(ray, ref, run, question))
                    bar.update(1)
        finally:
            # Interrupted: the rest stay unrun, so a resume runs them (none is half-recorded). A cluster started here
            # stops with it; cancelling there too races a finishing task's reply, which Ray aborts on.
            for ref in pending if cancel else ():
                ray.cancel(ref)
            bar.close()

    def _record(self, ray, ref, run: OpenRun, question) -> QuestionRecord:
        """The task's record, or a failed record once Ray has used up its retries (a lost worker or node)."""
        try:
            return QuestionRecord.model_validate(ray.get(ref))
        except ray.exceptions.RayError as exc:
            error = RuntimeError(f"Ray task lost after {self.max_retries} retries ({type(exc).__name__}): {_cause(exc)}")
            return failed_record(question, run.settings.system, error)


# --- what a Ray worker runs: its own index, model and judges, built once per run and kept for the next question ---
KEPT_RUNS = 4  # built runs a worker keeps; tasks arrive run by run, so a few cover the runs in flight
_built: OrderedDict[str, Components] = OrderedDict()
_loop: asyncio.AbstractEventLoop | None = None


def components(build: Build, settings: FramesRunSettings, agent_config) -> Components:
    """This worker's components for a run, built on first use (the index opened read-only here)."""
    key = json.dumps([f"{build.__module__}.{build.__qualname__}", asdict(settings),
                      agent_config.model_dump(mode="json")], sort_keys=True, default=str)
    if key not in _built:
        _built[key] = build(settings, agent_config)
        while len(_built) > KEPT_RUNS:
            _built.popitem(last=False)
    _built.move_to_end(key)
    return _built[key]


def fingerprint_task(job: tuple[Build, FramesRunSettings, object]) -> str | None:
    """Build the run on this worker (so a missing index or model fails once, up front) and name its index."""
    return components(*job).index_fingerprint


def question_task(job: tuple[Build, FramesRunSettings, object], question: Question, answer: bool) -> dict:
    """One question's record (a failure inside the system is a failed record, as in-process)."""
    global _loop
    if _loop is None:  # one loop per worker: model clients keep connections bound to the loop that opened them
        _loop = asyncio.new_event_loop()
    record = _loop.run_until_complete(run_question(question, components(*job), answer))
    return record.model_dump(mode="json")


_TERM = threading.Event()  # set by SIGTERM while a Ray run waits for its tasks


@contextlib.contextmanager
def _sigterm_noted() -> Iterator[None]:
    """SIGTERM only noted while tasks run; the waiting loop raises Terminated (tasks stop, records kept)."""
    # Raised inside Ray's compiled wait it surfaced as a SystemError, and Ray's own handler exits mid-call.
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _TERM.clear()
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: _TERM.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def ray_temp_dir() -> Path:
    """Where a local Ray cluster started here keeps its sessions: this user's own, short enough for Ray's sockets."""
    return Path(tempfile.gettempdir()) / f"frames-agent-ray-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


def _portable(settings: FramesRunSettings, agent_config) -> tuple[FramesRunSettings, object]:
    """Paths the driver was given, made absolute for workers that start in another directory."""
    def absolute(value: str | None) -> str | None:
        return str(Path(value).resolve()) if value and Path(value).exists() else value

    shipped = replace(settings, index=absolute(settings.index) or settings.index, progress=False)  # a str stays one
    update = {name: absolute(getattr(agent_config, name)) for name in ("prompt", "answer_prompt")}
    return shipped, agent_config.model_copy(update=update)


def _cause(exc: BaseException) -> str:
    """The worker-side error (a RayTaskError wraps it), on one line."""
    cause = getattr(exc, "cause", None)
    return f"{type(cause).__name__}: {first_line(cause, 300)}" if isinstance(cause, BaseException) else first_line(exc, 300)
