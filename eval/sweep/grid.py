"""A configuration grid: axes from `--grid KEY=V1,V2` (a frames flag that defines a run, or any AgentConfig field)
and `--systems`; every combination is a cell, named after its values, run as an ordinary FRAMES run directory."""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

from frames_agent.core.errors import UsageError
from frames_agent.eval.frames.runner import FramesRunSettings

# The frames flags that define a run, with their value's type; any other key is an AgentConfig field (--set).
RUN_AXES: dict[str, type] = {
    "system": str, "k": int, "n": int, "n_docs": int, "prompt": str, "answer_prompt": str, "model": str,
    "base_url": str, "index": str, "tools": str, "answer_budget": int, "answer_passages": int,
    "calculator": bool, "judge": str, "judge_prompt": str, "split": str,
}
_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}
_WHOLE = re.compile(r"-?[0-9]+")


def _known_agent_fields() -> set[str]:
    from frames_agent.agent.config import AgentConfig

    return set(AgentConfig.model_fields) - {"timeout", "question_timeout"}  # deadlines never define a run


@dataclass(frozen=True)
class Axis:
    """One grid dimension: a setting and the values it takes, in the order given."""

    key: str
    values: tuple[str, ...]


def parse_axis(text: str) -> Axis:
    """KEY=V1,V2,... (V1|V2|... when a value holds commas, e.g. tools=wiki|wiki,crag)."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key or not raw.strip():
        raise UsageError(f"--grid {text!r}: expected KEY=V1,V2,...")
    if key not in RUN_AXES and key not in _known_agent_fields():
        raise UsageError(f"--grid {key}: not a run setting or agent config field; known: "
                         f"{', '.join(sorted(set(RUN_AXES) | _known_agent_fields()))}")
    given = tuple(v.strip() for v in raw.split("|" if "|" in raw else ","))
    if any(not v for v in given):
        raise UsageError(f"--grid {text!r}: an empty value")
    meant = [checked_value(key, v) for v in given]  # a bad value is refused before anything runs
    if len(set(meant)) != len(meant):  # 1 and 01, true and yes: one cell run twice
        repeat = next(v for v in meant if meant.count(v) > 1)
        spellings = " and ".join(dict.fromkeys(g for g, v in zip(given, meant) if v == repeat))
        raise UsageError(f"--grid {text!r}: a value is repeated ({spellings} are the same {key})"
                         if " and " in spellings else f"--grid {text!r}: a value is repeated")
    return Axis(key, given)  # as given: a cell's directory keeps the name it was first run under


def checked_value(key: str, value: str) -> str:
    """A grid value in one spelling (01 is 1, yes is true), refused in one line outside its setting's bounds."""
    from pydantic import TypeAdapter, ValidationError

    from frames_agent.agent.config import AgentConfig
    from frames_agent.agent.settings import parse_settings

    parsed = typed(key, value)
    field = AgentConfig.model_fields.get(key)
    if field is not None:
        try:
            parsed = TypeAdapter(Annotated[field.annotation, field]).validate_python(
                parsed if key in RUN_AXES else parse_settings([f"{key}={value}"], {key})[key])
        except ValidationError as exc:
            raise UsageError(f"--grid {key}={value}: {exc.errors()[0]['msg']}") from None
    if isinstance(parsed, bool):
        return "true" if parsed else "false"
    return str(parsed) if isinstance(parsed, (int, float)) else value


def parse_grid(texts: list[str], systems: list[str] | None = None) -> list[Axis]:
    """The axes of `--grid ...` and `--systems ...`; at least one, each key once."""
    axes = ([Axis("system", tuple(systems))] if systems else []) + [parse_axis(t) for t in texts or []]
    if not axes:
        raise UsageError("sweep needs at least one --grid KEY=V1,V2,... or --systems S1 S2 ...")
    keys = [a.key for a in axes]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise UsageError(f"--grid {repeated[0]} is given twice" + (" (--systems is the system axis)"
                                                                  if repeated[0] == "system" else ""))
    if systems and len(set(systems)) != len(systems):
        raise UsageError("--systems names a system twice")
    return axes


def typed(key: str, value: str) -> object:
    """A grid value as its run setting's type (AgentConfig values stay text: --set reads them as JSON)."""
    kind = RUN_AXES.get(key, str)
    if kind is int:
        if not _WHOLE.fullmatch(value):  # int() also reads "١٢" and "1_0"
            raise UsageError(f"--grid {key}={value}: not a whole number")
        return int(value)
    if kind is bool:
        if value.lower() not in _TRUE | _FALSE:
            raise UsageError(f"--grid {key}={value}: expected true or false")
        return value.lower() in _TRUE
    return value


def value_slug(value: str) -> str:
    """A grid value as part of a directory name: a file by its stem, a negative number with its sign, 40 characters."""
    if re.fullmatch(r"-[0-9.]+", value):  # a negative number keeps its sign: -1 is not cell 1
        return value
    stem = Path(value).stem if ("/" in value or value.endswith(".txt")) else value
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", stem).strip("-")[:40] or "x"


@dataclass(frozen=True)
class Cell:
    """One combination of grid values; its run directory is SWEEP_DIR/<name>."""

    name: str
    values: tuple[tuple[str, str], ...]

    def value(self, key: str) -> str:
        """This cell's value of one axis."""
        return dict(self.values)[key]

    def settings(self, base: FramesRunSettings, root: Path) -> FramesRunSettings:
        """The frames settings of this cell: the base flags with this cell's values, out = root/name."""
        runs: dict[str, Any] = {k: typed(k, v) for k, v in self.values if k in RUN_AXES}  # each as its field's type
        sets = [f"{k}={v}" for k, v in self.values if k not in RUN_AXES]
        return replace(base, **runs, settings=[*base.settings, *sets], out=str(root / self.name))


def cells(axes: list[Axis]) -> list[Cell]:
    """Every combination, the first axis slowest; names must differ (two file paths with one stem do not)."""
    out = []
    for combo in itertools.product(*(a.values for a in axes)):
        pairs = tuple(zip((a.key for a in axes), combo))
        out.append(Cell("_".join(f"{k}={value_slug(v)}" for k, v in pairs), pairs))
    names = [c.name for c in out]
    clash = next((n for n in names if names.count(n) > 1), None)
    if clash:
        raise UsageError(f"two grid cells would share the directory {clash}; give values (files) distinct names")
    return out


def check_sets(axes: list[Axis], base: FramesRunSettings) -> None:
    """Refuse a --set of a field the grid varies: the cell's value would be ambiguous."""
    set_keys = {p.partition("=")[0].strip().replace("-", "_") for p in base.settings}
    clash = next((a.key for a in axes if a.key in set_keys), None)
    if clash:
        raise UsageError(f"--set {clash} and --grid {clash} both set {clash}; keep one")


def find_baseline(text: str | None, grid: list[Cell], axes: list[Axis]) -> Cell:
    """The --baseline cell: a cell name, or KEY=V[,KEY=V] matching one cell; default the first cell."""
    if not text:
        return grid[0]
    named = [c for c in grid if c.name == text]
    if named:
        return named[0]
    wanted = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in {a.key for a in axes}:
            raise UsageError(f"--baseline {text!r}: expected a cell name or KEY=VALUE[,KEY=VALUE] over the grid's keys "
                             f"({', '.join(a.key for a in axes)})")
        wanted[key] = value.strip()
    matches = [c for c in grid if all(c.value(k) == v for k, v in wanted.items())]
    if len(matches) != 1:
        raise UsageError(f"--baseline {text!r} matches {len(matches)} cells; name one of: "
                         + ", ".join(c.name for c in grid[:8]))
    return matches[0]
