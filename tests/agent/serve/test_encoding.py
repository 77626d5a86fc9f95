"""Text no encoder takes (a lone surrogate, what a JSON "\\ud800" escape decodes to) from a model or a client is
made valid where it enters, and a reply that fails while streaming still gives its slot back."""
from __future__ import annotations

import asyncio

import httpx

from frames_agent.agent.serve.app import create_app
from frames_agent.agent.serve.guard import Gate, GatedStream, ServeSettings
from tests.agent.serve.conftest import in_process
from tests.agent.serve.conftest import scripted_agent as agent


def test_lone_surrogates_from_the_model_never_hold_a_slot():
    settings = ServeSettings(access_log=False, max_concurrency=2)
    chat = {"messages": [{"role": "user", "content": "Who?"}], "stream": True}
    with in_process(create_app(agent("Answer: Tomas \ud800"), settings), settings) as url:
        for _ in range(settings.max_concurrency + 1):
            streamed = httpx.post(f"{url}/v1/ask/stream", json={"question": "Who?"}, timeout=30)
            assert streamed.status_code == 200 and '"answer": "Tomas \ufffd"' in streamed.text
            chunks = httpx.post(f"{url}/v1/chat/completions", json=chat, timeout=30)
            assert chunks.status_code == 200 and chunks.text.endswith("data: [DONE]\n\n")
        plain = httpx.post(f"{url}/v1/ask", json={"question": "Who?"}, timeout=30)
        assert plain.status_code == 200 and plain.json()["answer"] == "Tomas \ufffd"
        whole = httpx.post(f"{url}/v1/chat/completions", json={**chat, "stream": False}, timeout=30)
        assert whole.status_code == 200 and whole.json()["choices"][0]["message"]["content"].startswith("Tomas \ufffd")
        assert httpx.get(f"{url}/healthz").json()["busy"] == 0


def test_a_lone_surrogate_in_a_request_is_replaced():
    settings = ServeSettings(access_log=False)
    with in_process(create_app(agent("Answer: Tomas"), settings), settings) as url:
        reply = httpx.post(f"{url}/v1/ask", content=b'{"question": "Who\\ud800?"}',
                           headers={"Content-Type": "application/json"}, timeout=30)
        assert reply.status_code == 200 and reply.json()["question"] == "Who\ufffd?"
        garbage = httpx.post(f"{url}/v1/ask", content=b'{"question": ', headers={"Content-Type": "application/json"})
        assert (garbage.status_code, garbage.json()["detail"]) == (422, "body: not a JSON document")


def test_a_stream_failing_while_sending_gives_its_slot_back():
    gate = Gate(1, 1)
    gate.enter()

    async def lines():
        yield "event: one\n\n"
        yield 5  # not text: Starlette fails while encoding it, with the generator left suspended

    async def send(message):
        pass

    async def receive():
        await asyncio.Event().wait()

    try:
        asyncio.run(GatedStream(gate, lines())({"type": "http", "asgi": {"spec_version": "2.4"}}, receive, send))
    except AttributeError:
        pass
    assert gate.busy == 0
