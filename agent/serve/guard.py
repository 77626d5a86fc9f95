"""What stands before the agent: the bearer token, the body size limit and the concurrency gate (held by a
streamed reply until it ends)."""
from __future__ import annotations

import hmac
import json
import os
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from fastapi import HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, ValidationError, field_validator

from frames_agent.agent.limits import MAX_BODY_BYTES, MIN_BODY_BYTES, BodyTooLarge, Busy, InvalidRequest
from frames_agent.agent.serve.browser import normal_origin
from frames_agent.core.bounded import JSONOutOfBounds, check_json
from frames_agent.core.errors import validation_error
from frames_agent.core.terminal import valid_data

TOKEN_VARIABLE = "FRAMES_AGENT_TOKEN"
M = TypeVar("M", bound=BaseModel)


class ServeSettings(BaseModel):
    """Limits of one server: questions in flight, body size, token, how long a refused client should wait, how long
    a client may take to send a request and replies in flight may take after SIGTERM."""

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
    """Server-sent events holding one of the gate's slots until the response ends, however it ends: sent, cut off
    by the client, or failed while sending (the slot never hangs on the body's generator being closed)."""

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
    """The JSON body as model, its text valid (a lone surrogate becomes U+FFFD); BodyTooLarge (413) past limit bytes,
    declared or streamed; InvalidRequest (422)."""
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
