# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A raw-scale table with public bounds, shared by the feature_bounds test modules.

One column of scale 1000 and offset 500, one of unit scale; the declared
bounds are +-3 standard deviations around each column's centre, and
``SCALING`` is the public map they give (midpoint and half-width).
"""

import numpy as np

from sklearn_dpfair._solvers._feature_scaling import FeatureScaling

BOUNDS = [(-2500.0, 3500.0), (-3.0, 3.0)]
SCALING = FeatureScaling(np.array([500.0, 0.0]), np.array([3000.0, 3.0]))


def raw_table(n, seed):
    """``n`` rows of the raw table and their binary labels (a linear rule)."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2))
    y = (Z @ [0.7, -1.5] + 0.3 * rng.logistic(size=n) > 0).astype(int)
    return Z * [1000.0, 1.0] + [500.0, 0.0], y
