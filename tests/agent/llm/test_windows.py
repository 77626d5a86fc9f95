"""Context windows from LangChain model profiles and known names."""
from __future__ import annotations

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_openai import ChatOpenAI

from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.llm.windows import model_window, window_for_name


def test_known_names_longest_prefix_wins():
    assert window_for_name("gemini-1.5-pro-002") == 2_097_152 and window_for_name("gemini-2.0-flash") == 1_048_576
    assert window_for_name("models/gpt-4o-mini") == 128_000 and window_for_name("gpt-4") == 8_192
    assert window_for_name("my-model") is None and window_for_name("") is None


def test_model_window_prefers_the_langchain_profile():
    profiled = FakeListChatModel(responses=["x"], profile={"max_input_tokens": 50_000})
    assert model_window(profiled) == 50_000
    assert model_window(ChatOpenAI(model="gpt-4o", api_key="k")) == 128_000  # langchain-openai's own profile
    assert model_window(ScriptedLLM([])) is None


def test_a_server_context_size_wins_over_the_model_name():
    class OllamaLike(FakeListChatModel):
        model: str = "llama3.1"
        num_ctx: int | None = None

    assert model_window(OllamaLike(responses=["x"])) == 128_000
    assert model_window(OllamaLike(responses=["x"], num_ctx=8_192)) == 8_192
