"""The server's connections: each request must arrive within request_timeout (slowloris, a silent client), replies in
flight get shutdown_grace after SIGTERM, and each request ends in one access-log line (never its query or headers)."""
from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from frames_agent.core.terminal import plain


class _RequestDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline for reading each request (uvicorn times only idle keep-alive)."""

    request_timeout = 30.0
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        self._arm()  # first: the next request, even one already pipelined, has its own deadline
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(self.request_timeout, self._expire)

    def _expire(self) -> None:
        self._deadline = None
        # IDLE: the headers are not all in (or no request came); SEND_BODY: the body is not all in.
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            self.transport.close()


def server_options(request_timeout: float, shutdown_grace: float) -> dict[str, Any]:
    """uvicorn.Config options for these limits."""
    protocol = type("RequestDeadlineProtocol", (_RequestDeadline,), {"request_timeout": request_timeout})
    return {"http": protocol, "timeout_graceful_shutdown": shutdown_grace}


def access_logger() -> logging.Logger:
    """The access logger: INFO lines to stderr, set up once, not passed to the root logger."""
    logger = logging.getLogger("frames_agent.serve.access")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%dT%H:%M:%S"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return logger


class AccessLog:
    """ASGI middleware writing `client "METHOD /path" status seconds` when each HTTP response ends."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app, self.log = app, access_logger()

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), [500]  # 500 unless a response starts

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            client = (scope.get("client") or ("-",))[0]
            # The path arrives percent-decoded: %1b or %0a would otherwise write raw control bytes to the log.
            self.log.info('%s "%s %s" %d %.3fs', client, scope["method"], plain(scope["path"], lines=False), status[0],
                          time.perf_counter() - started)
