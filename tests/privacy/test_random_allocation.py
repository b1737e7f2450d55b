# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random-allocation (balls-and-bins) accounting: the event, its epsilon, calibration."""

import collections
import math
import sys

import dp_accounting
import pytest

from sklearn_dpfair.privacy._accounting import epsilon_of, noisy_sgd_event
from sklearn_dpfair.privacy._random_allocation import (
    RandomAllocationDpEvent,
    allocation_epsilon,
    calibrate_allocation_noise,
    random_allocation_event,
    require_pld_accounting,
)
from sklearn_dpfair.privacy._releases import expected_releases

DELTA = 1e-5


def test_event_states_its_releases_and_degenerate_cases():
    event = random_allocation_event(2.0, 5, 3)
    assert isinstance(event, RandomAllocationDpEvent)
    assert isinstance(event, dp_accounting.DpEvent)
    assert event.n_releases == 15
    # The run-time check expects t * epochs Gaussian releases of its noise.
    assert expected_releases(event) == collections.Counter({("gaussian", 2.0): 15})
    # One step per epoch: every record in every step, dp-accounting's own event.
    assert random_allocation_event(2.0, 1, 3) == dp_accounting.SelfComposedDpEvent(
        dp_accounting.GaussianDpEvent(2.0), 3
    )
    assert isinstance(random_allocation_event(0.0, 5, 3), dp_accounting.NonPrivateDpEvent)
    with pytest.raises(ValueError, match="steps_per_epoch"):
        random_allocation_event(1.0, 0, 3)


def test_rdp_refuses_the_event():
    # Only its PLD reads it: no accountant may silently read it as Poisson.
    with pytest.raises(ValueError, match="accountant='pld'"):
        epsilon_of(random_allocation_event(2.0, 5, 1), DELTA, "rdp")


def test_missing_package_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "PLD_accounting", None)
    with pytest.raises(ImportError, match="pip install pld-accounting"):
        require_pld_accounting()


def test_epsilon_is_the_packages_random_allocation_bound():
    pa = pytest.importorskip("PLD_accounting")
    event = random_allocation_event(2.0, 5, 2)
    eps = epsilon_of(event, DELTA, "pld")
    assert eps == allocation_epsilon(event, DELTA)
    # Between the package's tightest lower bound (geometric convolution,
    # dominated) and its coarse upper bound at a 10x wider grid.
    params = pa.PrivacyParams(sigma=2.0, num_steps=5, num_epochs=2, delta=DELTA)
    geom = pa.AllocationSchemeConfig(convolution_method=pa.ConvolutionMethod.GEOM)
    lower = pa.gaussian_allocation_epsilon_configurable(
        params=params, config=geom, bound_type=pa.BoundType.IS_DOMINATED
    )
    assert lower <= eps <= allocation_epsilon(event, DELTA, coarse=True)
    assert eps <= 1.05 * lower
    # More noise, fewer epochs: less epsilon.
    assert epsilon_of(random_allocation_event(3.0, 5, 2), DELTA, "pld") < eps
    assert epsilon_of(random_allocation_event(2.0, 5, 1), DELTA, "pld") < eps


def test_allocation_is_not_poisson():
    # Same noise, t = 20 steps per epoch, 2 epochs: random allocation is
    # smaller than Poisson sampling at rate 1/20 here (0.62 vs 0.70); the
    # record may only state the former for balls-and-bins batches.
    pytest.importorskip("PLD_accounting")
    allocation = epsilon_of(random_allocation_event(2.0, 20, 2), DELTA, "pld")
    poisson = epsilon_of(noisy_sgd_event(2.0, 1 / 20, 40), DELTA, "pld")
    assert allocation < 0.95 * poisson


def test_calibration_meets_the_budget_and_is_tight():
    pytest.importorskip("PLD_accounting")
    sigma = calibrate_allocation_noise(2.0, DELTA, 5, 2)
    assert epsilon_of(random_allocation_event(sigma, 5, 2), DELTA, "pld") <= 2.0
    # Within 1% of the smallest sigma that does.
    assert epsilon_of(random_allocation_event(0.99 * sigma, 5, 2), DELTA, "pld") > 2.0
    assert calibrate_allocation_noise(math.inf, DELTA, 5, 2) == 0.0


def test_collapsed_coarse_grid_falls_back_to_the_records_grid():
    # 3000 steps per epoch at sigma = 5: pld-accounting's coarse grid
    # collapsed (ValueError "x_max must be greater than x_min"), which
    # DPLogisticRegression(batch_sampling="balls_and_bins", batch_size=1)
    # on 3000 rows raised from inside its calibration.
    pytest.importorskip("PLD_accounting")
    event = random_allocation_event(5.0, 3000, 1)
    assert allocation_epsilon(event, 1e-5, coarse=True) == allocation_epsilon(
        event, 1e-5
    )
    sigma = calibrate_allocation_noise(1.0, 1e-5, 3000, 1)
    assert allocation_epsilon(random_allocation_event(sigma, 3000, 1), 1e-5) <= 1.0


def test_a_grid_the_package_cannot_build_is_a_clear_error():
    pytest.importorskip("PLD_accounting")
    with pytest.raises(ValueError, match="batch_sampling='poisson'"):
        allocation_epsilon(random_allocation_event(50.0, 10_000, 1), 1e-5)
