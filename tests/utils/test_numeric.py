# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from sklearn_dpfair.utils._numeric import constant_columns


@pytest.mark.parametrize("value", [0.1, 0.3, 1e5 + 0.1, -7.7, 0.0])
def test_rounding_level_variance_is_zero(value):
    x = np.full(1000, value)
    assert constant_columns([x.var()], [x.mean()], x.size)[0]
    one_pass = np.mean(x**2) - np.mean(x) ** 2
    assert constant_columns([max(one_pass, 0.0)], [x.mean()], x.size, one_pass=True)[0]


def test_a_tiny_spread_under_a_huge_offset_is_kept():
    x = 1e5 + 1e-3 * np.random.default_rng(0).standard_normal(1000)
    assert not constant_columns([x.var()], [x.mean()], x.size)[0]
