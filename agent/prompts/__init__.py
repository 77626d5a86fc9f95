"""Prompt files: loaded by name (a file here) or path, rendered strictly."""
from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from frames_agent.agent.errors import PromptError

PROMPTS_DIR = Path(__file__).resolve().parent
# Only `{identifier}` is a variable, so JSON examples like {"queries": [...]} need no escaping.
_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Prompt:
    """A prompt template and the variables it uses."""

    name: str
    text: str

    @property
    def variables(self) -> set[str]:
        """Names of the {variables} in the template."""
        return set(_VARIABLE.findall(self.text))

    def check(self, known: set[str], required: AbstractSet[str] = frozenset()) -> None:
        """Fail if the template uses a variable outside `known` or lacks one of `required`."""
        unknown = sorted(self.variables - known)
        if unknown:
            raise PromptError(f"prompt {self.name!r} uses unknown variable(s) {', '.join('{'+u+'}' for u in unknown)}; "
                              f"known: {', '.join(sorted(known))}")
        # A template without {question} is valid text, but the model would never see what it is asked.
        missing = sorted(required - self.variables)
        if missing:
            raise PromptError(f"prompt {self.name!r} never uses {', '.join('{'+m+'}' for m in missing)}: "
                              "the model would not see it; add the variable to the template")

    def render(self, **values: object) -> str:
        """Fill every variable; a missing one is an error, never an empty string."""
        self.check(set(values))
        return _VARIABLE.sub(lambda m: str(values[m.group(1)]), self.text)


def available_prompts() -> list[str]:
    """Names of the prompt files shipped with the project."""
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.txt"))


def load_prompt(name_or_path: str) -> Prompt:
    """A shipped prompt by name ("planning") or a user's prompt file by path."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        raise PromptError(f"prompt {path} is a directory; give a prompt file or a shipped prompt name")
    if not path.is_file():
        shipped = PROMPTS_DIR / f"{name_or_path}.txt"
        if not shipped.is_file():
            raise PromptError(f"no prompt named {name_or_path!r} and no such file; shipped prompts: "
                              f"{', '.join(available_prompts())}")
        path = shipped
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"cannot read prompt file {path}: {exc}") from exc
    if not text.strip():
        raise PromptError(f"prompt file {path} is empty")
    return Prompt(name=path.stem if path.parent == PROMPTS_DIR else str(path), text=text)


def structured_twin(prompt: Prompt) -> Prompt | None:
    """The prompt's JSON-reply twin, if there is one: a shipped `<name>_json`, or `<stem>_json<suffix>` beside a
    user's file (the structured answer asks with it)."""
    path = PROMPTS_DIR / f"{prompt.name}_json.txt"
    if not path.is_file():
        own = Path(prompt.name).expanduser()
        path = own.with_name(f"{own.stem}_json{own.suffix}")
    return load_prompt(str(path)) if path.is_file() else None
