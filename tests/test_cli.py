"""cli.main: every way out is one line and a fitting exit code, even before the parser exists."""
from __future__ import annotations

import argparse

import pytest

from frames_agent import cli


def test_ctrl_c_while_commands_import_is_one_line(monkeypatch, capsys):
    def slow_import(command: str | None = None) -> argparse.ArgumentParser:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", slow_import)
    assert cli.main(["search", "x"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "interrupted; finished work is saved"


def test_non_utf8_argument_is_refused(capsys):
    assert cli.main(["search", "Eiffel \udcff\udcfe Tower"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid UTF-8" in err and "\\xff" in err


def test_non_utf8_path_that_exists_is_accepted(tmp_path):
    path = tmp_path / "caf\udce9"
    path.write_text("x")
    assert cli._checked_args([str(path)]) == [str(path)]


@pytest.mark.parametrize("exc", [PermissionError(13, "Permission denied", "/root/x"),
                                 NotADirectoryError(20, "Not a directory", "/tmp/file/run")])
def test_unusable_paths_are_user_errors(monkeypatch, capsys, exc):
    def handler(args: argparse.Namespace) -> int:
        raise exc

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=handler)
    monkeypatch.setattr(cli, "build_parser", lambda command=None: parser)
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and exc.filename in err and "unexpected" not in err


BIG_OUTPUT = """
import argparse, sys
from frames_agent import cli
parser = argparse.ArgumentParser()
parser.set_defaults(handler=lambda args: [print("x" * 1000) for _ in range(5000)] and 0)
cli.build_parser = lambda command=None: parser
sys.exit(cli.main([]))
"""


@pytest.mark.slow
def test_a_reader_that_stops_early_is_no_crash():
    """`cli.py ask --json | head`: the closed pipe ends the command quietly."""
    import subprocess
    import sys

    from frames_agent.core.paths import project_root

    proc = subprocess.Popen([sys.executable, "-c", BIG_OUTPUT], cwd=project_root(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    code = proc.wait(timeout=60)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert code == 141 and err == ""


def test_each_command_is_mapped_to_the_module_that_registers_it():
    """cli imports only the module named for a command: the map must match what each module registers."""
    import importlib

    for module, names in cli.COMMAND_MODULES.items():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(module).register(sub)
        assert set(sub.choices) == set(names), module


@pytest.mark.parametrize("command, default_on", [("serve", False), ("mcp", False), ("ask", False), ("frames", True),
                                                 ("sweep", True)])
def test_one_cache_flag_pair_in_help_and_its_default(command, default_on, capsys):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    text = capsys.readouterr().out
    flags = [line.split()[0] for line in text.splitlines() if line.lstrip().startswith("--") and "cache" in line]
    assert flags == ["--cache,"] and text.count("[--cache | --no-cache]") == 1  # one pair, in usage and in help
    assert f"(default: {'on' if default_on else 'off'}" in " ".join(text.split())
    parser = cli.build_parser()
    extra = ["q"] if command == "ask" else []
    assert parser.parse_args([command, *extra]).no_cache is not default_on
    assert parser.parse_args([command, *extra, "--cache"]).no_cache is False
    assert parser.parse_args([command, *extra, "--no-cache"]).no_cache is True
