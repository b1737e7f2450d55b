# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clopper-Pearson bounds and the hypothesis-test bound on epsilon."""

import math
import re

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_dpfair.audit import (
    clopper_pearson,
    epsilon_ceiling,
    epsilon_from_error_bounds,
)


def test_clopper_pearson_closed_forms():
    # k = 0: upper = 1 - (alpha)^(1/n) one-sided, (alpha/2)^(1/n) two-sided.
    _, hi = clopper_pearson(0, 50, confidence=0.9, side="upper")
    assert hi == pytest.approx(1 - 0.1 ** (1 / 50), rel=1e-10)
    lo, hi = clopper_pearson(0, 50, confidence=0.9)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / 50), rel=1e-10)
    lo, hi = clopper_pearson(50, 50, confidence=0.9)
    assert hi == 1.0 and lo == pytest.approx(0.05 ** (1 / 50), rel=1e-10)


def test_clopper_pearson_is_the_binomial_tail_inversion():
    # The upper bound p solves P(Binom(n, p) <= k) = alpha.
    n, k, conf = 40, 7, 0.95
    _, hi = clopper_pearson(k, n, confidence=conf, side="upper")
    assert binom.cdf(k, n, hi) == pytest.approx(1 - conf, rel=1e-8)
    lo, _ = clopper_pearson(k, n, confidence=conf, side="lower")
    assert binom.sf(k - 1, n, lo) == pytest.approx(1 - conf, rel=1e-8)


@pytest.mark.parametrize("p", [0.01, 0.2, 0.5])
def test_clopper_pearson_covers_at_least_its_confidence(p):
    # Exact coverage over every possible k (no simulation needed).
    n, conf = 60, 0.9
    ks = np.arange(n + 1)
    lo, hi = clopper_pearson(ks, np.full(n + 1, n), confidence=conf)
    covered = (lo <= p) & (p <= hi)
    assert binom.pmf(ks, n, p)[covered].sum() >= conf


def test_clopper_pearson_rejects_bad_input():
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson(1, 10, confidence=1.0)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        clopper_pearson(11, 10)
    with pytest.raises(ValueError, match="side"):
        clopper_pearson(1, 10, side="both")


@pytest.mark.parametrize(
    "k, n, name",
    [
        (0.5, 10, "k"),
        (1, 10.5, "n"),
        (np.nan, 10, "k"),
        (1, np.inf, "n"),
        ([1, 2.5], [10, 10], "k"),
        ("one", 10, "k"),
    ],
)
def test_clopper_pearson_refuses_counts_that_are_not_whole_numbers(k, n, name):
    # beta.ppf evaluates at a fractional count and returns a number that
    # bounds no binomial proportion.
    with pytest.raises(ValueError, match=rf"^{name} must be a whole number"):
        clopper_pearson(k, n)


@pytest.mark.parametrize("confidence", ["0.9", True, np.nan])
def test_clopper_pearson_refuses_a_confidence_that_is_not_a_number(confidence):
    given = re.escape(repr(confidence))
    with pytest.raises(ValueError, match=rf"confidence .*got {given}\."):
        clopper_pearson(1, 10, confidence=confidence)


def test_clopper_pearson_accepts_whole_counts_stored_as_floats():
    assert clopper_pearson(3.0, 10.0) == clopper_pearson(3, 10)


def test_epsilon_from_error_bounds():
    # TPR >= 50% at FPR <= 1%: epsilon >= log(0.5 / 0.01).
    assert epsilon_from_error_bounds(0.01, 0.5, 0.0) == pytest.approx(math.log(50))
    # No false negative at all is incompatible with any finite epsilon.
    assert epsilon_from_error_bounds(0.01, 0.0, 0.0) == math.inf
    # Symmetric in the two error types.
    assert epsilon_from_error_bounds(0.3, 0.1, 1e-5) == pytest.approx(
        epsilon_from_error_bounds(0.1, 0.3, 1e-5)
    )
    # A useless test (FPR + FNR >= 1 - delta) bounds nothing.
    assert epsilon_from_error_bounds(0.5, 0.5, 1e-5) == 0.0
    # Larger delta, weaker bound.
    assert epsilon_from_error_bounds(0.05, 0.3, 0.2) < epsilon_from_error_bounds(
        0.05, 0.3, 1e-5
    )


def test_epsilon_bound_never_exceeds_the_true_gaussian_epsilon():
    # For N(0,1) vs N(mu,1), every threshold test's exact error rates must be
    # compatible with the exact epsilon(delta) of the Gaussian mechanism.
    from scipy.stats import norm

    from sklearn_dpfair.privacy._accounting import epsilon_of, gaussian_event

    mu, delta = 1.5, 1e-3
    true_eps = epsilon_of(gaussian_event(1 / mu), delta, "pld")
    t = np.linspace(-3, 6, 400)
    bound = epsilon_from_error_bounds(norm.sf(t), norm.cdf(t - mu), delta)
    assert bound.max() <= true_eps + 1e-6
    assert bound.max() > 0.8 * true_eps  # and the family of tests is near-tight


def test_epsilon_ceiling_is_the_zero_error_bound():
    # Zero errors in n runs: the one-sided Clopper-Pearson upper bound at
    # 1 - alpha/2 is 1 - (alpha/2)^(1/n) (solve (1 - p)^n = alpha/2).
    n, delta, confidence = 25, 1e-5, 0.95
    u = 1.0 - (0.025) ** (1.0 / n)
    assert epsilon_ceiling(n, n, delta, confidence=confidence) == pytest.approx(
        math.log((1.0 - delta - u) / u), rel=1e-10
    )
    # Unequal worlds: the larger bound (fewer runs) decides.
    u_small = 1.0 - 0.025 ** (1.0 / 10)
    expected = max(
        math.log((1.0 - delta - u) / u_small), math.log((1.0 - delta - u_small) / u)
    )
    assert epsilon_ceiling(n, 10, delta) == pytest.approx(expected, rel=1e-10)
    # More runs can certify more.
    assert epsilon_ceiling(1000, 1000, delta) > epsilon_ceiling(100, 100, delta)


@pytest.mark.parametrize("confidence", [0.0, -0.5, -0.9, 1.0, 95, float("nan"), "0.9"])
def test_epsilon_ceiling_refuses_a_confidence_outside_0_1_as_given(confidence):
    # Checking only the per-bound split 1 - (1 - c) / 2 would pass c in
    # (-1, 0] (a ceiling of 4.97 at c = 0) and report 95 as "got 48.0".
    given = re.escape(repr(confidence))
    with pytest.raises(ValueError, match=rf"confidence .*got {given}\."):
        epsilon_ceiling(100, 100, 1e-5, confidence=confidence)


@pytest.mark.parametrize("delta", [-1.0, 1.0, 2.0, float("nan"), True, "1e-5", None])
def test_the_bounds_refuse_a_delta_outside_0_1(delta):
    # delta=-1 gave 3.40 where delta=1e-5 gives 2.30, delta=2 and NaN gave 0:
    # bounds no test supports, returned as numbers.
    with pytest.raises(ValueError, match="delta must be a number in"):
        epsilon_from_error_bounds(0.05, 0.5, delta)
    with pytest.raises(ValueError, match="delta must be a number in"):
        epsilon_ceiling(10, 10, delta)


@pytest.mark.parametrize("rate", [-0.1, 1.5, float("nan"), True, "0.1", [0.1, -0.1]])
@pytest.mark.parametrize("name", ["fpr_upper", "fnr_upper"])
def test_epsilon_from_error_bounds_refuses_what_is_no_rate(rate, name):
    # fpr_upper=-0.1 gave 0.79 and NaN gave 0.
    rates = {"fpr_upper": 0.05, "fnr_upper": 0.5, name: rate}
    with pytest.raises(ValueError, match=f"{name} must be error rates"):
        epsilon_from_error_bounds(rates["fpr_upper"], rates["fnr_upper"], 1e-5)


@pytest.mark.parametrize(
    "count, error",
    [
        (0, ValueError),
        (-3, ValueError),
        (2.5, ValueError),
        (np.nan, ValueError),
        (np.inf, ValueError),
        (True, TypeError),
        ("10", TypeError),
    ],
)
@pytest.mark.parametrize("name", ["n_without", "n_with"])
def test_epsilon_ceiling_names_a_run_count_below_one(count, error, name):
    # 0 runs failed inside clopper_pearson, naming neither count.
    counts = {"n_without": 10, "n_with": 10, name: count}
    with pytest.raises(error, match=f"{name} must be an integer"):
        epsilon_ceiling(counts["n_without"], counts["n_with"], 1e-5)


def test_epsilon_ceiling_takes_integral_float_counts_as_the_audits_do():
    assert epsilon_ceiling(25.0, 1e2, 1e-5) == epsilon_ceiling(25, 100, 1e-5)


def test_the_bounds_take_numpy_numbers_and_zero_delta():
    assert epsilon_ceiling(np.int64(25), 25, np.float64(1e-5)) == pytest.approx(
        epsilon_ceiling(25, 25, 1e-5)
    )
    assert epsilon_from_error_bounds(np.array([0.05, 1.0]), 0.5, 0.0).shape == (2,)
