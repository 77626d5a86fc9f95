"""The agent's settings: AgentSettings, the one assembly point from flags or a RunnableConfig to a FramesAgent."""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from frames_agent.agent.config import AgentConfig
from frames_agent.agent.configurable import CONFIG_KEY, check_listed
from frames_agent.agent.errors import AgentError
from frames_agent.agent.llm.spec import DEFAULT_MODEL
from frames_agent.agent.prompts import run_prompt
from frames_agent.core.errors import validation_error

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from frames_agent.agent.api import FramesAgent
    from frames_agent.retrieval.types import Retriever

# The agent flags (agent.commands.add_agent_flags) that are AgentConfig fields; --set KEY=VALUE reaches any other.
CONFIG_FLAGS = ("k", "n", "n_docs", "prompt", "timeout", "question_timeout", "answer_prompt",
                "answer_budget", "answer_passages", "calculator")
# What a run's `configurable` may set for the graph factory (StudioSettings), and the environment read otherwise.
CONFIGURABLE = ("model", "index", "tools", "k", "n", "n_docs", "prompt")
ENV = {"model": "FRAMES_AGENT_MODEL", "index": "FRAMES_AGENT_INDEX", "tools": "FRAMES_AGENT_TOOLS"}
# The models and indexes a run's `configurable` may choose besides the owner's own (comma-separated; none if unset).
LISTED_ENV = {"model": "FRAMES_AGENT_ALLOW_MODELS", "index": "FRAMES_AGENT_ALLOW_INDEXES"}


def parse_settings(pairs: list[str], known: set[str]) -> dict[str, object]:
    """--set KEY=VALUE pairs as config fields: a value is read as JSON when it parses (5, 0.5, true, null), else text."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise AgentError(f"--set {pair!r}: expected KEY=VALUE")
        if key not in known:
            raise AgentError(f"--set {key}: no such agent config field; known: {', '.join(sorted(known))}")
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


class AgentSettings(BaseModel):
    """What builds a FramesAgent: model, server, index, tools, LLM cache, and the AgentConfig (sized for the model)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(DEFAULT_MODEL, description="model spec, e.g. gemini:gemini-2.5-flash, openai:gpt-4o-mini")
    base_url: str | None = Field(None, description="OpenAI-compatible server for openai: models")
    index: str = Field("default", description="index name or directory (default: the embedded index)")
    tools: str = Field("wiki", description="wiki, crag, crag:<domain>, comma-separated")
    cache: bool = Field(True, description="read and write the on-disk LLM call cache")
    config: AgentConfig = Field(default_factory=AgentConfig, description="how the agent searches and answers")

    @model_validator(mode="before")
    @classmethod
    def _sized_config(cls, data: Any) -> Any:
        """Without a config, the defaults sized for the model (AgentConfig.for_model)."""
        if isinstance(data, dict) and data.get("config") is None:
            data = {**data, "config": AgentConfig.for_model(data.get("model") or DEFAULT_MODEL)}
        return data

    @classmethod
    def from_flags(cls, values: Mapping[str, Any], *, config: AgentConfig | None = None, cache: bool = True,
                   flags: bool = True, **overrides: object) -> AgentSettings:
        """From flag values by name: the flags, then --set, then `overrides` over the model's defaults (or `config`)."""
        model = values.get("model") or DEFAULT_MODEL
        if config is None:
            fields = {name: values[name] for name in CONFIG_FLAGS if name in values}
            fields.update(parse_settings(list(values.get("settings") or []), set(AgentConfig.model_fields)))
            try:
                config = AgentConfig.for_model(model, **{**fields, **overrides})
            except ValidationError as exc:  # one line naming the flag or the `configurable` key
                where, message = validation_error(exc)
                where = "--" + where.replace(".", "-").replace("_", "-") if flags else f"configurable.{where}"
                raise AgentError(f"{where}: {message}") from None
        return cls(model=model, base_url=values.get("base_url"), index=values.get("index") or "default",
                   tools=values.get("tools") or "wiki", cache=cache and not values.get("no_cache"), config=config)

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None, *, env: Mapping[str, str] | None = None,
                             models: Sequence[str] = (), indexes: Sequence[str] = ()) -> AgentSettings:
        """A graph factory's settings: `configurable`'s CONFIGURABLE keys over ENV over the defaults, checked."""
        configurable = (config or {}).get("configurable") or {}
        nested = configurable.get(CONFIG_KEY)
        source = nested if isinstance(nested, Mapping) else configurable
        asked = {key: source[key] for key in CONFIGURABLE if source.get(key) is not None}
        env = os.environ if env is None else env
        if asked.get("prompt") is not None:
            asked["prompt"] = run_prompt(str(asked["prompt"]))
        own = {key: env[var] for key, var in ENV.items() if env.get(var)}
        listed = {key: [*given, *(part.strip() for part in env.get(LISTED_ENV[key], "").split(",") if part.strip())]
                  for key, given in (("model", models), ("index", indexes))}
        defaults = {"model": own.get("model") or DEFAULT_MODEL, "index": own.get("index") or "default"}
        check_listed({key: str(asked[key]) for key in LISTED_ENV if key in asked and str(asked[key]) != defaults[key]},
                     listed)
        return cls.from_flags({**own, **asked}, flags=False)

    def build_agent(self) -> FramesAgent:
        """A FramesAgent wired from these settings (hybrid retrieval when the config's dense_weight is set)."""
        from frames_agent.agent.api import FramesAgent
        from frames_agent.agent.llm import resolve_model
        from frames_agent.agent.llm.testing import scripted_from_env
        from frames_agent.index.build import open_index
        from frames_agent.retrieval.crag.tools import build_tools

        config = self.config
        use_wiki, tools = build_tools(self.tools)
        bm25 = open_index(self.index, title_boost=config.title_boost, exact_title=config.exact_title) if use_wiki else None
        retriever: Retriever | None = bm25
        if bm25 is not None and config.dense_weight > 0:
            from frames_agent.index.build import is_default_name
            from frames_agent.retrieval.dense import open_hybrid

            # The embedded index gets its vectors on first use, as it gets its Lucene index; others need `index dense`.
            retriever = open_hybrid(bm25, config.dense_weight, build=is_default_name(self.index))
        # Test processes (serve, mcp, studio) get a scripted model through FRAMES_AGENT_TEST_SCRIPT instead of a real one.
        llm = scripted_from_env() or resolve_model(self.model, base_url=self.base_url, cache=self.cache,
                                                   timeout=config.timeout)
        return FramesAgent(llm, retriever, tools, config)
