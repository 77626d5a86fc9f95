"""LangChain's standard tests (langchain-tests) of every chat model class the project ships: unit tests, and
integration tests against the loopback OpenAI-compatible fake answering as a model (streams, calls tools).

What skips, skips by a feature flag of the standard suite, each for a reason: image, PDF and audio inputs and
Anthropic-style content (the agent sends text; the fake reads none of them); test_stream_time (needs VCR cassettes
of a hosted API, and the fake is live); GeminiChat's below.
"""
from __future__ import annotations

import functools
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_tests.integration_tests import ChatModelIntegrationTests
from langchain_tests.unit_tests import ChatModelUnitTests

from frames_agent.agent.llm.providers.gemini import GeminiChat
from frames_agent.agent.llm.providers.local import LocalChat, LocalRuntime
from frames_agent.agent.llm.providers.openai_compat import OpenAICompatChat
from tests.agent.llm.fake_openai import FakeOpenAI


@functools.cache
def fake_url() -> str:
    """One model-like fake for the module (a daemon thread: it ends with the session)."""
    return FakeOpenAI(model=True).url


class _Runtime(LocalRuntime):
    """A started local runtime, as far as LocalChat asks: its server's URL (the fake's)."""

    def __init__(self) -> None:
        pass

    def base_url(self) -> str:
        return fake_url()


class RunOnce:
    @pytest.fixture
    def benchmark(self, benchmark: Any) -> Any:
        """pytest-benchmark's fixture, off: test_init_time's inits run once (timing them took 15 s; nothing is
        bounded by it)."""
        benchmark.disabled = True
        return benchmark


class OpenAICompatParams(RunOnce):
    url = "http://127.0.0.1:8080/v1"  # unit tests send nothing (a fixed URL keeps the serialization snapshot stable)

    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return OpenAICompatChat

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"model": "fake-model", "spec": "openai:fake-model", "base_url": self.url, "api_key": "not-needed",
                "legacy_max_tokens": True, "stream_usage": True}

    @property
    def has_tool_choice(self) -> bool:
        return True

    @property
    def supports_json_mode(self) -> bool:
        return True

    @property
    def model_override_value(self) -> str:
        return "other-model"  # the fake answers as the model the request names

    @property
    def init_from_env_params(self) -> tuple[dict, dict, dict]:
        return ({"OPENAI_API_KEY": "api_key", "OPENAI_BASE_URL": "https://example.invalid/v1"},
                {"model": "fake-model"}, {"openai_api_key": "api_key"})


class LocalParams(OpenAICompatParams):
    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return LocalChat

    @property
    def chat_model_params(self) -> dict[str, Any]:
        # The URL is the placeholder make_local_chat gives; the attached runtime's replaces it on the first call.
        return {**super().chat_model_params, "model": "qwen", "spec": "local:qwen", "base_url": "http://127.0.0.1:1/v1"}

    @pytest.fixture
    def model(self, request: Any) -> BaseChatModel:
        """The class built as the standard fixture builds it, with a runtime attached (make_local_chat's step)."""
        extra = getattr(request, "param", None) or {}
        return LocalChat(**{**self.standard_chat_model_params, **self.chat_model_params, **extra},
                         runtime=_Runtime())


class TestOpenAICompatUnit(OpenAICompatParams, ChatModelUnitTests):
    pass


class TestOpenAICompatIntegration(OpenAICompatParams, ChatModelIntegrationTests):
    @property
    def url(self) -> str:  # type: ignore[override]
        return fake_url()


class TestLocalUnit(LocalParams, ChatModelUnitTests):
    pass


class TestLocalIntegration(LocalParams, ChatModelIntegrationTests):
    @property
    def chat_model_params(self) -> dict[str, Any]:
        # Built without a runtime (test_stop_sequence builds the class itself), it talks to the server at base_url.
        return {**super().chat_model_params, "base_url": fake_url()}


class TestGeminiUnit(RunOnce, ChatModelUnitTests):
    """GeminiChat speaks Google's API, not OpenAI's: unit tests only (tests/agent/llm/providers/test_gemini.py drives
    it against a fake of that API). It binds no tools and is not LangChain-serializable, so the standard tests of
    those features skip by the class's own flags (has_tool_calling is False; test_serdes skips without
    is_lc_serializable), and test_init_from_env skips because the class takes its key as a parameter
    (make_gemini_chat reads GEMINI_API_KEY / GOOGLE_API_KEY)."""

    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return GeminiChat

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"model": "gemini-2.5-flash", "spec": "gemini:gemini-2.5-flash", "api_key": "not-a-key"}
