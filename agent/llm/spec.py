"""Model specs (provider:model) resolved to LangChain chat models: `local:`, `openai:` and `gemini:` are our own
providers, every other one goes through LangChain's `init_chat_model`; and the context windows of known models."""
from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from frames_agent.agent.llm.errors import LLMError, MissingPackageError, ModelNotFoundError, ModelSpecError
from frames_agent.agent.llm.providers.langchain import known_providers, make_langchain_chat, normalize_provider

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"
LOCAL_ALIASES = {"qwen2.5-coder-1.5b": "qwen2.5-coder-1.5b", "qwen": "qwen2.5-coder-1.5b",
                 "smollm2-135m": "smollm2-135m", "smollm2": "smollm2-135m"}
PROVIDERS = ("gemini", "openai", "local")  # our own; the rest come from LangChain

# Input tokens by model-name prefix (longest prefix wins), from the providers' model pages, for models without a profile.
KNOWN_WINDOWS: dict[str, int] = {
    "gemini-1.5-pro": 2_097_152, "gemini": 1_048_576,
    "gpt-4.1": 1_047_576, "gpt-5": 400_000, "gpt-4o": 128_000, "gpt-4-turbo": 128_000, "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385, "o1": 200_000, "o3": 200_000, "o4": 200_000,
    "claude": 200_000, "mistral-large": 128_000, "mistral-small": 32_000, "mixtral": 32_000,
    "llama3.1": 128_000, "llama-3.1": 128_000, "llama3.2": 128_000, "llama-3.3": 128_000, "llama3.3": 128_000,
    "qwen2.5": 32_768, "deepseek": 64_000, "command-r": 128_000, "grok": 131_072,
}

# Servers that cut prompts to their own context size (Ollama's default num_ctx drops the start of longer prompts).
SERVER_WINDOWS: dict[str, int] = {"ollama": 4_096}


def window_for_name(name: str) -> int | None:
    """The context window of a model name (any 'models/' or 'org/' prefix ignored), if known."""
    key = str(name or "").strip().lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in KNOWN_WINDOWS if key.startswith(prefix)]
    return KNOWN_WINDOWS[max(matches, key=len)] if matches else None


class ModelClass(str, Enum):  # noqa: UP042 - StrEnum would change str() and format()
    """What a model is, for sizing budgets and concurrency."""

    SMALL_LOCAL = "small-local"  # the embedded llama.cpp models: CPU-bound, a few hundred tokens per second read
    HOSTED = "hosted"  # served elsewhere: budgets follow its context window
    UNKNOWN = "unknown"  # a label that is no spec (a test fake): treated cautiously, like a small model


@dataclass(frozen=True)
class ModelSpec:
    """A parsed `provider:model` spec and what it implies."""

    provider: str
    name: str

    @classmethod
    def parse(cls, spec: str | ModelSpec) -> ModelSpec:
        """The spec of 'provider:model'; an unknown provider is a ModelSpecError."""
        provider, sep, name = str(spec).strip().partition(":")  # a ModelSpec too: of() makes unchecked ones
        provider = provider.strip().lower()
        if sep and provider in PROVIDERS:
            return cls(provider, name.strip())
        if sep and provider and normalize_provider(provider) in known_providers():
            return cls(normalize_provider(provider), name.strip())
        raise ModelSpecError(f"unknown model provider in {str(spec)!r}; use {DEFAULT_MODEL}, local:smollm2-135m, "
                             "gemini:<model>, openai:<model>, or a LangChain provider such as anthropic:<model>")

    @classmethod
    def of(cls, model: str | ModelSpec | BaseChatModel | None) -> ModelSpec:
        """The spec of a spec string or of a model built from one; anything else gives a spec without provider."""
        if isinstance(model, BaseChatModel):
            spec = getattr(model, "spec", None)  # set by our own providers
            if not (isinstance(spec, str) and spec):
                return cls("", str(getattr(model, "model_name", None) or getattr(model, "model", None) or ""))
            model = spec
        if isinstance(model, ModelSpec):
            return model
        try:
            return cls.parse(model or "")
        except LLMError:  # not a spec, or a LangChain provider without langchain installed
            return cls("", str(model or ""))

    @property
    def local(self) -> bool:
        """Whether this is one of the embedded llama.cpp models."""
        return self.provider == "local"

    @property
    def model_class(self) -> ModelClass:
        """Small local, hosted, or unknown (no provider)."""
        if self.local:
            return ModelClass.SMALL_LOCAL
        return ModelClass.HOSTED if self.provider else ModelClass.UNKNOWN

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}" if self.provider else self.name


def context_window(model: str | ModelSpec | BaseChatModel | None) -> int | None:
    """Input tokens a model reads, if known: a hosted spec's server or name, else a model object's own figures."""
    spec = ModelSpec.of(model)
    if spec.model_class is ModelClass.HOSTED and (window := SERVER_WINDOWS.get(spec.provider) or window_for_name(spec.name)):
        return window
    if isinstance(model, (str, ModelSpec)) or model is None:
        return None
    num_ctx = getattr(model, "num_ctx", None)  # ChatOllama: the context the server will actually use
    if isinstance(num_ctx, int) and num_ctx > 0:
        return num_ctx
    profile = getattr(model, "profile", None)
    if isinstance(profile, dict) and isinstance(profile.get("max_input_tokens"), int):
        return profile["max_input_tokens"]
    for attribute in ("model_name", "model", "model_id"):
        name = getattr(model, attribute, None)
        if isinstance(name, str) and (window := window_for_name(name)):
            return window
    return None


def resolve_model(spec: str | ModelSpec | BaseChatModel = DEFAULT_MODEL, *, base_url: str | None = None,
                  timeout: float | None = None, max_retries: int | None = None,
                  cache: bool | str | Path | Any = False, temperature: float | None = 0.0,
                  max_tokens: int | None = None, runtime_pool: Any = None,
                  env: dict[str, str] | None = None) -> BaseChatModel:
    """A LangChain chat model for spec (or spec itself), cached on disk when cache is True, a path or an LLMCallCache."""
    from frames_agent.agent.llm.cache import with_cache

    if isinstance(spec, BaseChatModel):
        return with_cache(spec, cache)
    if not isinstance(spec, (str, ModelSpec)):
        raise ModelSpecError(f"a model is a 'provider:model' string or a LangChain chat model, not {type(spec).__name__}")
    parsed = ModelSpec.parse(spec)
    provider, name = parsed.provider, parsed.name
    env = dict(os.environ) if env is None else env
    if base_url and provider != "openai":
        raise ModelSpecError(f"--base-url applies to openai:<model> specs, not {provider}:")
    if provider in ("openai", "gemini"):
        make = _provider_function("openai_compat" if provider == "openai" else "gemini", f"make_{provider}_chat", parsed)
        model: BaseChatModel = make(name, base_url=base_url, timeout=timeout or 120.0,
                                    max_retries=3 if max_retries is None else max_retries,
                                    temperature=temperature, max_tokens=max_tokens, env=env)
    elif provider == "local":
        model = _local_model(name, timeout=timeout, max_retries=max_retries, temperature=temperature,
                             max_tokens=max_tokens, pool=runtime_pool)
    else:
        model = make_langchain_chat(provider, name, timeout=timeout, max_retries=max_retries,
                                    temperature=temperature, max_tokens=max_tokens)
    return with_cache(model, cache)


def _provider_function(module: str, function: str, spec: ModelSpec) -> Any:
    """A provider's factory; its SDK missing is a one-line install error naming the package."""
    import importlib

    try:
        return getattr(importlib.import_module(f"frames_agent.agent.llm.providers.{module}"), function)
    except ImportError as exc:
        from frames_agent.core.extras import extra_for

        package = (exc.name or module).split(".")[0].replace("_", "-")
        extra = extra_for(exc.name) or "hosted"
        raise MissingPackageError(f"{spec} needs the {package} package: pip install 'frames-agent[{extra}]' "
                                  f"(or pip install {package})") from None


def _local_model(name: str, *, timeout: float | None, max_retries: int | None, temperature: float | None,
                 max_tokens: int | None, pool: Any) -> BaseChatModel:
    from frames_agent.agent.llm import weights
    from frames_agent.agent.llm.providers import local
    from frames_agent.core.paths import cache_dir

    local.check_runtime()  # before weights are assembled: a missing runtime is the more useful error
    models_dir = cache_dir() / "models"
    canonical = LOCAL_ALIASES.get(name.lower())
    if canonical:
        path = (weights.qwen_gguf if canonical == "qwen2.5-coder-1.5b" else weights.smollm2_gguf)(models_dir)
    elif name.endswith(".gguf"):
        path, canonical = weights.check_gguf_header(Path(name).expanduser()), Path(name).stem
    else:
        raise ModelNotFoundError(f"unknown local model {name!r}; choose {DEFAULT_MODEL}, "
                                 "local:smollm2-135m or local:/path/to/model.gguf")
    runtime = (pool or local.SHARED_POOL).get(path, name=canonical)
    return local.make_local_chat(canonical, runtime, timeout=timeout or 600.0,
                                 max_retries=0 if max_retries is None else max_retries,
                                 temperature=0.0 if temperature is None else temperature,
                                 max_tokens=max_tokens or 1024)
