"""The layout holds: every module imports on its own in a fresh interpreter, and packages import without cycles."""
from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "frames_agent"
TOP = ("agent", "core", "retrieval", "index", "eval")


@functools.cache
def modules() -> tuple[str, ...]:
    """Dotted names of every project module under the fixed top level (in the frames_agent namespace), plus cli."""
    names = [f"{NAMESPACE}.cli"]
    for top in TOP:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            names.append(".".join((NAMESPACE, *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return tuple(names)


def _path(module: str) -> Path:
    """Where a frames_agent module lives in the checkout (the namespace is the repository's root)."""
    return ROOT / Path(*module.split(".")[1:])


def package_of(module: str) -> str:
    """The package a module belongs to (a package's __init__ belongs to itself)."""
    return module if _path(module).is_dir() else module.rpartition(".")[0] or module


@functools.cache
def imports_of(module: str) -> frozenset[str]:
    """Project modules this module imports by name, at top level, inside functions and under TYPE_CHECKING alike.

    `from P import name` imports the module P.name when there is one, else P (a name its __init__ defines or
    re-exports); the parent packages' __init__ that Python runs on the way are not counted as imports."""
    path = _path(module)
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    known = set(modules())
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                         for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return frozenset(name for name in found if name in known and name != module)


@pytest.mark.slow
def test_every_module_imports_alone_in_a_fresh_interpreter():
    code = ("import importlib, sys\nbad = []\n"
            "for name in sys.argv[1:]:\n"
            "    try:\n        importlib.import_module(name)\n"
            "    except Exception as exc:\n        bad.append(f'{name}: {type(exc).__name__}: {exc}')\n"
            "print('\\n'.join(bad))\n")
    # One interpreter per top-level package keeps this quick while still catching order-dependent imports.
    for top in ("cli", *TOP):
        top = f"{NAMESPACE}.{top}"
        names = [m for m in modules() if m == top or m.startswith(top + ".")]
        done = subprocess.run([sys.executable, "-c", code, *names], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr[-2000:]


def test_package_import_graph_is_acyclic():
    graph: dict[str, set[str]] = {}
    for module in modules():
        source = package_of(module)
        targets = {package_of(t) for t in imports_of(module)}
        # A package may use its own sub-packages (its __init__ re-exports them); every other edge must not loop.
        graph.setdefault(source, set()).update(t for t in targets if not (t + ".").startswith(source + "."))
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph, as the path that closes it, or None."""
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if not state.get(nxt) and (found := visit(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    return next((found for node in sorted(graph) if not state.get(node) and (found := visit(node, []))), None)


def test_no_module_import_cycle():
    # Each module imports only modules below it, inside functions as at top level.
    cycle = _cycle({module: imports_of(module) for module in modules()})
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_report_and_runner_do_not_import_each_other():
    # Re-rendering a finished run must not load the machinery that runs one (once a report <-> runner cycle).
    seen, todo = set(), ["frames_agent.eval.frames.report"]
    while todo:
        for target in imports_of(todo.pop()) - seen:
            seen.add(target)
            todo.append(target)
    assert "frames_agent.eval.frames.runner" not in seen
    assert "frames_agent.eval.frames.report" in imports_of("frames_agent.eval.frames.runner")


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A source file parsed once for every test that walks it."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _sources() -> list[Path]:
    """Every Python file of the project: the package (root __init__ and cli too), its tests and benchmarks."""
    return [ROOT / "cli.py", ROOT / "__init__.py",
            *(p for top in (*TOP, "tests", "bench") for p in sorted((ROOT / top).rglob("*.py")))]


def test_code_imports_itself_only_through_the_frames_agent_namespace():
    # The old top-level names also resolve from a checkout's root, as a second copy of every module.
    old = {*TOP, "cli"}
    bad = []
    for path in _sources():
        for node in ast.walk(_tree(path)):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            bad += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names if n.split(".")[0] in old]
    assert not bad, bad


def test_no_argparse_namespace_crosses_into_the_agent_package():
    # Every entry point turns its own flags into AgentSettings (agent/settings.py) and passes AgentSettings
    # or AgentConfig objects across packages; the old Namespace-taking helpers are gone and nothing builds one.
    removed = {"agent_config", "build_agent", "parse_settings"}
    bad = []
    for path in _sources():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module == f"{NAMESPACE}.agent.commands":
                bad += [f"{path.relative_to(ROOT)}:{node.lineno}: imports {a.name}" for a in node.names
                        if a.name in removed]
            if isinstance(node, ast.Call) and ast.unparse(node.func) in {"argparse.Namespace", "Namespace"}:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: builds an argparse.Namespace")
    commands = ast.parse((ROOT / "agent" / "commands.py").read_text(encoding="utf-8"))
    defined = {node.name for node in commands.body if isinstance(node, ast.FunctionDef)}
    assert not bad and not defined & removed, (bad, defined & removed)


def test_agent_settings_is_the_one_assembly_point():
    # The modules that build an agent from settings do it through AgentSettings, each from its own flags.
    for module in ("agent/commands.py", "agent/serve/commands.py", "agent/serve/studio.py", "agent/mcp/commands.py",
                   "eval/frames/runner.py", "eval/tune/commands.py", "eval/crag/runner.py"):
        assert f"{NAMESPACE}.agent.settings" in imports_of(f"{NAMESPACE}." + module[:-3].replace("/", ".")), module
