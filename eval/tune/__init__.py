"""Prompt tuning on a train split: bootstrapped few-shot demonstrations chosen by held-out recall."""
from frames_agent.eval.tune.demos import Demo, DemoStep, prompt_with_demos
from frames_agent.eval.tune.runner import TuneOutcome, Tuner, TuneSettings

__all__ = ["Demo", "DemoStep", "TuneOutcome", "TuneSettings", "Tuner", "prompt_with_demos"]
