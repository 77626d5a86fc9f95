"""The layout holds: every module imports on its own in a fresh interpreter, and packages import without cycles."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = ("agent", "retrieval", "index", "eval")


def modules() -> list[str]:
    """Dotted names of every project module under the fixed top level, plus cli."""
    names = ["cli"]
    for top in TOP:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def package_of(module: str) -> str:
    """The package a module belongs to (a package's __init__ belongs to itself)."""
    path = ROOT / Path(*module.split("."))
    return module if path.is_dir() else module.rpartition(".")[0] or module


def imports_of(module: str) -> set[str]:
    """Project modules this module imports, at top level or inside functions."""
    path = ROOT / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    known = set(modules())
    return {name for name in found if name in known}


def test_every_module_imports_alone_in_a_fresh_interpreter():
    code = ("import importlib, sys\nbad = []\n"
            "for name in sys.argv[1:]:\n"
            "    try:\n        importlib.import_module(name)\n"
            "    except Exception as exc:\n        bad.append(f'{name}: {type(exc).__name__}: {exc}')\n"
            "print('\\n'.join(bad))\n")
    # One interpreter per top-level package keeps this quick while still catching order-dependent imports.
    for top in ("cli", *TOP):
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
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*path, node, nxt]))
            if not state.get(nxt):
                visit(nxt, [*path, node])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [])


def test_no_module_is_over_300_lines():
    long = {m: n for m in modules() if (n := len(_source(m).splitlines())) > 300}
    assert not long, long


def _source(module: str) -> str:
    path = ROOT / Path(*module.split("."))
    return (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text(encoding="utf-8")


def test_report_and_runner_do_not_import_each_other():
    # Re-rendering a finished run must not load the machinery that runs one (issue 32: the report <-> runner cycle).
    seen, todo = set(), ["eval.frames.report"]
    while todo:
        for target in imports_of(todo.pop()) - seen:
            seen.add(target)
            todo.append(target)
    assert "eval.frames.runner" not in seen and "eval.frames.report" in imports_of("eval.frames.opening")
