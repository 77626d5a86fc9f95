"""docs/architecture.md's package map matches the code: every package listed, each with every one of its modules."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = {"docs", "tests", "bench", "build", "site"}


def _map() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## The layout", 1)[1].split("```\n", 2)[1]
    entries: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        if line and not line.startswith(" "):
            current, _, rest = line.partition(" ")
            entries[current] = rest
        elif current:
            entries[current] += " " + line.strip()
    # A module is a name that stands as a word of the description, outside parentheses.
    return {folder: set(re.findall(r"[a-z_0-9]+", re.sub(r"\([^)]*\)", "", rest)))
            for folder, rest in entries.items() if folder.endswith("/")}


def _packages() -> dict[str, set[str]]:
    found = {}
    for init in ROOT.rglob("__init__.py"):
        folder = init.parent.relative_to(ROOT)
        if folder.parts and folder.parts[0] not in SKIP:
            found[folder.as_posix() + "/"] = {p.stem for p in init.parent.glob("*.py") if p.stem != "__init__"}
    return found


def test_the_package_map_lists_every_package_and_module():
    documented, packages = _map(), _packages()
    assert set(documented) == set(packages)
    missing = {folder: sorted(modules - documented[folder]) for folder, modules in packages.items()
               if modules - documented[folder]}
    assert not missing, f"modules missing from docs/architecture.md: {missing}"
