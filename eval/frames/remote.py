"""What a Ray worker process runs: it builds its own index, model and judges (once per run, kept for the next
question) and runs one question at a time; the record goes back to the one process that writes the run directory."""
from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict

from frames_agent.eval.frames.datasets import Question
from frames_agent.eval.frames.runner import Components, FramesRunSettings, run_question

Build = Callable[[FramesRunSettings, object], Components]
KEPT_RUNS = 4  # built runs a worker keeps; tasks arrive run by run, so a few cover the runs in flight
_built: OrderedDict[str, Components] = OrderedDict()
_loop: asyncio.AbstractEventLoop | None = None


def _key(build: Build, settings: FramesRunSettings, agent_config) -> str:
    return json.dumps([f"{build.__module__}.{build.__qualname__}", asdict(settings),
                       agent_config.model_dump(mode="json")], sort_keys=True, default=str)


def components(build: Build, settings: FramesRunSettings, agent_config) -> Components:
    """This worker's components for a run, built on first use (the index opened read-only here)."""
    key = _key(build, settings, agent_config)
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
