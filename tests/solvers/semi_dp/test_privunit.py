# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivUnit (thesis Algorithm 12): its epsilon, its ingredients, its messages."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from sklearn_dpfair._solvers.semi_dp._privunit import (
    MAX_LOCAL_EPSILON,
    MIN_CAP,
    PrivUnit,
    local_epsilon_event,
)
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._releases import pure_epsilon_of

EPSILONS = [0.1, 1.0, 4.0, 16.0, 128.0]
DIMS = [1, 2, 5, 51]


def _reference_epsilon(event):
    """dp-accounting's PLD under replace-one, built independently."""
    acc = pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(event)
    return acc.get_epsilon(0.0)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(epsilon=st.floats(0.01, 200.0), dim=st.integers(1, 3000))
def test_loss_formula_is_the_calibrated_epsilon_within_budget(epsilon, dim):
    # Formula (*) of the module (the largest log-ratio of two inputs'
    # output densities) equals the epsilon the event is built from, which
    # dp-accounting certifies within the budget and at most one PLD
    # discretization step below it.
    unit = PrivUnit.calibrated(epsilon, dim)
    assert unit.loss_bound() == pytest.approx(unit.epsilon, rel=1e-7, abs=1e-9)
    certified = epsilon_of(unit.event, 0.0, "pld")
    assert certified <= epsilon * (1 + 1e-9)
    assert certified >= epsilon - 2e-4
    assert _reference_epsilon(unit.event) == pytest.approx(certified, abs=1e-12)
    assert pure_epsilon_of(unit.event) == pytest.approx(unit.epsilon, rel=1e-12)
    assert 0 < unit.m <= 1 and 0 < unit.cap <= 0.5


@pytest.mark.parametrize("dim", [2, 3, 10])
def test_cap_share_and_cap_probability_match_monte_carlo(dim):
    # The two ingredients of (*), checked against sampling rather than the
    # formulas: the cap's share A of the uniform sphere, and the share p of
    # messages that land in the input's cap.
    unit = PrivUnit.calibrated(1.0, dim)
    rng = np.random.default_rng(0)
    n = 40_000
    g = rng.standard_normal((n, dim))
    t = g[:, 0] / np.linalg.norm(g, axis=1)
    share = special.betainc((dim - 1) / 2, (dim - 1) / 2, unit.cap)
    assert np.mean(t >= unit.gamma) == pytest.approx(share, abs=4 * math.sqrt(share / n))
    v = np.eye(dim)[0]
    inside = [
        float(unit.randomize(v, rng)[0] * unit.m) >= unit.gamma for _ in range(4000)
    ]
    assert np.mean(inside) == pytest.approx(unit.p, abs=4 * math.sqrt(0.25 / 4000))


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 16.0])
@pytest.mark.parametrize("dim", DIMS)
def test_messages_are_unbiased_and_of_norm_one_over_m(epsilon, dim):
    unit = PrivUnit.calibrated(epsilon, dim)
    rng = np.random.default_rng(1)
    v = rng.standard_normal(dim)
    v /= np.linalg.norm(v)
    n = 6000
    messages = np.array([unit.randomize(v, rng) for _ in range(n)])
    assert np.isfinite(messages).all()
    np.testing.assert_allclose(np.linalg.norm(messages, axis=1), 1 / unit.m, rtol=1e-9)
    se = messages.std(axis=0) / math.sqrt(n)
    # 5 standard errors per coordinate (a bias of 1/m would be ~sqrt(n) se);
    # at a large budget the complement (probability q ~ 1e-7) is rarely
    # drawn, leaving a sample mean off by up to q / m.
    assert np.all(np.abs(messages.mean(axis=0) - v) <= 5 * se + 1e-6 / unit.m)


@pytest.mark.parametrize("dim", [2, 7])
def test_density_ratio_of_any_two_inputs_is_at_most_epsilon(dim):
    # For outputs drawn under one input, the log-ratio of the output density
    # under two inputs never exceeds epsilon and reaches it for antipodal
    # inputs (the bound is tight, so the accounted epsilon is not loose).
    unit = PrivUnit.calibrated(2.0, dim)
    rng = np.random.default_rng(2)
    v = np.eye(dim)[0]
    others = [-v, np.eye(dim)[1], (v + np.eye(dim)[1]) / math.sqrt(2), v]
    ratios = []
    for _ in range(500):
        out = unit.randomize(v, rng)
        for w in others:
            ratios.append(unit.log_density(out, v) - unit.log_density(out, w))
    assert max(ratios) <= unit.epsilon + 1e-9
    assert max(ratios) == pytest.approx(unit.epsilon, rel=1e-9)
    assert min(ratios) >= -unit.epsilon - 1e-9


def test_dimension_one_is_randomized_response():
    unit = PrivUnit.calibrated(1.0, 1)
    assert unit.m == pytest.approx(math.tanh(0.5))
    assert unit.p == pytest.approx(math.e / (1 + math.e))
    out = unit.randomize(np.array([1.0]), np.random.default_rng(0))
    assert abs(out[0]) == pytest.approx(1 / unit.m)


@pytest.mark.parametrize("dim", [2, 11, 2001])
def test_largest_budget_stays_finite_and_unbiased(dim):
    unit = PrivUnit.calibrated(MAX_LOCAL_EPSILON, dim)
    rng = np.random.default_rng(3)
    v = np.eye(dim)[-1]
    messages = np.array([unit.randomize(v, rng) for _ in range(500)])
    assert np.isfinite(messages).all()
    assert np.abs(messages.mean(axis=0) - v).max() < 0.5


def test_budget_outside_range_is_refused():
    with pytest.raises(ValueError, match="epsilon"):
        PrivUnit.calibrated(MAX_LOCAL_EPSILON * 2, 3)
    with pytest.raises(ValueError, match="epsilon"):
        PrivUnit.calibrated(0.0, 3)


def test_event_is_binary_randomized_response():
    event = local_epsilon_event(1.0)
    assert isinstance(event, dp_accounting.RandomizedResponseDpEvent)
    assert event.noise_parameter == pytest.approx(2 / (1 + math.e))


@pytest.mark.parametrize("epsilon", [40.0, 100.0, MAX_LOCAL_EPSILON])
@pytest.mark.parametrize("dim", [2, 3, 10])
def test_cap_stays_resolvable_in_float64_and_spends_the_budget(epsilon, dim):
    # A cap narrower than float64 resolves around the input would round its
    # draws onto the input itself; the split keeps the cap at the floor and
    # still spends exactly the calibrated epsilon (formula (*)).
    unit = PrivUnit.calibrated(epsilon, dim)
    assert unit.cap >= MIN_CAP * (1 - 1e-9)
    assert unit.loss_bound() == pytest.approx(unit.epsilon, rel=1e-7)


@pytest.mark.parametrize("dim", [2, 3])
def test_no_message_is_the_input_direction_at_a_large_budget(dim):
    # At epsilon = 100 in few dimensions the variance-optimal cap is ~1e-29,
    # below float64's resolution around v: each in-cap draw came out as
    # v / m bit for bit (a point mass no other input has), revealing the
    # record exactly. Every message must be a genuine draw off v.
    unit = PrivUnit.calibrated(100.0, dim)
    rng = np.random.default_rng(4)
    v = rng.standard_normal(dim)
    v /= np.linalg.norm(v)
    exact = v / unit.m
    messages = np.array([unit.randomize(v, rng) for _ in range(2000)])
    assert not np.any(np.all(messages == exact, axis=1))
    # ... and of the norm 1 / m of every message.
    np.testing.assert_allclose(np.linalg.norm(messages, axis=1), 1 / unit.m, rtol=1e-12)
