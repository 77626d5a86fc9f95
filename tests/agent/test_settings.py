"""AgentSettings: flags, a RunnableConfig and the environment read in one place, and the agent built from it."""
from __future__ import annotations

import argparse
from dataclasses import asdict

import pytest

from frames_agent import AgentSettings
from frames_agent.agent.commands import add_agent_flags
from frames_agent.agent.config import LARGE_MODEL_DEADLINES, SMALL_MODEL_BUDGETS, AgentConfig
from frames_agent.agent.errors import AgentError
from frames_agent.agent.llm.spec import DEFAULT_MODEL
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.settings import CONFIGURABLE

HOSTED = "gemini:gemini-2.5-flash"


def cli_flags(*argv: str) -> dict:
    parser = argparse.ArgumentParser()
    add_agent_flags(parser)
    return vars(parser.parse_args(list(argv)))


# --- from_flags ---------------------------------------------------------------------------------------------------
def test_defaults_are_the_clis_and_missing_flags_take_them():
    settings = AgentSettings.from_flags(cli_flags())
    assert settings == AgentSettings.from_flags({}) == AgentSettings()
    assert (settings.model, settings.base_url, settings.index, settings.tools, settings.cache) == (
        DEFAULT_MODEL, None, "default", "wiki", True)
    assert settings.config == AgentConfig.for_model(DEFAULT_MODEL)
    assert (settings.config.k, settings.config.n, settings.config.n_docs, settings.config.prompt) == (5, 5, 10, "planning")


def test_flags_set_pairs_and_overrides_in_that_order():
    values = cli_flags("--k", "2", "--n-docs", "3", "--index", "mine", "--tools", "wiki,crag", "--no-cache",
                       "--set", "plan_budget=500", "--set", "propose-queries=false", "--set", "prompt=vanilla",
                       "--set", "variables={\"a\": \"b\"}", "--set", "answer_prompt=answer_direct")
    settings = AgentSettings.from_flags(values, k=4, question_timeout=None)
    config = settings.config
    assert (config.k, config.n_docs, config.plan_budget, config.propose_queries) == (4, 3, 500, False)
    assert (config.prompt, config.answer_prompt, config.variables) == ("vanilla", "answer_direct", {"a": "b"})
    assert config.question_timeout == AgentConfig.for_model(DEFAULT_MODEL).question_timeout  # None keeps the default
    assert (settings.index, settings.tools, settings.cache) == ("mine", "wiki,crag", False)
    assert AgentSettings.from_flags(cli_flags(), cache=False).cache is False


def test_a_dataclass_as_a_mapping_and_unknown_names_ignored():
    from frames_agent.eval.frames.runner import FramesRunSettings

    run = FramesRunSettings(k=2, n=3, model="openai:fake", base_url="http://127.0.0.1:9/v1", settings=["plan_budget=99"])
    settings = AgentSettings.from_flags(asdict(run))
    assert (settings.config.k, settings.config.n, settings.config.plan_budget) == (2, 3, 99)
    assert (settings.model, settings.base_url) == ("openai:fake", "http://127.0.0.1:9/v1")
    assert run.agent() == settings and run.agent(settings.config).config is settings.config


def test_a_given_config_is_used_as_it_is():
    config = AgentConfig(k=7)
    settings = AgentSettings.from_flags(cli_flags("--k", "2", "--set", "nonsense=1"), config=config)
    assert settings.config is config


def test_budgets_and_deadlines_are_sized_for_the_model():
    small = AgentSettings.from_flags(cli_flags()).config
    large = AgentSettings.from_flags(cli_flags("--model", HOSTED)).config
    assert small.answer_budget == SMALL_MODEL_BUDGETS["answer_budget"] < large.answer_budget
    assert large.timeout == LARGE_MODEL_DEADLINES["timeout"]
    explicit = AgentSettings.from_flags(cli_flags("--model", HOSTED, "--answer-budget", "900", "--timeout", "5")).config
    assert (explicit.answer_budget, explicit.timeout) == (900, 5.0)
    assert AgentSettings(model=HOSTED).config == large  # a direct construction is sized too


@pytest.mark.parametrize("argv, message", [
    (["--set", "plan_budjet=5"], "--set plan_budjet: no such agent config field; known: "),
    (["--set", "plan_budget"], "--set 'plan_budget': expected KEY=VALUE"),
    (["--set", "=5"], "--set '=5': expected KEY=VALUE"),
    (["--set", "plan_budget=-3"], "--plan-budget: "),
    (["--k", "0"], "--k: "),
    (["--n-docs", "100000"], "--n-docs: "),
])
def test_bad_flags_are_one_line_agent_errors(argv, message):
    with pytest.raises(AgentError) as caught:
        AgentSettings.from_flags(cli_flags(*argv))
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


# --- from_runnable_config -------------------------------------------------------------------------------------------
def test_runnable_config_then_environment_then_defaults():
    env = {"FRAMES_AGENT_MODEL": HOSTED, "FRAMES_AGENT_INDEX": "mine", "FRAMES_AGENT_TOOLS": "",
           "FRAMES_AGENT_ALLOW_INDEXES": "theirs"}
    out = AgentSettings.from_runnable_config({"configurable": {"index": "theirs", "n": 3, "k": None}}, env=env)
    assert (out.model, out.index, out.tools, out.config.n, out.config.k) == (HOSTED, "theirs", "wiki", 3, 5)
    assert out.config.answer_budget == AgentConfig.for_model(HOSTED).answer_budget  # sized for the env's model
    assert AgentSettings.from_runnable_config(None, env={}) == AgentSettings()
    assert AgentSettings.from_runnable_config({"configurable": {"plan_budget": 1}}, env={}) == AgentSettings()


@pytest.mark.parametrize("configurable", [{"index": "/etc"}, {"index": "/nonexistent/x"}, {"index": "default"},
                                          {"index": "msmarco-v1-passage"}, {"model": "local:/etc/passwd.gguf"},
                                          {"frames_agent": {"index": "/etc"}}])
def test_a_run_config_names_only_listed_models_and_indexes(configurable):
    env = {"FRAMES_AGENT_MODEL": HOSTED, "FRAMES_AGENT_INDEX": "mine", "FRAMES_AGENT_ALLOW_INDEXES": "a, theirs"}
    with pytest.raises(AgentError) as err:
        AgentSettings.from_runnable_config({"configurable": configurable}, env=env)
    (name, value), = (configurable.get("frames_agent") or configurable).items()
    assert str(err.value).replace(value, "X") == (f"{name} 'X': a run may only choose a{'n' * (name == 'index')} "
                                                  f"{name} the server's owner listed (listed: "
                                                  f"{'a, theirs' if name == 'index' else 'none besides its own'})")
    assert AgentSettings.from_runnable_config({"configurable": {"index": "mine", "model": HOSTED}}, env=env).index == "mine"
    listed = AgentSettings.from_runnable_config({"configurable": {"model": "local:/m.gguf"}}, env=env,
                                                models=["local:/m.gguf"])
    assert listed.model == "local:/m.gguf"


def test_runnable_config_reads_os_environ_by_default(monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_INDEX", "from-env")
    assert AgentSettings.from_runnable_config({}).index == "from-env"


def test_the_studio_form_lists_what_a_runnable_config_may_set():
    from frames_agent.agent.serve.studio import StudioSettings

    assert tuple(StudioSettings.__annotations__) == CONFIGURABLE


# --- build_agent ----------------------------------------------------------------------------------------------------
@pytest.fixture
def wired(monkeypatch, tiny_retriever):
    """The scripted model and the tiny index in place of the real ones; records what was asked for."""
    llm = ScriptedLLM([])
    asked: dict = {}

    def resolve(spec, **kw):
        asked["model"] = (spec, kw)
        return llm

    def open_index(name, **kw):
        asked["index"] = (name, kw)
        return tiny_retriever

    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", resolve)
    monkeypatch.setattr("frames_agent.index.build.open_index", open_index)
    monkeypatch.delenv("FRAMES_AGENT_TEST_SCRIPT", raising=False)
    return llm, asked, tiny_retriever


def test_build_agent_wires_model_index_tools_and_config(wired):
    llm, asked, retriever = wired
    settings = AgentSettings.from_flags(cli_flags("--k", "1", "--n", "1", "--index", "tiny", "--no-cache",
                                                  "--base-url", "http://127.0.0.1:9/v1", "--timeout", "7"))
    agent = settings.build_agent()
    assert agent.llm is llm and agent.retriever is retriever and agent.config == settings.config
    assert asked["model"] == (DEFAULT_MODEL, {"base_url": "http://127.0.0.1:9/v1", "cache": False, "timeout": 7.0})
    assert asked["index"][0] == "tiny" and asked["index"][1]["title_boost"] == settings.config.title_boost
    llm.replies.extend([{"thought": "t", "queries": ["Punxsutawney Phil"], "tool_calls": [], "enough": False},
                        "Answer: February 2"])
    assert agent.invoke("When does Phil forecast?").answer == "February 2"


def test_build_agent_without_wiki_opens_no_index(wired):
    _, asked, _ = wired
    agent = AgentSettings.from_flags({"tools": "crag"}).build_agent()
    assert agent.retriever is None and agent.tools and "index" not in asked


def test_build_agent_takes_the_scripted_model_from_the_environment(wired, monkeypatch, tmp_path):
    from tests.agent.serve.conftest import write_script

    llm, asked, _ = wired
    monkeypatch.setenv("FRAMES_AGENT_TEST_SCRIPT", str(write_script(tmp_path / "script.json")))
    agent = AgentSettings().build_agent()
    assert isinstance(agent.llm, ScriptedLLM) and agent.llm is not llm and "model" not in asked


def test_build_agent_with_dense_weight_opens_the_hybrid(wired, monkeypatch):
    opened = {}

    def open_hybrid(bm25, weight, build):
        opened.update(bm25=bm25, weight=weight, build=build)
        return bm25

    monkeypatch.setattr("frames_agent.retrieval.dense.open_hybrid", open_hybrid)
    agent = AgentSettings.from_flags({"index": "default", "settings": ["dense_weight=0.5"]}).build_agent()
    assert agent.retriever is wired[2] and opened == {"bm25": wired[2], "weight": 0.5, "build": True}
