"""A web page the user visits cannot use a token-less loopback server: a foreign Origin gets 403 (a "simple"
text/plain POST included), a rebound Host 421, a body that is not JSON 415; `--allow-origin` lets one origin in."""
from __future__ import annotations

import httpx
import pytest

from frames_agent.agent.serve.guard import BrowserGuard, host_name, served_hosts
from tests.agent.serve.conftest import serving, write_script

pytestmark = pytest.mark.slow  # a server process

QUESTION = {"question": "Who is the mayor of Brennick?"}


@pytest.fixture(scope="module")
def open_server(tmp_path_factory, tiny_index):
    folder = tmp_path_factory.mktemp("browser")
    script = write_script(folder / "script.json")
    argv = ["--index", str(tiny_index), "--k", "1", "--n", "1", "--n-docs", "2",
            "--allow-origin", "http://localhost:3000"]
    with serving(argv, {"FRAMES_AGENT_TEST_SCRIPT": str(script), "FRAMES_AGENT_TOKEN": ""}, folder / "log") as url:
        yield url


def test_a_cross_origin_simple_post_is_refused(open_server):
    # What a page's <form> or fetch(..., {mode: "no-cors"}) sends: no preflight, text/plain, the page's Origin.
    csrf = httpx.post(f"{open_server}/v1/ask", content=b'{"question": "x"}',
                      headers={"Origin": "https://evil.example", "Content-Type": "text/plain"})
    assert csrf.status_code == 403 and "cross-origin" in csrf.json()["detail"]
    assert "access-control-allow-origin" not in csrf.headers
    as_json = httpx.post(f"{open_server}/v1/ask", json=QUESTION, headers={"Origin": "https://evil.example"})
    assert as_json.status_code == 403


def test_a_rebound_host_name_is_refused(open_server):
    rebound = httpx.post(f"{open_server}/v1/ask", json=QUESTION, headers={"Host": "evil.example:8080"})
    assert rebound.status_code == 421 and "Host" in rebound.json()["detail"]
    assert httpx.get(f"{open_server}/healthz", headers={"Host": "attacker.test"}).status_code == 421
    assert httpx.get(f"{open_server}/healthz", headers={"Host": "localhost:1"}).status_code == 200


def test_only_json_bodies_are_read(open_server):
    plain = httpx.post(f"{open_server}/v1/ask", content=b'{"question": "x"}', headers={"Content-Type": "text/plain"})
    assert plain.status_code == 415 and plain.json()["detail"].endswith("application/json")
    deep = httpx.post(f"{open_server}/v1/ask", content=b"[" * 10_000 + b"]" * 10_000,
                      headers={"Content-Type": "application/json"})
    assert deep.status_code == 422 and "nested deeper" in deep.json()["detail"]


def test_an_allowed_origin_gets_answers_and_cors_headers(open_server):
    origin = {"Origin": "http://localhost:3000"}
    preflight = httpx.options(f"{open_server}/v1/ask", headers={**origin, "Access-Control-Request-Method": "POST",
                                                               "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "http://localhost:3000"
    reply = httpx.post(f"{open_server}/v1/ask", json=QUESTION, headers=origin, timeout=60)
    assert reply.status_code == 200 and reply.json()["answer"] == "Tomas Ferrante"
    assert reply.headers["access-control-allow-origin"] == "http://localhost:3000"


def test_the_names_a_bound_address_serves():
    assert served_hosts("127.0.0.1") >= {"localhost", "127.0.0.1", "::1"}
    assert served_hosts("0.0.0.0") is None and served_hosts("::", ["box.lan"]) >= {"box.lan", "localhost"}
    assert served_hosts("10.0.0.5") == {"10.0.0.5"}
    assert [host_name(h) for h in ("[::1]:8080", "LocalHost:80", "::1", "a.b")] == ["::1", "localhost", "::1", "a.b"]
    guard = BrowserGuard(None, frozenset({"localhost"}), ["*"])  # type: ignore[arg-type]
    scope = {"type": "http", "method": "POST", "headers": [(b"host", b"localhost"), (b"origin", b"https://x.y"),
                                                           (b"content-type", b"application/json; charset=utf-8")]}
    assert guard.check(scope) is None


def test_an_allowed_origin_as_written_by_hand_passes_the_guard_and_cors_alike():
    from fastapi.testclient import TestClient

    from frames_agent.agent.serve.app import create_app
    from frames_agent.agent.serve.guard import ServeSettings
    from tests.agent.serve.conftest import scripted_agent

    settings = ServeSettings(access_log=False, allow_origins=["HTTP://LocalHost:3000/"])
    client = TestClient(create_app(scripted_agent(), settings), base_url="http://127.0.0.1")
    origin = {"Origin": "http://localhost:3000"}  # as a browser sends it
    preflight = client.options("/v1/ask", headers={**origin, "Access-Control-Request-Method": "POST",
                                                   "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == origin["Origin"]
    posted = client.post("/v1/ask", json=QUESTION, headers=origin)
    assert posted.status_code == 200 and posted.headers["access-control-allow-origin"] == origin["Origin"]
