"""A malformed JSON-RPC frame gets a JSON-RPC error with its id (the SDK alone drops it, and the client waits
forever); random and adversarial frames never raise out of the screen."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frames_agent.agent.mcp.stdio import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    screen,
    top_level_id,
)
from tests.agent.serve.conftest import ROOT, write_script

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
DEEP = (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_wikipedia","arguments":{"query":'
        + b"[" * 50_000 + b"]" * 50_000 + b"}}}")


def _reply(proc: subprocess.Popen, frame: bytes) -> dict:
    proc.stdin.write(frame + b"\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    assert ready, f"no answer to {frame[:80]!r}"
    return json.loads(proc.stdout.readline())


@pytest.mark.slow
def test_every_malformed_request_is_answered_and_the_server_goes_on(tmp_path, tiny_index):
    env = {**os.environ, "FRAMES_AGENT_TEST_SCRIPT": str(write_script(tmp_path / "script.json"))}
    proc = subprocess.Popen([sys.executable, "cli.py", "mcp", "--index", str(tiny_index)], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert _reply(proc, json.dumps(INIT).encode())["id"] == 1
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        listed = _reply(proc, b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":[1,2]}')
        assert listed["id"] == 2 and listed["error"]["code"] == INVALID_PARAMS
        deep = _reply(proc, DEEP)
        assert deep["id"] == 3 and deep["error"]["code"] == INVALID_REQUEST and "nested" in deep["error"]["message"]
        lone = _reply(proc, b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_wikipedia",'
                            b'"arguments":{"query":"Brennick \\ud800"}}}')
        assert lone["id"] == 5 and lone["error"]["code"] == INVALID_REQUEST and "surrogate" in lone["error"]["message"]
        garbage = _reply(proc, b"{not json")
        assert garbage["id"] is None and garbage["error"]["code"] == PARSE_ERROR
        tools = _reply(proc, b'{"jsonrpc":"2.0","id":4,"method":"tools/list"}')
        assert tools["id"] == 4 and {t["name"] for t in tools["result"]["tools"]} == {"frames_research",
                                                                                     "search_wikipedia"}
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def test_ids_that_no_answer_could_match_and_numbers_past_the_digit_limit():
    for bad_id in ("true", "9.5", "null"):
        passed, reply = screen(f'{{"jsonrpc":"2.0","id":{bad_id},"method":"tools/list"}}'.encode())
        assert passed is None and reply["id"] is None and "id must be" in reply["error"]["message"]
    huge = b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{"k":' + b"9" * 5000 + b"}}}"
    passed, reply = screen(huge)
    assert passed is None and reply["id"] == 8 and reply["error"]["code"] == PARSE_ERROR


def test_the_id_of_a_frame_too_deep_to_parse_is_the_outer_one():
    assert top_level_id(b'{"params":{"id":9,"x":' + b"[" * 100 + b"]" * 100 + b'},"id":"r-1"}') == "r-1"
    assert top_level_id(b'{"id": 7, "params": "[[[["}') == 7 and top_level_id(b"[[[[") is None


def test_a_lone_surrogate_escape_is_answered_not_dropped():
    frame = b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"arguments":{"question":"\\udc00"}}}'
    passed, reply = screen(frame)
    assert passed is None and reply["id"] == "q" and reply["error"]["code"] == INVALID_REQUEST
    assert screen(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\ud83d\\ude00"}}')[1] is None


def _not_json(size: int, member: bytes) -> bytes:
    """A frame that is not JSON, of about size bytes: an array of one-member objects, then garbage."""
    unit = b"{" + member + b":1},"
    return b'{"a":[' + unit * (size // len(unit)) + b"!"


def _seconds(frame: bytes) -> float:
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        screen(frame)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.slow
def test_a_frame_full_of_ids_costs_what_a_plain_frame_of_its_size_costs():
    # 4 MiB, where a quadratic screen would cost thousands of times a linear one; a small frame is timer noise.
    hostile, plain = _not_json(4 << 20, b'"id"'), _not_json(4 << 20, b'"ix"')  # every "id" nested, none the frame's own
    assert screen(hostile)[1]["error"]["code"] == PARSE_ERROR
    assert _seconds(hostile) < 4 * _seconds(plain)


frames = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                      max_leaves=20)
requests = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": st.integers() | st.text(max_size=5),
                                  "method": st.sampled_from(["tools/call", "tools/list", "initialize", "x"])},
                                 optional={"params": frames})


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=300), frames.map(lambda v: json.dumps(v).encode()),
                 requests.map(lambda v: json.dumps(v).encode()),
                 st.integers(1, 3000).map(lambda n: b'{"id":1,"method":"a","params":' + b"[" * n)))
def test_no_frame_raises_out_of_the_screen(frame):
    passed, reply = screen(frame)
    assert passed is None or reply is None
    if reply is not None:
        json.dumps(reply)
        assert set(reply) == {"jsonrpc", "id", "error"}
