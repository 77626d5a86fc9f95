"""What the sweep tests share: the scripted model file, the sweep command line, and builds whose worker dies."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from tests.eval.frames.test_runner import TINY

PLAN = {"thought": "look it up", "queries": ["Brennick mayor", "Port Alder"], "tool_calls": [], "enough": False}


def write_script(path: Path, delay: float = 0.0) -> Path:
    """A FRAMES_AGENT_TEST_SCRIPT file: every plan searches two queries, every answer names the mayor."""
    rules = [["Reply with one JSON", PLAN], ["", "The mayor is Tomas Ferrante.\nAnswer: Tomas Ferrante"]]
    path.write_text(json.dumps({"delay": delay, "rules": rules}))
    return path


def sweep_args(index: Path, out: Path, *extra: str) -> list[str]:
    """`cli.py sweep` over the tiny index and questions with the scripted model (hosted spec, so no local model)."""
    return ["sweep", "--index", str(index), "--data", TINY, "--model", "openai:fake", "--judge", "none",
            "--no-progress", "--no-cache", "--out", str(out), *extra]


def results(path: Path) -> list[dict]:
    """The lines of a run directory's results.jsonl."""
    return [json.loads(line) for line in (path / "results.jsonl").read_text().splitlines()]


class Killer:
    """Wraps a system: the worker process running question 1 dies (SIGKILL), once or every time."""

    def __init__(self, system, marker: Path, always: bool) -> None:
        self.inner, self.marker, self.always, self.name = system, marker, always, system.name

    async def run(self, question, answer: bool = True):
        if question.id == "1" and (self.always or not self.marker.exists()):
            self.marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return await self.inner.run(question, answer)


def _killing(settings, agent_config, always: bool):
    from frames_agent.eval.frames.commands import build_components

    components = build_components(settings, agent_config)
    components.system = Killer(components.system, Path(settings.out).parent / "killed", always)
    return components


def build_kill_once(settings, agent_config):
    """build_components, but the first worker to run question 1 dies."""
    return _killing(settings, agent_config, always=False)


def build_kill_always(settings, agent_config):
    """build_components, but every worker that runs question 1 dies."""
    return _killing(settings, agent_config, always=True)
