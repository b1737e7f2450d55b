# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring datasets for the preprocessing tests: D and D plus one record."""

import numpy as np
import pytest

#: Records whose addition is the worst case for a clipped statistic: far
#: beyond the bounds, at them, missing, constant.
EXTREME_ROWS = {
    "huge": [1e300, -1e300, 1e300],
    "bounds": [100.0, 0.0, 100.0],
    "missing": [np.nan, np.nan, np.nan],
    "mixed": [np.nan, 1e300, -7.0],
    "midpoint": [50.0, 50.0, 50.0],
}


def base_datasets():
    """Dataset D: ordinary, a constant column, a column mostly missing."""
    rng = np.random.default_rng(0)
    ordinary = rng.normal(50.0, 15.0, size=(60, 3))
    constant = ordinary.copy()
    constant[:, 1] = 42.0
    missing = ordinary.copy()
    missing[rng.random(60) < 0.8, 2] = np.nan
    return {"ordinary": ordinary, "constant": constant, "missing": missing}


def add_row(X, row):
    """D plus one record (add/remove neighbours)."""
    return np.vstack([X, np.asarray(row, dtype=np.float64)[None, : X.shape[1]]])


@pytest.fixture(params=list(EXTREME_ROWS), ids=list(EXTREME_ROWS))
def extreme_row(request):
    """One record beyond, at, or missing from the bounds ``(0, 100)``."""
    return EXTREME_ROWS[request.param]


@pytest.fixture(params=["ordinary", "constant", "missing"])
def base_data(request):
    """Dataset D of 60 rows and 3 columns in ``(0, 100)`` mostly."""
    return base_datasets()[request.param]


@pytest.fixture
def neighbours(base_data, extreme_row):
    """``(D, D plus one record)``: add/remove neighbours."""
    return base_data, add_row(base_data, extreme_row)


@pytest.fixture
def ordinary_data():
    """The ordinary dataset D."""
    return base_datasets()["ordinary"]


@pytest.fixture
def missing_data():
    """D with 80% of its last column missing."""
    return base_datasets()["missing"]
