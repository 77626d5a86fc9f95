"""The HTTP server as users meet it: a real process, called with httpx and with the openai client."""
from __future__ import annotations

import json
import threading

import httpx
import pytest
from openai import OpenAI

from tests.agent.serve.conftest import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}
QUESTION = "Who is the mayor of Brennick?"


def test_health_is_open_and_questions_need_the_token(server):
    assert httpx.get(f"{server}/healthz").json() == {"status": "ok", "busy": 0, "capacity": 1}
    denied = httpx.post(f"{server}/v1/ask", json={"question": QUESTION})
    assert denied.status_code == 401 and denied.headers["www-authenticate"] == "Bearer"
    wrong = httpx.post(f"{server}/v1/ask", json={"question": QUESTION}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401


def test_ask_returns_the_agent_result(server):
    reply = httpx.post(f"{server}/v1/ask", json={"question": QUESTION}, headers=AUTH, timeout=30)
    assert reply.status_code == 200, reply.text
    result = reply.json()
    assert result["answer"] == "Tomas Ferrante" and result["question"] == QUESTION
    assert [s["queries"] for s in result["steps"]] == [["Brennick mayor"]]
    assert {d["title"] for d in result["documents"]} & {"Brennick", "Tomas Ferrante"}
    assert result["llm_calls"] == 2


def test_per_request_settings_and_their_bounds(server):
    two = httpx.post(f"{server}/v1/ask", json={"question": QUESTION, "n": 2, "k": 2}, headers=AUTH, timeout=30)
    assert len(two.json()["steps"]) == 2
    for body, field in [({"question": QUESTION, "k": 0}, "k"), ({"question": QUESTION, "prompt": "/etc/passwd"}, "prompt"),
                        ({"question": ""}, "question"), ({"question": QUESTION, "extra": 1}, "extra")]:
        bad = httpx.post(f"{server}/v1/ask", json=body, headers=AUTH)
        assert bad.status_code == 422 and bad.json()["detail"].startswith(field), bad.text


def test_body_size_limit(server):
    big = httpx.post(f"{server}/v1/ask", json={"question": "x" * 5000}, headers=AUTH)
    assert big.status_code == 413


def test_ask_stream_sends_one_event_per_agent_event(server):
    with httpx.stream("POST", f"{server}/v1/ask/stream", json={"question": QUESTION}, headers=AUTH, timeout=30) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        frames = [f for f in reply.read().decode().split("\n\n") if f.strip()]
    events = [(f.split("\n")[0].removeprefix("event: "), json.loads(f.split("\n")[1].removeprefix("data: "))) for f in frames]
    assert [kind for kind, _ in events] == ["step_started", "queries", "documents_added", "answer"]
    assert events[1][1]["queries"] == ["Brennick mayor"]
    assert events[-1][1]["result"]["answer"] == "Tomas Ferrante"


def test_openai_client_plain_and_streamed(server):
    client = OpenAI(base_url=f"{server}/v1", api_key=TOKEN, max_retries=0)
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": QUESTION}]
    reply = client.chat.completions.create(model="frames-agent", messages=messages)
    assert reply.choices[0].message.content == "Tomas Ferrante" and reply.usage.total_tokens >= 0
    assert reply.model_extra["sources"][0]["title"] in {"Brennick", "Tomas Ferrante"}
    reasoning, content, sources = [], [], None
    for chunk in client.chat.completions.create(model="frames-agent", messages=messages, stream=True):
        delta = chunk.choices[0].delta
        reasoning.append((delta.model_extra or {}).get("reasoning_content") or "")
        content.append(delta.content or "")
        sources = (chunk.model_extra or {}).get("sources") or sources
    assert "".join(content) == "Tomas Ferrante" and "searching: Brennick mayor" in "".join(reasoning)
    assert sources and sources[0]["id"]


def test_a_full_server_says_429_with_retry_after(server):
    # Capacity 1, and each question holds its slot for two scripted model calls of 0.2 s: of three questions sent
    # at the same moment, one is answered and the others are refused at once.
    start, replies = threading.Barrier(3), []

    def ask():
        start.wait()
        replies.append(httpx.post(f"{server}/v1/ask", json={"question": QUESTION}, headers=AUTH, timeout=30))

    workers = [threading.Thread(target=ask) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    codes = sorted(r.status_code for r in replies)
    assert codes[0] == 200 and codes[-1] == 429, codes
    refused = next(r for r in replies if r.status_code == 429)
    assert int(refused.headers["retry-after"]) > 0 and "busy" in refused.json()["detail"]
    assert httpx.get(f"{server}/healthz").json()["busy"] == 0  # every slot was given back


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5"])
def test_open_address_without_token_is_refused(host, monkeypatch):
    from cli import main

    monkeypatch.delenv("FRAMES_AGENT_TOKEN", raising=False)
    assert main(["serve", "--host", host, "--index", "nowhere"]) == 2


def test_chat_takes_the_last_user_message_and_content_parts(server):
    messages = [{"role": "user", "content": "an earlier question"}, {"role": "assistant", "content": "an answer"},
                {"role": "user", "content": [{"type": "text", "text": QUESTION}]}]
    reply = httpx.post(f"{server}/v1/chat/completions", json={"model": "m", "messages": messages, "temperature": 0},
                       headers=AUTH, timeout=30).json()
    assert reply["choices"][0]["message"]["content"] == "Tomas Ferrante" and reply["model"] == "m"
    empty = httpx.post(f"{server}/v1/chat/completions", json={"messages": [{"role": "system", "content": "x"}]},
                       headers=AUTH)
    assert empty.status_code == 422 and "user message" in empty.json()["detail"]
