"""Agent budgets follow the model: small for the embedded models and unknown fakes, else the context window."""
from __future__ import annotations

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_openai import ChatOpenAI

from frames_agent.agent import FramesAgent
from frames_agent.agent.config import LARGE_MODEL_BUDGETS, SMALL_MODEL_BUDGETS, AgentConfig, budgets_for_window
from frames_agent.agent.llm import DEFAULT_MODEL
from frames_agent.agent.llm.testing import ScriptedLLM


def budgets(config: AgentConfig) -> dict:
    return {key: getattr(config, key) for key in SMALL_MODEL_BUDGETS}


def test_small_budgets_for_local_models_and_unknown_fakes():
    for model in (DEFAULT_MODEL, "local:smollm2-135m", None, "scripted", ScriptedLLM([])):
        assert budgets(AgentConfig.for_model(model)) == SMALL_MODEL_BUDGETS


def test_model_objects_get_budgets_from_their_window():
    gpt4o = ChatOpenAI(model="gpt-4o", api_key="not-used")
    agent = FramesAgent(gpt4o)  # the case: this had a 1,400-token answer budget
    assert agent.config.answer_budget == 64_000 and agent.config.plan_budget == 24_000
    assert agent.config == AgentConfig.for_model("openai:gpt-4o")
    profiled = FakeListChatModel(responses=["x"], profile={"max_input_tokens": 20_000})
    assert budgets(AgentConfig.for_model(profiled)) == budgets_for_window(20_000)


def test_hosted_specs_large_known_and_assumed_windows():
    assert budgets(AgentConfig.for_model("gemini:gemini-1.5-pro")) == LARGE_MODEL_BUDGETS
    assert AgentConfig.for_model("anthropic:claude-sonnet-4-5").answer_budget == 100_000
    assert AgentConfig.for_model("openai:my-finetune").answer_budget == 16_384  # unknown name: 32k assumed


def test_window_budgets_fit_the_window_and_overrides_win():
    for window in (4_096, 8_192, 32_768, 128_000, 1_000_000):
        b = budgets_for_window(window)
        assert b["plan_budget"] + b["answer_budget"] <= window * 0.7
        assert all(b[key] <= LARGE_MODEL_BUDGETS[key] for key in b if not key.endswith("_max_tokens"))
        assert b["plan_max_tokens"] is None and b["answer_max_tokens"] is None  # hosted replies are not capped
    assert AgentConfig.for_model("openai:gpt-4o", answer_budget=500, k=None).answer_budget == 500


def test_a_local_model_object_keeps_small_budgets_whatever_its_window():
    from pathlib import Path

    from frames_agent.agent.llm.providers.local import LocalRuntime, make_local_chat

    runtime = LocalRuntime(Path("/never/started.gguf"), name="qwen2.5-coder-1.5b")  # lazily started: never here
    chat = make_local_chat("qwen2.5-coder-1.5b", runtime)
    assert budgets(AgentConfig.for_model(chat)) == SMALL_MODEL_BUDGETS  # though qwen2.5 names a 32k window
    assert not runtime.started


def test_a_retired_setting_reads_at_the_value_that_does_what_the_agent_does_and_is_refused_otherwise():
    import pytest

    from frames_agent.agent.errors import AgentError

    assert AgentConfig(drop_fanout=False, proposer_rank="order", k=3) == AgentConfig(k=3)
    with pytest.raises(AgentError, match=r"^adaptive=true: a retired setting \(tried and not kept: "
                       r"docs/measurements.md#tried-and-not-kept\); run it with the commit listed there$"):
        AgentConfig(adaptive=True)
