# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import warnings
from fractions import Fraction
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


@pytest.mark.parametrize(
    "value, accepted",
    [
        (np.float32(0.0), False),
        (np.float16(0.0), False),
        (np.float32(1e-45), True),
        (np.float16(0.5), True),
        (np.float32(np.inf), False),
        pytest.param(
            "1e600",
            False,
            id="longdouble-1e600",
            marks=pytest.mark.skipif(
                np.finfo(np.longdouble).maxexp <= np.finfo(np.float64).maxexp,
                reason="longdouble is float64 here",
            ),
        ),
        (np.float64(0.0), False),
        (0.0, False),
    ],
)
def test_an_interval_compares_a_numpy_float_as_its_float64(value, accepted):
    # 1e-300 is 0 in float32 and float16: compared in the value's own dtype,
    # np.float32(0.0) passed the lower bound that 0.0 does not; the upper
    # bound 1e38 is inf in float16 (an overflow warning). A finite
    # longdouble beyond the largest float64 is refused, as the ints are.
    if isinstance(value, str):
        value = np.longdouble(value)
    interval = Interval(Real, 1e-300, 1e38, closed="both")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert interval.is_satisfied_by(value) is accepted


@pytest.mark.parametrize("value", [Fraction(1, 3), Fraction(10**400, 3)])
def test_an_interval_refuses_a_fraction(value):
    # numpy's isnan raised on a Fraction, naming no parameter; the solvers'
    # ufuncs take none either.
    assert not Interval(Real, 0, None, closed="neither").is_satisfied_by(value)


def test_a_numpy_float_keeps_its_type_check():
    # np.float32 is not a RealNotInt: the type is read from the value given,
    # not from the float64 it is compared as.
    from sklearn.utils._param_validation import RealNotInt

    assert not Interval(RealNotInt, 0, None, closed="neither").is_satisfied_by(
        np.float32(1.0)
    )
    assert Interval(RealNotInt, 0, None, closed="neither").is_satisfied_by(1.0)


@pytest.mark.parametrize(
    "name", ["DPLogisticRegression", "SemiDPLinearRegression", "HeavyTailDPRegressor"]
)
@pytest.mark.parametrize(
    "value", [np.float32(0.0), np.float16(0.0), Fraction(1, 3)], ids=repr
)
def test_a_float32_zero_or_a_fraction_clip_norm_is_refused_naming_it(name, value):
    # np.float32(0.0) passed the lower bound 1e-300 (0 in float32):
    # DPLogisticRegression fitted a zero model and SemiDPLinearRegression
    # divided by zero.
    estimator = dict(all_estimators())[name](clip_norm=value)
    X, y = np.ones((6, 2)), np.array([0, 1, 0, 1, 0, 1])
    with pytest.raises(InvalidParameterError, match="'clip_norm'"):
        estimator.fit(X, y)


def test_a_seed_of_any_size_is_still_a_seed():
    # numpy's generators take any int; a seed is never a float.
    from sklearn_dpfair._base import SEED_CONSTRAINT

    assert SEED_CONSTRAINT.is_satisfied_by(2**1100)
    np.random.default_rng(2**1100)
