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


def _fit(X, y, mask, **params):
    with warnings.catch_warnings():
        # Too few public rows, target left as given: the fit says so.
        warnings.simplefilter("ignore", UserWarning)
        return SemiDPLinearRegression(random_state=0, **params).fit(
            X, y, public_mask=mask
        )


@pytest.mark.parametrize("n", [1000, 3000])
@pytest.mark.parametrize("raw", [False, True], ids=["standard", "raw"])
@pytest.mark.parametrize("n_public", [1, 3, 4, 5])
def test_helper_is_the_fits_choice_with_few_public_rows(n_public, raw, n):
    # 3 features and the intercept: with at most 4 public rows the fit does
    # not tune (its fallback weight, plain step and 20 steps); with 5 it
    # does. Below 5 public rows it also scales the columns by private
    # statistics and caps its step on the scaled public rows: the helper
    # leaves that step to the fit ("auto"). On raw columns (one offset by
    # 500, one in units of 1e4) the helper's number, capped on the rows as
    # given, was 1.7e-5 against the fit's 1.0, and the model reusing it
    # stayed near the constant (train MSE 14.4 against 0.25). With 1,000
    # rows the private quantiles cannot resolve a spread: the fit leaves
    # the columns as given, and the helper's step is the fit's.
    X, y = _problem(n)
    if raw:
        X = X * [1.0, 1e4, 1.0] + [500.0, 0.0, 0.0]
    mask = np.arange(X.shape[0]) < n_public
    reg = _fit(X, y, mask)
    params = semidp_hyperparameters(
        X[mask], y[mask], n_private=int((~mask).sum())
    )
    assert params["alpha"] == pytest.approx(reg.alpha_, rel=1e-12)
    assert params["max_iter"] == reg.n_iter_
    if n_public < 5 and n == 3000:
        assert params["learning_rate"] == "auto"
    else:
        assert params["learning_rate"] == pytest.approx(reg.learning_rate_, rel=1e-12)
    assert math.isnan(params["predicted_test_mse"]) == (n_public <= 4)
    # Fixed once and reused, the choice gives the same fit.
    params.pop("predicted_test_mse")
    reused = _fit(X, y, mask, **params)
    np.testing.assert_allclose(reused.coef_, reg.coef_, rtol=1e-9)
    assert reused.learning_rate_ == pytest.approx(reg.learning_rate_, rel=1e-12)


@pytest.mark.parametrize("n_public", [3, 4])
def test_helper_leaves_a_tuned_choice_on_private_scales_to_the_fit(n_public):
    # One feature and the intercept: 3 or 4 public rows tune, in columns
    # the fit scales by private statistics. The helper, ranking the raw
    # rows, returned alpha 0.18 where the fit chose 0.99.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 1)) + 500.0
    y = X[:, 0] + rng.standard_normal(3000)
    mask = np.arange(3000) < n_public
    params = semidp_hyperparameters(X[mask], y[mask], n_private=3000 - n_public)
    predicted = params.pop("predicted_test_mse")
    assert params == {"alpha": "auto", "learning_rate": "auto", "max_iter": "auto"}
    assert math.isnan(predicted)
    reg = _fit(X, y, mask)
    reused = _fit(X, y, mask, **params)
    np.testing.assert_allclose(reused.coef_, reg.coef_, rtol=1e-9)


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
