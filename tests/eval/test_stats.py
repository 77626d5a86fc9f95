"""Intervals and paired tests: bootstrap CIs of a mean, paired recall differences with a sign-flip test."""
from __future__ import annotations

import pytest

from frames_agent.eval.stats import (
    bootstrap_ci,
    compare_paired,
    compare_paired_means,
    mcnemar_exact,
    paired_bootstrap,
    sign_flip_p,
)


def test_bootstrap_ci_brackets_the_mean_and_is_none_without_data():
    low, high = bootstrap_ci([0, 1] * 50)
    assert 0.38 < low < 0.5 < high < 0.62
    assert bootstrap_ci([]) is None and bootstrap_ci([1, 1, 1]) == (1.0, 1.0)


def test_paired_means_detect_a_consistent_gain_and_not_noise():
    gain = compare_paired_means([0.0] * 20, [1.0] * 20)
    assert gain.diff == 1.0 and gain.p_value < 0.001 and gain.ci_low == gain.ci_high == 1.0
    noise = compare_paired_means([0.0, 1.0] * 10, [1.0, 0.0] * 10)
    assert noise.diff == 0.0 and noise.p_value > 0.5
    assert sign_flip_p([0.0, 0.0]) == 1.0


def test_paired_samples_must_match():
    with pytest.raises(ValueError):
        compare_paired_means([1.0], [1.0, 0.0])
    assert compare_paired([True, False], [True, True]).only_b == 1


def test_scipy_keeps_the_hand_written_figures():
    # Figures of the hand-written bootstrap before scipy.stats took over: same seed, same resamples, same CI.
    a, b = [i % 3 == 0 for i in range(40)], [i % 2 == 0 for i in range(40)]
    assert paired_bootstrap(a, b) == pytest.approx((-0.075, 0.35), abs=1e-12)
    assert bootstrap_ci([i / 40 for i in range(40)]) == pytest.approx((0.399375, 0.57625), abs=1e-12)
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024) and mcnemar_exact(4, 4) == 1.0


def test_sign_flip_is_exact_for_few_questions():
    # 2^5 sign patterns <= 10,000 resamples: every one is counted; only all-plus and all-minus are as extreme.
    assert sign_flip_p([0.5] * 5) == pytest.approx(2 / 32)


def test_small_runs_show_their_uncertainty():
    from frames_agent.eval.stats import mean_ci, wilson_ci

    low, high = mean_ci([0.0, 0.0])
    assert low == 0.0 and 0.6 < high < 0.7  # 0 of 2: [0–66%], as the per-type plot draws it, never [0–0]
    assert mean_ci([1.0, 1.0, 1.0]) == wilson_ci(3, 3) and mean_ci([1.0])[0] < 0.25
    assert mean_ci([0.5, 0.5]) == wilson_ci(1.0, 2)  # every resample alike: Wilson at the mean
    assert mean_ci([]) is None
    spread = mean_ci([0.1, 0.9, 0.4, 0.6])
    assert 0.1 <= spread[0] < spread[1] <= 0.9  # values that vary: the bootstrap


def test_one_paired_question_says_no_test_instead_of_failing():
    # A one-question run against another: the sign-flip test needs two questions, so none is made (said, not raised).
    recall = compare_paired_means([0.0], [1.0])
    assert recall.p_value is None and recall.diff == 1.0 and sign_flip_p([0.5]) is None
    assert "no test (fewer than 2 paired questions)" in recall.sentence("a", "b")
    accuracy = compare_paired([True], [False])
    assert accuracy.p_value is None
    assert "no test (fewer than 2 paired questions) (1 only a right, 0 only b right)" in accuracy.sentence("a", "b")
    assert compare_paired([True, False], [False, True]).p_value == 1.0  # two questions: tested
