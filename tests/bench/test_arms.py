"""bench/arms.py's pure parts: arms parsed into AgentConfig overrides and runtime settings, and the per-arm summary
with the paired recall interval."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from bench.arms import parse_arms, split_overrides, summary
from frames_agent.agent import AgentConfig


def test_arms_parse_into_validated_overrides():
    arms = parse_arms("base:; lean:plan_thought_chars=0,plan_budget=200;")
    assert list(arms) == ["base", "lean"] and arms["base"] == {}
    config = AgentConfig.model_validate({**AgentConfig().model_dump(), **arms["lean"]})
    assert (config.plan_thought_chars, config.plan_budget) == (0, 200)
    with pytest.raises(ValidationError):
        AgentConfig.model_validate({**AgentConfig().model_dump(), **parse_arms("x:plan_budget=-1")["x"]})


def test_runtime_keys_set_the_arms_runtime_and_the_rest_its_config():
    agent, settings = split_overrides(parse_arms("one:threads=1,flash_attn=on,plan_budget=200")["one"])
    assert agent == {"plan_budget": "200"}
    assert (settings.threads, settings.flash_attn, settings.n_ubatch) == (1, "on", 512)


def test_the_summary_brackets_the_mean_of_paired_recall_differences():
    base = [0.5, 0.5, 0.75, 1.0, 0.33, 0.6, 0.67, 1.0, 1.0, 1.0, 0.75, 0.5]
    drops = [-0.5, 0.0, -0.25, 0.0, -0.33, 0.0, 0.0, 0.0, 0.0, 0.0, -0.25, 0.0]
    seen = {"base": [{"seconds": 10.0, "calls": 5, "read": 900, "out": 300, "recall": r} for r in base],
            "lean": [{"seconds": 6.0, "calls": 4, "read": 500, "out": 200, "recall": r + d} for r, d in zip(base, drops)]}
    lines = summary(seen, "tune")
    assert lines[0].startswith("base ") and "ratio 1.00" in lines[0] and "ratio 0.60" in lines[1]
    low, high = (float(x) for x in lines[2].split("95% CI [")[1].split("]")[0].split(", "))
    assert "lean vs base: -0.111 recall" in lines[2] and low < -0.111 < high <= 0.0
    assert summary({"base": seen["base"]}, "tune") == lines[:1], "one arm: nothing to pair"
