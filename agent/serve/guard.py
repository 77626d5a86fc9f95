"""What stands before the agent: the Host and Origin a browser page could abuse (DNS rebinding, cross-origin POSTs),
the bearer token, the body size limit and the concurrency gate (held by a streamed reply until it ends)."""
from __future__ import annotations

import hmac
import ipaddress
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeVar

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field, ValidationError, field_validator

from frames_agent.agent.limits import MAX_BODY_BYTES, MIN_BODY_BYTES, BodyTooLarge, Busy, InvalidRequest
from frames_agent.core.bounded import JSONOutOfBounds, check_json
from frames_agent.core.errors import validation_error
from frames_agent.core.terminal import valid_data

TOKEN_VARIABLE = "FRAMES_AGENT_TOKEN"
M = TypeVar("M", bound=BaseModel)
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})


def host_name(host: str) -> str:
    """The name in a Host header, lower case, without the port or IPv6 brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def normal_origin(origin: str) -> str:
    """An origin as compared: trimmed, lower case, no trailing slash (browsers send it so)."""
    return origin.strip().rstrip("/").lower()


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    address = _address(host)
    return host.lower() in LOOPBACK_HOSTS or (address is not None and address.is_loopback)


def served_hosts(bound: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The names a server bound to `bound` answers to (None: any; a wildcard address without --allow-host)."""
    names = {host_name(h) for h in extra if h.strip()}
    name = host_name(bound)
    address = _address(name)
    if address is not None and address.is_unspecified:  # 0.0.0.0 or ::: every name the machine has
        return frozenset(names | LOOPBACK_HOSTS) if names else None
    return frozenset(names | {name} | (LOOPBACK_HOSTS if is_loopback(name) else set()))


class BrowserGuard:
    """ASGI middleware: 421 for a Host not served, 403 for a foreign Origin, 415 for a body that is not JSON."""

    def __init__(self, app: Callable[..., Awaitable[None]], hosts: frozenset[str] | None,
                 origins: Iterable[str] = ()) -> None:
        """origins: as ServeSettings normalises them."""
        self.app, self.hosts, self.origins = app, hosts, frozenset(origins)

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
                != "application/json":
            return 415, "request bodies must be Content-Type: application/json"
        return None

    def _allowed(self, origin: str, host: str) -> bool:
        origin = normal_origin(origin)
        same = origin in (f"http://{host.lower()}", f"https://{host.lower()}")
        return same or "*" in self.origins or origin in self.origins

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        refused = self.check(scope) if scope["type"] == "http" else None
        if refused is None:
            await self.app(scope, receive, send)
        else:
            await JSONResponse({"detail": refused[1]}, refused[0])(scope, receive, send)


class ServeSettings(BaseModel):
    """Limits of one server: questions in flight, body size, token, names and origins served, timeouts."""

    max_concurrency: int = Field(4, ge=1, description="questions answered at once; more get 429")
    max_body_bytes: int = Field(MAX_BODY_BYTES, ge=MIN_BODY_BYTES, description="larger request bodies get 413")
    retry_after: int = Field(10, ge=1, description="seconds a 429 tells the client to wait")
    token: str | None = Field(None, description="bearer token required on /v1/* (FRAMES_AGENT_TOKEN)")
    access_log: bool = Field(True, description="one line per request on stderr (client, method, path, status, "
                             "seconds)")
    host: str = Field("127.0.0.1", description="the address served: a request's Host header must name it "
                      "(loopback: localhost, 127.0.0.1, ::1; 0.0.0.0 or :: accept any name unless allow_hosts)")
    allow_hosts: list[str] = Field(default_factory=list, description="more names the Host header may give")
    allow_origins: list[str] = Field(default_factory=list, description="browser origins (scheme://host:port, or *) "
                                     "allowed cross-origin requests; every other Origin gets 403")
    request_timeout: float = Field(30.0, gt=0, description="seconds a client has to send a request's headers and "
                                   "body; a slower or silent connection is closed")
    shutdown_grace: float = Field(10.0, ge=0, description="seconds SIGTERM lets replies in flight finish before "
                                  "closing them")
    sources_in_content: bool = Field(True, description="chat completions list the sources under the answer in the "
                                     "message content: clients such as LangChain's ChatOpenAI keep only the content "
                                     "of a reply, not its extra fields")

    @field_validator("allow_origins")
    @classmethod
    def _normal_origins(cls, origins: list[str]) -> list[str]:
        """Origins as browsers send them, so the guard and CORS compare the same text."""
        return [normal_origin(o) for o in origins if o.strip()]

    @classmethod
    def from_env(cls, **overrides: object) -> ServeSettings:
        """Settings with the token from FRAMES_AGENT_TOKEN."""
        return cls(token=os.environ.get(TOKEN_VARIABLE) or None, **{k: v for k, v in overrides.items() if v is not None})


class Gate:
    """A non-blocking semaphore: a full server says 429 at once instead of queueing without bound."""

    def __init__(self, size: int, retry_after: int) -> None:
        self.size, self.retry_after, self.busy = size, retry_after, 0

    def enter(self) -> None:
        """Take a slot or raise Busy (429 with Retry-After; one event loop: no lock needed)."""
        if self.busy >= self.size:
            raise Busy(f"busy: {self.size} questions in flight; retry later", self.retry_after)
        self.busy += 1

    def leave(self) -> None:
        """Give the slot back."""
        self.busy -= 1


class GatedStream(StreamingResponse):
    """Server-sent events holding one of the gate's slots until the response ends, however it ends."""

    def __init__(self, gate: Gate, lines: AsyncIterator[str]) -> None:
        super().__init__(lines, media_type="text/event-stream")
        self.gate = gate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.gate.leave()


def check_token(request: Request, settings: ServeSettings) -> None:
    """401 unless the request carries the configured bearer token (no token configured: open)."""
    if not settings.token:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), settings.token.encode()):
        raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


async def read_body(request: Request, model: type[M], limit: int) -> M:
    """The JSON body as valid text in model; BodyTooLarge (413) past limit bytes, else InvalidRequest (422)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"request body over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise BodyTooLarge(f"request body over {limit} bytes")
    try:
        data = json.loads(check_json(bytes(body) or b"{}", max_bytes=limit))  # nesting bounded before parsing
    except JSONOutOfBounds as exc:
        raise InvalidRequest(f"body: {exc}") from None
    except ValueError:  # not JSON, not UTF-8, or a number past Python's 4,300 digits
        raise InvalidRequest("body: not a JSON document") from None
    try:
        return model.model_validate(valid_data(data))
    except ValidationError as exc:
        where, message = validation_error(exc)
        raise InvalidRequest(f"{where or 'body'}: {message}") from None
