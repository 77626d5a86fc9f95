"""Progress you can watch: the questions in flight step by step under the question bar, the time left at the
measured pace; quiet with --no-progress and when stderr is not a terminal. Scripted model on the tiny real index."""
from __future__ import annotations

import asyncio
import io
import re
import sys

import pytest

from frames_agent.agent.state import AnswerReady, DocumentsAdded, QueriesPlanned, StepStarted
from frames_agent.eval.frames.datasets import load_questions
from frames_agent.eval.frames.progress import Flight, Progress, shown
from frames_agent.eval.frames.systems import WATCH, MultiStep
from tests.eval.frames.test_runner import TINY, make_agent, run


class Terminal(io.StringIO):
    """A captured stderr that says it is a terminal, as an interactive run's is."""

    def isatty(self) -> bool:
        return True


def _run_with_stderr(monkeypatch, tmp_path, retriever, stderr: io.StringIO, **overrides) -> str:
    monkeypatch.setattr(sys, "stderr", stderr)
    outcome, _ = run(tmp_path, retriever, **{"concurrency": 1, **overrides})
    assert outcome.ran == 6 and outcome.summary.accuracy == pytest.approx(4 / 6)  # watching changes no result
    return stderr.getvalue()


def test_a_terminal_sees_each_question_step_by_step_and_the_time_left(monkeypatch, tmp_path, tiny_retriever):
    text = _run_with_stderr(monkeypatch, tmp_path, tiny_retriever, Terminal(), progress=True)
    assert "6/6 [" in text and "acc 4/6" in text  # the question bar
    assert "step 1/2" in text and "step 2/2" in text
    # question 1's counts grow over its two steps (the exact numbers are the agent's settings', not the display's)
    counts = [tuple(map(int, m)) for m in re.findall(r"q1 step \d/2 · (\d+) queries · \+(\d+) docs", text)]
    assert counts and counts == sorted(counts) and counts[-1][0] >= 4 and counts[-1][1] > 0
    assert "left at" in text and "s/question (measured)" in text


def test_non_terminal_stderr_and_no_progress_stay_quiet(monkeypatch, tmp_path, tiny_retriever):
    assert _run_with_stderr(monkeypatch, tmp_path / "pipe", tiny_retriever, io.StringIO(), progress=True) == ""
    assert _run_with_stderr(monkeypatch, tmp_path / "off", tiny_retriever, Terminal(), progress=False) == ""


def test_shown_only_when_asked_and_to_a_terminal():
    assert shown(True, Terminal()) and not shown(False, Terminal()) and not shown(True, io.StringIO())
    assert not shown(True, object())  # a stream without isatty is not a terminal


def test_a_flight_counts_steps_queries_and_documents(tiny_retriever):
    flight = Flight("7")
    assert flight.line(5) == "q7 started" and flight.share(5) == 0
    docs = tiny_retriever.search("Brennick", 3)
    for event in (StepStarted(step=1), QueriesPlanned(step=1, queries=["a", "b"]), DocumentsAdded(step=1, documents=docs),
                  StepStarted(step=2), QueriesPlanned(step=2, queries=["c"])):
        flight.see(event)
    assert flight.line(5) == f"q7 step 2/5 · 3 queries · +{len(docs)} docs"
    assert Flight("x", step=1, queries=1, docs=1).line(None) == "x step 1 · 1 query · +1 doc"
    assert flight.share(5) == pytest.approx(1 / 6)  # one of five steps done, the answer still to come
    assert flight.share(None) == 0  # a system without steps: nothing until the question is done


def test_time_left_is_measured_from_finished_questions_and_steps():
    now = [100.0]
    progress = Progress(4, "multistep", steps=2, progress=False, clock=lambda: now[0])
    assert progress.left() == ""  # nothing measured yet
    with progress.flight("a") as watch:
        watch(StepStarted(step=1))
        now[0] = 110.0  # a third of a question (1 of 2 steps + answer) in 10 s: 30 s a question
        watch(DocumentsAdded(step=1, documents=[]))
        assert progress.left() == "~2 min left at 30 s/question (measured)"  # 110 s
        now[0] = 120.0  # one question in 20 s, three to go
    progress.finished("acc 1/1")
    assert progress.left() == "~60 s left at 20 s/question (measured)"
    assert progress.line() == "  ~60 s left at 20 s/question (measured)"
    progress.close()


def test_a_long_step_in_flight_does_not_stretch_the_time_left():
    # Measured on a loaded machine: 32 min, then 60 while a slow step ran, then 28 when it finished.
    now = [0.0]
    progress = Progress(3, "multistep", steps=2, progress=False, clock=lambda: now[0])
    with progress.flight("a") as watch:
        watch(StepStarted(step=1))
        now[0] = 30.0
        watch(DocumentsAdded(step=1, documents=[]))
        watch(StepStarted(step=2))
        settled = progress.left()
        assert settled == "~4 min left at 90 s/question (measured)"
        for now[0] in (60.0, 300.0, 900.0):  # the second step runs long: nothing new has finished
            progress.refresh()
            assert progress.left() == settled
        watch(DocumentsAdded(step=2, documents=[]))  # at 900 s: two thirds of a question in 900 s
    assert progress.left() == "~52 min left at 1350 s/question (measured)"
    progress.close()


def test_more_questions_in_flight_than_listed_are_counted():
    progress = Progress(9, "multistep", steps=2, progress=False)
    for qid in "abcde":
        progress.flights[qid] = Flight(qid)
    assert progress.line() == "  a started | b started | c started | +2 more in flight"


def test_multistep_sends_every_event_to_the_watcher_and_returns_the_same_result(tiny_retriever):
    question = load_questions(TINY, None).questions[0]
    system = MultiStep(make_agent(tiny_retriever))
    plain = asyncio.run(system.run(question)).result
    seen = []

    async def watched():
        WATCH.set(seen.append)
        return (await system.run(question)).result

    result = asyncio.run(watched())
    assert [e.kind for e in seen] == ["step_started", "queries", "documents_added"] * 2 + ["answer"]
    assert isinstance(seen[-1], AnswerReady) and seen[-1].result is result
    assert result.answer == plain.answer and [s.queries for s in result.steps] == [s.queries for s in plain.steps]
    assert [d.id for d in result.documents] == [d.id for d in plain.documents]
