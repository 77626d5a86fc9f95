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
