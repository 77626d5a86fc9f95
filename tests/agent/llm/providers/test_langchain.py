"""Providers through LangChain's init_chat_model: built from the spec, one-line errors naming the package."""
from __future__ import annotations

import langchain.chat_models.base as lc
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from frames_agent.agent.llm import resolve_model
from frames_agent.agent.llm.errors import LLMError, MissingPackageError, ModelSpecError
from frames_agent.agent.llm.providers import langchain as provider
from frames_agent.core.errors import InstallError


@pytest.fixture
def fake_providers(monkeypatch):
    """Two providers in LangChain's own table: one whose package is LangChain's fake model, one not installed."""
    made = []

    def create(cls, model, **kwargs):
        made.append((model, kwargs))
        return cls(responses=[f"hello from {model}"])

    monkeypatch.setitem(lc._BUILTIN_PROVIDERS, "fakeprov",
                        ("langchain_core.language_models.fake_chat_models", "FakeListChatModel", create))
    monkeypatch.setitem(lc._BUILTIN_PROVIDERS, "absentprov", ("langchain_absentprov.chat", "ChatAbsent", lc._call))
    lc._get_chat_model_creator.cache_clear()
    yield made
    lc._get_chat_model_creator.cache_clear()


def test_a_langchain_provider_is_built_by_init_chat_model(fake_providers):
    model = resolve_model("fakeprov:tiny-1", max_tokens=64)
    assert isinstance(model, FakeListChatModel) and model.invoke("hi").content == "hello from tiny-1"
    assert fake_providers == [("tiny-1", {"temperature": 0.0, "max_tokens": 64})]  # only settings we were given


def test_missing_integration_package_names_it(fake_providers):
    with pytest.raises(MissingPackageError) as err:
        resolve_model("absentprov:m")
    assert str(err.value) == "absentprov:m needs the langchain-absentprov package: pip install langchain-absentprov"
    assert isinstance(err.value, InstallError)


def test_real_provider_table_names_its_package():
    assert provider.provider_package("anthropic") == "langchain-anthropic"
    assert provider.provider_package("azure_ai") == "langchain-azure-ai"
    assert {"anthropic", "ollama", "mistralai"} <= provider.known_providers()


def test_without_langchain_other_providers_say_what_to_install(monkeypatch):
    monkeypatch.setattr(provider, "_registry", lambda: None)
    with pytest.raises(MissingPackageError, match=r"pip install 'frames-agent\[hosted\]' \(or pip install langchain\)$"):
        resolve_model("anthropic:claude-sonnet-4-5")


def test_construction_failures_are_one_line(fake_providers, monkeypatch):
    def broken(cls, model, **kwargs):
        raise ValueError("Did not find api_key,\nplease set KEY_ENV")

    monkeypatch.setitem(lc._BUILTIN_PROVIDERS, "brokenprov",
                        ("langchain_core.language_models.fake_chat_models", "FakeListChatModel", broken))
    with pytest.raises(LLMError, match=r"^brokenprov:m: cannot create the model: Did not find api_key,$"):
        resolve_model("brokenprov:m")
    with pytest.raises(ModelSpecError, match="name a model"):
        resolve_model("fakeprov:")


def test_the_cli_reports_a_missing_package_in_one_line_with_exit_2(fake_providers, capsys):
    from frames_agent.cli import main

    assert main(["llm", "hello", "--model", "absentprov:m", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err == "error: absentprov:m needs the langchain-absentprov package: pip install langchain-absentprov\n"


class TimedFake(FakeListChatModel):
    """A provider class that takes a request timeout and retries, as ChatAnthropic or ChatMistralAI do."""

    timeout: float | None = None
    max_retries: int = 2


class ClientFake(FakeListChatModel):
    """A provider class whose HTTP client takes the timeout, as ChatOllama's does."""

    client_kwargs: dict = {}


@pytest.mark.parametrize("cls, provider, given, expected", [
    (TimedFake, "timedprov", {}, {"timeout": 120.0}),
    (TimedFake, "timedprov", {"timeout": 30.0, "max_retries": 1}, {"timeout": 30.0, "max_retries": 1}),
    (ClientFake, "ollama", {}, {"client_kwargs": {"timeout": 600.0}}),
    (ClientFake, "ollama", {"max_retries": 1}, {"client_kwargs": {"timeout": 600.0}}),  # no retries field
])
def test_request_timeouts_reach_providers_that_take_them(monkeypatch, cls, provider, given, expected):
    provider_class = cls
    made = []

    def create(cls, model, **kwargs):
        made.append(kwargs)
        return cls(responses=["ok"], **{k: v for k, v in kwargs.items() if k in cls.model_fields})

    monkeypatch.setitem(lc._BUILTIN_PROVIDERS, provider, (__name__, provider_class.__name__, create))
    lc._get_chat_model_creator.cache_clear()
    try:
        model = resolve_model(f"{provider}:m", temperature=None, **given)
    finally:
        lc._get_chat_model_creator.cache_clear()
    assert made == [expected] and model.invoke("hi").content == "ok"
