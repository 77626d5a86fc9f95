"""Errors of the CRAG layer."""
from __future__ import annotations

from frames_agent.core.errors import FramesAgentError


class CRAGError(FramesAgentError):
    """A CRAG API call failed: server unreachable, bad arguments, server error, or a non-API reply."""
