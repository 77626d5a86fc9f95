"""Any other `provider:model` (anthropic:, ollama:, mistralai:, ...) through LangChain's `init_chat_model`, with a
one-line error naming the package to install when the provider's integration is missing."""
from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from frames_agent.agent.llm import errors as E


def normalize_provider(provider: str) -> str:
    """LangChain's spelling of a provider name (lower case, '-' as '_')."""
    return provider.strip().lower().replace("-", "_")


def _registry() -> dict[str, tuple] | None:
    """LangChain's provider table (provider -> (module, class, creator)), None without the langchain package."""
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS  # noqa: PLC2701 - the table init_chat_model uses
    except ImportError:
        return None
    return _BUILTIN_PROVIDERS


def known_providers() -> frozenset[str]:
    """Providers init_chat_model can build; raises a one-line InstallError without the langchain package."""
    registry = _registry()
    if registry is None:
        raise E.MissingPackageError("providers other than local:, openai: and gemini: go through LangChain: "
                                    "pip install 'frames-agent[hosted]' (or pip install langchain)")
    return frozenset(registry)


def provider_package(provider: str) -> str:
    """The pip package of a provider's LangChain integration (e.g. anthropic -> langchain-anthropic)."""
    entry = (_registry() or {}).get(provider)
    module = entry[0] if entry else f"langchain_{provider}"
    return module.split(".", 1)[0].replace("_", "-")


# Seconds per request when the caller gives none (an Ollama server on a CPU answers slowly, as the embedded model does).
DEFAULT_TIMEOUT, SLOW_PROVIDER_TIMEOUT = 120.0, 600.0


def deadline_kwargs(provider: str, timeout: float | None, max_retries: int | None) -> dict[str, Any]:
    """The request timeout and retries under the keywords the provider's class takes (none it does not take)."""
    import importlib

    entry = (_registry() or {}).get(provider)
    try:
        cls = getattr(importlib.import_module(entry[0]), entry[1]) if entry else None
    except (ImportError, AttributeError):
        cls = None  # not installed: make_langchain_chat reports the package to install
    fields = getattr(cls, "model_fields", None) or {}
    accepted = set(fields) | {f.alias for f in fields.values() if getattr(f, "alias", None)}
    timeout = timeout or (SLOW_PROVIDER_TIMEOUT if provider == "ollama" else DEFAULT_TIMEOUT)
    out: dict[str, Any] = {}
    if "timeout" in accepted:
        out["timeout"] = timeout
    elif "request_timeout" in accepted:
        out["request_timeout"] = timeout
    elif "client_kwargs" in accepted:
        out["client_kwargs"] = {"timeout": timeout}
    if max_retries is not None and "max_retries" in accepted:
        out["max_retries"] = max_retries
    return out


def make_langchain_chat(provider: str, name: str, *, timeout: float | None = None, max_retries: int | None = None,
                        temperature: float | None = 0.0, max_tokens: int | None = None) -> BaseChatModel:
    """provider:name through init_chat_model, passing only the settings the caller gave (and a request timeout)."""
    from langchain.chat_models import init_chat_model

    spec = f"{provider}:{name}"
    if not name:
        raise E.ModelSpecError(f"{provider}: name a model, e.g. {provider}:<model>")
    given = {"temperature": temperature, "max_tokens": max_tokens}
    kwargs: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
    kwargs.update(deadline_kwargs(provider, timeout, max_retries))
    try:
        model = init_chat_model(name, model_provider=provider, **kwargs)
    except ImportError:
        package = provider_package(provider)
        raise E.MissingPackageError(f"{spec} needs the {package} package: pip install {package}") from None
    except Exception as exc:  # noqa: BLE001 - a missing key or bad setting, reported as one line
        detail = E.redact(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
        raise E.LLMError(f"{spec}: cannot create the model: {detail}") from None
    if not isinstance(model, BaseChatModel):
        raise E.ModelSpecError(f"{spec}: init_chat_model returned {type(model).__name__}, not a chat model")
    return model
