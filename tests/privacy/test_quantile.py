# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The private quantile (exponential mechanism) and noisy histogram (Gaussian)."""

import math
import sys

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
    quantile_bin_utility,
    quantile_sensitivity,
    quantile_utility,
)
from sklearn_dpfair.privacy._releases import logged_releases


@pytest.mark.parametrize("rng", [0, None, np.random.RandomState(0)])
def test_a_private_draw_refuses_an_rng_that_is_not_a_generator(rng):
    # The rng was touched only after the private counts were formed, and
    # failed there with an AttributeError ("'int' object has no attribute").
    values = np.random.default_rng(0).lognormal(size=100)
    with pytest.raises(TypeError, match="^rng must be a numpy.random.Generator"):
        noisy_histogram(values, 1.0, rng)
    with pytest.raises(TypeError, match="^rng must be a numpy.random.Generator"):
        private_quantile(values, 0.5, 1.0, rng)


def test_scalar_values_and_an_empty_grid_are_refused_naming_them():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="^values must be 1-D"):
        noisy_histogram(3.0, 1.0, rng)
    with pytest.raises(ValueError, match="^values must be 1-D"):
        private_quantile(3.0, 0.5, 1.0, rng)
    values = rng.lognormal(size=100)
    for grid, candidates in (([1.0], "bins"), ([], "points")):
        with pytest.raises(ValueError, match="^grid holds no candidate"):
            private_quantile(
                values, 0.5, 1.0, rng, grid=np.array(grid), candidates=candidates
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


def _selection_probabilities(utility, rho, sensitivity):
    logits = em_epsilon(rho) * utility / (2.0 * sensitivity)
    p = np.exp(logits - logits.max())
    return p / p.sum()


@pytest.mark.parametrize("quantile", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("weighted", [False, True])
def test_quantile_utility_sensitivity_on_neighbouring_datasets(quantile, weighted):
    # Add/remove: one record moves count - q n by a (1{v <= c} - q), at most
    # max(q, 1 - q); replace-one: by at most 1. Both bounds are attained,
    # and the records include a huge and a non-finite one.
    rng = np.random.default_rng(0)
    grid = np.linspace(-3.0, 3.0, 61)
    base = rng.normal(size=50)
    w = rng.uniform(0.2, 1.0, size=51) if weighted else np.ones(51)
    add_bound = quantile_sensitivity(quantile, "add_remove")
    assert add_bound == max(quantile, 1.0 - quantile)
    assert quantile_sensitivity(quantile) == 1.0
    worst_add = worst_replace = 0.0
    for extra in (-10.0, 0.0, 0.3, 1e300, np.inf, np.nan):
        u = quantile_utility(base, quantile, grid, weights=w[:50])
        added = quantile_utility(
            np.append(base, extra), quantile, grid, weights=w
        )
        replaced = quantile_utility(
            np.append(base[:-1], extra), quantile, grid,
            weights=np.append(w[:49], w[50]),
        )
        worst_add = max(worst_add, np.max(np.abs(added - u)))
        worst_replace = max(worst_replace, np.max(np.abs(replaced - u)))
    assert worst_add <= add_bound + 1e-12
    assert worst_replace <= 1.0 + 1e-12
    if not weighted:
        assert worst_add == pytest.approx(add_bound)


@pytest.mark.parametrize("quantile", [0.25, 0.5])
def test_add_remove_quantile_is_epsilon_dp_on_neighbours(quantile):
    # The exact selection probabilities with logits eps u / (2 Delta),
    # Delta = max(q, 1 - q): on add/remove neighbours no candidate's
    # probability moves by more than a factor e^eps.
    rho = 0.02
    grid = np.linspace(-4.0, 4.0, 81)
    base = np.random.default_rng(1).standard_t(2.0, size=40)
    delta = quantile_sensitivity(quantile, "add_remove")
    p = _selection_probabilities(quantile_utility(base, quantile, grid), rho, delta)
    worst = 0.0
    for extra in (-1e9, -0.5, 0.0, 0.7, np.inf):
        u = quantile_utility(np.append(base, extra), quantile, grid)
        p_added = _selection_probabilities(u, rho, delta)
        worst = max(worst, np.max(np.abs(np.log(p_added / p))))
    assert worst <= em_epsilon(rho) + 1e-9


def test_add_remove_quantile_rarely_lands_beyond_the_data():
    # On 200 rows with a grid reaching far beyond the data (the target's
    # decade range and margin, as the dp-sgd solver builds it), the median
    # of a rho ~ 0.0076 share lands more than one sd away with probability
    # ~1e-3 at sensitivity 1 (the cause of a test MSE 50x the constant's)
    # and < 1e-7 at the add/remove sensitivity 1/2.
    y = 150.0 + 75.0 * np.random.default_rng(2).normal(size=200)
    grid = np.linspace(100.0 - 225.0, 1000.0 + 225.0, 201)
    u = quantile_utility(y, 0.5, grid)
    far = np.abs(grid - np.median(y)) > 75.0
    rho = 0.0076
    p_replace = _selection_probabilities(u, rho, 1.0)[far].sum()
    p_add = _selection_probabilities(u, rho, 0.5)[far].sum()
    assert p_replace > 1e-4
    assert p_add < 1e-7


def test_private_quantile_adjacency_sets_the_sensitivity(selection_sensitivities):
    # The draw goes through ExponentialMechanism with the adjacency's
    # sensitivity; an unknown adjacency is refused by name.
    v = np.random.default_rng(0).lognormal(size=500)
    private_quantile(v, 0.5, 0.01, np.random.default_rng(1))
    private_quantile(v, 0.5, 0.01, np.random.default_rng(1), adjacency="add_remove")
    private_quantile(v, 0.9, 0.01, np.random.default_rng(1), adjacency="add_remove")
    assert selection_sensitivities == [1.0, 0.5, pytest.approx(0.9)]
    with pytest.raises(ValueError, match="adjacency"):
        private_quantile(v, 0.5, 0.01, np.random.default_rng(1), adjacency="bounded")


@pytest.mark.parametrize("block", [1, 3, 1 << 12])
@pytest.mark.parametrize("weighted", [False, True])
def test_binned_counts_match_sorted_counts_for_every_block_size(
    monkeypatch, block, weighted
):
    # The utility and the histogram count the values block by block (no
    # n-length temporary); the counts are those of sorting all the values,
    # with non-finite values above the grid (utility) or in the last bin
    # (NaN) and first bin (-inf) of the histogram, and an unsorted grid.
    from sklearn_dpfair.privacy import _quantile

    monkeypatch.setattr(_quantile, "_COUNT_BLOCK", block)
    rng = np.random.default_rng(0)
    values = rng.standard_normal(50) * 10
    values[[3, 7, 11]] = [np.nan, np.inf, -np.inf]
    values[20:25] = 1.0  # ties on a grid point
    weights = rng.random(50) if weighted else None
    w = np.ones(50) if weights is None else weights
    grid = np.array([5.0, -3.0, 1.0, 1.0, 40.0, -100.0])

    finite = np.where(np.isfinite(values), values, np.inf)
    expected = np.array([w[finite <= c].sum() for c in grid])
    expected = -np.abs(expected - 0.3 * w.sum())
    np.testing.assert_allclose(
        _quantile.quantile_utility(values, 0.3, grid, weights), expected, rtol=1e-12
    )

    edges = np.array([-np.inf, -1.0, 0.0, 1.0, np.inf])
    counts, _ = _quantile.noisy_histogram(values, np.inf, None, edges, weights)
    binned = np.where(np.isnan(values), np.inf, values)
    expected = [
        w[(binned >= lo) & (binned < hi)].sum() for lo, hi in zip(edges[:-1], edges[1:])
    ]
    expected[-1] += w[binned == np.inf].sum()
    np.testing.assert_allclose(counts, expected, rtol=1e-12)


def test_private_releases_count_a_heavy_record_once(selection_scores, privatized_sums):
    # Under privacy the core caps every weight at 1, whatever the caller
    # passes: a record of weight 1e6 moves the private quantile's utility
    # and the private histogram's counts as one record does (before the
    # cap it moved them by 1e6). Without privacy weights are multiplicities.
    values = np.random.default_rng(0).normal(size=100)
    weights = np.ones(101)
    weights[-1] = 1e6
    grid = np.linspace(-3.0, 3.0, 31)
    edges = np.concatenate([[-np.inf], grid, [np.inf]])
    for data, w in ((values, weights[:100]), (np.append(values, 0.0), weights)):
        private_quantile(data, 0.5, 1.0, np.random.default_rng(1), grid, w,
                         adjacency="add_remove")
        noisy_histogram(data, 1.0, np.random.default_rng(1), edges, w)
    assert np.max(np.abs(selection_scores[1] - selection_scores[0])) <= 0.5 + 1e-9
    assert np.max(np.abs(privatized_sums[1] - privatized_sums[0])) <= 1.0 + 1e-9
    # rho = inf: the weight of 1e6 counts as 1e6 records.
    exact, _ = noisy_histogram(np.append(values, 0.0), np.inf, None, edges, weights)
    assert exact.sum() == pytest.approx(100 + 1e6)


@pytest.mark.parametrize("bad", [-1000.0, -1e-300, np.nan, np.inf])
def test_weights_that_could_break_the_sensitivity_are_refused(
    bad, selection_scores, privatized_sums
):
    # The cap at 1 bounds a weight from above only: one record of weight
    # -1000 moved a private count by 1000 (and NaN poisoned them all). Every
    # public function of the module that takes weights refuses such a
    # weight, naming the parameter but no value, before anything is drawn.
    values = np.random.default_rng(0).lognormal(size=30)
    weights = np.ones(30)
    weights[-1] = bad
    grid = np.geomspace(0.1, 10.0, 11)
    edges = np.concatenate([[-np.inf], grid, [np.inf]])
    calls = [
        lambda: quantile_utility(values, 0.5, grid, weights),
        lambda: quantile_bin_utility(values, 0.5, grid, weights),
        lambda: private_quantile(values, 0.5, 1.0, np.random.default_rng(1), grid,
                                 weights),
        lambda: private_quantile(values, 0.5, 1.0, np.random.default_rng(1), grid,
                                 weights, candidates="bins"),
        lambda: private_quantile(values, 0.5, np.inf, None, grid, weights),
        lambda: noisy_histogram(values, 1.0, np.random.default_rng(1), edges,
                                weights),
        lambda: noisy_histogram(values, np.inf, None, edges, weights),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="weights") as info:
            call()
        assert "1000" not in str(info.value) and "nan" not in str(info.value)
    assert selection_scores == [] and privatized_sums == []
    with pytest.raises(ValueError, match="weights"):
        noisy_histogram(values, 1.0, np.random.default_rng(1), edges, weights[:-1])
    # Zero weights (a row left out) are still counted as zero.
    weights[-1] = 0.0
    counts, _ = noisy_histogram(values, np.inf, None, edges, weights)
    assert counts.sum() == 29


@pytest.mark.parametrize("quantile", [0.1, 0.25, 0.5, 0.9])
def test_bin_utility_sensitivity_on_neighbouring_datasets(quantile):
    # Bins (c_k, c_k+1] scored by -dist(q n, [#{v <= c_k}, #{v <= c_k+1}]):
    # the same bound as the points' on add/remove and replace-one
    # neighbours, with an atom between grid points, huge and non-finite
    # records among the neighbours.
    rng = np.random.default_rng(3)
    grid = np.linspace(-3.0, 3.0, 61)
    base = np.concatenate([np.full(40, 0.31), rng.normal(size=20)])
    add_bound = quantile_sensitivity(quantile, "add_remove")
    u = quantile_bin_utility(base, quantile, grid)
    assert u.shape == (grid.size - 1,) and np.all(u <= 0.0)
    worst_add = worst_replace = 0.0
    for extra in (-10.0, 0.0, 0.31, 0.3, 1e300, np.inf, np.nan):
        added = quantile_bin_utility(np.append(base, extra), quantile, grid)
        replaced = quantile_bin_utility(np.append(base[1:], extra), quantile, grid)
        worst_add = max(worst_add, np.max(np.abs(added - u)))
        worst_replace = max(worst_replace, np.max(np.abs(replaced - u)))
    assert worst_add <= add_bound + 1e-12
    assert worst_replace <= 1.0 + 1e-12
    assert worst_add > 0.0


@pytest.mark.parametrize("quantile", [0.25, 0.5, 0.75])
def test_bins_locate_a_value_most_rows_hold(quantile):
    # 80% of the rows hold 0.31, between two grid points; the rest are
    # spread above 1. The grid points on one side of 0.31 (below it for
    # the lower quartile, between it and 1 for the others) share the best
    # utility, so the points' draws land anywhere there; the bins' utility
    # is 0 for the bin holding 0.31 alone.
    rng = np.random.default_rng(4)
    values = np.concatenate([np.full(8000, 0.31), 1.0 + rng.exponential(size=2000)])
    grid = np.geomspace(1e-6, 1e6, 301)
    bins = quantile_bin_utility(values, quantile, grid)
    best = np.flatnonzero(bins == 0.0)
    assert best.size == 1 and grid[best[0]] < 0.31 <= grid[best[0] + 1]
    points = quantile_utility(values, quantile, grid)
    assert np.sum(points == points.max()) >= 10
    rho = 1e-3
    drawn = [
        private_quantile(values, quantile, rho, np.random.default_rng(s),
                         grid=grid, adjacency="add_remove", candidates=c)
        for s in range(20) for c in ("bins", "points")
    ]
    by_bins, by_points = np.array(drawn[::2]), np.array(drawn[1::2])
    assert np.all(np.abs(np.log(by_bins / 0.31)) < 0.05)
    assert np.median(np.abs(np.log(by_points / 0.31))) > 0.2


def test_bin_draws_are_epsilon_dp_on_neighbours():
    # The exact selection probabilities of the bins: no bin's probability
    # moves by more than e^eps between add/remove neighbours.
    rho = 0.02
    grid = np.linspace(-4.0, 4.0, 81)
    base = np.concatenate([np.full(25, 1.05), np.random.default_rng(5).normal(size=15)])
    delta = quantile_sensitivity(0.5, "add_remove")
    p = _selection_probabilities(quantile_bin_utility(base, 0.5, grid), rho, delta)
    worst = 0.0
    for extra in (-1e9, 1.05, 0.0, np.inf):
        u = quantile_bin_utility(np.append(base, extra), 0.5, grid)
        p_added = _selection_probabilities(u, rho, delta)
        worst = max(worst, np.max(np.abs(np.log(p_added / p))))
    assert 0.0 < worst <= em_epsilon(rho) + 1e-9


def test_candidates_are_checked():
    with pytest.raises(ValueError, match="candidates"):
        private_quantile(
            np.ones(3), 0.5, 1.0, np.random.default_rng(0), candidates="edges"
        )


def _short_id(value):
    if isinstance(value, type):
        return value.__name__
    return "10**400" if value == 10**400 else repr(value)


# Each refused before any value is read or any noise drawn: (rho, error).
_BAD_RHOS = [
    (0.0, ValueError),
    (-0.0, ValueError),
    (-1.0, ValueError),
    (math.nan, ValueError),
    (10**400, ValueError),
    (False, TypeError),
    (True, TypeError),
    ("0.5", TypeError),
]


@pytest.mark.parametrize("rho, error", _BAD_RHOS, ids=_short_id)
def test_a_rho_that_is_not_a_budget_is_refused_naming_it(rho, error):
    # rho=0 raised ZeroDivisionError, -1 "math domain error", 10**400
    # OverflowError; NaN released NaN counts.
    values = np.array([1.0, 2.0, 3.0])
    with pytest.raises(error, match=r"^rho"):
        noisy_histogram(values, rho, np.random.default_rng(0))
    with pytest.raises(error, match=r"^rho"):
        private_quantile(values, 0.5, rho, np.random.default_rng(0))


@pytest.mark.parametrize("rho", [1e308, np.float64(1e308), sys.float_info.max])
def test_a_finite_rho_whose_noise_vanishes_is_refused(rho):
    # 2 rho overflows to inf: a noise std of 0 released the exact counts,
    # and 8 rho an infinite epsilon the best grid point, under a finite rho.
    values = np.array([1.0, 2.0, 2.5, 3.0, 30.0])
    with pytest.raises(ValueError, match=r"^rho=.* is too large"):
        noisy_histogram(values, rho, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^rho=.* is too large"):
        private_quantile(values, 0.5, rho, np.random.default_rng(0))


def test_the_largest_accepted_rhos_still_draw_noise():
    # At the bounds the noise std and the epsilon are finite and positive:
    # the mechanisms run (and log) as for any finite rho.
    values = np.array([1.0, 2.0, 2.5, 3.0, 30.0])
    with logged_releases() as log:
        noisy_histogram(values, sys.float_info.max / 2.0, np.random.default_rng(0))
        private_quantile(
            values, 0.5, sys.float_info.max / 8.0, np.random.default_rng(0)
        )
    assert sorted(kind for kind, _ in log.counts) == ["gaussian", "zcdp"]


def test_a_numpy_float16_rho_is_computed_with_in_float64():
    # 2 * np.float16(65504) is inf in float16: the histogram had noise std
    # 0 (its exact counts), the quantile epsilon inf (no draw at all).
    values = np.array([1.0, 2.0, 2.5, 3.0, 30.0])
    small = np.float16(65504)
    counts, threshold = noisy_histogram(values, small, np.random.default_rng(0))
    same, same_threshold = noisy_histogram(values, 65504.0, np.random.default_rng(0))
    np.testing.assert_array_equal(counts, same)
    assert threshold == same_threshold > 0
    assert np.any(counts != np.round(counts))
    with logged_releases() as log:
        private_quantile(values, 0.5, small, np.random.default_rng(0))
    assert [kind for kind, _ in log.counts] == ["zcdp"]
    assert em_epsilon(small) == em_epsilon(65504.0)


@pytest.mark.parametrize(
    "quantile, error",
    [
        (5.0, ValueError),
        (-1.0, ValueError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        (10**400, ValueError),
        (True, TypeError),
        ("0.5", TypeError),
    ],
    ids=_short_id,
)
def test_a_quantile_outside_the_unit_interval_is_refused(quantile, error):
    # 5.0 returned a grid point far above the data, NaN the lowest one.
    with pytest.raises(error, match=r"^quantile"):
        private_quantile(np.array([1.0, 2.0, 3.0]), quantile, 1.0, None)


def test_the_quantile_levels_zero_and_one_are_taken():
    values = np.array([1.0, 2.0, 3.0])
    assert private_quantile(values, 0.0, np.inf, None) <= 1.0
    assert private_quantile(values, 1, np.inf, None) >= 3.0
    private_quantile(values, np.float32(1.0), 1.0, np.random.default_rng(0))
