"""The generated reference pages match the code: docs/gen/reference.py regenerates them here."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "gen" / "reference.py"


def _generator():
    spec = importlib.util.spec_from_file_location("docs_gen_reference", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_pages_match_the_code():
    gen = _generator()
    stale = [name for name, text in gen.generate().items()
             if not (ROOT / "docs" / name).is_file() or (ROOT / "docs" / name).read_text(encoding="utf-8") != text]
    assert not stale, f"generated docs differ from the code: {', '.join(stale)}; refresh them with `{gen.REFRESH}`"


def test_every_config_field_and_every_flag_is_in_the_reference():
    from frames_agent.agent.config import AgentConfig
    from frames_agent.cli import build_parser

    gen = _generator()
    config, cli = gen.config_page(), gen.cli_page()
    assert all(f"| `{name}` |" in config for name in AgentConfig.model_fields)
    flags = {flag for _, parser, _ in gen._commands(build_parser(), []) for action in parser._actions
             for flag in action.option_strings if flag not in ("-h", "--help")}
    assert len(flags) > 50 and all(f"`{flag}" in cli or f", {flag}" in cli for flag in flags)


@pytest.mark.slow
def test_check_mode_names_the_refresh_command(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 page(s) differ" in done.stdout
