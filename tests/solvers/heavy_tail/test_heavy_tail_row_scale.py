# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The private median of the squared row norms that sets the clip and step.

A median read too small makes the steps too long and the fit diverge; one
read too large only slows it. When no bin of the noisy histogram reaches
its threshold, the reading must still tell raw rows from unit ones.
"""

import numpy as np
from sklearn.datasets import load_diabetes

from sklearn_dpfair._solvers.heavy_tail._dpsgd import _private_row_scale
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
            values, RHO, np.random.default_rng(seed), POSITIVE_EDGES
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
