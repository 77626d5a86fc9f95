"""Any other `provider:model` (anthropic:, ollama:, mistralai:, ...) through LangChain's `init_chat_model`, with a
one-line error naming the package to install when the provider's integration is missing."""
from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from agent.llm import errors as E


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
                                    "pip install langchain")
    return frozenset(registry)


def provider_package(provider: str) -> str:
    """The pip package of a provider's LangChain integration (e.g. anthropic -> langchain-anthropic)."""
    entry = (_registry() or {}).get(provider)
    module = entry[0] if entry else f"langchain_{provider}"
    return module.split(".", 1)[0].replace("_", "-")


def make_langchain_chat(provider: str, name: str, *, timeout: float | None = None, max_retries: int | None = None,
                        temperature: float | None = 0.0, max_tokens: int | None = None) -> BaseChatModel:
    """provider:name through init_chat_model; only settings the caller gave are passed (not every integration
    takes every keyword)."""
    from langchain.chat_models import init_chat_model

    spec = f"{provider}:{name}"
    if not name:
        raise E.ModelSpecError(f"{provider}: name a model, e.g. {provider}:<model>")
    given = {"temperature": temperature, "max_tokens": max_tokens, "timeout": timeout, "max_retries": max_retries}
    kwargs: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
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
