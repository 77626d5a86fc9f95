"""One set of request limits on every HTTP entry point, and one status per failure: 413 body too large, 422 invalid,
429 busy, 502 the model server failed, 504 past the question deadline; served by a real process whose model
server is a hostile fake."""
from __future__ import annotations

import threading
import time

import httpx
import pytest

from frames_agent.agent.limits import MAX_BODY_BYTES, MAX_QUESTION_CHARS
from tests.agent.llm.fake_openai import HOSTILE, FakeOpenAI, completion
from tests.agent.serve.conftest import serving

pytestmark = pytest.mark.slow  # a server process

DEADLINE = 3.0
ENTRY_POINTS = {
    "/v1/ask": lambda question: {"question": question},
    "/v1/ask/stream": lambda question: {"question": question},
    "/v1/chat/completions": lambda question: {"model": "m", "messages": [{"role": "user", "content": question}]},
}
TOO_LONG = f"question: at most {MAX_QUESTION_CHARS} characters, got {MAX_QUESTION_CHARS + 1:,}"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    fake = FakeOpenAI()
    argv = ["--model", "openai:x", "--base-url", fake.url, "--tools", "crag", "--k", "1", "--n", "1",
            "--question-timeout", str(DEADLINE), "--timeout", "30", "--max-concurrency", "2"]
    try:
        with serving(argv, {"FRAMES_AGENT_TOKEN": ""}, tmp_path_factory.mktemp("hostile") / "stderr.log") as url:
            yield url, fake
    finally:
        fake.close()


@pytest.mark.parametrize("path", list(ENTRY_POINTS))
def test_the_same_limits_on_every_entry_point(hostile, path):
    url, _ = hostile
    body = ENTRY_POINTS[path]
    long = httpx.post(url + path, json=body("x" * (MAX_QUESTION_CHARS + 1)))
    assert (long.status_code, long.json()["detail"]) == (422, TOO_LONG)
    large = httpx.post(url + path, json=body("x" * MAX_BODY_BYTES))
    assert (large.status_code, large.json()["detail"]) == (413, f"request body over {MAX_BODY_BYTES} bytes")
    empty = httpx.post(url + path, json=body("  "))
    assert empty.status_code == 422


@pytest.mark.parametrize("case, words", [("empty choices", "no choices"), ("html", "not JSON"),
                                         ("500", "server error"), ("refusal", "refused"),
                                         ("deep", "nested deeper than 64 levels")])
def test_a_failing_model_server_is_502_with_one_line(hostile, case, words):
    url, fake = hostile
    fake.always(*HOSTILE[case])
    try:
        for path in ("/v1/ask", "/v1/chat/completions"):
            reply = httpx.post(url + path, json=ENTRY_POINTS[path]("Who is the mayor of Brennick?"), timeout=30)
            assert reply.status_code == 502 and words in reply.json()["detail"], reply.text
            assert "\n" not in reply.json()["detail"] and "Traceback" not in reply.text
        streamed = httpx.post(url + "/v1/ask/stream", json={"question": "Who?"}, timeout=30).text
        last = streamed.strip().split("\n\n")[-1]  # headers were sent: the error is the last event
        assert last.startswith("event: error") and words in last, streamed
    finally:
        fake.always(200, completion("Answer: Tomas Ferrante"))


def test_busy_is_429_and_past_the_deadline_is_504(hostile):
    url, fake = hostile
    fake.always(*HOSTILE["hang"])
    replies: dict[str, httpx.Response] = {}

    def ask(path: str) -> None:
        replies[path] = httpx.post(url + path, json=ENTRY_POINTS[path]("Who?"), timeout=30)

    workers = [threading.Thread(target=ask, args=(path,)) for path in ("/v1/ask", "/v1/chat/completions")]
    started = time.monotonic()
    try:
        for worker in workers:
            worker.start()
        while httpx.get(url + "/healthz").json()["busy"] < 2:
            time.sleep(0.05)
        for path, body in ENTRY_POINTS.items():  # both slots are taken by questions the model never answers
            refused = httpx.post(url + path, json=body("Who?"))
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0, refused.text
        for worker in workers:
            worker.join()
    finally:
        fake.always(200, completion("Answer: Tomas Ferrante"))
    assert time.monotonic() - started < DEADLINE + 3
    for reply in replies.values():
        assert reply.status_code == 504 and "question deadline" in reply.json()["detail"], reply.text
    assert httpx.get(url + "/healthz").json()["busy"] == 0
