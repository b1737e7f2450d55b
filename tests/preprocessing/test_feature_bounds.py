# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import warnings

import numpy as np
import pytest

from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)
from sklearn_dpfair.preprocessing._bounds import (
    AUTO_GRID,
    bounded_grid,
    bounds_linspace,
    centre_and_half_width,
    check_bounds,
)


@pytest.mark.parametrize("lower, upper", [(0.0, 1e7), (-5.0, 3.0), (1e3, 1e3 + 1e-3)])
def test_bounded_grid_is_sorted_within_the_bounds_and_fine_in_log_scale(lower, upper):
    grid = bounded_grid(lower, upper)
    assert grid[0] == lower and grid[-1] == upper
    assert np.all(np.diff(grid) > 0)
    # Relative resolution of a few percent from a millionth of the width up.
    width = upper - lower
    targets = lower + width * np.geomspace(1e-5, 0.9, 50)
    nearest = grid[np.searchsorted(grid, targets).clip(0, grid.size - 1)]
    assert np.all(np.abs(nearest - targets) <= 0.02 * (targets - lower) + 1e-12 * width)


def test_auto_grid_is_signed_and_sorted():
    assert AUTO_GRID[0] == -1e8 and AUTO_GRID[-1] == 1e8 and 0.0 in AUTO_GRID
    assert np.all(np.diff(AUTO_GRID) > 0)


def test_check_bounds_broadcasts_and_names_the_parameter():
    lower, upper = check_bounds([(0, 1), (2, 3)], 2)
    np.testing.assert_array_equal(lower, [0, 2])
    np.testing.assert_array_equal(upper, [1, 3])
    with pytest.raises(ValueError, match="feature_bounds"):
        check_bounds((1, 0), 2, name="feature_bounds")
    # None says that the bounds are missing (np.asarray(None) is a NaN of
    # shape (), which the shape message would have reported as "got ()").
    with pytest.raises(ValueError, match="bounds is required"):
        check_bounds(None, 3)


LARGEST = np.finfo(np.float64).max
WIDE = [(-1e308, 1e308), (-LARGEST, LARGEST), (-LARGEST, 0.0)]


@pytest.mark.parametrize("lower, upper", WIDE)
def test_bounds_wider_than_the_largest_float_give_finite_centres_and_grids(
    lower, upper
):
    # upper - lower overflows: the centre was -inf or NaN, the grid NaN.
    centre, half = centre_and_half_width(np.array([lower]), np.array([upper]))
    assert np.isfinite(centre).all() and np.isfinite(half).all() and half[0] > 0
    assert centre[0] - half[0] / 2 <= centre[0] + half[0] / 2
    grid = bounded_grid(lower, upper)
    assert grid[0] == lower and grid[-1] == upper
    assert np.isfinite(grid).all() and np.all(np.diff(grid) > 0)
    edges = bounds_linspace(lower, upper, 5)
    assert edges[0] == lower and edges[-1] == upper and np.all(np.diff(edges) > 0)


def test_centres_and_grids_of_ordinary_bounds_are_unchanged():
    # Halving is exact: the overflow-safe forms are the plain ones.
    rng = np.random.default_rng(0)
    lower = rng.uniform(-1e6, 1e6, 50)
    upper = lower + rng.uniform(1e-3, 1e6, 50)
    centre, half = centre_and_half_width(lower, upper)
    np.testing.assert_array_equal(centre, (lower + upper) / 2)
    np.testing.assert_array_equal(half, (upper - lower) / 2)
    np.testing.assert_array_equal(
        bounds_linspace(lower, upper, 7), np.linspace(lower, upper, 7)
    )
    # Bounds one subnormal apart keep a positive half-width.
    _, tiny = centre_and_half_width(np.array([0.0]), np.array([5e-324]))
    assert tiny[0] > 0


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize("bounds", WIDE[:2], ids=["1e308", "largest"])
def test_transformers_with_bounds_wider_than_the_largest_float(bounds, epsilon):
    X = np.random.default_rng(0).normal(size=(200, 1))
    X[0] = np.nan
    params = {"bounds": bounds, "epsilon": epsilon, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        imputer = DPSimpleImputer(**params).fit(X)
        filled = imputer.transform([[np.nan]])
        quantiles = DPQuantileTransformer(**params).fit(X)
        bins = DPKBinsDiscretizer(**params, strategy="uniform").fit(X[1:])
    assert np.isfinite(imputer.statistics_).all()
    assert np.all(imputer.output_bounds_[:, 0] <= filled)
    assert np.all(filled <= imputer.output_bounds_[:, 1])
    assert np.isfinite(quantiles.quantiles_).all()
    assert np.isfinite(bins.bin_edges_[0]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = DPStandardScaler(**params).fit(X)
        # A record at each bound too: its distance to the mean overflows.
        out = scaler.transform(np.vstack([X[1:], [[bounds[0]], [bounds[1]]]]))
    assert np.isfinite(scaler.mean_).all() and np.isfinite(scaler.scale_).all()
    # Finite for any finite bounds (saturated at the largest float where
    # the exact scale at epsilon=inf is under 1).
    assert np.isfinite(scaler.output_bounds_).all()
    assert np.isfinite(scaler.output_norm_bound_)
    assert np.isfinite(out).all()
    assert np.all(out >= scaler.output_bounds_[:, 0])
    assert np.all(out <= scaler.output_bounds_[:, 1])
    # scikit-learn's splines extend the knots beyond the bounds: refused.
    with pytest.raises(ValueError, match="bounds are too wide"):
        DPSplineTransformer(**params).fit(X[1:])
    DPSplineTransformer(**{**params, "bounds": (-1e300, 1e300)}).fit(X[1:])
