# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private selection with a random number of runs (Papernot and Steinke 2022)."""

import math

import numpy as np
import pytest
from dp_accounting.dp_event import RepeatAndSelectDpEvent
from dp_accounting.rdp.rdp_privacy_accountant import (
    _gamma_truncated_negative_binomial,
    compute_epsilon,
)

from sklearn_dpfair.privacy._accounting import (
    _RDP_ORDERS,
    epsilon_of,
    gaussian_event,
)
from sklearn_dpfair.privacy._selection import (
    calibrate_selection,
    check_number_of_runs,
    repeat_and_select_event,
    sample_number_of_runs,
    selection_floor,
    truncated_negative_binomial_gamma,
)


@pytest.mark.parametrize("mean", [1.5, 3.0, 10.0, 50.0])
@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0])
def test_gamma_matches_dp_accounting(mean, shape):
    # Our root and dp-accounting's (which its RDP formula uses) agree, so the
    # distribution we sample is the one the accountant analyses.
    ours = truncated_negative_binomial_gamma(mean, shape)
    theirs = _gamma_truncated_negative_binomial(shape, mean)
    assert ours == pytest.approx(theirs, rel=1e-7)


def test_geometric_gamma_is_one_over_mean():
    assert truncated_negative_binomial_gamma(4.0, 1.0) == pytest.approx(0.25)
    assert truncated_negative_binomial_gamma(1.0, 0.0) == 1.0


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0])
def test_sampled_runs_have_the_stated_mean(shape):
    rng = np.random.default_rng(0)
    draws = np.array([sample_number_of_runs(5.0, shape, rng) for _ in range(20_000)])
    assert draws.min() >= 1
    assert draws.mean() == pytest.approx(5.0, rel=0.05)


@pytest.mark.parametrize("mean, shape", [(1.3, 1.0), (2.0, 0.01), (1.05, 0.3)])
def test_runs_drawn_by_inversion_follow_the_truncated_law(mean, shape):
    # Where rejection would rarely accept (1 - gamma^eta < 1/2), the law is
    # inverted; its frequencies are those of the negative binomial
    # conditioned on K >= 1 (a chi-squared test at a fixed seed).
    stats = pytest.importorskip("scipy.stats")
    gamma = truncated_negative_binomial_gamma(mean, shape)
    assert -math.expm1(shape * math.log(gamma)) < 0.5
    rng = np.random.default_rng(3)
    draws = np.array([sample_number_of_runs(mean, shape, rng) for _ in range(20_000)])
    k = np.arange(1, draws.max() + 1)
    pmf = stats.nbinom.pmf(k, shape, gamma) / stats.nbinom.sf(0, shape, gamma)
    expected = pmf * draws.size
    observed = np.bincount(draws, minlength=k.size + 1)[1:]
    kept = expected > 5
    chi2 = np.sum((observed[kept] - expected[kept]) ** 2 / expected[kept])
    assert stats.chi2.sf(chi2, max(kept.sum() - 1, 1)) > 1e-3
    assert draws.mean() == pytest.approx(mean, rel=0.05)


class _CountingGenerator:
    """A seeded numpy Generator that counts the draws asked of it."""

    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.calls = 0

    def __getattr__(self, name):
        self.calls += 1
        return getattr(self.rng, name)


def test_a_mean_just_above_one_needs_no_rejection_loop():
    # Rejection accepts with probability 1 - gamma^eta, ~1e-4 at a mean of
    # 1 + 1e-4 (and ~1e-12 at 1 + 1e-12: it would never return).
    rng = _CountingGenerator()
    for mean in (1 + 1e-4, 1 + 1e-12):
        assert all(sample_number_of_runs(mean, 2.0, rng) >= 1 for _ in range(50))
    assert rng.calls <= 2 * 100


@pytest.mark.parametrize("mean, shape", [(1e8, 1e-3), (10.0, 1e-9)])
def test_the_cheaper_sampler_draws_large_means_and_tiny_shapes(mean, shape):
    # Inversion takes ~E[K] steps, rejection ~1 / (1 - gamma^eta) draws:
    # the cheaper one runs (inverting a mean of 1e8 would take 1e8 steps).
    rngs = [_CountingGenerator() for _ in range(5)]
    draws = [sample_number_of_runs(mean, shape, rng) for rng in rngs]
    assert min(draws) >= 1 and sum(rng.calls for rng in rngs) <= 5 * 200


@pytest.mark.parametrize("shape", [1e-300, 1e-320, 5e-324])
def test_tiny_shapes_tend_to_the_logarithmic_distribution(shape):
    # gamma (1 - gamma^eta) underflowed to 0 in the mean (ZeroDivisionError),
    # and eta (1 - gamma) / (1 - gamma^eta) in the inversion's P(K = 1).
    logarithmic = truncated_negative_binomial_gamma(4.0, 0.0)
    assert truncated_negative_binomial_gamma(4.0, shape) == pytest.approx(
        logarithmic, rel=1e-9
    )
    rng = np.random.default_rng(0)
    draws = np.array([sample_number_of_runs(4.0, shape, rng) for _ in range(2000)])
    assert draws.min() >= 1
    # P(K = 1) of the logarithmic distribution, (1 - gamma) / -log(gamma).
    p1 = (1 - logarithmic) / -math.log(logarithmic)
    assert np.mean(draws == 1) == pytest.approx(p1, abs=0.04)


def test_runs_that_cannot_be_drawn_as_accounted_are_refused():
    names = ("n_runs", "runs_distribution")
    # 1 - gamma rounds to 1: numpy's logarithmic series refused it when drawn.
    with pytest.raises(ValueError, match="n_runs=1e\\+15 with runs_distribution=0"):
        check_number_of_runs(1e15, 0.0, names=names)
    with pytest.raises(ValueError, match="mean=1e\\+15"):
        sample_number_of_runs(1e15, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="negative binomial"):
        check_number_of_runs(1e30, 1.0)
    with pytest.raises(ValueError, match="no float64 gamma"):
        check_number_of_runs(4.0, 1e300)
    # The logarithmic distribution is refused from one mean on (about 5.7e5,
    # where 1 - gamma can round gamma by the tolerance), not by the luck of
    # each mean's rounding (3e6 was refused, 6.45e7 accepted).
    for mean in (6e5, 3e6, 6.45e7, 1e8):
        with pytest.raises(ValueError, match="logarithmic distribution"):
            check_number_of_runs(mean, 0.0)
    # The usual ones are drawn with the gamma they always had.
    for mean in (1.3, 4.0, 1e3, 5e5, 1e6):
        for shape in (0.0, 0.5, 1.0, 2.0):
            if shape == 0.0 and mean > 5.7e5:
                continue
            gamma = truncated_negative_binomial_gamma(mean, shape)
            assert check_number_of_runs(mean, shape) == gamma


def test_bad_distribution_parameters():
    with pytest.raises(ValueError, match="mean number of runs"):
        truncated_negative_binomial_gamma(0.5, 1.0)
    with pytest.raises(ValueError, match="shape"):
        truncated_negative_binomial_gamma(3.0, -1.0)


def _theorem2_epsilon(sigma, mean, shape, delta):
    """Theorem 2 of Papernot and Steinke for a Gaussian run, written out.

    A Gaussian with noise multiplier sigma is (lam, lam / (2 sigma^2))-RDP.
    The best of K ~ D_{eta, gamma} runs is (lam, eps')-RDP with
    eps' = eps(lam) + (1 + eta) (1 - 1/lam_hat) eps(lam_hat)
           + (1 + eta) log(1/gamma) / lam_hat + log(E[K]) / (lam - 1),
    minimized over lam_hat. RDP is monotone in lam, so eps'(lam) may be
    replaced by its minimum over larger orders. The RDP curve is converted
    to (eps, delta)-DP with dp-accounting's conversion (Canonne, Kamath and
    Steinke), so that the comparison checks the selection bound alone.
    """
    orders = np.asarray(_RDP_ORDERS)
    rdp = orders / (2 * sigma**2)
    gamma = truncated_negative_binomial_gamma(mean, shape)
    c = (1 + shape) * np.min((1 - 1 / orders) * rdp + math.log(1 / gamma) / orders)
    rdp_out = rdp + c + math.log(mean) / (orders - 1)
    rdp_out = np.minimum.accumulate(rdp_out[::-1])[::-1]
    return compute_epsilon(orders, rdp_out, delta)[0]


@pytest.mark.parametrize("sigma", [2.0, 5.0, 20.0])
@pytest.mark.parametrize("mean, shape", [(3.0, 0.0), (10.0, 1.0), (6.0, 0.5)])
def test_accountant_implements_theorem_2(sigma, mean, shape):
    delta = 1e-5
    event = repeat_and_select_event(gaussian_event(sigma), mean, shape)
    assert isinstance(event, RepeatAndSelectDpEvent)
    ours = _theorem2_epsilon(sigma, mean, shape, delta)
    accounted = epsilon_of(event, delta, "rdp")
    assert accounted == pytest.approx(ours, rel=1e-9)


def test_selection_costs_more_than_one_run_and_less_than_composing_all():
    one = epsilon_of(gaussian_event(5.0), 1e-5)
    best = epsilon_of(repeat_and_select_event(gaussian_event(5.0), 10.0, 1.0), 1e-5)
    ten = epsilon_of(gaussian_event(5.0 / math.sqrt(10)), 1e-5)  # 10 composed
    assert one < best < ten


def test_calibrate_selection_meets_the_target_tightly():
    calls = []

    def make_run_event(t):
        calls.append(t)
        return gaussian_event(3.0 / t)

    t, event = calibrate_selection(make_run_event, 1.0, 1e-5, 5.0, 0.0, hi=1.0)
    eps = epsilon_of(event, 1e-5)
    assert eps <= 1.0
    assert eps >= 0.99
    assert event == repeat_and_select_event(make_run_event(t), 5.0, 0.0)
    assert len(calls) <= 8  # a few accountant calls, not a bisection


def test_calibrate_selection_refuses_a_target_below_the_floor():
    floor = selection_floor(10.0, 1.0, 1e-5)
    assert 0 < floor < 0.1
    with pytest.raises(ValueError, match="below the cost of the random selection"):
        calibrate_selection(
            lambda t: gaussian_event(1.0 / t), floor / 2, 1e-5, 10.0, 1.0, hi=1.0
        )


def test_calibrate_selection_reports_runs_that_cannot_be_calibrated():
    def make_run_event(t):
        if t < 0.5:
            raise ValueError("too small for the run's own calibration")
        return gaussian_event(1.0 / t)

    with pytest.raises(ValueError, match="too small for this search"):
        calibrate_selection(make_run_event, 0.5, 1e-5, 5.0, 0.0, hi=0.5)


@pytest.mark.parametrize("eps0", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("mean", [2.0, 10.0])
def test_pure_dp_runs_give_the_published_pure_dp_bound(eps0, shape, mean):
    # For an eps0-DP run, Theorem 2 of Papernot and Steinke tends to
    # ((2 + eta) eps0)-DP as the orders grow (their pure-DP corollary; for the
    # geometric distribution, eta = 1, it is Liu and Talwar's 3 eps0). With a
    # finite grid of orders the accountant may exceed it by at most the
    # log(E[K]) / (lambda - 1) and conversion terms at the largest order.
    import dp_accounting

    delta = 1e-9
    event = repeat_and_select_event(dp_accounting.LaplaceDpEvent(1 / eps0), mean, shape)
    slack = (math.log(mean) + math.log(1 / delta)) / (max(_RDP_ORDERS) - 1)
    assert epsilon_of(event, delta) <= (2 + shape) * eps0 + slack
