"""`frames` against an OpenAI-compatible server that answers with no choices: each question is recorded as
failed with the provider's one-line error (no IndexError), and the run ends with one line and exit 2."""
from __future__ import annotations

import json
from pathlib import Path

from frames_agent import cli
from tests.agent.llm.fake_openai import HOSTILE, FakeOpenAI, completion

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


def _hostile_tsv(path: Path, rows: list[tuple[str, str, str]]) -> str:
    head = "id\tPrompt\tAnswer\twikipedia_link_1\n"
    path.write_text(head + "".join(f"{i}\t{p}\t{a}\thttps://en.wikipedia.org/wiki/Brennick\n" for i, p, a in rows))
    return str(path)


def _frames(tmp_path, tiny_index, data: str, *more: str) -> int:
    fake = FakeOpenAI().always(200, completion("Answer: Tomas Ferrante"))
    try:
        return cli.main(["frames", "--data", data, "--out", str(tmp_path / "run"), "--model", "openai:x",
                         "--base-url", fake.url, "--index", str(tiny_index), "--k", "1", "--n", "1", "--n-docs", "2",
                         "--judge", "none", "--no-cache", "--no-progress", *more])
    finally:
        fake.close()


def test_a_question_cell_over_4000_characters_is_not_sent_and_a_5000_digit_id_is_no_crash(tmp_path, tiny_index,
                                                                                          capsys, monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))
    long_id = "9" * 5000
    data = _hostile_tsv(tmp_path / "q.tsv", [("1", "x" * 10_000_000, "a"), (long_id, "Who is the mayor?", "b"),
                                             ("3", "Who is the mayor of Brennick?", "Tomas Ferrante")])
    code = _frames(tmp_path, tiny_index, data)
    err = capsys.readouterr().err
    assert code == 0, err
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(len(r["question"]) < 4001 for r in records)
    assert "question 1 (line 2): the question has 10,000,000 characters, over 4000; skipped" in err
    assert (tmp_path / "run" / "report.md").exists() and "Exceeds the limit" not in err


def test_ids_sort_as_numbers_without_converting_them():
    from frames_agent.eval.frames.report import _natural

    assert sorted(["10", "9" * 5000, "2", "002", "²", "b", "a"], key=_natural) == [
        "2", "002", "10", "9" * 5000, "a", "b", "²"]


def test_a_full_disk_during_frames_is_exit_2_with_one_line(tmp_path, tiny_index, capsys, monkeypatch):
    import errno

    from frames_agent.eval.rundir import RunDir

    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))
    written = []

    def append(self, record):
        if written:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.results))
        written.append(record)
        original(self, record)

    original = RunDir.append
    monkeypatch.setattr(RunDir, "append", append)
    code = _frames(tmp_path, tiny_index, TINY, "--limit", "2", "--concurrency", "1")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: no space left on the device writing ") and "resume" in err[-1]
    assert len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == 1


def test_a_reply_nested_100000_deep_is_a_failed_record_not_a_crash(tmp_path, tiny_index, capsys, monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))
    fake = FakeOpenAI().always(*HOSTILE["deep"])
    try:
        code = cli.main(["frames", "--data", TINY, "--out", str(tmp_path / "run"), "--model", "openai:x", "--base-url",
                         fake.url, "--index", str(tiny_index), "--k", "1", "--n", "1", "--limit", "2", "--judge",
                         "none", "--no-cache", "--no-progress"])
    finally:
        fake.close()
    err = capsys.readouterr().err.strip().splitlines()
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert code == 2 and err[-1].startswith("error: every question failed") and "RecursionError" not in "\n".join(err)
    assert len(records) == 2 and all(r["failed"] and "nested deeper than 64 levels" in r["error"] for r in records)
