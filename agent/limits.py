"""The request limits of every entry point (`ask`, /v1/ask, /v1/ask/stream, /v1/chat/completions, the MCP tools),
with one refusal each, and the HTTP status every refusal and failure maps to."""
from __future__ import annotations

from frames_agent.agent.errors import AgentError, QuestionTimeout
from frames_agent.core.errors import FramesAgentError

MAX_QUESTION_CHARS = 4000  # a question, a chat's last user message, an MCP search query
MAX_BODY_BYTES = 64 * 1024  # an HTTP request body (serve --max-body; at least MIN_BODY_BYTES)
MIN_BODY_BYTES = 256
MAX_SEARCH_HITS = 50  # k of the MCP search_wikipedia tool


class RequestRefused(AgentError):
    """A request outside the limits; `status` is its HTTP status."""

    status = 422


class BodyTooLarge(RequestRefused):
    """The request body is over the size limit."""

    status = 413


class InvalidRequest(RequestRefused):
    """A field is missing, of the wrong type, or out of bounds (a question too long, k out of range)."""


class Busy(RequestRefused):
    """Every slot is taken; `retry_after` says when to come back."""

    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def check_text(text: object, field: str = "question") -> str:
    """The text stripped; InvalidRequest when it is not text, is empty, or is over MAX_QUESTION_CHARS."""
    if not isinstance(text, str):
        raise InvalidRequest(f"{field}: must be text")
    if not text.strip():
        raise InvalidRequest(f"{field}: the {field} is empty")
    text = text.strip()
    if len(text) > MAX_QUESTION_CHARS:
        raise InvalidRequest(f"{field}: at most {MAX_QUESTION_CHARS} characters, got {len(text):,}")
    return text


def check_hits(k: object) -> int:
    """k for a search; InvalidRequest outside 1..MAX_SEARCH_HITS."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SEARCH_HITS:
        raise InvalidRequest(f"k: must be between 1 and {MAX_SEARCH_HITS}")
    return k


def status_of(exc: FramesAgentError) -> int:
    """The HTTP status of one of our errors (the table in README "Serve")."""
    # Anything not the request's failed behind the agent (model server, index): a gateway that got a bad answer.
    if isinstance(exc, RequestRefused):
        return exc.status
    if isinstance(exc, QuestionTimeout):
        return 504
    return 400 if isinstance(exc, AgentError) else 502
