"""A loopback OpenAI-compatible server for tests: scripted replies, and every way a hostile model server misbehaves.

`FakeOpenAI().add(status, body)` queues one reply; `always(...)` sets the reply once the queue is empty;
`HOSTILE[name]` is a ready reply for each misbehaviour (connection refused is `refused_url()`: nothing listens);
`FakeOpenAI(model=True)` answers like a model instead (LangChain's standard tests): it streams when asked, calls the
tool it is given (arguments drawn from the tool's schema), and writes JSON of a response_format's schema.
"""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANG = float("inf")  # as a delay: the reply never comes (until the server closes)
HTML = b"<!doctype html><html><body>Welcome to nginx!</body></html>"


def completion(text: str | None, prompt_tokens: int = 11, completion_tokens: int = 7, finish: str = "stop") -> dict:
    """A chat.completion body."""
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def sse_chunks(pieces: list[str]) -> list[dict]:
    """chat.completion.chunk bodies for a streamed reply, usage last."""
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
               "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    chunks.append({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [],
                   "usage": {"prompt_tokens": 5, "completion_tokens": len(pieces), "total_tokens": 5 + len(pieces)}})
    return chunks


@dataclass(frozen=True)
class Raw:
    """A body sent as these bytes; with drip, one byte every `drip` seconds (at most `drip_for` seconds, then the
    rest at once), the status line and headers included."""

    data: bytes
    content_type: str = "application/json"
    drip: float = 0.0
    drip_for: float = 30.0


DEEP = 100_000


def _without(field: str) -> dict:
    body = completion("")
    del body["choices"][0][field]
    return body


# name -> (status, body, headers, delay): a reply no well-behaved server sends.
HOSTILE: dict[str, tuple[int, object, dict, float]] = {
    "empty choices": (200, {**completion(""), "choices": []}, {}, 0.0),
    "no message": (200, _without("message"), {}, 0.0),
    "null content": (200, completion(None), {}, 0.0),
    "refusal": (200, {**completion(None), "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": None, "refusal": "I cannot help with that."}}]}, {}, 0.0),
    "length": (200, completion(None, finish="length"), {}, 0.0),
    "truncated json": (200, b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess',
                       {"Content-Type": "application/json"}, 0.0),
    "html": (200, HTML, {}, 0.0),
    "500": (500, {"error": {"message": "boom"}}, {"retry-after-ms": "1"}, 0.0),
    "hang": (200, completion("too late"), {}, HANG),
    # Megabytes of text ending in an answer line: parsers must stay linear, answers bounded.
    # Bodies over the bounds: 100,000-deep JSON (as a body, as a streamed event), and one byte a second.
    "deep": (200, Raw(b"[" * DEEP + b"]" * DEEP), {}, 0.0),
    "deep object": (200, Raw(json.dumps(completion("x"))[:-1].encode() + b', "extra": ' + b'{"a":' * DEEP
                             + b"1" + b"}" * DEEP + b"}"), {}, 0.0),
    "deep stream": (200, Raw(b"data: " + b"[" * DEEP + b"]" * DEEP + b"\n\n", "text/event-stream"), {}, 0.0),
    "drip": (200, Raw(json.dumps(completion("slow")).encode(), drip=1.0), {}, 0.0),
    "bad tool arguments": (200, {**completion(None), "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "Reply", "arguments": "{not json at all"}}]}}]}, {}, 0.0),
    "text usage": (200, {**completion("fine"), "usage": {"prompt_tokens": "eleven", "completion_tokens": "seven",
                                                          "total_tokens": "many"}}, {}, 0.0),
    "huge": (200, completion("(" * 200_000 + " 1/999999^64 = " * 50_000 + "\nAnswer: " + "9" * 100_000), {}, 0.0),
}


def refused_url() -> str:
    """A /v1 URL on a loopback port nothing listens on (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def sample(schema: dict, defs: dict | None = None, word: str = "three") -> object:
    """A value that fits a JSON schema (required properties only; strings are `word`): what a model calling a tool
    would write."""
    defs = schema.get("$defs", {}) if defs is None else defs
    if "$ref" in schema:
        return sample(defs[schema["$ref"].split("/")[-1]], defs, word)
    if "enum" in schema:
        return schema["enum"][0]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return sample(next((o for o in options if o.get("type") != "null"), options[0]), defs, word)
    kind = schema.get("type", "object")
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {name: sample(props[name], defs, word) for name in schema.get("required", list(props)) if name in props}
    if kind == "array":
        return [sample(schema.get("items", {}), defs, word)]
    return {"integer": 3, "number": 3.0, "boolean": True, "null": None}.get(kind, word)


def model_reply(request: dict) -> dict:
    """The assistant message a cooperative model sends for a chat.completions request."""
    messages = request.get("messages") or []
    tools, choice = request.get("tools") or [], request.get("tool_choice")
    named = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    answered = bool(messages) and messages[-1].get("role") == "tool"
    # A name the user quoted is what a model copies into a string argument.
    quoted = re.search(r"'([^']+)'", str(messages[-1].get("content") if messages else ""))
    word = quoted.group(1) if quoted else "three"
    if tools and choice != "none" and (not answered or named):
        tool = next((t for t in tools if t["function"]["name"] == named), tools[0])["function"]
        args = json.dumps(sample(tool.get("parameters") or {}, word=word), ensure_ascii=False)
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{len(messages)}", "type": "function", "function": {"name": tool["name"], "arguments": args}}]}
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return {"role": "assistant", "content": json.dumps(sample(fmt["json_schema"].get("schema") or {}, word=word))}
    if fmt.get("type") == "json_object":
        return {"role": "assistant", "content": json.dumps({"setup": "three", "punchline": "three"})}
    return {"role": "assistant", "content": "Hello! The answer is three."}


def model_response(request: dict) -> object:
    """model_reply as a chat.completion body, or as stream chunks (usage last) when the request streams."""
    message, model = model_reply(request), request.get("model", "fake")
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    if not request.get("stream"):
        return {**completion(message["content"], finish=finish), "model": model,
                "choices": [{"index": 0, "finish_reason": finish, "message": message}]}
    head = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model}
    if message.get("tool_calls"):
        deltas = [{"role": "assistant", "tool_calls": [{"index": 0, **message["tool_calls"][0]}]}]
    else:
        text = message["content"]
        deltas = [{"role": "assistant", "content": text[:len(text) // 2]}, {"content": text[len(text) // 2:]}]
    chunks = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if (request.get("stream_options") or {}).get("include_usage"):
        chunks.append({**head, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})
    return chunks


def as_stream(body: object, request: dict) -> object:
    """A scripted chat.completion as the stream chunks a server sends when the request streams (its text in one
    delta, then the finish, then its usage as written); any other body as it is."""
    choices = body.get("choices") if isinstance(body, dict) and body.get("object") == "chat.completion" else None
    if not request.get("stream") or not isinstance(choices, list) or len(choices) != 1:
        return body
    head = {"id": body.get("id", "c"), "object": "chat.completion.chunk", "created": 0, "model": body.get("model")}
    message, finish = choices[0].get("message") or {}, choices[0].get("finish_reason")
    return [{**head, "choices": [{"index": 0, "delta": message, "finish_reason": None}]},
            {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            *([{**head, "choices": [], "usage": body["usage"]}] if "usage" in body else [])]


class FakeOpenAI:
    """A loopback OpenAI-compatible server that plays scripted responses and records requests (a scripted
    chat.completion is streamed when the request asks for a stream, as a real server does)."""

    def __init__(self, keep_alive: bool = False, model: bool = False) -> None:
        self.script: list[tuple] = []  # (status, body, headers, delay)
        self.default: tuple = (200, completion("ok"), {}, 0.0)
        self.model = model  # answer like a model once the script is empty
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.times: list[float] = []  # time.monotonic() of each request's arrival
        self.closing = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.1 keeps connections open as llama.cpp and hosted APIs do, so clients pool them.
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.times.append(time.monotonic())
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if not fake.script and fake.model:
                    self._reply(200, model_response(body), {})
                    return
                status, payload, headers, delay = fake.script.pop(0) if fake.script else fake.default
                fake.closing.wait(None if delay == HANG else delay)  # close() ends a hang
                try:
                    self._reply(status, as_stream(payload, body), headers)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _reply(self, status: int, payload: object, headers: dict) -> None:
                if isinstance(payload, Raw):
                    self._raw(status, payload, headers)
                    return
                streamed, page = isinstance(payload, list), isinstance(payload, bytes)
                self.send_response(status)
                self.send_header("Content-Type", "text/html" if page else
                                 "text/event-stream" if streamed else "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                data = payload if page else ("".join(f"data: {json.dumps(c)}\n\n" for c in payload) + "data: [DONE]\n\n"
                                             if streamed else json.dumps(payload)).encode()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _raw(self, status: int, raw: Raw, headers: dict) -> None:
                head = [f"HTTP/1.0 {status} OK", f"Content-Type: {raw.content_type}",
                        f"Content-Length: {len(raw.data)}", *(f"{k}: {v}" for k, v in headers.items())]
                data = ("\r\n".join(head) + "\r\n\r\n").encode() + raw.data
                if not raw.drip:
                    self.wfile.write(data)
                    return
                started = time.monotonic()
                for at in range(len(data)):
                    if fake.closing.is_set() or time.monotonic() - started > raw.drip_for:
                        self.wfile.write(data[at:])
                        return
                    self.wfile.write(data[at:at + 1])
                    self.wfile.flush()
                    fake.closing.wait(raw.drip)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def add(self, status: int, body: object, headers: dict | None = None, delay: float = 0.0) -> FakeOpenAI:
        """Queue one response."""
        self.script.append((status, body, headers or {}, delay))
        return self

    def always(self, status: int, body: object, headers: dict | None = None, delay: float = 0.0) -> FakeOpenAI:
        """The response once the queue is empty."""
        self.default = (status, body, headers or {}, delay)
        return self

    def close(self) -> None:
        """Stop serving (a hanging reply is released)."""
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()
