"""Prompt tuning on a train split: bootstrapped few-shot demonstrations chosen by held-out recall."""
