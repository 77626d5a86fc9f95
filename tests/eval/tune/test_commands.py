"""`python cli.py tune` bad input: one line, exit 2."""
from __future__ import annotations

import pytest

from frames_agent import cli


@pytest.mark.parametrize("extra", [["--budget", "1"], ["--held-out", "1.5"], ["--candidates", "0"]])
def test_tune_bad_numbers_are_one_line(tmp_path, capsys, extra):
    argv = ["tune", "--train", str(tmp_path / "train.jsonl"), "--out", str(tmp_path / "p.txt"), *extra]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "tune needs" in err and err.count("\n") == 1


def test_tune_missing_train_file_is_one_line(tmp_path, capsys):
    assert cli.main(["tune", "--train", str(tmp_path / "none.tsv"), "--out", str(tmp_path / "p.txt")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
