"""Column quantiles of the DP transformers (``preprocessing._quantiles``)."""

import numpy as np
import pytest

from sklearn_dpfair.preprocessing._quantiles import column_quantiles

BIG = np.finfo(np.float64).max


@pytest.mark.parametrize("weighted_method", ["inverted_cdf", "averaged_inverted_cdf"])
@pytest.mark.parametrize("weighted", [False, True])
def test_exact_quantiles_of_values_near_the_largest_float_are_finite(
    weighted, weighted_method
):
    # Neighbours -1e308 and 1e308 are 2e308 apart, beyond the largest
    # float: interpolating (or averaging) between them must not overflow.
    X = np.array([-1e308] * 4 + [1e308] * 3)[:, None]
    weights = np.ones(len(X)) if weighted else None
    grid = [np.linspace(-BIG, BIG, 11)]
    with np.errstate(over="raise", invalid="raise"):
        huge = column_quantiles(
            X, [0.0, 0.5, 0.6, 1.0], grid, np.inf, None,
            weights=weights, weighted_method=weighted_method,
        )
    # The same quantiles as of the column at an ordinary scale, scaled.
    small = column_quantiles(
        X / 1e300, [0.0, 0.5, 0.6, 1.0], [np.linspace(-1e9, 1e9, 11)], np.inf,
        None, weights=weights, weighted_method=weighted_method,
    )
    assert np.all(np.isfinite(huge))
    np.testing.assert_allclose(huge / 1e300, small, rtol=1e-12)


def _atoms(n=5000, seed=0):
    # A 0/1 column with 70% ones, its complement, a constant, and an
    # ordinary column: the first three hold one value in most rows.
    rng = np.random.default_rng(seed)
    ones = (rng.random(n) < 0.7).astype(float)
    return np.c_[ones, 1.0 - ones, np.full(n, 40.0), rng.normal(40.0, 10.0, n)]


@pytest.mark.parametrize("rho", [0.005, 0.5])
@pytest.mark.parametrize("seed", range(3))
def test_fences_of_columns_holding_one_value_stay_next_to_it(rho, seed):
    # A grid point on one side of the value scored as well as any other:
    # the fences of the 0/1 column were drawn up to 1e8 away (median
    # [-1.4e6, 2.1e6] over 20 seeds), whatever the budget.
    from sklearn_dpfair.preprocessing._quantiles import private_fences

    X = _atoms()
    lower, upper = private_fences(
        X, (0.25, 0.75), 2.0, rho, np.random.default_rng(seed)
    )
    # Quartiles 0 and 1, widened by twice their distance (and a bin).
    for j in (0, 1):
        assert -2.2 <= lower[j] <= -1.9 and 2.9 <= upper[j] <= 3.2
    # The constant lies within its fences, which stay within 15% of it.
    assert 34.0 < lower[2] < 40.0 < upper[2] < 46.0
    assert 0.0 < lower[3] < 20.0 and 60.0 < upper[3] < 90.0


@pytest.mark.parametrize("seed", range(3))
def test_bounded_medians_of_columns_holding_one_value_are_that_value(seed):
    # The median of the 0/1 column was drawn anywhere in [0, 1), the
    # constant's anywhere in its bounds, the same at epsilon 1 and 100.
    from sklearn_dpfair.preprocessing._quantiles import bounded_quantiles

    X = _atoms()
    lower, upper = np.zeros(4), np.array([1.0, 1.0, 100.0, 100.0])
    (median,) = bounded_quantiles(
        X, lower, upper, [0.5], 0.05, np.random.default_rng(seed)
    )
    # 70% ones, 70% zeros (the lower bound: in no bin of the grid, whose
    # bins all scored alike), and a constant.
    np.testing.assert_allclose(median[:3], [1.0, 0.0, 40.0], rtol=0.01, atol=1e-3)
    assert 30.0 < median[3] < 50.0


def test_bin_midpoints_of_neighbours_near_the_largest_float_are_finite():
    from sklearn_dpfair.privacy import private_quantile

    grid = np.array([-BIG, -1e308, 0.0, 1e308, BIG])
    values = np.full(100, 1.5e308)
    with np.errstate(over="raise"):
        median = private_quantile(
            values, 0.5, np.inf, None, grid=grid, candidates="bins"
        )
    assert median == pytest.approx(0.5 * 1e308 + 0.5 * BIG)


def test_auto_bounds_scale_a_binary_column_to_unit_spread():
    # DPStandardScaler(bounds="auto") scaled a 0/1 column by 1.5e5 (the
    # transformed column's standard deviation was 3e-6, against 1), and
    # DPSimpleImputer filled it with 511.5, at epsilon 1 and 10 alike.
    from sklearn_dpfair.preprocessing import DPSimpleImputer, DPStandardScaler

    X = _atoms()[:, :1]
    scaled = DPStandardScaler(bounds="auto", random_state=0).fit_transform(X)
    assert 0.8 < scaled.std() < 1.2
    X_missing = X.copy()
    X_missing[::10] = np.nan
    imputer = DPSimpleImputer(bounds="auto", random_state=0).fit(X_missing)
    assert 0.5 < imputer.statistics_[0] < 0.9


def test_exact_fences_of_a_missing_column_swap_no_warning_filter(filter_swaps):
    # At rho = inf the fences are the extremes; a column of NaN only gets
    # [-1, 1]. numpy's "All-NaN slice" warning was silenced inside
    # warnings.catch_warnings (process-wide, not thread-safe); the column
    # is now read without a warning.
    import warnings

    from sklearn_dpfair.preprocessing._quantiles import private_fences

    X = np.column_stack([np.full(50, np.nan), np.linspace(-3.0, 5.0, 50)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        filter_swaps.clear()  # this test's own block
        lower, upper = private_fences(
            X, (0.25, 0.75), 2.0, np.inf, np.random.default_rng(0)
        )
    assert filter_swaps == []
    assert (lower[0], upper[0]) == (-1.0, 1.0)
    assert (lower[1], upper[1]) == (-3.0, 5.0)
