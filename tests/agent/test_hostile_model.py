"""`ask` and `llm` against a hostile model server, as real processes: whatever the server does, the command ends with
one line and exit 2 (or a bounded answer), on time, and sends nothing after the question's deadline.

The cases run concurrently in one module fixture, each against its own loopback fake server.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest

from frames_agent.core.paths import project_root
from tests.agent.llm.fake_openai import HOSTILE, FakeOpenAI, refused_url

pytestmark = pytest.mark.slow  # `ask` and `llm` as processes

# Long enough for the non-hanging cases' retries to finish on a loaded 2-core machine (3 s was not, under a model run).
DEADLINE = 8.0
# case -> (command, exit code, text the last stderr line must contain)
CASES = {
    "refused": ("ask", 2, "cannot reach"),
    "truncated json": ("ask", 2, "not JSON"),
    "empty choices": ("ask", 2, "no choices"),
    "html": ("ask", 2, "not JSON"),
    "500": ("ask", 2, "server error"),
    "hang": ("ask", 2, f"question deadline of {DEADLINE:g} s"),
    "huge": ("ask", 0, "LLM calls"),
    "deep": ("ask", 2, "nested deeper than 64 levels"),
    "text usage": ("ask", 0, "(2 LLM calls"),  # no callback TypeError, and the calls still counted
    "llm empty choices": ("llm", 2, "no choices"),
}


@dataclass
class Run:
    code: int = -1
    out: str = ""
    lines: list[tuple[float, str]] = field(default_factory=list)  # (arrival, stderr line)
    ended: float = 0.0
    fake: FakeOpenAI | None = None


def _run(case: str, tmp) -> Run:
    command, _, _ = CASES[case]
    fake = FakeOpenAI().always(*HOSTILE[case.removeprefix("llm ")]) if case != "refused" else None
    url = fake.url if fake else refused_url()
    argv = ([command, "Who is the mayor of Brennick?", "--tools", "crag", "--k", "1", "--n", "1",
             "--question-timeout", str(DEADLINE), "--timeout", "30"] if command == "ask" else [command, "hi"])
    env = {**os.environ, "FRAMES_AGENT_CACHE": str(tmp / case.replace(" ", "-")), "PYTHONIOENCODING": "utf-8"}
    env.pop("FRAMES_AGENT_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "cli.py", *argv, "--model", "openai:x", "--base-url", url],
                            cwd=project_root(), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = Run(fake=fake)

    def read_stderr() -> None:
        for line in proc.stderr:
            run.lines.append((time.monotonic(), line.rstrip("\n")))

    reader = threading.Thread(target=read_stderr)
    reader.start()
    run.out = proc.stdout.read()
    run.code = proc.wait(timeout=180)
    run.ended = time.monotonic()
    reader.join()
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = dict(zip(CASES, pool.map(lambda case: _run(case, tmp), CASES)))
    yield done
    for run in done.values():
        if run.fake:
            run.fake.close()


@pytest.mark.parametrize("case", list(CASES))
def test_whatever_the_server_does_the_command_ends_cleanly(runs, case):
    run, (_, code, words) = runs[case], CASES[case]
    err = "\n".join(line for _, line in run.lines)
    assert run.code == code, err
    assert "Traceback" not in err and "unexpected" not in err
    assert words in run.lines[-1][1], err
    if code == 2:
        assert len(run.lines) == 1 and run.lines[0][1].startswith("error: "), err


def test_a_hanging_server_ends_ask_at_its_deadline(runs):
    run = runs["hang"]
    (said, _), sent = run.lines[-1], run.fake.times
    assert len(sent) == 1 and said - sent[0] < DEADLINE + 1.5  # the error comes at the deadline...
    assert run.ended - said < 2.5  # ...and the process does not wait for the abandoned request


def test_a_huge_reply_gives_a_bounded_answer(runs):
    answer = runs["huge"].out.rstrip().rsplit("\n", 1)[-1]
    assert answer.startswith("Answer: ") and len(answer) <= 8 + 300
