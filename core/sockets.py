"""A server's socket, bound before the server says it is serving: a bad or busy port is one line and exit 2
(`serve`, `crag-server` and the CRAG server child process all start through here)."""
from __future__ import annotations

import socket
import sys
from typing import Any

from frames_agent.core.errors import UsageError


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (closed by a with block); UsageError for a bad or busy port."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a TCP port (0-65535)")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise UsageError(f"cannot listen on {host}:{port} ({getattr(exc, 'strerror', None) or exc}); "
                         "check --host") from None
    sock = socket.socket(family, kind, proto)
    try:
        # As uvicorn does: a port left in TIME_WAIT by a previous run is reusable; one with a listener is not.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); pick another --port") from None
    return sock


def url_of(sock: socket.socket, host: str) -> str:
    """http://host:port of a bound socket (the port the OS picked for --port 0)."""
    return f"http://{host}:{sock.getsockname()[1]}"


def serve_on(app: Any, sock: socket.socket, banner: str, **options: Any) -> None:
    """Say banner (the socket is already bound: the server will answer), then serve app until interrupted."""
    import uvicorn

    print(banner, file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", **options)).run(sockets=[sock])
