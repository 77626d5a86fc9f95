"""One FRAMES run directory held open: locked, config-checked and resumed; any executor runs its todo questions."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from frames_agent.eval.errors import EvalError
from frames_agent.eval.frames.datasets import Dataset, Question, load_questions
from frames_agent.eval.frames.estimate import default_concurrency, estimate
from frames_agent.eval.frames.records import QuestionRecord, frames_run_dir
from frames_agent.eval.frames.settings import FramesRunSettings, RunOutcome, default_out, run_config
from frames_agent.eval.rundir import RunDir

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
        summary = write_outputs(self.run_dir, self.config, warnings=self.dataset.warnings)
        ran = len(self.todo) if self.started else 0
        return RunOutcome(out=self.out, ran=ran, summary=summary, warnings=self.dataset.warnings)


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
    """Settings a run started before they existed did not record: at the value that does what it did (their
    default, or AgentConfig.BEFORE_FIELD's where the default changed the behaviour) they are no change, so it
    resumes; any other value is refused by check_config as usual."""
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
