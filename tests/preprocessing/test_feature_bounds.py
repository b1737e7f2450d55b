# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from sklearn_dpfair.preprocessing._bounds import AUTO_GRID, bounded_grid, check_bounds


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
