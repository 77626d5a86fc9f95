"""The root of every error frames-agent reports to users, and the retrieval layer's own errors.

Each layer keeps its errors in an `errors` module under this root (`agent.errors`, `agent.llm.errors`,
`eval.errors`, ...); the CLI prints any `FramesAgentError` as one line and exits 2.
"""
from __future__ import annotations


class FramesAgentError(Exception):
    """A user-facing failure; its message is one line the CLI prints as is."""


class UsageError(FramesAgentError):
    """The user asked for something that cannot be done as asked (a bad flag, file or value)."""


class InstallError(FramesAgentError):
    """Something the project needs is not installed or cannot start (Java, an optional extra, model weights)."""


class RetrievalError(FramesAgentError):
    """A search, index or lookup failed."""


class Terminated(BaseException):  # noqa: N818 - a signal, as KeyboardInterrupt is, not an error
    """SIGTERM arrived: unwind as for Ctrl-C (finished work saved, workers stopped); the CLI exits 143."""
