# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The Laplace mechanism, pure-epsilon accounting and the mechanism protocol."""

import math

import numpy as np
import pytest

from sklearn_dpfair.exceptions import PrivacyAccountingError
from sklearn_dpfair.privacy import GaussianMechanism, LaplaceMechanism, PrivacyBudget
from sklearn_dpfair.privacy._accounting import (
    composed_event,
    epsilon_of,
    gaussian_event,
    laplace_event,
    no_op_event,
    pure_epsilon,
)
from sklearn_dpfair.privacy._exponential import ExponentialMechanism
from sklearn_dpfair.privacy._mechanism import Mechanism
from sklearn_dpfair.privacy._releases import check_releases, logged_releases


def test_noise_has_the_laplace_scale():
    mech = LaplaceMechanism(sensitivity=3.0, noise_multiplier=0.5)
    noise = mech.privatize(np.zeros(200_000), np.random.default_rng(0))
    # Laplace(0, b): mean absolute deviation b = 1.5; 200k draws give a
    # standard error of b / sqrt(n) ~ 0.0034, the tolerance is 6 of them.
    assert np.mean(np.abs(noise)) == pytest.approx(1.5, abs=0.02)
    assert abs(np.median(noise)) < 0.02


def test_pure_epsilons_add_up_and_other_events_have_none():
    assert pure_epsilon(laplace_event(0.25)) == 4.0
    assert pure_epsilon(composed_event([laplace_event(0.5, 3), no_op_event()])) == 6.0
    assert pure_epsilon(gaussian_event(1.0)) is None
    assert pure_epsilon(composed_event([laplace_event(1.0), gaussian_event(1.0)])) is None
    assert epsilon_of(laplace_event(0.5, steps=2), 0.0) == 4.0
    with pytest.raises(ValueError, match="delta > 0"):
        epsilon_of(gaussian_event(1.0), 0.0)
    # With delta > 0 dp-accounting interprets the same event (a smaller epsilon).
    assert epsilon_of(laplace_event(0.5), 1e-5, "pld") <= 2.0 + 1e-6


def test_budget_calibrates_laplace_to_epsilon_over_steps():
    mech = PrivacyBudget(2.0, 0.0).laplace(1.5, steps=4)
    assert mech.noise_multiplier == 2.0 and mech.sensitivity == 1.5
    assert pure_epsilon(mech.event(steps=4)) == pytest.approx(2.0)
    off = PrivacyBudget(math.inf, 0.0).laplace(1.0)
    assert off.noise_multiplier == 0.0
    assert off.privatize(np.ones(2), np.random.default_rng(0)).tolist() == [1.0, 1.0]


def test_releases_are_logged_and_checked_against_the_event():
    mech = LaplaceMechanism(1.0, 0.5)
    rng = np.random.default_rng(0)
    with logged_releases() as log:
        mech.privatize(np.zeros(3), rng)
        mech.privatize(np.zeros(3), rng)
    check_releases(log, mech.event(steps=2), what="test")
    with pytest.raises(PrivacyAccountingError, match="laplace"):
        check_releases(log, mech.event(steps=1), what="test")
    # A Gaussian of the same loss level is another release.
    with pytest.raises(PrivacyAccountingError):
        check_releases(log, GaussianMechanism(1.0, 0.5).event(steps=2), what="test")


@pytest.mark.parametrize(
    "mechanism, norm",
    [
        (GaussianMechanism(1.0, 2.0), "l2"),
        (LaplaceMechanism(1.0, 2.0), "l1"),
        (ExponentialMechanism(sensitivity=1.0, epsilon=2.0), "linf"),
    ],
)
def test_every_mechanism_follows_the_protocol(mechanism, norm):
    assert isinstance(mechanism, Mechanism)
    assert mechanism.norm == norm
    assert mechanism.sensitivity == 1.0
    assert mechanism.event(steps=2) is not None


@pytest.mark.parametrize("sensitivity", [1e308, math.inf])
def test_a_noise_scale_that_overflows_is_refused(sensitivity):
    # Every noisy release would be inf or NaN.
    with pytest.raises(ValueError, match="overflows float64"):
        LaplaceMechanism(sensitivity, 2.0)
    # Without noise nothing is scaled (the non-private limit).
    unchanged = LaplaceMechanism(sensitivity, 0.0).privatize(
        np.ones(2), np.random.default_rng(0)
    )
    np.testing.assert_array_equal(unchanged, np.ones(2))


@pytest.mark.parametrize("sensitivity", [5e-324, 1e-321])
def test_a_noise_scale_below_the_smallest_normal_is_refused(sensitivity):
    # 0.5 * 5e-324 rounds to 0: the vector was released exactly while its
    # event claimed epsilon 2; larger subnormal scales draw from a grid.
    with pytest.raises(ValueError, match=r"^clip_norm is too small: .*smallest normal"):
        LaplaceMechanism(sensitivity, 0.5)
    # A release of sensitivity 0 depends on no record: no noise needed.
    LaplaceMechanism(0.0, 0.5)


def test_an_infinite_noise_multiplier_is_named():
    with pytest.raises(ValueError, match=r"^noise_multiplier is inf"):
        LaplaceMechanism(1.0, math.inf)
    # steps / epsilon overflows: the budget's epsilon is at fault, not a
    # clip norm (which the message blamed before).
    with pytest.raises(ValueError, match=r"^noise_multiplier is inf.*epsilon"):
        PrivacyBudget(1e-320, 0.0).laplace(1.0)


@pytest.mark.parametrize("steps", [2.5, 0.5, -1])
def test_the_laplace_event_refuses_steps_that_are_not_a_count(steps):
    # 2.5 steps were accounted as two.
    with pytest.raises(ValueError, match=r"^steps must be an integer >= 0"):
        LaplaceMechanism(1.0, 1.0).event(steps=steps)
    with pytest.raises(ValueError, match=r"^steps must be an integer >= 0"):
        laplace_event(1.0, steps)


@pytest.mark.parametrize(
    "sensitivity, noise_multiplier, name, error",
    [
        (1.0, math.nan, "noise_multiplier", ValueError),
        (math.nan, 0.0, "sensitivity", ValueError),
        (-1.0, 1.0, "sensitivity", ValueError),
        (1.0, -0.5, "noise_multiplier", ValueError),
        (10**400, 1.0, "sensitivity", ValueError),
        (1.0, 10**400, "noise_multiplier", ValueError),
        (True, 1.0, "sensitivity", TypeError),
        (None, 1.0, "sensitivity", TypeError),
    ],
    ids=["nan-noise", "nan-sensitivity", "negative-sensitivity", "negative-noise",
         "huge-int-sensitivity", "huge-int-noise", "bool", "none-with-noise"],
)
def test_a_parameter_that_is_not_a_number_is_named(
    sensitivity, noise_multiplier, name, error
):
    # NaN noise was accepted silently; ints beyond the largest float raised
    # OverflowError; a NaN sensitivity was blamed on an overflowing clip_norm.
    with pytest.raises(error, match=rf"^{name}"):
        LaplaceMechanism(sensitivity, noise_multiplier)


def test_a_numpy_float16_sensitivity_scales_in_float64():
    # 2 * np.float16(60000) is inf in float16: refused as an overflow before.
    mech = LaplaceMechanism(np.float16(60000), 2.0)
    assert mech.noise_scale == 120000.0
    # Without noise nothing is checked beyond the numbers (no clipping).
    LaplaceMechanism(None, 0.0)
