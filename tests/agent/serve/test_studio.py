"""langgraph.json: its graph factory, loaded from the file path it names as LangGraph Server does, runs a question."""
from __future__ import annotations

import importlib.util
import json

from langgraph.graph.state import CompiledStateGraph

from frames_agent.agent.settings import AgentSettings
from tests.agent.serve.conftest import ROOT, write_script


def load_factory(name: str):
    spec_text = json.loads((ROOT / "langgraph.json").read_text())["graphs"][name]
    path, _, attr = spec_text.partition(":")
    spec = importlib.util.spec_from_file_location(f"langgraph_user_{name}", ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, attr)


def test_factory_named_by_langgraph_json_runs_a_question(tmp_path, tiny_index, monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_TEST_SCRIPT", str(write_script(tmp_path / "script.json")))
    monkeypatch.setenv("FRAMES_AGENT_INDEX", str(tiny_index))
    graph = load_factory("frames_agent")({"configurable": {"k": 1, "n": 2, "n_docs": 2}})
    assert isinstance(graph, CompiledStateGraph)
    state = graph.invoke({"question": "Who is the mayor of Brennick?"})
    assert state["answer"] == "Tomas Ferrante" and len(state["steps"]) == 2
    assert {d.title for entry in state["context"] for d in entry.documents} & {"Brennick", "Tomas Ferrante"}
    # Studio draws its settings form from the graph's context schema: every setting the factory reads is in it.
    form = graph.get_context_jsonschema()["properties"]
    assert set(form) == {"model", "index", "tools", "k", "n", "n_docs", "prompt"}
    assert form["k"]["minimum"] == 1 and form["k"]["description"] and form["index"]["type"] == "string"


def test_settings_order_configurable_env_defaults():
    env = {"FRAMES_AGENT_MODEL": "gemini:gemini-2.5-flash", "FRAMES_AGENT_INDEX": "mine"}
    out = AgentSettings.from_runnable_config({"configurable": {"index": "theirs", "n": 3}}, env=env)
    assert (out.model, out.index, out.config.n, out.config.k) == ("gemini:gemini-2.5-flash", "theirs", 3, 5)
