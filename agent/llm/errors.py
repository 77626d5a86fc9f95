"""The LLM layer's user-facing errors: one line each, never carrying a key."""
from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from frames_agent.core.errors import FramesAgentError, InstallError

KEY_VARIABLES = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
# Query parameters that carry credentials in the URLs of hosted and proxied model servers.
SECRET_PARAMS = {"key", "api_key", "apikey", "api-key", "token", "access_token", "auth", "password", "secret",
                 "sig", "signature", "code"}


class LLMError(FramesAgentError):
    """A model could not be resolved or called."""


class ModelSpecError(LLMError):
    """The model spec names no known provider or model."""


class MissingKeyError(LLMError):
    """The provider needs an API key that is not set."""


class AuthError(LLMError):
    """The provider rejected the API key."""


class ModelNotFoundError(LLMError):
    """The provider does not serve the named model."""


class UnreachableError(LLMError):
    """The provider's server could not be reached."""


class TransientLLMError(LLMError):
    """A failure worth retrying: timeout, rate limit, quota, 5xx."""


class QuotaError(TransientLLMError):
    """Rate limit or quota exhausted (still so after the retries)."""


class LLMTimeoutError(TransientLLMError):
    """A call took longer than its timeout (still so after the retries)."""


class ServerError(TransientLLMError):
    """The provider failed with a 5xx (still so after the retries)."""


class EmptyReplyError(LLMError):
    """The model returned no text at all."""


class SafetyBlockError(EmptyReplyError):
    """The provider withheld the reply for safety reasons."""


class BadReplyError(LLMError):
    """The server answered, but not with a usable chat completion (checked at the provider boundary)."""


class MalformedReplyError(BadReplyError):
    """The reply body is not JSON: an HTML page, a body cut off mid-way."""


class EmptyChoicesError(BadReplyError):
    """The reply's `choices` list is missing, null or empty."""


class MissingMessageError(BadReplyError):
    """A choice without a message."""


class NullContentError(BadReplyError, EmptyReplyError):
    """The message has no content and no tool call."""


class RefusalError(BadReplyError, SafetyBlockError):
    """The model refused (the message carries `refusal` instead of content)."""


class ReplyCutOffError(BadReplyError, EmptyReplyError):
    """finish_reason "length" before any text: the token limit was spent before the reply began."""


class ConnectionBrokenError(TransientLLMError):
    """The connection dropped before the reply was complete (retried like a 5xx)."""


class MissingPackageError(LLMError, InstallError):
    """A provider's package (or LangChain itself) is not installed."""


class WeightsError(LLMError, InstallError):
    """Local model weights are missing, truncated or corrupt."""


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """text on one line with every known key (and anything key-shaped) masked."""
    values = [s for s in secrets if s] + [os.environ.get(v, "") for v in KEY_VARIABLES]
    for value in sorted((v for v in values if len(v) >= 4), key=len, reverse=True):
        text = text.replace(value, "***")
    text = _URL.sub(lambda m: redact_url(m.group(0)) or "", text)
    text = re.sub(r"\b(sk-|AIza)[A-Za-z0-9_\-*]{6,}", "***", text)
    text = " ".join(text.split())
    return text[:300]


_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")


def redact_url(url: str | None) -> str | None:
    """url with its user:password and credential query parameters masked (None stays None)."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        port = parts.port  # noqa: F841 - a bad port raises here, and the URL is then masked whole
    except ValueError:
        return re.sub(r"//[^/@]*@", "//***@", url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if any(k.lower() in SECRET_PARAMS for k, _ in pairs):
        query = urlencode([(k, "***" if k.lower() in SECRET_PARAMS else v) for k, v in pairs], safe="*")
    else:
        query = parts.query
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
