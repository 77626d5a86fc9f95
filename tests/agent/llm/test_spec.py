"""Model specs: parsing, the typed model class, one default, and LangChain providers by spec."""
from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_openai import ChatOpenAI

from frames_agent.agent.llm import DEFAULT_MODEL, ModelClass, ModelSpec, resolve_model
from frames_agent.agent.llm.errors import InstallError, ModelSpecError
from frames_agent.agent.llm.spec import context_window, window_for_name
from frames_agent.agent.llm.testing import ScriptedLLM


@pytest.mark.parametrize("text, provider, name, model_class", [
    (DEFAULT_MODEL, "local", "qwen2.5-coder-1.5b", ModelClass.SMALL_LOCAL),
    ("local:smollm2-135m", "local", "smollm2-135m", ModelClass.SMALL_LOCAL),
    ("gemini:gemini-2.0-flash", "gemini", "gemini-2.0-flash", ModelClass.HOSTED),
    ("OpenAI: gpt-4o-mini", "openai", "gpt-4o-mini", ModelClass.HOSTED),
    ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", ModelClass.HOSTED),
    ("ollama:llama3.1:8b", "ollama", "llama3.1:8b", ModelClass.HOSTED),
    ("google-genai:gemini-2.5-pro", "google_genai", "gemini-2.5-pro", ModelClass.HOSTED),
])
def test_parse_gives_provider_name_and_class(text, provider, name, model_class):
    spec = ModelSpec.parse(text)
    assert (spec.provider, spec.name, spec.model_class) == (provider, name, model_class)
    assert spec.local is (model_class is ModelClass.SMALL_LOCAL)
    assert ModelSpec.parse(str(spec)) == spec


def test_default_model_is_the_embedded_small_model():
    assert ModelSpec.parse(DEFAULT_MODEL).model_class is ModelClass.SMALL_LOCAL


def test_unknown_provider_is_a_one_line_spec_error():
    with pytest.raises(ModelSpecError, match="unknown model provider in 'nosuch:x'") as err:
        ModelSpec.parse("nosuch:x")
    assert "\n" not in str(err.value)


def test_of_is_lenient_for_labels_and_reads_our_model_objects():
    assert ModelSpec.of("scripted") == ModelSpec("", "scripted") and ModelSpec.of(None).model_class is ModelClass.UNKNOWN
    assert not ModelSpec.of("j").local
    assert ModelSpec.of(ScriptedLLM([])).model_class is ModelClass.UNKNOWN
    hosted = resolve_model("openai:gpt-4o", base_url="http://127.0.0.1:9/v1")  # built, never called
    assert ModelSpec.of(hosted) == ModelSpec("openai", "gpt-4o") and context_window(hosted) == 128_000


def test_context_window_of_known_hosted_names_only():
    assert context_window("gemini:gemini-1.5-pro") == 2_097_152
    assert context_window("openai:gpt-4o-mini") == 128_000
    assert context_window("openai:my-finetune") is None
    assert context_window("local:qwen") is None  # local budgets follow speed, not the window
    assert context_window("ollama:llama3.1") == 4_096  # the server's num_ctx, not the model's 128k


def test_a_missing_provider_sdk_is_an_install_error_naming_the_package(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # as if langchain-openai were not installed
    monkeypatch.delitem(sys.modules, "frames_agent.agent.llm.providers.openai_compat", raising=False)
    with pytest.raises(InstallError) as err:
        resolve_model("openai:gpt-4o-mini")
    assert str(err.value) == ("openai:gpt-4o-mini needs the langchain-openai package: pip install 'frames-agent[hosted]' "
                              "(or pip install langchain-openai)")


def test_a_missing_llama_cpp_runtime_is_reported_before_weights(monkeypatch):
    import importlib.util

    from frames_agent.agent.llm import weights

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    monkeypatch.setattr(weights, "qwen_gguf", lambda *a: pytest.fail("weights assembled before the runtime check"))
    with pytest.raises(InstallError, match=r"xllamacpp\): pip install 'frames-agent\[local\]'$"):
        resolve_model(DEFAULT_MODEL)


def test_known_names_longest_prefix_wins():
    assert window_for_name("gemini-1.5-pro-002") == 2_097_152 and window_for_name("gemini-2.0-flash") == 1_048_576
    assert window_for_name("models/gpt-4o-mini") == 128_000 and window_for_name("gpt-4") == 8_192
    assert window_for_name("my-model") is None and window_for_name("") is None


def test_an_objects_context_window_prefers_the_langchain_profile():
    profiled = FakeListChatModel(responses=["x"], profile={"max_input_tokens": 50_000})
    assert context_window(profiled) == 50_000
    assert context_window(ChatOpenAI(model="gpt-4o", api_key="k")) == 128_000  # langchain-openai's own profile
    assert context_window(ScriptedLLM([])) is None


def test_a_server_context_size_wins_over_the_model_name():
    class OllamaLike(FakeListChatModel):
        model: str = "llama3.1"
        num_ctx: int | None = None

    assert context_window(OllamaLike(responses=["x"])) == 128_000
    assert context_window(OllamaLike(responses=["x"], num_ctx=8_192)) == 8_192
