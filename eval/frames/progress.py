"""What a FRAMES run shows while it runs: the question bar, under it the questions in flight (step i/n, queries
searched, documents added) and the time left at the pace this run has measured so far."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from frames_agent.agent.state import AgentEvent
from frames_agent.core.terminal import plain
from frames_agent.eval.frames.estimate import duration

Watch = Callable[[AgentEvent], None]
LISTED = 3  # questions in flight named on the line; more are counted, so the line fits a terminal


def shown(progress: bool, file: IO[str]) -> bool:
    """Whether to draw progress at all: asked for, and to a terminal (logs, pipes and CI stay quiet)."""
    isatty = getattr(file, "isatty", None)
    return bool(progress and isatty is not None and isatty())


@dataclass
class Flight:
    """One question in flight: its current step, the queries it searched and the documents it added so far."""

    qid: str
    step: int = 0
    steps_done: int = 0
    queries: int = 0
    docs: int = 0
    answered: bool = False

    def see(self, event: AgentEvent) -> None:
        """Take one of the agent's typed events."""
        if event.kind == "step_started":
            self.step = event.step
        elif event.kind == "queries":
            self.queries += len(event.queries) + len(event.tool_calls)
        elif event.kind == "documents_added":
            self.docs += len(event.documents)
            self.steps_done = max(self.steps_done, event.step)
        elif event.kind == "answer":
            self.answered = True

    def line(self, steps: int | None) -> str:
        """The question's part of the in-flight line."""
        name = f"q{self.qid}" if self.qid.isdigit() else self.qid  # FRAMES ids are row numbers: "q12", not "12"
        if self.answered:
            return f"{name} answered"
        if not self.step:
            return f"{name} started"
        return (f"{name} step {self.step}{f'/{steps}' if steps else ''} · {self.queries} "
                f"quer{'y' if self.queries == 1 else 'ies'} · +{self.docs} doc{'' if self.docs == 1 else 's'}")

    def share(self, steps: int | None) -> float:
        """How much of the question is done: its finished steps of n, the answer (and judge) as one more."""
        if not steps:
            return 0.0  # a system without steps tells nothing until its question is finished
        return (steps if self.answered else min(self.steps_done, steps)) / (steps + 1)


class Progress:
    """The question bar and, under it, the questions in flight and the measured time left; inert when not shown."""

    def __init__(self, total: int, desc: str, *, steps: int | None = None, progress: bool = True,
                 file: IO[str] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        from tqdm import tqdm

        file = file if file is not None else sys.stderr
        self.total, self.steps, self.clock, self.started = total, steps, clock, clock()
        self.enabled = shown(progress, file)
        self.done = 0
        self.flights: dict[str, Flight] = {}
        # Finished work (questions, and finished steps of those in flight) and when it last grew: the pace is
        # measured up to there, so a step still running does not stretch it.
        self.units, self.measured = 0.0, self.started
        # tqdm's own rate and time left are left out: the line below says both, measured step by step.
        self.bar = tqdm(total=total, unit="q", desc=desc, file=file, disable=not self.enabled, dynamic_ncols=True,
                        bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")
        # A bar with only its description: the line under the question bar, gone when the run ends.
        self.status = tqdm(total=0, bar_format="{desc}", file=file, disable=not self.enabled, leave=False,
                           dynamic_ncols=True)

    @contextmanager
    def flight(self, qid: str) -> Iterator[Watch]:
        """A question in flight while the block runs; yields the watcher its agent's events go to."""
        flight = self.flights[qid] = Flight(qid)

        def watch(event: AgentEvent) -> None:
            try:
                flight.see(event)
            except Exception:  # the display must never fail a question
                return
            self._count()
            self.refresh()

        self.refresh()
        try:
            yield watch
        finally:
            self.flights.pop(qid, None)

    def finished(self, postfix: str) -> None:
        """One question done (its record written): the bar moves on and the pace is measured again."""
        self.done += 1
        self.bar.set_postfix_str(plain(postfix, lines=False), refresh=False)
        self.bar.update(1)
        self._count()
        self.refresh()

    def _count(self) -> None:
        """Take the finished work now; when it grew, the time it grew is where the pace is measured to."""
        units = self.done + sum(f.share(self.steps) for f in self.flights.values())
        if units > self.units:
            self.units, self.measured = units, self.clock()

    def left(self) -> str:
        """The time left at the pace of the finished questions and steps ("" until one has finished)."""
        if self.units <= 0:
            return ""
        pace = (self.measured - self.started) / self.units
        pace_text = f"{pace:.1f}" if pace < 10 else f"{pace:.0f}"
        return f"~{duration(pace * max(0.0, self.total - self.units))} left at {pace_text} s/question (measured)"

    def line(self) -> str:
        """The line under the question bar."""
        flights = list(self.flights.values())
        parts = [f.line(self.steps) for f in flights[:LISTED]]
        parts += [f"+{len(flights) - LISTED} more in flight"] if len(flights) > LISTED else []
        return plain("  " + " | ".join(p for p in [*parts, self.left()] if p), lines=False)

    def refresh(self) -> None:
        """Redraw both lines (also once a second, so the elapsed time moves while a local model thinks)."""
        if not self.enabled:
            return
        self.status.set_description_str(self.line(), refresh=False)
        self.bar.refresh()
        self.status.refresh()

    def close(self) -> None:
        """Put the bars away (the question bar stays on screen)."""
        self.status.close()
        self.bar.close()
