"""The root of every error frames-agent reports to users (the CLI prints it as one line, exit 2), and the categories
every layer's own `errors` module shares (usage, install, retrieval)."""
from __future__ import annotations


# A RuntimeError: LangGraph Server shows a run's RuntimeError by its message, any other error as "An internal error".
class FramesAgentError(RuntimeError):
    """A user-facing failure; its message is one line the CLI prints as is."""


class UsageError(FramesAgentError):
    """The user asked for something that cannot be done as asked (a bad flag, file or value)."""


class InstallError(FramesAgentError):
    """Something the project needs is not installed or cannot start (Java, an optional extra, model weights)."""


class RetrievalError(FramesAgentError):
    """A search, index or lookup failed."""


class Terminated(BaseException):  # noqa: N818 - a signal, as KeyboardInterrupt is, not an error
    """SIGTERM arrived: unwind as for Ctrl-C (finished work saved, workers stopped); the CLI exits 143."""


def validation_error(exc: Exception) -> tuple[str, str]:
    """A pydantic ValidationError's first error as (where, message): its location dotted ('' at the top level)."""
    errors = exc.errors() if callable(getattr(exc, "errors", None)) else []  # type: ignore[attr-defined]
    if not errors:
        return "", str(exc)
    return ".".join(map(str, errors[0]["loc"])), errors[0]["msg"]


def first_line(exc: BaseException, limit: int | None = None) -> str:
    """An error in at most `limit` characters: a ValidationError's first error, else its first line, else its type."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        where, message = validation_error(exc)
        text = f"{where or 'value'}: {message}"
    else:
        text = str(exc).strip()
    return text.splitlines()[0][:limit] if text else type(exc).__name__
