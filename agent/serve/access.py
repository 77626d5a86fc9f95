"""One access-log line per HTTP request on stderr: client, method, path (never the query or headers), status,
seconds (to the end of the body, so a stream's whole length); control characters in the path are shown escaped."""
from __future__ import annotations

import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from frames_agent.core.terminal import plain

LOGGER = "frames_agent.serve.access"


def access_logger() -> logging.Logger:
    """The access logger: INFO lines to stderr, set up once, not passed to the root logger."""
    logger = logging.getLogger(LOGGER)
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
