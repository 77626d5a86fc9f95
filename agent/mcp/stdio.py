"""MCP over stdio with every frame screened (agent.mcp.frames) and read within bounds: a line is read at most
MAX_FRAME_BYTES at a time, so a client that never sends a newline costs that, not all memory."""
from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from frames_agent.agent.mcp.frames import INVALID_REQUEST, MAX_FRAME_BYTES, error_reply, screen


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


def _sdk_accepts(message: Any) -> bool:
    import mcp_types

    try:
        mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except Exception:  # noqa: BLE001 - any refusal means the SDK would drop the frame unanswered
        return False
    return True


class _Frames:
    """The input the SDK reads: screened lines only; bad ones are answered on the wire."""

    def __init__(self, file: BinaryIO, wire: _Wire) -> None:
        self.file, self.wire = file, wire

    async def _line(self) -> bytes:
        return await anyio.to_thread.run_sync(self.file.readline, MAX_FRAME_BYTES + 1, abandon_on_cancel=True)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._frames()

    async def _frames(self) -> AsyncIterator[str]:
        while line := await self._line():
            if len(line) > MAX_FRAME_BYTES and not line.endswith(b"\n"):
                while (rest := await self._line()) and not rest.endswith(b"\n"):
                    pass  # the rest of the oversized line, read and dropped in bounded pieces
                await self.wire.reply(error_reply(None, INVALID_REQUEST,
                                                  f"Invalid Request: a frame over {MAX_FRAME_BYTES:,} bytes"))
                continue
            passed, reply = screen(line, _sdk_accepts)
            if reply is not None:
                await self.wire.reply(reply)
            if passed is not None:
                yield passed.decode("utf-8", "replace")


async def serve_stdio(server: MCPServer) -> None:
    """Serve the MCP server on this process's stdin and stdout until the client hangs up."""
    # The wire gets private descriptors; fd 0 and 1 point at /dev/null and stderr while serving, as the SDK's own
    # stdio transport does, so a handler or a child process cannot read or corrupt the protocol.
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    with os.fdopen(wire_in, "rb") as reader, os.fdopen(wire_out, "wb") as writer:
        try:
            wire = _Wire(writer)
            async with stdio_server(stdin=cast(Any, _Frames(reader, wire)), stdout=cast(Any, wire)) as (read, write):
                lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, on our streams
                await lowlevel.run(read, write, lowlevel.create_initialization_options())
        finally:
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
