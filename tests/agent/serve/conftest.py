"""A real `python cli.py ...` server process on a free loopback port, with a scripted model and the tiny index."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "test-token-4d1f"
PLAN = {"thought": "find the mayor", "queries": ["Brennick mayor"], "tool_calls": [], "enough": False}


def write_script(path: Path, delay: float = 0.0) -> Path:
    """A FRAMES_AGENT_TEST_SCRIPT file: plans search for the mayor, answers name him ("an earlier question" aside)."""
    rules = [["Reply with one JSON", PLAN], ["an earlier question", "Answer: the earlier question"],
             ["", "The mayor is Tomas Ferrante.\nAnswer: Tomas Ferrante"]]
    path.write_text(json.dumps({"delay": delay, "rules": rules}))
    return path


class Served(str):
    """A server's URL; `.log` is the file its stderr goes to (the banner, one access-log line per request)."""

    log: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(argv: list[str], env: dict[str, str], log: Path) -> Iterator[Served]:
    """`python cli.py serve ARGV` on a free loopback port until the block ends; yields its URL (stderr to log: a
    file, never a pipe nobody reads, which a long run's access log would fill until the server blocks)."""
    port = free_port()
    with open(log, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "cli.py", "serve", "--port", str(port), *argv], cwd=ROOT,
                                env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=stderr, text=True)
    url = Served(f"http://127.0.0.1:{port}")
    url.log = log
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"server did not start: {log.read_text()[-2000:]}")
        time.sleep(0.2)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_index):
    folder = tmp_path_factory.mktemp("serve")
    script = write_script(folder / "script.json", delay=0.2)
    argv = ["--index", str(tiny_index), "--k", "1", "--n", "1", "--n-docs", "2", "--max-concurrency", "1",
            "--max-body", "2048"]
    with serving(argv, {"FRAMES_AGENT_TEST_SCRIPT": str(script), "FRAMES_AGENT_TOKEN": TOKEN},
                 folder / "stderr.log") as url:
        yield url


def scripted_agent(answer: str = "Answer: Tomas Ferrante", delay: float = 0.0):
    """A FramesAgent on a one-document vector store whose scripted model plans one search, then answers `answer`
    (each call taking `delay` seconds): no Lucene, no model."""
    from langchain_core.documents import Document as LCDocument
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from frames_agent.agent import AgentConfig, FramesAgent
    from frames_agent.agent.llm.testing import ScriptedLLM

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([LCDocument(id="b", page_content="Brennick's mayor is Tomas Ferrante.",
                                    metadata={"title": "Brennick"})])
    plan = json.dumps({"thought": "", "queries": ["Brennick mayor"]})
    llm = ScriptedLLM(responder=lambda m: plan if "Reply with one JSON" in m[-1].content else answer, delay=delay)
    return FramesAgent(llm, store.as_retriever(), config=AgentConfig(k=1, n=1, n_docs=1))


@contextmanager
def in_process(app, settings) -> Iterator[str]:
    """app served by uvicorn, as `serve` runs it with settings' connection limits, in a thread on a free loopback
    port until the block ends; yields its URL."""
    import threading

    import uvicorn

    from frames_agent.agent.serve.connections import server_options

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning",
                                           **server_options(settings.request_timeout, settings.shutdown_grace)))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()
