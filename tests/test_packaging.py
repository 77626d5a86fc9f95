"""Packaging: the console script, PEP 561 markers, and every FRAMES_AGENT_* variable the code reads is documented."""
from __future__ import annotations

import fnmatch
import importlib
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "core", "retrieval", "index", "eval")


def test_console_script_is_cli_main(capsys):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    module, _, attr = project["project"]["scripts"]["frames-agent"].partition(":")
    main = getattr(importlib.import_module(module), attr)
    assert main(["index", "list"]) == 0  # the script's exit code is main's return value


def test_packages_ship_py_typed():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["*"]
    assert all((ROOT / package / "py.typed").is_file() for package in ("", *PACKAGES))


def test_the_wheel_lists_every_package_under_the_one_namespace():
    # pyproject.toml lists the packages (setuptools cannot find them under a mapped root): a folder added later
    # with an __init__.py must be listed, or the wheel would lack it.
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {".".join(("frames_agent", *p.parent.relative_to(ROOT).parts))
               for package in PACKAGES for p in (ROOT / package).rglob("__init__.py")}
    assert setuptools["package-dir"] == {"frames_agent": "."}
    assert set(setuptools["packages"]) == {"frames_agent", *folders}


def test_every_frames_agent_variable_is_documented():
    sources = [ROOT / "cli.py", *(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))]
    used = {name for path in sources for name in re.findall(r"FRAMES_AGENT_[A-Z_]*[A-Z]", path.read_text())}
    documented = (ROOT / "docs" / "reference" / "environment.md").read_text()
    assert len(used) >= 10 and not [name for name in sorted(used) if f"`{name}`" not in documented]


def test_docs_state_the_limits_the_code_applies():
    from frames_agent.agent import answers
    from frames_agent.agent.calculator import MAX_BITS, MAX_LENGTH, MAX_NODES, MAX_ROUND_DIGITS
    from frames_agent.agent.limits import MAX_BODY_BYTES, MAX_QUESTION_CHARS, MAX_SEARCH_HITS
    from frames_agent.agent.llm import json_repair
    from frames_agent.retrieval.lucene.searcher import MAX_TERMS

    docs = " ".join(" ".join((ROOT / "docs" / page).read_text() for page in ("errors.md", "serving.md")).split())
    assert f"a search of more than {MAX_TERMS} distinct terms keeps the first {MAX_TERMS}" in docs
    assert f"over {MAX_QUESTION_CHARS:,} characters" in docs and f"(default {MAX_BODY_BYTES:,};" in docs
    assert f"`k` is 1-{MAX_SEARCH_HITS}" in docs
    assert all(f"| `{status}` |" in docs for status in (413, 422, 429, 502, 504, 400))
    assert (f"expressions over {MAX_LENGTH} characters or {MAX_NODES} parse nodes" in docs
            and f"{MAX_BITS:,} bits" in docs and f"more than {MAX_ROUND_DIGITS} digits" in docs)
    assert (f"reads a reply's last {answers.MAX_REPLY_CHARS:,} characters" in docs
            and f"a structured reply's first {json_repair.MAX_REPLY_CHARS:,}" in docs)


def _package_of(path: Path) -> tuple[str, str]:
    """(dotted package holding path, path relative to it): the deepest folder above it with an __init__.py."""
    folder = path.parent
    while not (folder / "__init__.py").is_file():
        folder = folder.parent
    return ".".join(("frames_agent", *folder.relative_to(ROOT).parts)), path.relative_to(folder).as_posix()


def _covered(path: Path, package_data: dict[str, list[str]]) -> bool:
    package, inside = _package_of(path)
    patterns = package_data.get(package, []) + package_data.get("*", [])
    # setuptools matches package-data globs against the path inside the package, folder by folder.
    return any(fnmatch.fnmatch(inside, pattern) and inside.count("/") == pattern.count("/") for pattern in patterns)


def test_package_data_covers_every_file_the_code_opens():
    from frames_agent.agent.prompts import PROMPTS_DIR
    from frames_agent.eval.frames.judgecheck import SHIPPED_AGREEMENT, SHIPPED_LABELS

    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    html = ROOT / "eval" / "frames" / "html"
    opened = [SHIPPED_LABELS, SHIPPED_AGREEMENT, html / "page.html", html / "page.js", html / "page.css",
              *(p for p in PROMPTS_DIR.iterdir() if p.suffix != ".py" and p.is_file())]
    assert all(p.is_file() for p in opened) and len(opened) > 10
    # Every other non-Python file inside the packages too: a file added later is shipped or this fails.
    present = [p for package in PACKAGES for p in (ROOT / package).rglob("*")
               if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    missing = sorted(str(p.relative_to(ROOT)) for p in {*opened, *present} if not _covered(p, package_data))
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"


def test_version_comes_from_the_package_metadata():
    from importlib.metadata import version

    from frames_agent import agent, index, retrieval
    from frames_agent import eval as evaluation

    assert agent.__version__ == version("frames-agent") and "__version__" in agent.__all__
    assert retrieval.__version__ == index.__version__ == evaluation.__version__ == agent.__version__


def test_the_namespace_exports_the_public_api():
    import frames_agent
    from frames_agent import agent, retrieval

    assert sorted(frames_agent.__all__) == sorted([*frames_agent._EXPORTS, "__version__"])
    assert frames_agent.FramesAgent is agent.FramesAgent and frames_agent.Document is retrieval.Document


def test_every_python_from_3_11_with_markers_where_a_dependency_differs():
    from packaging.markers import Marker
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"  # no upper cap: no dependency needs one
    lucene = [Requirement(r) for r in project["optional-dependencies"]["lucene"]]

    def picked(version: str) -> dict[str, str]:
        env = {"python_version": version, "python_full_version": f"{version}.0"}
        return {r.name: str(r.specifier) for r in lucene if r.marker is None or Marker(str(r.marker)).evaluate(env)}

    assert picked("3.11")["pyserini"] == "==1.6.0" and picked("3.11")["torch"] == "==2.13.0"
    for version in ("3.12", "3.13"):  # pyserini 2.x (Python >= 3.12), which brings its own torch requirement
        assert ">=2.4" in picked(version)["pyserini"] and "torch" not in picked(version)
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert {m.split(":")[0] for m in options["markers"]} >= {"model", "slow", "lucene", "local"}
    # `python -m pytest` (CI) leaves out only the real-model tests: the slow ones run.
    assert "-m 'not model'" in options["addopts"] and "slow" not in options["addopts"]
    # One module per worker: pytest-xdist groups by module (tests/conftest.py), which only --dist loadgroup honours.
    assert "-n auto" in options["addopts"] and "--dist loadgroup" in options["addopts"]
