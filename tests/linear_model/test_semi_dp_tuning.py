# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""semidp_hyperparameters: the choice SemiDPLinearRegression's fit makes."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair import SemiDPLinearRegression
from sklearn_dpfair.linear_model import semidp_hyperparameters


def _problem(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("n_public", [1, 3, 4, 5])
def test_helper_is_the_fits_choice_with_few_public_rows(n_public):
    # 3 features and the intercept: with at most 4 public rows the fit does
    # not tune (its fallback weight, plain step and 20 steps); with 5 it
    # does. The helper must return what the fit uses in both cases.
    X, y = _problem()
    mask = np.arange(X.shape[0]) < n_public
    with warnings.catch_warnings():
        # Too few public rows, target left as given: the fit says so.
        warnings.simplefilter("ignore", UserWarning)
        reg = SemiDPLinearRegression(random_state=0).fit(X, y, public_mask=mask)
    params = semidp_hyperparameters(
        X[mask], y[mask], n_private=int((~mask).sum())
    )
    assert params["alpha"] == pytest.approx(reg.alpha_, rel=1e-12)
    assert params["learning_rate"] == pytest.approx(reg.learning_rate_, rel=1e-12)
    assert params["max_iter"] == reg.n_iter_
    assert math.isnan(params["predicted_test_mse"]) == (n_public <= 4)


@pytest.mark.parametrize("clip_norm", [1e-160, 1e300])
def test_helper_refuses_the_clip_norms_the_fit_refuses(clip_norm):
    X, y = _problem(200)
    with pytest.raises(ValueError, match="clip_norm"):
        semidp_hyperparameters(X[:50], y[:50], n_private=150, clip_norm=clip_norm)


@pytest.mark.parametrize("name", ["clip_norm", "public_ridge", "n_private"])
def test_an_int_beyond_float64_is_refused_naming_the_parameter(name):
    # 10**400 passes the Real and Integral constraints but has no float
    # (clip_norm's range check raised OverflowError).
    X, y = _problem(n=50)
    kwargs = {"n_private": 1000, name: 10**400}
    # Refused by the parameter's interval (naming it) or by the function.
    match = rf"^{name} is beyond the largest float|The '{name}' parameter"
    with pytest.raises(ValueError, match=match):
        semidp_hyperparameters(X, y, **kwargs)
