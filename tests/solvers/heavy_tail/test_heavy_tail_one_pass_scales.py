# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The one-pass solvers' private scales on raw and standardized columns.

The clip's median gradient norm and the curvature's median squared row norm
are drawn by the exponential mechanism among public candidates. On the grid
of points 1e-8 .. 1e8, raw columns (a price in dollars on square feet) put
every value above every candidate: all had the same utility and the draw
was uniform over 16 decades. On the bins of ``ROW_NORM_EDGES`` (to 1e40,
open outer bins) the bin that holds the median wins wherever it lies, and
a median beyond 1e40 releases the zero model with a warning.
"""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair._solvers.heavy_tail._private_quantile import ROW_NORM_EDGES
from sklearn_dpfair.linear_model import HeavyTailDPRegressor

SEEDS = range(5)


def _houses(seed, n=2000):
    """Raw columns: living area and lot size in square feet, price in dollars."""
    rng = np.random.default_rng(seed)
    sqft = rng.uniform(500, 5000, n)
    lot = rng.uniform(2000, 250000, n)
    price = 200.0 * sqft + rng.normal(0.0, 50000.0, n)
    return np.column_stack([sqft, lot]), price


def _standardized(seed, n=2000):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, X @ np.array([1.0, -0.5]) + 0.3 + rng.normal(size=n)


def _true_scales(X, y):
    """Median gradient norm at 0 and top eigenvalue of E x~ x~^T (intercept)."""
    rows = np.column_stack([X, np.ones(len(X))])
    median = np.median(np.abs(y) * np.linalg.norm(rows, axis=1))
    return median, np.linalg.eigvalsh(rows.T @ rows / len(rows))[-1]


def _fit(X, y, solver, seed, **params):
    with warnings.catch_warnings():
        # The default radius (10) binds on raw columns: not what is tested.
        warnings.simplefilter("ignore", UserWarning)
        return HeavyTailDPRegressor(
            solver=solver, epsilon=1.0, random_state=seed, **params
        ).fit(X, y)


@pytest.mark.parametrize("solver", ["sgd", "prox", "localized"])
def test_one_pass_scales_follow_raw_columns(solver):
    # Gradient norms ~5e10 and squared row norms ~2e10, beyond 1e8: before,
    # clip_norm_ and smoothness_ were drawn anywhere in 1e-8 .. 1e8 (a
    # clip of 0.004 on one seed, 1e8 on another); now within a factor 10.
    for seed in SEEDS:
        X, y = _houses(seed)
        median, top = _true_scales(X, y)
        reg = _fit(X, y, solver, seed)
        assert 0.1 < reg.clip_norm_ / median < 10.0, (seed, reg.clip_norm_)
        if solver != "localized":
            assert 0.1 < reg.smoothness_ / top < 10.0, (seed, reg.smoothness_)


@pytest.mark.parametrize("solver", ["sgd", "prox", "localized"])
def test_one_pass_scales_on_standardized_columns(solver):
    # Unit columns stay read as well as on the finer grid of points: the
    # scales within a factor 2 and the fit as good (R^2 ~0.55 here).
    for seed in SEEDS:
        X, y = _standardized(seed)
        median, top = _true_scales(X, y)
        reg = _fit(X, y, solver, seed)
        assert 0.5 < reg.clip_norm_ / median < 2.0, (seed, reg.clip_norm_)
        if solver != "localized":
            assert 0.5 < reg.smoothness_ / top < 2.5, (seed, reg.smoothness_)
        assert reg.score(X, y) > 0.4


def test_private_scale_median_reads_its_outer_bins():
    from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
        private_scale_median,
    )

    rng = np.random.default_rng(0)
    raw = rng.uniform(1e9, 1e11, size=2000)
    for seed in SEEDS:
        median = private_scale_median(raw, 1e-3, np.random.default_rng(seed))
        # The midpoint of a bin between neighbouring edges, in the data's.
        assert 1e9 < median < 1e11
    # The top bin (1e40, inf) bounds nothing: inf, whatever lies beyond
    # (overflowed and NaN values count there too).
    beyond = np.concatenate([np.full(60, 1e45), [np.inf, np.nan]])
    assert private_scale_median(beyond, math.inf, None) == math.inf
    # The bottom bin (-inf, 1e-8] is read as its finite edge.
    tiny = np.concatenate([np.zeros(30), np.full(30, 1e-12)])
    assert private_scale_median(tiny, math.inf, None) == ROW_NORM_EDGES[1] == 1e-8


_BEYOND = "lies beyond the top edge \\(1e\\+40\\) of its public bins"


@pytest.mark.parametrize("solver", ["sgd", "prox", "acsa", "localized"])
def test_gradient_norms_beyond_the_top_edge_release_the_zero_model(solver):
    # A target ~1e41: the median gradient norm lies in the open top bin, so
    # no clip is bounded. The fit runs no query (its planned releases are
    # forgone, so the release check passes) and warns, reading the bin only.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(500, 2)), rng.uniform(1e41, 1e42, 500)
    with pytest.warns(UserWarning, match=_BEYOND + ", so it bounds no clip"):
        reg = HeavyTailDPRegressor(solver=solver, random_state=0).fit(X, y)
    np.testing.assert_array_equal(reg.coef_, 0.0)
    assert reg.intercept_ == 0.0 and reg.n_iter_ == 0
    assert reg.epsilon_ <= 1.0


@pytest.mark.parametrize("solver", ["sgd", "prox", "acsa"])
def test_row_norms_beyond_the_top_edge_release_the_zero_model(solver):
    # Rows of norm ~1e21 (squared ~1e42): the curvature's row clip has no
    # finite bound, so its noisy matrix is not released either.
    rng = np.random.default_rng(0)
    X, y = rng.uniform(1e21, 1e22, size=(500, 2)), rng.normal(size=500)
    with pytest.warns(UserWarning, match=_BEYOND + ", so it bounds no curvature"):
        reg = HeavyTailDPRegressor(
            solver=solver, clip_norm=1.0, random_state=0
        ).fit(X, y)
    np.testing.assert_array_equal(reg.coef_, 0.0)
    assert reg.intercept_ == 0.0 and reg.n_iter_ == 0
