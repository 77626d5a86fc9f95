"""A connection cannot hold the server: a request's headers and body must arrive within --request-timeout (slowloris
and silent clients are closed; a slow answer is not cut), and SIGTERM ends the server after at most
--shutdown-grace, letting a reply in flight finish within it; the access log escapes a path's control characters."""
from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading

import httpx
import pytest
from fastapi.testclient import TestClient

from frames_agent.agent.serve.app import create_app
from frames_agent.agent.serve.connections import access_logger
from frames_agent.agent.serve.guard import ServeSettings
from tests.agent.serve.conftest import ROOT, free_port, in_process, scripted_agent

pytestmark = pytest.mark.slow  # servers as processes

SHORT = ServeSettings(access_log=False, request_timeout=0.3)


def _closed(sock: socket.socket, drip: bytes = b"") -> bool:
    """Whether the server closes the connection, while the client sends drip one byte per tenth of a second."""
    sock.settimeout(0.1)
    for at in range(300):
        if at < len(drip):
            sock.sendall(drip[at:at + 1])
        try:
            while chunk := sock.recv(65536):
                assert not chunk.startswith(b"HTTP/1.1 200"), chunk
            return True
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True
    return False


@pytest.mark.parametrize("sent, drip", [
    (b"", b""),  # a silent client
    (b"POST /v1/ask HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"X-Slow: " + b"a" * 200),  # headers a byte at a time
    (b"POST /v1/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{",
     b""),  # a body that never comes
])
def test_slow_and_silent_connections_are_closed(sent, drip):
    with in_process(create_app(scripted_agent(), SHORT), SHORT) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(sent)
            assert _closed(sock, drip)
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok", "busy": 0, "capacity": SHORT.max_concurrency}


def test_an_answer_slower_than_the_request_timeout_is_not_cut():
    with in_process(create_app(scripted_agent(delay=0.4), SHORT), SHORT) as url:
        with httpx.Client(timeout=30) as client:  # one keep-alive connection: the second request has its own deadline
            for path in ("/v1/ask", "/v1/ask/stream"):
                reply = client.post(f"{url}{path}", json={"question": "Who is the mayor?"})
                assert reply.status_code == 200 and "Tomas Ferrante" in reply.text


def _serve(tmp_path, delay: float, grace: float) -> tuple[subprocess.Popen, str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"delay": delay, "rules": [
        ["Reply with one JSON", {"thought": "", "queries": ["mayor"], "tool_calls": [], "enough": False}],
        ["", "Answer: Tomas Ferrante"]]}))
    port = free_port()
    env = {**os.environ, "FRAMES_AGENT_TEST_SCRIPT": str(script), "FRAMES_AGENT_TOKEN": ""}
    proc = subprocess.Popen([sys.executable, "cli.py", "serve", "--port", str(port), "--tools", "crag", "--k", "1",
                             "--n", "1", "--shutdown-grace", str(grace), "--no-access-log"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    banner = proc.stderr.readline().decode()  # said once the port is bound
    assert "serving on" in banner, banner + proc.stderr.read().decode()
    return proc, f"http://127.0.0.1:{port}"


def _ask_in_background(url: str) -> tuple[threading.Thread, dict]:
    reply: dict = {}

    def ask() -> None:
        try:
            reply["response"] = httpx.post(f"{url}/v1/ask/stream", json={"question": "Who is the mayor?"}, timeout=120)
        except httpx.HTTPError as exc:
            reply["error"] = exc

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    with httpx.Client() as client:
        while client.get(f"{url}/healthz").json()["busy"] < 1:
            pass
    return thread, reply


def test_sigterm_cuts_a_reply_that_outlasts_the_grace(tmp_path):
    proc, url = _serve(tmp_path, delay=3600, grace=0.5)  # the model never answers in time
    try:
        thread, reply = _ask_in_background(url)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)  # ended: the grace, not the hour-long reply
        thread.join(timeout=60)
        assert "response" not in reply or "Tomas Ferrante" not in reply["response"].text
    finally:
        proc.kill()
        proc.wait()


def test_sigterm_lets_a_reply_in_flight_finish_within_the_grace(tmp_path):
    proc, url = _serve(tmp_path, delay=0.5, grace=60)
    try:
        thread, reply = _ask_in_background(url)
        proc.send_signal(signal.SIGTERM)
        thread.join(timeout=60)
        assert reply["response"].status_code == 200 and "Tomas Ferrante" in reply["response"].text
        proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.wait()


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_control_bytes_in_a_path_are_escaped():
    client = TestClient(create_app(scripted_agent(), ServeSettings()), base_url="http://127.0.0.1")
    lines, logger = Lines(), access_logger()
    logger.addHandler(lines)
    try:
        client.get("/v1/%1b%5b2J%0d%0a127.0.0.1%20%22GET%20/forged%22%20200%07")
    finally:
        logger.removeHandler(lines)
    line, = lines.lines
    assert '"GET /v1/\\x1b[2J\\x0d\\x0a127.0.0.1 "GET /forged" 200\\x07" 404' in line
    assert not any(ord(c) < 0x20 for c in line)
