# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from sklearn_dpfair.fairness import DemographicParity, EqualizedOdds
from sklearn_dpfair.fairness._marginals import (
    check_public_marginals,
    marginals_from_public,
)


@pytest.mark.parametrize("public", [["half", "half"], {"a": 0.5, "b": 0.5}])
def test_non_numeric_group_marginals_are_named(public):
    # A public parameter, so its message shows it (nothing to redact).
    with pytest.raises(ValueError, match=r"^group_marginals must be numeric"):
        marginals_from_public(public, 2, 2, DemographicParity())


def test_group_marginals_are_normalized_per_constraint():
    dp = marginals_from_public([1, 3], 2, 2, DemographicParity())
    np.testing.assert_allclose(dp, [[0.25, 0.75]])
    eo = marginals_from_public([[1, 1], [1, 3]], 2, 2, EqualizedOdds())
    assert eo.shape == (2, 2) and np.all(eo >= 0)


@pytest.mark.parametrize(
    "public, match",
    [
        ([-1.0, 2.0], r"^group_marginals must be non-negative; got a negative"),
        ([np.inf, 1.0], r"^group_marginals must be finite"),
        ([0.0, 0.0], r"^group_marginals must not be all zero"),
        ([1e308, 1e308], r"^group_marginals must sum to a finite number"),
        ([0.2, 0.3, 0.5], r"of shape \(2,\) .*; got shape \(3,\)\.$"),
    ],
)
def test_public_marginals_name_the_failed_condition(public, match):
    # A shape that is right is not blamed for a value that is wrong.
    with pytest.raises(ValueError, match=match):
        marginals_from_public(public, 2, 2, DemographicParity())


def test_public_marginals_check_the_known_counts_only():
    assert check_public_marginals([1, 1, 1], "demographic_parity").shape == (3,)
    joint = check_public_marginals(np.ones((3, 2)), "equalized_odds", n_groups=2)
    assert joint.shape == (3, 2)
    with pytest.raises(ValueError, match=r"of shape \(n_classes, 3\) "):
        check_public_marginals(np.ones((3, 2)), "equalized_odds", n_groups=3)
    with pytest.raises(ValueError, match=r"of shape \(n_groups,\) "):
        check_public_marginals(np.ones((2, 2)), "demographic_parity")
