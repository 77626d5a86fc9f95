"""MCP over stdio, every frame read within bounds and screened: one over the bounds, not JSON or not text, or a
request of the wrong shape gets a JSON-RPC error with its id (the SDK would drop it, and the client wait forever)."""
from __future__ import annotations

import functools
import itertools
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO, cast

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from frames_agent.core.bounded import DepthGuard, JSONOutOfBounds, check_json
from frames_agent.core.terminal import valid_data

# Far above any request this server takes, so an oversized tool argument still gets the limits' own message.
MAX_FRAME_BYTES = 4 * 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
# A frame has one id; a not-JSON frame with a million nested "id" decoys is answered with id null, not a million looks.
MAX_ID_MEMBERS = 1000
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")')


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def top_level_id(frame: bytes) -> Any:
    """The id of a frame too deep to parse: the outer object's first `"id"` among the first MAX_ID_MEMBERS (else None)."""
    guard, read = DepthGuard(max_depth=MAX_FRAME_BYTES), 0
    for found in itertools.islice(_ID.finditer(frame[:MAX_FRAME_BYTES]), MAX_ID_MEMBERS):
        guard.feed(frame[read:found.start()])  # one pass over the frame, however many members it has
        read = found.start()
        if guard.depth == 1 and not guard._in_string:
            try:
                return json.loads(found.group(1))
            except ValueError:
                return None
    return None


def _shape_error(message: Any) -> dict[str, Any] | None:
    """The error reply for a parsed frame the SDK cannot read; None for a notification or a response (no reply)."""
    if not isinstance(message, dict):
        return error_reply(None, INVALID_REQUEST, "Invalid Request: a frame must be one JSON object")
    if "method" not in message:
        return None if "result" in message or "error" in message else error_reply(
            message.get("id") if _valid_id(message.get("id")) else None, INVALID_REQUEST, "Invalid Request")
    if "id" not in message:
        return None  # a notification is never answered, even when malformed
    request_id = message["id"] if _valid_id(message["id"]) else None
    if not isinstance(message.get("method"), str):
        return error_reply(request_id, INVALID_REQUEST, "Invalid Request: method must be a string")
    if "params" in message and not isinstance(message["params"], dict):
        return error_reply(request_id, INVALID_PARAMS, "Invalid params: params must be an object")
    return error_reply(request_id, INVALID_REQUEST, "Invalid Request")


def _sdk_accepts(message: Any) -> bool:
    try:
        mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except Exception:  # noqa: BLE001 - any refusal means the SDK would drop the frame unanswered
        return False
    return True


def screen(frame: bytes) -> tuple[bytes | None, dict[str, Any] | None]:
    """(the frame to hand to the SDK or None, the error reply to send or None) for one line from the client."""
    if not frame.strip():
        return None, None
    try:
        message = json.loads(check_json(frame, max_bytes=MAX_FRAME_BYTES))
    except JSONOutOfBounds as exc:
        return None, error_reply(top_level_id(frame), INVALID_REQUEST, f"Invalid Request: {exc}")
    except (ValueError, RecursionError):  # not JSON, or a number past Python's 4,300 digits
        return None, error_reply(top_level_id(frame), PARSE_ERROR, "Parse error: the frame is not JSON")
    if valid_data(message) != message:  # the SDK's parser refuses the escape and drops the frame unanswered
        request_id = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
        return None, error_reply(request_id, INVALID_REQUEST, "Invalid Request: a lone surrogate escape "
                                 "(\\ud800-\\udfff) is not text")
    if isinstance(message, dict) and "method" in message and "id" in message and not _valid_id(message["id"]):
        # true, 9.5 or null: the SDK would coerce or drop it, and the client could not match any answer
        return None, error_reply(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    if _sdk_accepts(message):
        return frame, None
    return None, _shape_error(message)


class _Wire:
    """The protocol's output: whole lines, one writer at a time (the SDK's replies and our error replies)."""

    def __init__(self, file: BinaryIO) -> None:
        self.file, self.lock = file, anyio.Lock()

    async def write(self, text: str) -> None:
        async with self.lock:
            await anyio.to_thread.run_sync(self.file.write, text.encode("utf-8"))

    async def flush(self) -> None:
        async with self.lock:
            await anyio.to_thread.run_sync(self.file.flush)

    async def reply(self, message: dict[str, Any]) -> None:
        await self.write(json.dumps(message, separators=(",", ":")) + "\n")
        await self.flush()


async def _frames(file: BinaryIO, wire: _Wire) -> AsyncIterator[str]:
    """The input the SDK reads: screened lines only; bad ones are answered on the wire."""
    read = functools.partial(anyio.to_thread.run_sync, file.readline, MAX_FRAME_BYTES + 1, abandon_on_cancel=True)
    while line := await read():
        if len(line) > MAX_FRAME_BYTES and not line.endswith(b"\n"):
            while (rest := await read()) and not rest.endswith(b"\n"):
                pass  # the rest of the oversized line, read and dropped in bounded pieces
            await wire.reply(error_reply(None, INVALID_REQUEST,
                                         f"Invalid Request: a frame over {MAX_FRAME_BYTES:,} bytes"))
            continue
        passed, reply = screen(line)
        if reply is not None:
            await wire.reply(reply)
        if passed is not None:
            yield passed.decode("utf-8", "replace")


async def serve_stdio(build: Callable[[], MCPServer]) -> None:
    """Build the MCP server, then serve it on this process's stdin and stdout until the client hangs up."""
    # Private descriptors for the wire, fd 0 and 1 on /dev/null and stderr (as the SDK's): nothing else writes to it.
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    with os.fdopen(wire_in, "rb") as reader, os.fdopen(wire_out, "wb") as writer:
        try:
            server = build()
            print("frames-agent MCP server ready on stdio", file=sys.stderr, flush=True)
            wire = _Wire(writer)
            async with stdio_server(stdin=cast(Any, _frames(reader, wire)), stdout=cast(Any, wire)) as (read, write):
                lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, on our streams
                await lowlevel.run(read, write, lowlevel.create_initialization_options())
        finally:
            sys.stdout.flush()
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
