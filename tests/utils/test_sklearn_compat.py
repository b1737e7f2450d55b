# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
from numbers import Integral, Real

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_dpfair.utils._sklearn_compat import Interval
from sklearn_dpfair.utils.discovery import all_estimators


@pytest.mark.parametrize("kind", [Real, Integral])
def test_an_interval_refuses_an_int_beyond_the_largest_float(kind):
    interval = Interval(kind, 1, None, closed="left")
    assert interval.is_satisfied_by(10**300)
    assert interval.is_satisfied_by(np.int64(2**62))
    assert not interval.is_satisfied_by(10**400)
    assert not Interval(kind, None, 0, closed="right").is_satisfied_by(-(10**400))


@pytest.mark.parametrize(
    "name, param",
    [
        ("DPLogisticRegression", "clip_norm"),
        ("DPLogisticRegression", "batch_size"),
        ("DPMLPClassifier", "learning_rate"),
        ("FERMIClassifier", "tol"),
        ("DPFERMIClassifier", "fairness_weight"),
        ("HeavyTailDPRegressor", "max_iter"),
        ("HeavyTailDPRegressor", "huber_threshold"),
        ("DPOneHotEncoder", "min_frequency"),
    ],
)
def test_an_int_beyond_the_largest_float_is_refused_naming_the_parameter(
    name, param
):
    # float(10**400) raised OverflowError inside the fit (or its plan),
    # naming nothing.
    estimator = dict(all_estimators())[name](**{param: 10**400})
    X, y = np.ones((6, 2)), np.array([0, 1, 0, 1, 0, 1])
    with pytest.raises(InvalidParameterError, match=f"'{param}'"):
        if name == "DPOneHotEncoder":
            estimator.fit(X)
        elif "FERMI" in name:
            estimator.fit(X, y, sensitive_features=y)
        else:
            estimator.fit(X, y)


def test_a_seed_of_any_size_is_still_a_seed():
    # numpy's generators take any int; a seed is never a float.
    from sklearn_dpfair._base import SEED_CONSTRAINT

    assert SEED_CONSTRAINT.is_satisfied_by(2**1100)
    np.random.default_rng(2**1100)
