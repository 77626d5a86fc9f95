"""`frames` against an OpenAI-compatible server that answers with no choices (issue 31): each question is recorded as
failed with the provider's one-line error (no IndexError), and the run ends with one line and exit 2."""
from __future__ import annotations

import json
from pathlib import Path

from frames_agent import cli
from tests.agent.llm.fake_openai import HOSTILE, FakeOpenAI

TINY = str(Path(__file__).parents[2] / "fixtures" / "frames_tiny.tsv")


def test_empty_choices_fail_each_question_with_one_line(tmp_path, tiny_index, capsys, monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))
    fake = FakeOpenAI().always(*HOSTILE["empty choices"])
    out = tmp_path / "run"
    try:
        code = cli.main(["frames", "--data", TINY, "--out", str(out), "--model", "openai:x", "--base-url", fake.url,
                         "--index", str(tiny_index), "--k", "1", "--n", "1", "--n-docs", "2", "--limit", "2",
                         "--judge", "none", "--no-cache", "--no-progress", "--timeout", "10"])
    finally:
        fake.close()
    err = capsys.readouterr().err.strip().splitlines()
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert code == 2 and err[-1].startswith("error: every question failed (2 of 2; first: ") and "no choices" in err[-1]
    assert len(records) == 2 and all(r["failed"] for r in records)
    for record in records:
        assert "no choices" in record["error"] and "\n" not in record["error"] and "IndexError" not in record["error"]
    assert fake.requests  # the server was asked
