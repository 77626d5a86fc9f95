"""Prompts: a shipped file by name, a file by path, or the template text itself; rendered strictly.
A run's (untrusted) config reaches files only in directories the app allowed (run_prompt)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from frames_agent.agent.errors import PromptError

PROMPTS_DIR = Path(__file__).resolve().parent
# Only `{identifier}` is a variable, so JSON examples like {"queries": [...]} need no escaping.
_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# The name an inline template (text, not a file) is known by: it has no JSON twin and no file beside it.
INLINE = "<prompt text>"


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


def is_prompt_text(value: str) -> bool:
    """Whether a prompt setting is the template itself (a line break or a {variable}) rather than a name or path."""
    return "\n" in value or bool(_VARIABLE.search(value))


def run_prompt(value: str, allowed_dirs: Sequence[str | Path] = (), field: str = "prompt") -> str:
    """A run config's prompt setting: a shipped name or text as is, a path only inside allowed_dirs, else an error."""
    if is_prompt_text(value) or value in available_prompts():
        return value
    if allowed_dirs:
        base = Path(value).expanduser()
        for folder in allowed_dirs:
            root = Path(folder).expanduser().resolve()
            path = (base if base.is_absolute() else root / base).resolve()
            if path.is_relative_to(root) and path.is_file():
                return str(path)
    allowed = f"a file in {', '.join(map(str, allowed_dirs))}" if allowed_dirs else "no file paths (the app allows none)"
    raise PromptError(f"{field}: {value[:80]!r} is not a shipped prompt ({', '.join(available_prompts())}) or prompt "
                      f"text with {{variables}}; a run's config may name {allowed}")


def load_prompt(name_or_path: str) -> Prompt:
    """A shipped prompt by name ("planning"), the template text itself, or a prompt file by path ("./planning")."""
    if is_prompt_text(name_or_path):
        if not name_or_path.strip():
            raise PromptError("the prompt text is empty")
        return Prompt(name=INLINE, text=name_or_path)
    # A shipped name is the shipped prompt, whatever file the working directory holds; "./name" reads that file.
    shipped = name_or_path in available_prompts()
    path = PROMPTS_DIR / f"{name_or_path}.txt" if shipped else Path(name_or_path).expanduser()
    if path.is_dir():
        raise PromptError(f"prompt {path} is a directory; give a prompt file or a shipped prompt name")
    if not path.is_file():
        raise PromptError(f"no prompt named {name_or_path!r} and no such file; shipped prompts: "
                          f"{', '.join(available_prompts())}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"cannot read prompt file {path}: {exc}") from exc
    if not text.strip():
        raise PromptError(f"prompt file {path} is empty")
    return Prompt(name=path.stem if path.parent == PROMPTS_DIR else str(path), text=text)


def structured_twin(prompt: Prompt) -> Prompt | None:
    """The prompt's JSON-reply twin if any: a shipped `<name>_json`, or `<stem>_json<suffix>` beside a user's file."""
    if prompt.name == INLINE:
        return None
    path = PROMPTS_DIR / f"{prompt.name}_json.txt"
    if not path.is_file():
        own = Path(prompt.name).expanduser()
        path = own.with_name(f"{own.stem}_json{own.suffix}")
    return load_prompt(str(path)) if path.is_file() else None
