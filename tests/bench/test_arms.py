"""bench/arms.py's pure parts: arms parsed into AgentConfig overrides, and the paired recall interval."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from bench.arms import interval, parse_arms
from frames_agent.agent import AgentConfig


def test_arms_parse_into_validated_overrides():
    arms = parse_arms("base:; lean:plan_thought_chars=0,plan_budget=200;")
    assert list(arms) == ["base", "lean"] and arms["base"] == {}
    config = AgentConfig.model_validate({**AgentConfig().model_dump(), **arms["lean"]})
    assert (config.plan_thought_chars, config.plan_budget) == (0, 200)
    with pytest.raises(ValidationError):
        AgentConfig.model_validate({**AgentConfig().model_dump(), **parse_arms("x:plan_budget=-1")["x"]})


def test_interval_brackets_the_mean_of_paired_differences():
    assert interval([0.0] * 12) == (0.0, 0.0)
    low, high = interval([-0.5, 0.0, -0.25, 0.0, -0.33, 0.0, 0.0, 0.0, 0.0, 0.0, -0.25, 0.0])
    assert low < -0.11 < high <= 0.0
