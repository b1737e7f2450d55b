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
