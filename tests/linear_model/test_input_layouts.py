"""F-ordered arrays and DataFrames fit like C-ordered arrays, on a C-ordered copy."""

import numpy as np
import pandas as pd
import pytest

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    FERMIClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
)
from sklearn_dpfair._solvers import _private_fit

RNG = np.random.default_rng(0)
X = RNG.normal(size=(300, 4))
Y_CLASS = (X[:, 0] + 0.3 * RNG.normal(size=300) > 0).astype(int)
Y_REG = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * RNG.normal(size=300)
GROUPS = RNG.integers(0, 2, 300)

CASES = [
    (lambda: DPLogisticRegression(classes=[0, 1], random_state=0), Y_CLASS, {}),
    (lambda: FERMIClassifier(random_state=0), Y_CLASS, {"sensitive_features": GROUPS}),
    (
        lambda: DPFERMIClassifier(classes=[0, 1], groups=[0, 1], random_state=0),
        Y_CLASS,
        {"sensitive_features": GROUPS},
    ),
    (lambda: HeavyTailDPRegressor(epsilon=4.0, random_state=0), Y_REG, {}),
    (
        lambda: SemiDPLinearRegression(random_state=0),
        Y_REG,
        {"public_mask": np.arange(300) < 60},
    ),
]


@pytest.mark.parametrize("make, y, fit_params", CASES)
@pytest.mark.parametrize(
    "layout", [np.asfortranarray, lambda a: pd.DataFrame(a), lambda a: a[:, ::-1][:, ::-1]]
)
def test_layouts_give_the_c_ordered_fit(make, y, fit_params, layout):
    reference = make().fit(np.ascontiguousarray(X), y, **fit_params)
    other = make().fit(layout(X), y, **fit_params)
    np.testing.assert_array_equal(other.coef_, reference.coef_)
    np.testing.assert_array_equal(other.intercept_, reference.intercept_)


def test_dp_sgd_solver_gets_a_c_ordered_array(monkeypatch):
    seen = []
    solver = _private_fit.noisy_sgd

    def spy(X, *args, **kwargs):
        seen.append(X.flags.c_contiguous)
        return solver(X, *args, **kwargs)

    monkeypatch.setattr(_private_fit, "noisy_sgd", spy)
    DPLogisticRegression(classes=[0, 1], random_state=0).fit(
        pd.DataFrame(X), Y_CLASS
    )
    assert seen == [True]
