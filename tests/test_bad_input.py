"""Bad input through the real CLI, as a subprocess: exit 2, exactly one line on stderr, no traceback, no
"unexpected" (a bug), and nothing in the output directory lost or changed.

The cases run concurrently in one module fixture; each stops before any model or Java is needed.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from frames_agent.core.paths import project_root

pytestmark = pytest.mark.slow  # a CLI subprocess per bad input

FIXTURES = Path(__file__).parent / "fixtures"
OFFLINE = ["--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1"]  # never reached: input fails first


def _cases(tmp: Path, busy: int) -> dict[str, tuple[list[str], str]]:
    """name -> (argv, text the error line must contain); `busy` is a port something listens on."""
    (tmp / "plan_no_question.txt").write_text("Write {k} queries.\n", encoding="utf-8")
    (tmp / "answer_no_context.txt").write_text("Answer {question}\n", encoding="utf-8")
    (tmp / "a_file").write_text("not a directory\n", encoding="utf-8")
    (tmp / "bad.jsonl").write_text('{"id": "1", "title": "A", "contents": "a"}\n{oops\n', encoding="utf-8")
    out = str(tmp / "out")
    return {
        "non-utf8 query": (["search", "Eiffel \udcff\udcfe Tower"], "not valid UTF-8"),
        "missing index": (["search", "x", "--index", str(tmp / "no-index")], "no-index"),
        "malformed corpus": (["index", "build", "--corpus", str(tmp / "bad.jsonl"), "--name", "x", "--threads", "1"],
                             "bad.jsonl:2: malformed JSON"),
        "prompt is a directory": (["ask", "q", "--tools", "crag", "--prompt", str(tmp), *OFFLINE], "is a directory"),
        "prompt without question": (["ask", "q", "--tools", "crag", "--prompt", str(tmp / "plan_no_question.txt"),
                                     *OFFLINE], "never uses {question}"),
        "port out of range": (["crag-server", "--port", "99999"], "not a TCP port"),
        # A server says "serving on" only once its port is bound.
        "serve port out of range": (["serve", "--port", "70000", "--tools", "crag", *OFFLINE], "not a TCP port"),
        "serve port in use": (["serve", "--port", str(busy), "--tools", "crag", *OFFLINE], "already in use"),
        "crag-server port in use": (["crag-server", "--port", str(busy)], "already in use"),
        "question too long": (["ask", "x" * 4001, "--tools", "crag", *OFFLINE], "at most 4000 characters"),
        "out cannot be created": (["frames", "--data", str(FIXTURES / "frames_tiny.tsv"), "--out", "/proc/frames-x",
                                   "--system", "naive", *OFFLINE], "/proc/frames-x"),
        "bad base url": (["llm", "hi", "--model", "openai:m", "--base-url", "ftp://host/v1"], "http://"),
        "missing data": (["frames", "--data", str(tmp / "none.tsv"), "--out", out, *OFFLINE], "no data file"),
        "out is a file": (["frames", "--data", str(FIXTURES / "frames_tiny.tsv"), "--out", str(tmp / "a_file"),
                           "--system", "naive", *OFFLINE], "a_file"),
    }


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad_input")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    cases = _cases(tmp, busy.getsockname()[1])
    (tmp / "out").mkdir()
    (tmp / "out" / "results.jsonl").write_text('{"id": "0", "answer": "kept"}\n', encoding="utf-8")
    before = _snapshot(tmp)
    env = {**os.environ, "FRAMES_AGENT_INDEXES": str(tmp / "indexes"), "FRAMES_AGENT_CACHE": str(tmp / "cache"),
           "PYTHONIOENCODING": "utf-8"}
    env.pop("FRAMES_AGENT_DEBUG", None)

    def run(argv: list[str]) -> subprocess.CompletedProcess:
        # os.fsencode keeps undecodable bytes as the bytes a shell would pass.
        args = [sys.executable, str(project_root() / "cli.py"), *argv]
        return subprocess.run([os.fsencode(a) for a in args], env=env, cwd=tmp, capture_output=True, timeout=180)

    with busy, ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(cases, pool.map(run, [argv for argv, _ in cases.values()])))
    return cases, done, before, _snapshot(tmp), tmp


CASE_NAMES = ["non-utf8 query", "missing index", "malformed corpus", "prompt is a directory", "prompt without question",
              "port out of range", "bad base url", "missing data", "out is a file", "serve port out of range",
              "serve port in use", "crag-server port in use", "question too long", "out cannot be created"]
# A progress bar drawn before the failure (index build reading the corpus) is not an error line.
PROGRESS_BAR = re.compile(r"\d+%\|")


# Cases whose command checks its optional packages first: without the lucene extra they refuse on that instead.
NEEDS_LUCENE = {"missing index", "missing data", "out is a file", "out cannot be created"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.lucene) if n in NEEDS_LUCENE else n
                                  for n in CASE_NAMES])
def test_bad_input_is_one_clean_line_with_exit_2(runs, name):
    cases, done, _, _, _ = runs
    proc = done[name]
    err = proc.stderr.decode("utf-8", "replace")
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.strip() and not PROGRESS_BAR.search(ln)]
    assert proc.returncode == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and cases[name][1] in lines[0]
    assert "Traceback" not in err and "unexpected" not in err


def test_nothing_in_the_output_directory_is_lost(runs):
    _, _, before, after, tmp = runs
    assert {k: v for k, v in after.items() if k in before} == before
    assert not [k for k in after if k not in before and k.startswith("out")]
    indexes = tmp / "indexes"
    leftovers = [p.name for p in indexes.iterdir() if not p.name.endswith(".lock")] if indexes.exists() else []
    assert leftovers == []  # no half-built index left behind
