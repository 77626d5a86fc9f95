"""Errors of the agent layer."""
from __future__ import annotations

from frames_agent.core.errors import FramesAgentError


class AgentError(FramesAgentError):
    """The agent cannot run or finish this question, or was configured with something it cannot use."""


class QuestionTimeout(AgentError):
    """A question ran past its deadline (AgentConfig.question_timeout, --question-timeout)."""


class PromptError(AgentError):
    """A prompt file is missing, unreadable, or does not fit its variables."""


class CalculatorError(AgentError):
    """The calculator was given something that is not plain arithmetic or a date difference."""
