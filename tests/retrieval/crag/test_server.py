"""The compatible CRAG server refuses oversized bodies, and one slow request does not stall the others."""
from __future__ import annotations

import threading
import time

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from frames_agent import cli
from frames_agent.retrieval.crag.server import MAX_BODY_BYTES, create_app, free_port
from tests.shared_data import CRAG_DATA, RECORDINGS, require

ROUTE = "/finance/get_company_name"


@pytest.fixture(scope="module")
def app():
    require(RECORDINGS)
    return create_app(CRAG_DATA)


def test_a_body_over_the_limit_is_413_and_one_under_it_is_answered(app):
    client = TestClient(app)
    big = client.post(ROUTE, json={"query": "x" * (MAX_BODY_BYTES + 1)})
    assert big.status_code == 413 and "over" in big.json()["detail"]
    assert client.post(ROUTE, json={"query": "apple"}).status_code == 200


def test_a_streamed_body_of_unknown_size_is_411(app):
    client = TestClient(app)
    reply = client.post(ROUTE, content=iter([b'{"query": ', b'"apple"}']), headers={"content-type": "application/json"})
    assert reply.status_code == 411


@pytest.mark.parametrize("port", [99999, -1])
def test_a_port_out_of_range_is_one_line(port, capsys):
    assert cli.main(["crag-server", f"--port={port}"]) == 2
    assert capsys.readouterr().err == f"error: --port {port} is not a TCP port (0-65535)\n"


def test_one_slow_request_does_not_stall_the_rest(app):
    release, entered = threading.Event(), threading.Event()
    companies = app.state.backend.companies
    real_search = companies.search

    def slow_search(query: str):
        if query == "slow":
            entered.set()
            release.wait(30)
        return real_search(query)

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    companies.search = slow_search
    thread.start()
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        slow = threading.Thread(target=lambda: httpx.post(url + ROUTE, json={"query": "slow"}, timeout=40))
        slow.start()
        assert entered.wait(10)
        started = time.monotonic()
        fast = httpx.post(url + ROUTE, json={"query": "apple"}, timeout=10)
        assert fast.status_code == 200 and time.monotonic() - started < 5
        release.set()
        slow.join(10)
    finally:
        release.set()
        companies.search = real_search
        server.should_exit = True
        thread.join(10)
