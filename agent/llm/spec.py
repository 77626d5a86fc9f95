"""Model specs (provider:model) resolved to LangChain chat models."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from agent.llm.errors import LLMError, ModelNotFoundError, ModelSpecError

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"
LOCAL_ALIASES = {"qwen2.5-coder-1.5b": "qwen2.5-coder-1.5b", "qwen": "qwen2.5-coder-1.5b",
                 "smollm2-135m": "smollm2-135m", "smollm2": "smollm2-135m"}
PROVIDERS = ("gemini", "openai", "local")

__all__ = ["DEFAULT_MODEL", "LLMError", "resolve_model", "split_spec"]


def split_spec(spec: str) -> tuple[str, str]:
    """(provider, model) of 'provider:model'."""
    provider, sep, name = spec.strip().partition(":")
    if not sep or provider.lower() not in PROVIDERS:
        raise ModelSpecError(f"unknown model provider in {spec!r}; use gemini:<model>, openai:<model>, "
                             "local:qwen2.5-coder-1.5b or local:smollm2-135m")
    return provider.lower(), name.strip()


def resolve_model(spec: str | BaseChatModel = DEFAULT_MODEL, *, base_url: str | None = None,
                  timeout: float | None = None, max_retries: int | None = None,
                  cache: bool | str | Path | Any = False, temperature: float | None = 0.0,
                  max_tokens: int | None = None, runtime_pool: Any = None,
                  env: dict[str, str] | None = None) -> BaseChatModel:
    """A LangChain chat model for spec (or spec itself if it already is one), optionally cached on disk.

    cache: False (default), True (the shared cache under cache_dir()/llm-cache), a path, or an LLMCallCache.
    """
    from agent.llm.cache import with_cache

    if isinstance(spec, BaseChatModel):
        return with_cache(spec, cache)
    if not isinstance(spec, str):
        raise ModelSpecError(f"a model is a 'provider:model' string or a LangChain chat model, not {type(spec).__name__}")
    provider, name = split_spec(spec)
    env = dict(os.environ) if env is None else env
    if base_url and provider != "openai":
        raise ModelSpecError(f"--base-url applies to openai:<model> specs, not {provider}:")
    if provider == "openai":
        from agent.llm.providers.openai_compat import make_openai_chat

        model: BaseChatModel = make_openai_chat(name, base_url=base_url, timeout=timeout or 120.0,
                                                max_retries=3 if max_retries is None else max_retries,
                                                temperature=temperature, max_tokens=max_tokens, env=env)
    elif provider == "gemini":
        from agent.llm.providers.gemini import make_gemini_chat

        model = make_gemini_chat(name, timeout=timeout or 120.0, max_retries=3 if max_retries is None else max_retries,
                                 temperature=temperature, max_tokens=max_tokens, env=env)
    else:
        model = _local_model(name, timeout=timeout, max_retries=max_retries, temperature=temperature,
                             max_tokens=max_tokens, pool=runtime_pool)
    return with_cache(model, cache)


def _local_model(name: str, *, timeout: float | None, max_retries: int | None, temperature: float | None,
                 max_tokens: int | None, pool: Any) -> BaseChatModel:
    from agent.llm import weights
    from agent.llm.providers import local
    from retrieval.paths import cache_dir

    models_dir = cache_dir() / "models"
    canonical = LOCAL_ALIASES.get(name.lower())
    if canonical == "qwen2.5-coder-1.5b":
        path = weights.qwen_gguf(models_dir)
    elif canonical == "smollm2-135m":
        path = weights.smollm2_gguf(models_dir)
    elif name.endswith(".gguf"):
        path, canonical = weights.check_gguf_header(Path(name).expanduser()), Path(name).stem
    else:
        raise ModelNotFoundError(f"unknown local model {name!r}; choose local:qwen2.5-coder-1.5b, "
                                 "local:smollm2-135m or local:/path/to/model.gguf")
    runtime = (pool or local.SHARED_POOL).get(path, name=canonical)
    return local.make_local_chat(canonical, runtime, timeout=timeout or 600.0,
                                 max_retries=0 if max_retries is None else max_retries,
                                 temperature=0.0 if temperature is None else temperature,
                                 max_tokens=max_tokens or 1024)
