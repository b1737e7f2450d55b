# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""demographic_parity_linf with extreme but valid sample weights."""

import warnings

import numpy as np
import pytest

from sklearn_dpfair.metrics import demographic_parity_linf


@pytest.mark.parametrize("weight", [1e308, 1e-320])
def test_uniform_weights_give_the_unweighted_violation(weight):
    # Near the largest float the total weight overflows, and subnormal
    # weights lose digits in every product: the weights are divided by the
    # largest first, so that uniform ones are no weights at all.
    rng = np.random.default_rng(0)
    pred = rng.integers(0, 2, 50)
    s = rng.choice(["a", "b"], 50)
    expected = demographic_parity_linf(None, pred, sensitive_features=s)
    assert expected > 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = demographic_parity_linf(
            None, pred, sensitive_features=s, sample_weight=np.full(50, weight)
        )
    assert got == pytest.approx(expected, rel=1e-12)


def test_huge_weights_keep_their_ratios():
    # Weights 1.6e308 and 0.8e308 weigh rows 2:1, as weights 2 and 1 do.
    pred = np.array([1, 0, 1, 1, 0, 0])
    s = np.array([0, 0, 0, 1, 1, 1])
    w = np.array([2.0, 1.0, 1.0, 2.0, 1.0, 1.0])
    expected = demographic_parity_linf(
        None, pred, sensitive_features=s, sample_weight=w
    )
    got = demographic_parity_linf(
        None, pred, sensitive_features=s, sample_weight=w * 0.8e308
    )
    assert got == pytest.approx(expected, rel=1e-12)
