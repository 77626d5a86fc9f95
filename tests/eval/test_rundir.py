"""The run directory shared by FRAMES and CRAG: strict reading, torn-tail repair only, config refusal, atomic writes."""
from __future__ import annotations

import json

import pytest

from frames_agent import cli
from frames_agent.eval.errors import EvalError
from frames_agent.eval.frames.runner import frames_run_dir
from frames_agent.eval.rundir import write_atomic

GOOD = [{"id": "1", "question": "q1", "gold_answer": "a"}, {"id": "2", "question": "q2", "gold_answer": "b"}]


def _results(tmp_path, lines: list[bytes]) -> bytes:
    (tmp_path / "config.json").write_text(json.dumps({"system": "naive"}))
    data = b"".join(lines)
    (tmp_path / "results.jsonl").write_bytes(data)
    return data


def _line(record: dict) -> bytes:
    return json.dumps(record).encode() + b"\n"


@pytest.mark.parametrize("bad", [b'{"id": "9", "question": "cut\n', b'{"question": "no id"}\n', b"[1, 2]\n"])
def test_a_bad_middle_line_leaves_the_file_untouched_and_names_the_line(tmp_path, bad):
    data = _results(tmp_path, [_line(GOOD[0]), bad, _line(GOOD[1])])
    with pytest.raises(EvalError, match=r"results\.jsonl line 2: not "):
        frames_run_dir(tmp_path).load_records()
    assert (tmp_path / "results.jsonl").read_bytes() == data


def test_a_valid_last_line_without_id_is_not_repaired_away(tmp_path):
    data = _results(tmp_path, [_line(GOOD[0]), b'{"question": "no id"}\n'])
    with pytest.raises(EvalError, match=r"line 2: not a valid record \(id: Field required\)"):
        frames_run_dir(tmp_path).load_records()
    assert (tmp_path / "results.jsonl").read_bytes() == data


def test_only_a_torn_last_line_is_dropped(tmp_path):
    _results(tmp_path, [_line(GOOD[0]), _line(GOOD[1]), b'{"id": "3", "question": "Which tel'])
    records, notes = frames_run_dir(tmp_path).load_records()
    assert list(records) == ["1", "2"] and "dropped the last line" in notes[0]
    assert (tmp_path / "results.jsonl").read_bytes() == _line(GOOD[0]) + _line(GOOD[1])


def test_a_complete_last_record_missing_its_newline_is_kept(tmp_path):
    _results(tmp_path, [_line(GOOD[0]), _line(GOOD[1])[:-1]])
    records, notes = frames_run_dir(tmp_path).load_records()
    assert list(records) == ["1", "2"] and notes == []
    assert (tmp_path / "results.jsonl").read_bytes().endswith(b"}\n")


def test_report_on_a_damaged_file_is_one_line_naming_the_line(tmp_path, capsys):
    data = _results(tmp_path, [_line(GOOD[0]), b'{"question": "no id"}\n', _line(GOOD[1])])
    assert cli.main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "results.jsonl line 2: not a valid record (id: Field required)" in err
    assert (tmp_path / "results.jsonl").read_bytes() == data


def test_results_without_a_config_are_refused(tmp_path):
    (tmp_path / "results.jsonl").write_bytes(_line(GOOD[0]))
    with pytest.raises(EvalError, match="has results.jsonl but no config.json"):
        frames_run_dir(tmp_path).check_config({"system": "naive"})


def test_config_mismatch_names_the_key_and_both_values(tmp_path):
    run_dir = frames_run_dir(tmp_path)
    run_dir.write_config({"index_fingerprint": "aaa", "info": {"data": "x"}})
    run_dir.check_config({"index_fingerprint": "aaa", "info": {"data": "elsewhere"}})  # info may differ
    run_dir.check_config({"index_fingerprint": "bbb"}, unknown=("index_fingerprint",))  # not known yet
    with pytest.raises(EvalError, match=r"\(index_fingerprint was 'aaa', now 'bbb'\)"):
        run_dir.check_config({"index_fingerprint": "bbb"})


def test_a_retired_setting_resumes_at_the_value_that_does_what_the_agent_does_and_is_refused_otherwise(tmp_path):
    run_dir = frames_run_dir(tmp_path)  # the same check serves CRAG and tune run directories
    run_dir.write_config({"agent": {"k": 5, "drop_fanout": False, "context_selection": "context"}})
    run_dir.check_config({"agent": {"k": 5}})
    run_dir.write_config({"agent": {"k": 5, "drop_fanout": True}})
    with pytest.raises(EvalError, match=r"was run with drop_fanout=true: a retired setting \(tried and not kept: "
                       r"docs/measurements.md#tried-and-not-kept\); run it with the commit listed there") as caught:
        run_dir.check_config({"agent": {"k": 5}})
    assert "\n" not in str(caught.value)
    run_dir.write_config({"agent": {"k": 5, "drop_fanout": False}})
    with pytest.raises(EvalError, match=r"\(agent.k was 5, now 6\)"):  # a setting still there is compared as ever
        run_dir.check_config({"agent": {"k": 6}})


def test_a_second_writer_is_refused_by_the_lock(tmp_path):
    run_dir = frames_run_dir(tmp_path)
    with run_dir.locked(), pytest.raises(EvalError, match="another run is writing"), frames_run_dir(tmp_path).locked():
        pass


def test_write_atomic_never_leaves_half_a_file(tmp_path, monkeypatch):
    target = tmp_path / "summary.json"
    write_atomic(target, '{"n": 1}\n')
    monkeypatch.setattr("os.replace", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        write_atomic(target, '{"n": 2, "and": "more"}\n')
    assert target.read_text() == '{"n": 1}\n'


def _one_line_exit_2(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected" not in err
    return err


def test_a_100000_deep_results_line_is_one_line_naming_it_and_the_file_is_kept(tmp_path, capsys):
    data = _results(tmp_path, [_line(GOOD[0]), b"[" * 100_000 + b"]" * 100_000 + b"\n"])
    assert "results.jsonl line 2: JSON nested deeper than 64" in _one_line_exit_2(capsys, "report", str(tmp_path))
    assert (tmp_path / "results.jsonl").read_bytes() == data


@pytest.mark.parametrize("name", ["results.jsonl", "config.json", "summary.json"])
def test_run_files_that_are_not_regular_files_are_never_read(tmp_path, capsys, name):
    import os

    _results(tmp_path, [_line(GOOD[0])])
    for make in (os.mkfifo, lambda path: path.symlink_to("/dev/zero")):  # a FIFO waits for a writer, zeros never end
        (tmp_path / name).unlink(missing_ok=True)
        make(tmp_path / name)
        if name == "summary.json":  # the report's own output, not the run's data: left out and written anew
            assert cli.main(["report", str(tmp_path)]) == 0
        else:
            assert "not a regular file" in _one_line_exit_2(capsys, "report", str(tmp_path))


@pytest.mark.parametrize("config", ["[]", '"x"', "null", '{"info": []}', "[" * 100_000, '{"a": "\\udc80'],
                         ids=["list", "string", "null", "info-list", "deep", "cut"])
def test_a_config_that_is_no_run_config_is_one_line(tmp_path, capsys, config):
    _results(tmp_path, [_line(GOOD[0])])
    (tmp_path / "config.json").write_text(config)
    assert "config.json" in _one_line_exit_2(capsys, "report", str(tmp_path))


def test_lines_appended_from_another_runs_configuration_are_refused_with_one_line(tmp_path, capsys):
    from frames_agent.eval.frames.records import QuestionRecord

    runs = {}
    for name, system in (("a", "bm25"), ("b", "naive")):
        run = frames_run_dir(tmp_path / name)
        run.write_config({"system": system})
        run.append(QuestionRecord(id="1", question="q", answer=name))
        runs[name] = run
    records, _ = runs["a"].load_records()  # its own lines resume
    assert records["1"].answer == "a"
    mine = (tmp_path / "a" / "results.jsonl").read_bytes()
    (tmp_path / "a" / "results.jsonl").write_bytes(mine + (tmp_path / "b" / "results.jsonl").read_bytes())
    err = _one_line_exit_2(capsys, "report", str(tmp_path / "a"))
    assert "line 2 comes from another run's configuration" in err
    # a run of the same settings may share lines; a run written before lines were stamped still reads
    runs["c"] = frames_run_dir(tmp_path / "c")
    runs["c"].write_config({"system": "bm25"})
    (tmp_path / "c" / "results.jsonl").write_bytes(mine + _line(GOOD[1]))
    assert sorted(runs["c"].load_records()[0]) == ["1", "2"]


def test_a_read_only_run_directory_is_one_line_and_nothing_is_lost(tmp_path, capsys, monkeypatch):
    import errno

    from frames_agent.eval import rundir

    data = _results(tmp_path, [_line(GOOD[0])])

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(rundir, "open", read_only, raising=False)  # what a read-only mount answers any write
    monkeypatch.setattr(rundir, "write_atomic", read_only)
    assert "Read-only file system" in _one_line_exit_2(capsys, "report", str(tmp_path))
    assert (tmp_path / "results.jsonl").read_bytes() == data


def test_the_errors_page_states_the_run_file_limits():
    from pathlib import Path

    from frames_agent.eval.rundir import MAX_CONFIG_BYTES, MAX_RESULTS_BYTES

    page = (Path(__file__).parents[2] / "docs" / "errors.md").read_text(encoding="utf-8")
    assert f"a JSON object up to {MAX_CONFIG_BYTES >> 20} MiB, `results.jsonl` up to {MAX_RESULTS_BYTES >> 30} GiB" in page


def test_a_compare_directory_whose_comparison_json_is_a_fifo_is_read_in_name_order(tmp_path):
    import os
    import threading

    from frames_agent.eval.frames.comparison import expand_runs

    for name in ("b", "a"):
        (tmp_path / name).mkdir()
        _results(tmp_path / name, [_line(GOOD[0])])
    os.mkfifo(tmp_path / "comparison.json")  # open() would wait for a writer for ever
    found: list = []
    reader = threading.Thread(target=lambda: found.append(expand_runs([tmp_path])), daemon=True)
    reader.start()
    reader.join(120)  # a hang detector, not a time bound: the read returns at once or never
    assert found == [[tmp_path / "a", tmp_path / "b"]]
