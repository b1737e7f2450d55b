# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Capping public weights: the cap is a public number."""

import math

import numpy as np
import pytest

from sklearn_dpfair.privacy import capped_weights


@pytest.mark.parametrize(
    "cap, error",
    [
        # NaN made every weight NaN (np.minimum propagates it).
        (math.nan, ValueError),
        (-1.0, ValueError),
        # An int beyond the largest float raised OverflowError.
        (10**400, ValueError),
        (True, TypeError),
        ("1", TypeError),
    ],
    ids=["nan", "negative", "huge-int", "bool", "string"],
)
def test_a_cap_that_is_not_a_bound_is_refused_naming_it(cap, error):
    with pytest.raises(error, match=r"^cap"):
        capped_weights(np.array([0.5, 2.0]), cap)
    with pytest.raises(error, match=r"^cap"):
        capped_weights(None, cap)


def test_ordinary_caps_bound_every_weight():
    weights = np.array([0.0, 0.5, 2.0, 1e300])
    np.testing.assert_array_equal(capped_weights(weights), [0.0, 0.5, 1.0, 1.0])
    np.testing.assert_array_equal(capped_weights(weights, 2), [0.0, 0.5, 2.0, 2.0])
    np.testing.assert_array_equal(capped_weights(weights, math.inf), weights)
    assert capped_weights(None) is None
