"""The HTTP server as users meet it: a real process, called with httpx and with the openai client."""
from __future__ import annotations

import json
import re
import threading
import time

import httpx
import pytest
from openai import BadRequestError, OpenAI

from tests.agent.llm.fake_openai import FakeOpenAI, completion
from tests.agent.serve.conftest import TOKEN, serving

pytestmark = pytest.mark.slow  # nearly every test talks to a `cli.py serve` process

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
    assert [s["queries"] for s in result["steps"]] == [["Brennick mayor", QUESTION]]  # the question's own hits too
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
    assert events[1][1]["queries"] == ["Brennick mayor", QUESTION]
    assert events[-1][1]["result"]["answer"] == "Tomas Ferrante"


def test_openai_client_plain_and_streamed(server):
    client = OpenAI(base_url=f"{server}/v1", api_key=TOKEN, max_retries=0)
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": QUESTION}]
    reply = client.chat.completions.create(model="frames-agent", messages=messages)
    assert reply.choices[0].message.content.startswith("Tomas Ferrante\n\nSources:\n- ") and reply.usage.total_tokens >= 0
    assert reply.model_extra["sources"][0]["title"] in {"Brennick", "Tomas Ferrante"}
    reasoning, content, sources = [], [], None
    for chunk in client.chat.completions.create(model="frames-agent", messages=messages, stream=True):
        delta = chunk.choices[0].delta
        reasoning.append((delta.model_extra or {}).get("reasoning_content") or "")
        content.append(delta.content or "")
        sources = (chunk.model_extra or {}).get("sources") or sources
    assert "".join(content) == reply.choices[0].message.content and "searching: Brennick mayor" in "".join(reasoning)
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
    from frames_agent.cli import main

    monkeypatch.delenv("FRAMES_AGENT_TOKEN", raising=False)
    assert main(["serve", "--host", host, "--index", "nowhere"]) == 2


def test_chat_takes_the_last_user_message_and_content_parts(server):
    messages = [{"role": "user", "content": "an earlier question"}, {"role": "assistant", "content": "an answer"},
                {"role": "user", "content": [{"type": "text", "text": QUESTION}]}]
    reply = httpx.post(f"{server}/v1/chat/completions", json={"model": "m", "messages": messages, "temperature": 0},
                       headers=AUTH, timeout=30).json()
    assert reply["choices"][0]["message"]["content"].startswith("Tomas Ferrante\n") and reply["model"] == "m"
    empty = httpx.post(f"{server}/v1/chat/completions", json={"messages": [{"role": "system", "content": "x"}]},
                       headers=AUTH)
    assert empty.status_code == 422 and "user message" in empty.json()["detail"]


def test_openai_client_lists_and_retrieves_models(server):
    client = OpenAI(base_url=f"{server}/v1", api_key=TOKEN, max_retries=0)
    assert [m.id for m in client.models.list()] == ["frames-agent"]
    assert client.models.retrieve("frames-agent").owned_by == "frames-agent"
    assert httpx.get(f"{server}/v1/models").status_code == 401  # behind the token like every /v1 route
    assert httpx.get(f"{server}/v1/models/gpt-4o", headers=AUTH).status_code == 404


@pytest.mark.parametrize("extra, named", [
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}, "tools"),
    ({"n": 2}, "n=2"), ({"response_format": {"type": "json_object"}}, "response_format"),
    ({"logprobs": True}, "logprobs=true"), ({"tool_choice": "required"}, 'tool_choice="required"')])
def test_fields_the_server_cannot_honour_are_400_unsupported(server, extra, named):
    client = OpenAI(base_url=f"{server}/v1", api_key=TOKEN, max_retries=0)
    with pytest.raises(BadRequestError) as err:
        client.chat.completions.create(model="frames-agent", messages=[{"role": "user", "content": QUESTION}], **extra)
    assert err.value.status_code == 400 and err.value.body["detail"].startswith(f"unsupported: {named}")


def test_sampling_fields_are_accepted_and_ignored(server):
    client = OpenAI(base_url=f"{server}/v1", api_key=TOKEN, max_retries=0)
    reply = client.chat.completions.create(model="frames-agent", messages=[{"role": "user", "content": QUESTION}],
                                           temperature=0.7, top_p=0.9, seed=1, max_tokens=50, n=1, tool_choice="none",
                                           response_format={"type": "text"})
    assert reply.choices[0].message.content.startswith("Tomas Ferrante\n\nSources:")


def test_prompt_takes_planning_prompts_only(server):
    judge = httpx.post(f"{server}/v1/ask", json={"question": QUESTION, "prompt": "frames_judge"}, headers=AUTH)
    assert judge.status_code == 422
    assert judge.json()["detail"] == "prompt: choose a planning prompt: planning, vanilla"
    vanilla = httpx.post(f"{server}/v1/ask", json={"question": QUESTION, "prompt": "vanilla"}, headers=AUTH, timeout=30)
    assert vanilla.status_code == 200 and vanilla.json()["answer"] == "Tomas Ferrante"


def test_one_access_log_line_per_request(server):
    def lines() -> list[str]:
        return [line for line in server.log.read_text().splitlines() if '"GET /v1/models" 200' in line]

    before = len(lines())
    for _ in range(3):
        httpx.get(f"{server}/v1/models?secret=1", headers=AUTH)
    deadline = time.monotonic() + 5
    while len(lines()) < before + 3 and time.monotonic() < deadline:  # written as each response ends
        time.sleep(0.05)
    assert len(lines()) == before + 3 and "secret" not in server.log.read_text() and TOKEN not in server.log.read_text()
    assert re.search(r'127\.0\.0\.1 "GET /v1/models" 200 \d+\.\d{3}s$', lines()[-1])


@pytest.mark.slow
def test_the_llm_cache_is_off_unless_asked_for(tmp_path, tiny_index):
    calls = {}
    for flags in ([], ["--cache"]):
        fake = FakeOpenAI().always(200, completion("Answer: Tomas Ferrante"))
        argv = ["--model", "openai:x", "--base-url", fake.url, "--index", str(tiny_index), "--k", "1", "--n", "1",
                *flags]
        env = {"FRAMES_AGENT_TOKEN": "", "FRAMES_AGENT_CACHE": str(tmp_path / "cache")}
        try:
            with serving(argv, env, tmp_path / f"stderr{len(flags)}.log") as url:
                for _ in range(2):
                    assert httpx.post(f"{url}/v1/ask", json={"question": QUESTION}, timeout=30).status_code == 200
                assert ("LLM cache on" if flags else "LLM cache off") in url.log.read_text()
        finally:
            fake.close()
        calls[bool(flags)] = len(fake.requests)
    assert calls[False] == 4 and calls[True] == 2  # plan and answer per question; repeated from the cache only with --cache
