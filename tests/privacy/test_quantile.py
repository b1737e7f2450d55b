# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The private quantile (exponential mechanism) and noisy histogram (Gaussian)."""

import math

import numpy as np
import pytest

from sklearn_dpfair.privacy import GaussianMechanism
from sklearn_dpfair.privacy._exponential import ExponentialMechanism
from sklearn_dpfair.privacy._quantile import (
    LOG_GRID,
    POSITIVE_EDGES,
    SIGNED_EDGES,
    em_epsilon,
    noisy_histogram,
    private_quantile,
    quantile_utility,
)


def test_exponential_mechanism_uses_the_bounded_range_conversion():
    # eps-bounded-range => eps^2 / 8-zCDP (Cesar and Rogers, 2021): a rho
    # buys twice the eps of the pure-DP conversion eps^2 / 2.
    for rho in (1e-4, 0.01, 0.5):
        assert em_epsilon(rho) ** 2 / 8 == pytest.approx(rho)
        assert em_epsilon(rho) == pytest.approx(2 * math.sqrt(2 * rho))


def test_weighted_utility_counts_weights_and_keeps_sensitivity_one():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    grid = np.array([1.5, 2.5, 3.5])
    np.testing.assert_array_equal(
        quantile_utility(values, 0.5, grid, weights=np.ones(4)),
        quantile_utility(values, 0.5, grid),
    )
    weights = np.array([0.5, 1.0, 0.0, 1.0])
    u = quantile_utility(values, 0.5, grid, weights=weights)
    # counts 0.5, 1.5, 1.5 against half of 2.5
    np.testing.assert_allclose(u, -np.abs(np.array([0.5, 1.5, 1.5]) - 1.25))
    removed = quantile_utility(values[1:], 0.5, grid, weights=weights[1:])
    assert np.max(np.abs(u - removed)) <= 1.0
    assert private_quantile(values, 0.5, np.inf, None, grid, weights) in grid


@pytest.mark.parametrize("edges", [SIGNED_EDGES, POSITIVE_EDGES])
def test_histogram_neighbours_differ_in_one_count_by_at_most_one(edges):
    rng = np.random.default_rng(0)
    values = rng.standard_t(2, size=500) * 100
    for extra in (np.inf, -np.inf, np.nan, 1.7e308, -1.7e308, 0.0, 1e-300, 5.0):
        exact, _ = noisy_histogram(values, math.inf, None, edges)
        added, _ = noisy_histogram(np.append(values, extra), math.inf, None, edges)
        diff = added - exact
        assert np.sum(diff != 0) == 1 and np.sum(diff) == 1.0
    weights = np.full(501, 0.25)
    exact, _ = noisy_histogram(values, math.inf, None, edges, weights[:500])
    added, _ = noisy_histogram(np.append(values, 3.0), math.inf, None, edges, weights)
    assert np.sum(np.abs(added - exact)) == pytest.approx(0.25)


def test_histogram_noise_and_threshold_follow_rho():
    counts, threshold = noisy_histogram(
        np.zeros(10), 0.02, np.random.default_rng(0), SIGNED_EDGES
    )
    sigma = 1 / math.sqrt(2 * 0.02)
    assert threshold == pytest.approx(4 * sigma)
    assert counts.shape == (len(SIGNED_EDGES) - 1,)


def test_draws_go_through_the_privacy_mechanisms():
    # The quantile is ExponentialMechanism.select on the utility (sensitivity
    # 1, epsilon sqrt(8 rho)); the histogram GaussianMechanism.privatize of
    # the counts (sensitivity 1, sigma 1 / sqrt(2 rho)): the same draws.
    values = np.random.default_rng(0).lognormal(size=500)
    rho = 0.01
    chosen = private_quantile(values, 0.5, rho, np.random.default_rng(3))
    mech = ExponentialMechanism(sensitivity=1.0, epsilon=em_epsilon(rho))
    index = mech.select(quantile_utility(values, 0.5), np.random.default_rng(3))
    assert chosen == LOG_GRID[index]
    counts, _ = noisy_histogram(values, rho, np.random.default_rng(4), POSITIVE_EDGES)
    exact, _ = noisy_histogram(values, math.inf, None, POSITIVE_EDGES)
    gauss = GaussianMechanism(1.0, 1.0 / math.sqrt(2 * rho))
    np.testing.assert_array_equal(counts, gauss.privatize(exact, np.random.default_rng(4)))
