"""Errors of the evaluation layer."""
from __future__ import annotations

from frames_agent.core.errors import FramesAgentError, InstallError, UsageError


class EvalError(FramesAgentError):
    """An evaluation run cannot start, resume or finish as asked."""


class DataError(EvalError, UsageError):
    """A dataset file, row or cell cannot be read as questions."""


class MissingExtraError(EvalError, InstallError):
    """An optional extra the run needs is not installed (e.g. `datasets` for hf: data)."""
