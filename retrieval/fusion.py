"""Rank fusion: several rankings of the same items made into one."""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)
RRF_K = 60  # the constant of Cormack et al. (2009): ranks past a few dozen count about the same


def rrf(rankings: Sequence[Sequence[Key]], weights: Sequence[float], k: int, rrf_k: int = RRF_K) -> list[Key]:
    """The k keys with the highest weighted reciprocal-rank sum; ties keep the order keys were first seen."""
    score: dict[Key, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, key in enumerate(ranking):
            score[key] = score.get(key, 0.0) + weight / (rrf_k + rank)
    order = {key: n for n, key in enumerate(score)}
    return sorted(score, key=lambda key: (-score[key], order[key]))[:k]
