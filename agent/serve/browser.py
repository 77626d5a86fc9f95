"""What a web page the user visits may do with the server: nothing, unless the operator allows its origin.

Without a token a loopback server answers anyone who reaches it, and a browser reaches it on behalf of any page: a
"simple" cross-origin POST (text/plain, no preflight) would run questions on the user's model key, and a page whose
name is rebound to 127.0.0.1 (DNS rebinding) would read the answers. So every request must name this server in
`Host`, a request from a browser page (`Origin`) must come from an allowed origin, and a body must be JSON.
"""
from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})
JSON_TYPES = ("application/json",)


def host_name(host: str) -> str:
    """The name in a Host header, lower case, without the port or IPv6 brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def normal_origin(origin: str) -> str:
    """An origin as compared: trimmed, lower case, no trailing slash (browsers send it so)."""
    return origin.strip().rstrip("/").lower()


def served_hosts(bound: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The names a server bound to `bound` answers to (None: any; a wildcard address without --allow-host)."""
    names = {host_name(h) for h in extra if h.strip()}
    name = host_name(bound)
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    if address is not None and address.is_unspecified:  # 0.0.0.0 or ::: every name the machine has
        return frozenset(names | LOOPBACK_HOSTS) if names else None
    loopback = name in LOOPBACK_HOSTS or (address is not None and address.is_loopback)
    return frozenset(names | {name} | (LOOPBACK_HOSTS if loopback else set()))


def _refusal(status: int, detail: str) -> tuple[dict[str, Any], dict[str, Any]]:
    body = json.dumps({"detail": detail}).encode()
    return ({"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]},
            {"type": "http.response.body", "body": body})


class BrowserGuard:
    """ASGI middleware: 421 for a Host the server does not serve, 403 for a foreign Origin, 415 for a body that is
    not application/json; allowed origins get CORS headers (and their preflight an answer)."""

    def __init__(self, app: Callable[..., Awaitable[None]], hosts: frozenset[str] | None,
                 origins: Iterable[str] = ()) -> None:
        self.app, self.hosts = app, hosts
        self.origins = frozenset(normal_origin(o) for o in origins if o.strip())

    def check(self, scope: dict) -> tuple[int, str] | None:
        """(status, reason) when the request must be refused, else None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if self.hosts is not None and host_name(host) not in self.hosts:
            return 421, "this server does not answer to that Host name (serve --allow-host adds names)"
        origin = headers.get("origin")
        if origin is not None and not self._allowed(origin, host):
            return 403, "cross-origin requests are refused (serve --allow-origin allows an origin)"
        if scope["method"] == "POST" and headers.get("content-type", "").partition(";")[0].strip().lower() \
                not in JSON_TYPES:
            return 415, "request bodies must be Content-Type: application/json"
        return None

    def _allowed(self, origin: str, host: str) -> bool:
        origin = normal_origin(origin)
        same = origin in (f"http://{host.lower()}", f"https://{host.lower()}")
        return same or "*" in self.origins or origin in self.origins

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.check(scope)
        if refused is None:
            await self.app(scope, receive, send)
            return
        start, body = _refusal(*refused)
        await send(start)
        await send(body)
