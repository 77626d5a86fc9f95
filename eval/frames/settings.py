"""A FRAMES run's settings (what `python cli.py frames` takes), its default directory, the configuration two runs
must share to write into one directory, and what a run reports back."""
from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from frames_agent.agent.llm import DEFAULT_MODEL
from frames_agent.agent.llm.errors import redact_url
from frames_agent.eval.frames.datasets import Dataset
from frames_agent.eval.frames.estimate import judge_spec
from frames_agent.eval.frames.metrics import RunSummary

if TYPE_CHECKING:
    from frames_agent.agent.config import AgentConfig
    from frames_agent.agent.settings import AgentSettings


@dataclass
class FramesRunSettings:
    """Everything `python cli.py frames` takes (argparse names)."""

    system: str = "multistep"
    k: int = 5
    n: int = 5
    n_docs: int = 10
    prompt: str = "planning"
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    judge: str = "same"
    judge2: str | None = None
    judge_prompt: str = "frames"
    data: str | None = None
    split: str = "all"  # eval/frames/split.py: tune, check or all questions
    limit: int | None = None
    concurrency: int | None = None
    out: str | None = None
    retrieval_only: bool = False
    index: str = "default"
    tools: str = "wiki"
    answer_prompt: str | None = None
    answer_budget: int | None = None
    answer_passages: int | None = None
    calculator: bool | None = None
    no_cache: bool = False
    retry_failed: bool = False
    progress: bool = True
    timeout: float | None = None
    question_timeout: float | None = None
    # --set KEY=VALUE pairs for any AgentConfig field (AgentSettings.from_flags reads them).
    settings: list[str] = field(default_factory=list)

    @classmethod
    def from_args(cls, args) -> FramesRunSettings:
        """Settings from an argparse Namespace (unknown attributes ignored)."""
        return cls(**{k: getattr(args, k) for k in cls.__dataclass_fields__ if hasattr(args, k)})

    def agent(self, config: AgentConfig | None = None) -> AgentSettings:
        """The agent these settings run (AgentSettings.from_flags); `config`, built from them before, as is."""
        from frames_agent.agent.settings import AgentSettings

        return AgentSettings.from_flags(asdict(self), config=config)


@dataclass
class RunOutcome:
    """Where the run wrote, what it ran now, and the summary over every finished question."""

    out: Path
    ran: int
    summary: RunSummary


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:60] or "x"


def default_out(settings: FramesRunSettings) -> Path:
    """runs/<system>[-<prompt>-k<k>-n<n>][-d<n_docs>]-<model>[-retrieval][-<split>][-idx<index>] under the cwd."""
    parts = [settings.system]
    if settings.system == "multistep":
        parts += [_slug(Path(settings.prompt).stem), f"k{settings.k}", f"n{settings.n}", f"d{settings.n_docs}"]
    elif settings.system == "bm25":
        parts.append(f"d{settings.n_docs}")
    parts.append(_slug(settings.model))
    parts += ["retrieval"] if settings.retrieval_only else []
    parts += [settings.split] if settings.split != "all" else []
    parts += [f"idx{_slug(Path(settings.index).name)}"] if settings.index != "default" else []
    return Path("runs") / "-".join(parts)


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def run_config(settings: FramesRunSettings, agent_config, dataset: Dataset) -> dict:
    """What two runs must share to write into one OUT, by content: the data's hash and the index fingerprint."""
    from frames_agent.agent.prompts import load_prompt
    from frames_agent.eval.frames.autorater import judge_prompt

    judge = judge_spec(settings)
    return {
        "system": settings.system, "model": settings.model, "base_url": redact_url(settings.base_url),
        "judge": judge, "judge2": None if settings.retrieval_only else settings.judge2,
        "judge_prompt": (_sha(judge_prompt(settings.judge_prompt).text) if judge != "none" or settings.judge2
                         else None),
        "retrieval_only": settings.retrieval_only, "index": settings.index, "tools": settings.tools,
        "data_fingerprint": dataset.fingerprint, "split": settings.split,
        "prompt_text": _sha(load_prompt(agent_config.prompt).text),
        "answer_prompt_text": _sha(load_prompt(agent_config.answer_prompt).text),
        "agent": agent_config.model_dump(exclude={"timeout", "question_timeout"}),  # deadlines may change on resume
        # Recorded, not compared: the same questions may be read from another path.
        "info": {"data": dataset.source, "judge_prompt": settings.judge_prompt},
    }


def used_model(config: dict) -> bool:
    """Whether the run called the model: BM25 and oracle retrieval-only runs never do."""
    return not (config.get("retrieval_only") and config.get("system") in ("bm25", "oracle"))
