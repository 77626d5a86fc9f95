"""Paired tests for two systems on the same questions (scipy.stats): McNemar's exact test, bootstrap CIs, sign flips."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_SEED = 0
BOOTSTRAP_RESAMPLES = 10_000
# One paired question can never show a difference (its only sign flip is as extreme as itself): no test is made.
MIN_TESTED = 2
NO_TEST = f"no test (fewer than {MIN_TESTED} paired questions)"


def verdict(p_value: float) -> str:
    """What a paired test's p says, in the words every report uses."""
    return "a real difference (p < 0.05)" if p_value < 0.05 else "not distinguishable from chance (p ≥ 0.05)"


def p_text(p_value: float | None, digits: int = 3) -> str:
    """A p-value as shown, or that no test was made."""
    return "no test" if p_value is None else f"{p_value:.{digits}g}"


@dataclass(frozen=True)
class PairedComparison:
    """B minus A on the same questions: accuracy difference, its bootstrap CI, and McNemar's exact p."""

    n: int
    accuracy_a: float
    accuracy_b: float
    diff: float
    ci_low: float
    ci_high: float
    only_a: int  # questions A got right and B wrong
    only_b: int
    p_value: float | None  # None: too few questions for a test

    def sentence(self, name_a: str, name_b: str) -> str:
        """One line a user can act on."""
        counts = f"{self.only_a} only {name_a} right, {self.only_b} only {name_b} right"
        test = (f"McNemar exact p = {self.p_value:.3g} ({counts}): {verdict(self.p_value)}"
                if self.p_value is not None else f"{NO_TEST} ({counts})")
        return (f"{name_b} vs {name_a}: {self.diff * 100:+.1f} points accuracy on {self.n} paired questions, "
                f"95% CI [{self.ci_low * 100:+.1f}, {self.ci_high * 100:+.1f}] (paired bootstrap, "
                f"{BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED}); {test}")


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (binomial test with p = 1/2)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    from scipy.stats import binomtest  # the eval extra: `--help` and a core install import this module without it

    return float(binomtest(min(only_a, only_b), n, 0.5).pvalue)


def _percentile_ci(values: np.ndarray) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of values (one row per question)."""
    if values.size == 1:  # scipy needs two observations; every resample of one is that one
        return float(values[0]), float(values[0])
    # batch=1000 bounds memory for large question sets; with the seed, the resamples are reproducible.
    from scipy.stats import bootstrap

    result = bootstrap((values,), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, batch=1000, method="percentile",
                       vectorized=True, rng=np.random.default_rng(BOOTSTRAP_SEED))
    low, high = result.confidence_interval
    return float(low), float(high)


def paired_bootstrap(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Percentile CI of mean(b) - mean(a), resampling questions (pairs stay together)."""
    return bootstrap_ci(np.asarray(b, dtype=float) - np.asarray(a, dtype=float)) or (0.0, 0.0)


def compare_paired(a: Sequence[bool], b: Sequence[bool]) -> PairedComparison:
    """Everything about B vs A on paired per-question correctness."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    only_a = sum(1 for x, y in zip(a, b) if x and not y)
    only_b = sum(1 for x, y in zip(a, b) if y and not x)
    acc_a, acc_b = (sum(a) / n, sum(b) / n) if n else (0.0, 0.0)
    low, high = paired_bootstrap(a, b)
    return PairedComparison(n=n, accuracy_a=acc_a, accuracy_b=acc_b, diff=acc_b - acc_a, ci_low=low, ci_high=high,
                            only_a=only_a, only_b=only_b,
                            p_value=mcnemar_exact(only_a, only_b) if n >= MIN_TESTED else None)


def bootstrap_ci(values: Sequence[float]) -> tuple[float, float] | None:
    """Percentile CI of the mean of values, resampling questions; None when there are none."""
    data = np.asarray(values, dtype=float)
    return None if data.size == 0 else _percentile_ci(data)


@dataclass(frozen=True)
class PairedMeans:
    """B minus A on paired per-question values (e.g. recall): mean difference, bootstrap CI, sign-flip p."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float | None  # None: too few questions for a test

    def sentence(self, name_a: str, name_b: str, what: str = "recall") -> str:
        """One line a user can act on."""
        # Exact over every sign pattern where they fit in the resamples, else random ones.
        flips = ("exact, every sign pattern" if 2 ** self.n <= BOOTSTRAP_RESAMPLES
                 else f"{BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED}")
        test = (f"sign-flip permutation p = {self.p_value:.3g} ({flips}): {verdict(self.p_value)}"
                if self.p_value is not None else NO_TEST)
        return (f"{name_b} vs {name_a}: {self.diff:+.3f} {what} ({self.mean_b:.3f} vs {self.mean_a:.3f}) on {self.n} "
                f"paired questions, 95% CI [{self.ci_low:+.3f}, {self.ci_high:+.3f}] (paired bootstrap); {test}")


def sign_flip_p(diffs: Sequence[float]) -> float | None:
    """Two-sided paired sign-flip permutation p-value (None: fewer than MIN_TESTED differences)."""
    d = np.asarray(diffs, dtype=float)
    if d.size < MIN_TESTED:
        return None
    if not np.any(d):
        return 1.0
    # |mean| against "greater" is the two-sided test; scipy is exact over every sign pattern when 2^n <= resamples.
    from scipy.stats import permutation_test

    result = permutation_test((d,), lambda x, axis=-1: np.abs(np.mean(x, axis=axis)), permutation_type="samples",
                              alternative="greater", n_resamples=BOOTSTRAP_RESAMPLES, batch=1000, vectorized=True,
                              rng=np.random.default_rng(BOOTSTRAP_SEED))
    return float(result.pvalue)


def compare_paired_means(a: Sequence[float], b: Sequence[float]) -> PairedMeans:
    """B vs A on paired per-question values: difference of means, its paired bootstrap CI, sign-flip p."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if not a:
        raise ValueError("no paired values")
    low, high = paired_bootstrap(a, b)
    mean_a, mean_b = float(np.mean(a)), float(np.mean(b))
    return PairedMeans(n=len(a), mean_a=mean_a, mean_b=mean_b, diff=mean_b - mean_a, ci_low=low, ci_high=high,
                       p_value=sign_flip_p(np.asarray(b, dtype=float) - np.asarray(a, dtype=float)))


def mean_ci(values: Sequence[float]) -> tuple[float, float] | None:
    """95% CI of a per-question mean: Wilson's for 0/1 values, else the percentile bootstrap; None when empty."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    if np.all((data == 0) | (data == 1)):
        # A bootstrap of 0 of 2 is [0, 0]: no uncertainty shown where it is largest; the per-type plots draw Wilson's.
        return wilson_ci(float(data.sum()), int(data.size))
    low, high = _percentile_ci(data)
    if high - low <= 1e-12 and np.all((data >= 0) & (data <= 1)):  # every resample alike: one value, or all equal
        return wilson_ci(float(data.sum()), int(data.size))
    return low, high


def wilson_ci(successes: float, n: int, *, z: float = 1.959964) -> tuple[float, float] | None:
    """Wilson score 95% interval of a proportion (None when n is 0)."""
    if n <= 0:
        return None
    p, spread = successes / n, z * z / n
    centre = (p + spread / 2) / (1 + spread)
    half = z * ((p * (1 - p) / n + spread / (4 * n)) ** 0.5) / (1 + spread)
    # The interval always holds p; rounding can leave p a hair outside at 0% or 100% (1/1 gives 0.9999999999999999).
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))
