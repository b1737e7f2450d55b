# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The private median of the squared row norms that sets the clip and step.

A median read too small makes the steps too long and the fit diverge; one
read too large only slows it. When no bin of the noisy histogram reaches
its threshold, the reading must still tell raw rows from unit ones.
"""

import math

import numpy as np
import pytest
from sklearn.datasets import load_diabetes

from sklearn_dpfair._solvers.heavy_tail._dpsgd import _private_row_scale
from sklearn_dpfair._solvers.heavy_tail._private_quantile import ROW_NORM_EDGES
from sklearn_dpfair.privacy import noisy_histogram
from sklearn_dpfair.privacy._quantile import POSITIVE_EDGES

# The rho of the row histogram of a fit on 309 rows at epsilon = 0.5: its
# noise std is 26.6 rows, its threshold (4 std) 106.
RHO = 7.1e-4


def _readings(X, seeds=range(60)):
    """How many seeds' histograms miss the threshold, and each seed's median."""
    values = np.sum(X**2, axis=1) + 1.0
    missed, medians = 0, []
    for seed in seeds:
        counts, threshold = noisy_histogram(
            values, RHO, np.random.default_rng(seed), ROW_NORM_EDGES
        )
        missed += counts.max() < threshold
        medians.append(
            _private_row_scale(X, 1.0, RHO, None, np.random.default_rng(seed))
        )
    return missed, np.array(medians)


def test_raw_rows_are_never_read_as_unit_rows():
    X = load_diabetes(return_X_y=True, scaled=False)[0][:309]
    true = np.median(np.sum(X**2, axis=1) + 1.0)  # ~7e4
    missed, medians = _readings(X)
    # Some seeds fall below the 4-sigma threshold (the case this tests);
    # unit rows would have read 11 there.
    assert missed >= 1
    assert medians.min() > true / 10 and medians.max() < true * 10


def test_unit_rows_stay_unit_rows_below_the_threshold():
    X = np.random.default_rng(0).normal(size=(200, 5))
    missed, medians = _readings(X)
    assert missed >= 10
    # A spurious bin far above them is rarely read (it slows the fit).
    assert np.mean(medians > 60.0) <= 0.05


def test_row_norm_edges_carry_the_positive_edges_on_to_1e40():
    # Bit for bit below 1e8 (the readings of rows there keep their bins),
    # one bin per decade above (few empty bins for noise to lift).
    np.testing.assert_array_equal(ROW_NORM_EDGES[:82], POSITIVE_EDGES[:-1])
    above = ROW_NORM_EDGES[81:-1]
    assert above[0] == 1e8 and above[-1] == 1e40 and ROW_NORM_EDGES[-1] == np.inf
    np.testing.assert_allclose(np.diff(np.log10(above)), 1.0, rtol=1e-9)


@pytest.mark.parametrize("unit", [1e6, 1e12, 1e18])
def test_rows_beyond_1e8_are_read_at_their_scale(unit):
    # The histogram ended at 1e8: rows in units of 1e6 (squared norms
    # ~1e12) were read as 1e8, and the step 0.35 (d + 1) / median was far
    # too long. A median read too small diverges, so it must not be.
    X = np.random.default_rng(0).normal(size=(2000, 3)) * unit
    true = np.median(np.sum(X**2, axis=1) + 1.0)
    for seed in range(5):
        median = _private_row_scale(X, 1.0, 0.01, None, np.random.default_rng(seed))
        assert true / 1.5 < median < true * 1.5


@pytest.mark.parametrize("unit", [1e21, 1e200])
def test_a_median_beyond_the_top_edge_is_no_reading(unit):
    # Squared norms beyond 1e40 (or overflowed to inf) lie in the outer bin,
    # which has no upper edge: inf, never the edge (a step far too long).
    X = np.random.default_rng(0).normal(size=(500, 3)) * unit
    for rho in (0.01, math.inf):
        assert _private_row_scale(X, 1.0, rho, None, np.random.default_rng(0)) == np.inf
