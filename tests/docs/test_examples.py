"""Every Python and shell example in README.md and docs/ runs, so an example that stops working fails CI.

The examples run as a user would run them, with two substitutions that keep them fast and offline: every model spec
resolves to the scripted fake (`ScriptedLLM`: a plan for planning prompts, "Answer: ..." otherwise), and the default
corpus is the tiny hand-written one (tests/conftest.py) with two Eiffel articles, so `open_index("default")` and
`index build` build a real Lucene index of it; the FRAMES data is tests/fixtures/frames_tiny.tsv. The Python blocks of
one page run in order in one namespace (a later block uses what an earlier one defined; top-level `await` works); a
shell block runs line by line, `python cli.py ...` in-process through `frames_agent.cli.main` (exit 0 expected) and
any other line with bash. A block preceded by `<!-- example: skip (reason) -->` is not run; the reason says why (an
install, a download, a server that runs until stopped) and the test checks each skip gives one. A block preceded by
`<!-- example: against serve (reason) -->` runs against a real `python cli.py serve` process the test starts (scripted
model, tiny index) on a free port, which replaces the example's 127.0.0.1:8080. Processes the examples start (an MCP
server over stdio, `python bench/...`) get the scripted model through FRAMES_AGENT_TEST_SCRIPT.
"""
from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.agent.serve.conftest import serving

pytestmark = pytest.mark.slow  # every page's commands as subprocesses

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = re.compile(r"<!--\s*example:\s*(?P<kind>skip|against serve)\s*\((?P<reason>.+)\)\s*-->\s*$")
PYTHON, SHELL = {"python", "py"}, {"bash", "sh", "shell", "console"}
# The examples search for the Eiffel Tower and its designer: the tiny corpus plus their two articles.
EIFFEL = [
    {"id": "eiffel-tower", "title": "Eiffel Tower",
     "contents": "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, designed by the "
                 "company of Gustave Eiffel and opened in 1889."},
    {"id": "gustave-eiffel", "title": "Gustave Eiffel",
     "contents": "Gustave Eiffel (1832-1923) was a French civil engineer born in Dijon, a city on the Ouche river."},
]
PLAN = {"thought": "look it up", "queries": ["Eiffel Tower", "Gustave Eiffel"], "tool_calls": [], "enough": False}


@dataclass
class Example:
    page: Path
    line: int
    lang: str
    code: str
    skip: str | None
    against_serve: bool = False

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def examples(page: Path) -> list[Example]:
    """The Python and shell blocks of a page, with the skip reason written above each (None: it runs)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found = []
    for token in MarkdownIt("commonmark").parse("\n".join(lines)):
        lang = token.info.strip().split(" ")[0].lower()
        if token.type != "fence" or lang not in PYTHON | SHELL:
            continue
        start = token.map[0] if token.map else 0
        above = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        match = MARKER.match(above.strip())
        skip = match.group("reason") if match and match.group("kind") == "skip" else None
        found.append(Example(page, start + 1, "python" if lang in PYTHON else "shell", token.content, skip,
                             against_serve=bool(match and match.group("kind") == "against serve")))
    return found


ALL = [example for page in PAGES for example in examples(page)]


def test_examples_are_found_and_skips_are_few_and_justified():
    assert len(ALL) >= 30 and {e.page.name for e in ALL} >= {"README.md", "library.md", "serving.md", "indexes.md"}
    skipped = [e for e in ALL if e.skip is not None]
    assert all(len(e.skip.split()) >= 3 for e in skipped), [str(e) for e in skipped]
    assert len(skipped) <= len(ALL) // 3, [f"{e}: {e.skip}" for e in skipped]


@pytest.fixture
def example_env(tmp_path, monkeypatch, tiny_corpus):
    """A working directory and an environment where every model is the scripted fake and the corpus the tiny one."""
    import mcp.client.stdio

    import frames_agent.agent.llm as llm
    from frames_agent.agent.llm.testing import ScriptedLLM

    def respond(messages):
        text = str(messages[-1].content)
        if "Reply with one JSON" in text or "JSON object" in text:
            return PLAN
        return "The passages name it.\nAnswer: Brennick"

    monkeypatch.setattr(llm, "resolve_model", lambda *args, **kwargs: ScriptedLLM(responder=respond))
    corpus = tmp_path / "corpus" / "wiki.jsonl"
    corpus.parent.mkdir()
    corpus.write_text("".join(json.dumps(doc) + "\n" for doc in [*tiny_corpus, *EIFFEL]), encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [["Reply with one JSON", PLAN], ["", "Answer: Brennick"]]}))
    cache = tmp_path / "cache"
    env = {"FRAMES_AGENT_CORPUS": str(corpus), "FRAMES_AGENT_CACHE": str(cache),
           "FRAMES_AGENT_INDEXES": str(cache / "indexes"), "FRAMES_AGENT_TEST_SCRIPT": str(script),
           "FRAMES_DATA": str(ROOT / "tests" / "fixtures" / "frames_tiny.tsv")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # An MCP client passes a server only a few safe variables; the example's server needs these too.
    default_env = mcp.client.stdio.get_default_environment
    monkeypatch.setattr(mcp.client.stdio, "get_default_environment",
                        lambda: {**default_env(), **env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    work = tmp_path / "work"
    work.mkdir()
    for name in ("cli.py", "bench"):  # examples run from a checkout: `python cli.py ...`, `python bench/...`
        (work / name).symlink_to(ROOT / name)
    monkeypatch.chdir(work)
    return work


def _run_python(code: str, namespace: dict, where: str) -> None:
    compiled = compile(code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, namespace)  # noqa: S307 (the documentation's own example)
    if asyncio.iscoroutine(result):
        asyncio.run(result)


def _commands(code: str) -> list[str]:
    """The block's command lines, continuation lines joined."""
    return [line for line in code.replace("\\\n", " ").splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _run_shell(code: str, where: str, cwd: Path) -> None:
    from frames_agent import cli

    for line in _commands(code):
        words = shlex.split(line, comments=True)
        if words[:2] == ["python", "cli.py"] or words[:1] == ["frames-agent"]:
            argv = words[2:] if words[0] == "python" else words[1:]
            assert cli.main(argv) == 0, f"{where}: `{line.strip()}` failed"
        else:
            done = subprocess.run(line, shell=True, cwd=cwd, capture_output=True, text=True, timeout=300,
                                  executable="/bin/bash")
            assert done.returncode == 0, f"{where}: `{line.strip()}` failed: {done.stderr[-1000:]}"


@pytest.mark.parametrize("page", [p for p in PAGES if any(e.page == p and e.skip is None for e in ALL)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page, example_env, tmp_path, tiny_index):
    namespace: dict = {"__name__": "__example__"}
    for example in (e for e in ALL if e.page == page and e.skip is None):
        if example.against_serve:
            with serving(["--index", str(tiny_index)], {}, tmp_path / "serve.log") as url:
                _run_python(example.code.replace("http://127.0.0.1:8080", url), namespace, str(example))
        elif example.lang == "python":
            _run_python(example.code, namespace, str(example))
        else:
            _run_shell(example.code, str(example), example_env)
