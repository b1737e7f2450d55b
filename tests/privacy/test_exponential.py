"""The exponential mechanism (Gumbel-max) and its zCDP accounting."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_dpfair.privacy._accounting import (
    epsilon_of,
    exponential_mechanism_event,
    exponential_mechanism_rho,
    zcdp_event,
)
from sklearn_dpfair.privacy._exponential import (
    ExponentialMechanism,
    epsilon_per_selection,
    least_sensitivity,
    selection_scale_problem,
)
from sklearn_dpfair.privacy._zcdp import rho_for_epsilon


def _em_log_probs(scores, sensitivity, epsilon):
    logits = epsilon * np.asarray(scores) / (2 * sensitivity)
    return logits - logsumexp(logits)


def test_gumbel_max_samples_the_exponential_mechanism():
    scores = np.array([0.0, 1.0, 2.5, -1.0])
    mech = ExponentialMechanism(sensitivity=1.0, epsilon=1.5)
    rng = np.random.default_rng(0)
    n_draws = 40000
    counts = np.bincount(
        [mech.select(scores, rng) for _ in range(n_draws)], minlength=4
    )
    expected = np.exp(_em_log_probs(scores, 1.0, 1.5)) * n_draws
    # Chi-square statistic with 3 degrees of freedom: 16.3 is its 0.999 quantile.
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 16.3


def test_infinite_epsilon_is_argmax_and_draws_nothing():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    mech = ExponentialMechanism(sensitivity=1.0, epsilon=math.inf)
    assert mech.select(np.array([0.0, 5.0, 3.0]), rng) == 1
    assert rng.bit_generator.state == state
    assert mech.rho == math.inf


def test_selection_uses_only_the_given_generator():
    mech = ExponentialMechanism(sensitivity=1.0, epsilon=0.1)
    scores = np.zeros(1000)
    a = [mech.select(scores, np.random.default_rng(3)) for _ in range(3)]
    assert len(set(a)) == 1
    rng = np.random.default_rng(3)
    assert len({mech.select(scores, rng) for _ in range(20)}) > 1


@pytest.mark.parametrize("n_candidates", [2, 5, 40])
def test_renyi_divergence_within_bounded_range_zcdp(n_candidates):
    """D_alpha(P || P') <= alpha epsilon0^2 / 8 for scores that differ by <= Delta.

    The bounded-range bound is much smaller than the pure-DP conversion
    (alpha epsilon0^2 / 2): the check also shows it is the one we use.
    """
    rng = np.random.default_rng(n_candidates)
    sensitivity, epsilon0 = 0.3, 2.0
    rho = exponential_mechanism_rho(epsilon0)
    assert rho == pytest.approx(epsilon0**2 / 8)
    alphas = np.array([1.01, 1.5, 2.0, 4.0, 16.0, 64.0])
    worst = 0.0
    for trial in range(300):
        u = rng.normal(scale=2.0, size=n_candidates)
        if trial % 3 == 0:  # extreme neighbours: every score moves by +-Delta
            shift = sensitivity * rng.choice([-1.0, 1.0], size=n_candidates)
        else:
            shift = rng.uniform(-sensitivity, sensitivity, size=n_candidates)
        logp = _em_log_probs(u, sensitivity, epsilon0)
        logq = _em_log_probs(u + shift, sensitivity, epsilon0)
        for alpha in alphas:
            d = logsumexp(alpha * logp + (1 - alpha) * logq) / (alpha - 1)
            assert d <= alpha * rho * (1 + 1e-9) + 1e-12
            worst = max(worst, d / (alpha * rho))
    # The bound is not vacuous: some pair gets within a factor 4 of it.
    assert worst > 0.25


def test_epsilon_per_selection_meets_the_budget():
    for epsilon, steps in [(0.5, 10), (1.0, 300), (3.0, 1000)]:
        rho = rho_for_epsilon(epsilon, 1e-5)
        eps0 = epsilon_per_selection(rho, steps)
        assert steps * exponential_mechanism_rho(eps0) <= rho
        event = exponential_mechanism_event(eps0, steps)
        spent = epsilon_of(event, 1e-5, "rdp")
        assert spent <= epsilon
        assert spent >= 0.99 * epsilon
    assert epsilon_per_selection(math.inf, 5) == math.inf
    with pytest.raises(ValueError, match="n_selections"):
        epsilon_per_selection(1.0, 0)


def test_exponential_mechanism_event_is_composed_zcdp():
    event = exponential_mechanism_event(0.2, 50)
    assert isinstance(event, dp_accounting.SelfComposedDpEvent)
    assert event.count == 50
    assert event.event == dp_accounting.ZCDpEvent(0.2**2 / 8)
    assert epsilon_of(event, 1e-6) == pytest.approx(
        epsilon_of(zcdp_event(50 * 0.2**2 / 8), 1e-6), rel=1e-9
    )
    assert exponential_mechanism_event(0.2) == dp_accounting.ZCDpEvent(0.2**2 / 8)
    assert isinstance(
        exponential_mechanism_event(math.inf, 3), dp_accounting.NonPrivateDpEvent
    )
    assert isinstance(exponential_mechanism_event(0.2, 0), dp_accounting.NoOpDpEvent)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sensitivity": 0.0, "epsilon": 1.0}, "sensitivity"),
        ({"sensitivity": math.inf, "epsilon": 1.0}, "sensitivity"),
        ({"sensitivity": math.nan, "epsilon": 1.0}, "sensitivity"),
        ({"sensitivity": 1.0, "epsilon": 0.0}, "epsilon"),
        ({"sensitivity": 1.0, "epsilon": -1.0}, "epsilon"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ExponentialMechanism(**kwargs)


def test_a_sensitivity_the_logits_cannot_use_is_refused():
    # Below the smallest normal float64 the factor epsilon0 / (2 Delta) is
    # inf and the logits inf or NaN: the selection was the argmax whatever
    # the Gumbel noise, while the event stated epsilon0.
    with pytest.raises(ValueError, match="sensitivity is too small.*subnormal"):
        ExponentialMechanism(sensitivity=1e-310, epsilon=1.0)
    # A normal sensitivity whose factor still overflows.
    with pytest.raises(ValueError, match="sensitivity is too small.*overflows"):
        ExponentialMechanism(sensitivity=1e-306, epsilon=2000.0)
    # No noise (epsilon0 = inf) draws nothing: any sensitivity selects.
    mech = ExponentialMechanism(sensitivity=1e-310, epsilon=math.inf)
    assert mech.select(np.array([0.0, 2e-310, 1e-310]), np.random.default_rng(0)) == 1
    for epsilon in [1.0, 2000.0, 1e300]:
        least = least_sensitivity(epsilon)
        assert selection_scale_problem(least, epsilon) is None
        ExponentialMechanism(sensitivity=least, epsilon=epsilon)
        assert selection_scale_problem(math.nextafter(least, 0.0), epsilon)
