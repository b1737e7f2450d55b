# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The private quantile's accounting and the noisy histogram's sensitivity."""

import math

import numpy as np
import pytest

from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
    histogram_quantiles,
    histogram_support,
)
from sklearn_dpfair.privacy._quantile import (
    POSITIVE_EDGES,
    SIGNED_DECADE_EDGES,
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


@pytest.mark.parametrize("center, spread", [(150.0, 75.0), (0.0, 1.0), (-3e4, 1e3)])
def test_private_target_scales_on_a_few_hundred_rows(center, spread):
    # The scales of the "dp-sgd" solver at n = 300, epsilon = 1 (half the
    # budget on them): rough, but within the data's own range, whatever its
    # units. The old private median roamed a 16-decade grid.
    from sklearn_dpfair._solvers.heavy_tail._dpsgd import _private_target_scales

    y = np.random.default_rng(1).normal(center, spread, size=300)
    rhos = {"target_range": 0.0025, "target_location": 0.0075, "target_scale": 0.0025}
    for seed in range(20):
        location, scale = _private_target_scales(
            y, 1.0, rhos, None, np.random.default_rng(seed)
        )
        assert abs(location - np.median(y)) < 0.75 * spread
        assert 0.3 < scale / spread < 3


def test_histogram_support_reads_the_bulk_of_the_data():
    y = np.random.default_rng(0).normal(150.0, 75.0, size=3000)
    counts, threshold = noisy_histogram(
        y, 0.01, np.random.default_rng(1), SIGNED_DECADE_EDGES
    )
    # 2.3% of the rows are negative: the [-100, -10) decade shows too.
    assert histogram_support(counts, threshold) == (-100.0, 1000.0)
    assert histogram_support(np.zeros_like(counts), threshold) is None


def test_histogram_quantiles_without_signal_is_none():
    counts, threshold = noisy_histogram(
        np.ones(3), 1e-4, np.random.default_rng(0), SIGNED_EDGES
    )
    assert histogram_quantiles(np.zeros_like(counts), threshold, (0.5,)) is None
