"""A real `langgraph dev` server (LangGraph Server, in-memory runtime) running the agent: a thread's questions stay
apart, and an agent error reaches the run's result in the project's own words."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.agent.serve.conftest import ROOT, free_port

pytest.importorskip("langgraph_api", reason="langgraph dev needs langgraph-cli[inmem] (the test extra installs it)")
from langgraph_sdk import get_sync_client  # noqa: E402

pytestmark = pytest.mark.slow
STUDIO = ROOT / "agent" / "serve" / "studio.py"  # the factory the project's langgraph.json names

# The graph module the server loads by path: the agent over a two-document retriever (no Java), its scripted
# model planning a search for the question's own town and answering from the documents it was given.
GRAPH_MODULE = '''
import asyncio
import json

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.errors import UnreachableError
from frames_agent.agent.llm.testing import ScriptedLLM

MAYORS = {"Brennick": "Tomas Ferrante", "Oswy": "Ada Lindqvist"}


def reply(messages):
    text = messages[-1].content
    if "Nowhere" in text:
        raise UnreachableError("the model server at 127.0.0.1:9 could not be reached")
    if "Reply with one JSON" in text:
        town = next(t for t in MAYORS if t in text.rpartition("Question")[2])
        return json.dumps({"thought": "", "queries": [f"{town} mayor"]})
    return "Answer: " + next(m for m in MAYORS.values() if m in text)


class TownRetriever(BaseRetriever):
    """The document of the town a query names."""

    def _get_relevant_documents(self, query, *, run_manager):
        return [Document(id=town, page_content=f"The mayor of {town} is {mayor}.", metadata={"title": town})
                for town, mayor in MAYORS.items() if town in query]


def build():
    agent = FramesAgent(ScriptedLLM(responder=reply), TownRetriever(), config=AgentConfig(k=1, n=2, n_docs=1))
    return agent.graph


async def make_graph(config):
    return await asyncio.to_thread(build)  # off the server's loop, as its blocking-call detector demands
'''


def wait_until_up(url: str, proc: subprocess.Popen, log: Path, tries: int = 300) -> None:
    """Poll the server's /ok until it answers, the process exits, or the tries run out."""
    for _ in range(tries):
        try:
            if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    pytest.fail(f"langgraph dev did not start: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def langgraph_dev(tmp_path_factory):
    """`langgraph dev` on a free loopback port serving GRAPH_MODULE as graph "agent", offline; yields its URL."""
    folder = tmp_path_factory.mktemp("langgraph_dev")
    (folder / "graph_module.py").write_text(GRAPH_MODULE)
    (folder / "langgraph.json").write_text(json.dumps({"dependencies": ["."],
                                                       "graphs": {"agent": "./graph_module.py:make_graph",
                                                                  "frames_agent": f"{STUDIO}:make_graph"}}))
    port, log = free_port(), folder / "server.log"
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",
           "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_API_KEY": "", "LANGCHAIN_API_KEY": ""}
    cli = "from langgraph_cli.cli import cli; cli(prog_name='langgraph')"
    argv = [sys.executable, "-c", cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
            "--config", str(folder / "langgraph.json")]
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, proc, log)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_two_questions_on_one_langgraph_dev_thread_each_run_steps_1_to_n(langgraph_dev):
    client = get_sync_client(url=langgraph_dev)
    thread = client.threads.create()["thread_id"]
    runs = {town: client.runs.wait(thread, "agent", input={"question": f"Who is the mayor of {town}?"})
            for town in ("Brennick", "Oswy")}
    for town, mayor in (("Brennick", "Tomas Ferrante"), ("Oswy", "Ada Lindqvist")):
        out = runs[town]
        assert [s["step"] for s in out["steps"]] == [1, 2], out
        assert out["answer"] == mayor
        titles = {d["title"] for entry in out["context"] for d in entry["documents"]}
        assert titles == {town}
    # The thread keeps both questions and their answers as messages.
    messages = client.threads.get_state(thread)["values"]["messages"]
    assert [m["content"] for m in messages] == ["Who is the mayor of Brennick?", "Tomas Ferrante",
                                                "Who is the mayor of Oswy?", "Ada Lindqvist"]



@pytest.mark.parametrize(("graph", "configurable", "error", "message"), [
    ("agent", {}, "UnreachableError", "the model server at 127.0.0.1:9 could not be reached"),  # a node's model call
    ("frames_agent", {"k": 0}, "AgentError", "configurable.k: Input should be greater than or equal to 1"),
    ("frames_agent", {"index": "/etc"}, "AgentError",
     "index '/etc': a run may only choose an index the server's owner listed (listed: none besides its own)"),
])
def test_an_agent_error_reaches_the_run_in_the_projects_words(langgraph_dev, graph, configurable, error, message):
    client = get_sync_client(url=langgraph_dev)
    thread = client.threads.create()["thread_id"]
    out = client.runs.wait(thread, graph, input={"question": "Who is the mayor of Nowhere?"},
                           config={"configurable": configurable}, raise_error=False)
    assert out == {"__error__": {"error": error, "message": message}}
