# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from sklearn_dpfair.fairness import DemographicParity, EqualizedOdds
from sklearn_dpfair.fairness._marginals import marginals_from_public


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
