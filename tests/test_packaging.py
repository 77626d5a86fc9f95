"""Packaging: the console script, PEP 561 markers, and every FRAMES_AGENT_* variable the code reads is documented."""
from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "retrieval", "index", "eval")


def test_console_script_is_cli_main(capsys):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    module, _, attr = project["project"]["scripts"]["frames-agent"].partition(":")
    main = getattr(importlib.import_module(module), attr)
    assert main(["index", "list"]) == 0  # the script's exit code is main's return value


def test_packages_ship_py_typed():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["*"]
    assert all((ROOT / package / "py.typed").is_file() for package in PACKAGES)


def test_every_frames_agent_variable_is_documented():
    sources = [ROOT / "cli.py", *(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))]
    used = {name for path in sources for name in re.findall(r"FRAMES_AGENT_[A-Z_]*[A-Z]", path.read_text())}
    readme = (ROOT / "README.md").read_text()
    assert len(used) >= 10 and not [name for name in sorted(used) if f"`{name}`" not in readme]


def test_readme_states_the_limits_the_code_applies():
    from agent import answers
    from agent.calculator import MAX_BITS, MAX_LENGTH, MAX_NODES, MAX_ROUND_DIGITS
    from agent.llm import json_repair
    from agent.limits import MAX_BODY_BYTES, MAX_QUESTION_CHARS, MAX_SEARCH_HITS
    from retrieval.lucene.fields import MAX_TERMS

    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"a search of more than {MAX_TERMS} distinct terms keeps the first {MAX_TERMS}" in readme
    assert f"over {MAX_QUESTION_CHARS:,} characters" in readme and f"(default {MAX_BODY_BYTES:,};" in readme
    assert f"`k` is 1-{MAX_SEARCH_HITS}" in readme
    assert all(f"| `{status}` |" in readme for status in (413, 422, 429, 502, 504, 400))
    assert (f"expressions over {MAX_LENGTH} characters or {MAX_NODES} parse nodes" in readme
            and f"{MAX_BITS:,} bits" in readme and f"more than {MAX_ROUND_DIGITS} digits" in readme)
    assert (f"reads a reply's last {answers.MAX_REPLY_CHARS:,} characters" in readme
            and f"a structured reply's first {json_repair.MAX_REPLY_CHARS:,}" in readme)
