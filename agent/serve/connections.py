"""How long a connection may hold the server: each request's headers and body must arrive within request_timeout of
the connection opening (or of the previous reply ending), else the connection is closed (slowloris, a silent
client); on SIGTERM replies in flight get shutdown_grace seconds, then are cut off (a client that stops reading a
stream cannot keep the server alive)."""
from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


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
