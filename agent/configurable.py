"""What one run of a built agent may change under `configurable["frames_agent"]`: RunSettings and its checks."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from frames_agent.agent.config import AgentConfig
from frames_agent.agent.errors import AgentError
from frames_agent.agent.prompts import run_prompt
from frames_agent.core.errors import validation_error

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

# The one `configurable` key the agent reads: an app's own keys (model, k, prompt, thread_id, ...) stay the app's.
CONFIG_KEY = "frames_agent"

# What a run may change without a new model, index or tools (those are the agent's own; see agent/serve/studio.py).
RUNTIME_FIELDS = ("k", "n", "n_docs", "prompt", "answer_prompt")


def _bounded(name: str) -> Any:
    """An optional field with an AgentConfig field's description and bounds (ge, le): schemas show the limits."""
    return Field(None, description=AgentConfig.model_fields[name].description, **AgentConfig.bounds(name))


class RunSettings(BaseModel):
    """What a run may set under `configurable["frames_agent"]`; None (or absent) keeps the agent's own."""

    model_config = ConfigDict(extra="forbid")

    k: int | None = _bounded("k")
    n: int | None = _bounded("n")
    n_docs: int | None = _bounded("n_docs")
    prompt: str | None = Field(None, description="planning prompt: a shipped name or the template text")
    answer_prompt: str | None = Field(None, description="answer prompt: a shipped name or the template text")
    model: str | None = Field(None, description="model spec for this run, e.g. gemini:gemini-2.5-flash (default: "
                              "the agent's own model)")
    index: str | None = Field(None, description="index name or directory for this run (default: the agent's own "
                              "retriever)")


def run_settings(run: RunnableConfig | None, prompt_dirs: Sequence[str] = ()) -> RunSettings:
    """The run's `configurable["frames_agent"]` (a mapping or RunSettings), checked (a one-line error if bad)."""
    raw = ((run or {}).get("configurable") or {}).get(CONFIG_KEY)
    if raw is None:
        return RunSettings()
    try:
        settings = raw if isinstance(raw, RunSettings) else RunSettings.model_validate(raw)
    except ValidationError as exc:
        where, message = validation_error(exc)
        raise AgentError(f"configurable.{CONFIG_KEY}{'.' + where if where else ''}: {message}") from None
    prompts = {name: run_prompt(value, prompt_dirs, name) for name in ("prompt", "answer_prompt")
               if (value := getattr(settings, name)) is not None}
    return settings.model_copy(update=prompts) if prompts else settings


def component_changes(settings: RunSettings, model: str, index: str | None) -> dict[str, str]:
    """The model and index a run's settings name other than the agent's own (its spec, its index name)."""
    own = {"model": model, "index": index}
    return {name: str(value) for name in own
            if (value := getattr(settings, name)) and str(value) != own[name]}


def check_listed(changes: Mapping[str, str], listed: Mapping[str, Sequence[str]]) -> None:
    """AgentError unless every model and index a run names is listed; nothing is opened, so paths do not leak."""
    for name, value in changes.items():
        if value not in listed.get(name, ()):
            allowed = ", ".join(listed.get(name, ())) or "none besides its own"
            raise AgentError(f"{name} {value[:80]!r}: a run may only choose a{'n' if name == 'index' else ''} {name} "
                             f"the server's owner listed (listed: {allowed})")


def components(changes: dict[str, str], config: AgentConfig, llm: Any, retriever: Any) -> tuple[Any, Any]:
    """(model, retriever) with the run's changes applied (the agent's BM25 options); a failure is one line."""
    if changes.get("model"):
        from frames_agent.agent.llm import resolve_model

        llm = resolve_model(changes["model"], timeout=config.timeout)
    if changes.get("index"):
        from frames_agent.index.build import open_index

        retriever = open_index(changes["index"], title_boost=config.title_boost, exact_title=config.exact_title,
                               progress=False)
    return llm, retriever
