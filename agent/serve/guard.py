"""What stands before the agent: the bearer token, the body size limit and the concurrency gate."""
from __future__ import annotations

import hmac
import os
from typing import TypeVar

from fastapi import HTTPException, Request
from pydantic import BaseModel, Field, ValidationError

from frames_agent.agent.limits import MAX_BODY_BYTES, MIN_BODY_BYTES, BodyTooLarge, Busy, InvalidRequest
from frames_agent.retrieval.bounded import JSONOutOfBounds, check_json
from frames_agent.retrieval.errors import validation_error

TOKEN_VARIABLE = "FRAMES_AGENT_TOKEN"
M = TypeVar("M", bound=BaseModel)


class ServeSettings(BaseModel):
    """Limits of one server: questions in flight, body size, token, how long a refused client should wait."""

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
    sources_in_content: bool = Field(True, description="chat completions list the sources under the answer in the "
                                     "message content: clients such as LangChain's ChatOpenAI keep only the content "
                                     "of a reply, not its extra fields")

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


def check_token(request: Request, settings: ServeSettings) -> None:
    """401 unless the request carries the configured bearer token (no token configured: open)."""
    if not settings.token:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), settings.token.encode()):
        raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


async def read_body(request: Request, model: type[M], limit: int) -> M:
    """The JSON body as model; BodyTooLarge (413) past limit bytes, declared or streamed; InvalidRequest (422)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"request body over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise BodyTooLarge(f"request body over {limit} bytes")
    try:
        check_json(bytes(body), max_bytes=limit)  # nesting bounded before pydantic parses it
        return model.model_validate_json(bytes(body) or b"{}")
    except JSONOutOfBounds as exc:
        raise InvalidRequest(f"body: {exc}") from None
    except ValidationError as exc:
        where, message = validation_error(exc)
        raise InvalidRequest(f"{where or 'body'}: {message}") from None
