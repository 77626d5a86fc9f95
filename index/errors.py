"""Errors of the index layer."""
from __future__ import annotations

from frames_agent.core.errors import FramesAgentError


class CorpusError(FramesAgentError):
    """A corpus file or dump cannot be read as documents."""
