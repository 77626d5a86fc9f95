"""What `ask` and `search` print is plain text: control characters from the model, the question and the data are
shown escaped, never sent to the terminal."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from frames_agent.core.paths import project_root
from frames_agent.core.terminal import plain
from tests.agent.llm.fake_openai import FakeOpenAI, completion, sse_chunks

NASTY = "\x1b[2J\x1b]0;pwned\x07\x00\r\x9b31m\u202e"
QUESTION = "Who is the mayor of Brennick?" + NASTY.replace("\x00", "")  # argv cannot hold a NUL


def test_plain_escapes_controls_and_keeps_lines_and_text():
    assert plain(f"a{NASTY}b") == "a\\x1b[2J\\x1b]0;pwned\\x07\\x00\\x0d\\x9b31m\\u202eb"
    assert plain("two\nlines\tand café ✓") == "two\nlines\tand café ✓"
    assert plain("two\nlines", lines=False) == "two\\x0alines"


@pytest.mark.slow
def test_ask_prints_no_control_character(tmp_path):
    # The plan call gets a completion; ask streams the answer call, so it gets the same text as chunks.
    fake = FakeOpenAI().add(200, completion(f"Answer: red{NASTY}")).always(200, sse_chunks(["Answer: red", NASTY]))
    try:
        env = {**os.environ, "FRAMES_AGENT_CACHE": str(tmp_path), "PYTHONIOENCODING": "utf-8"}
        done = subprocess.run([sys.executable, "cli.py", "ask", QUESTION, "--tools",
                               "crag", "--k", "1", "--n", "1", "--model", "openai:x", "--base-url", fake.url],
                              cwd=project_root(), env=env, capture_output=True, text=True, timeout=180)
    finally:
        fake.close()
    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    assert not any(ch in printed for ch in "\x1b\x07\x00\r\x9b\u202e")
    assert "Answer: red\\x1b[2J" in done.stdout and "\\x1b[2J" in done.stdout.split("searching:")[1]
