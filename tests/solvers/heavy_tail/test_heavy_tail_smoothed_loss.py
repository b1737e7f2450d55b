# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The absolute and quantile losses smoothed over a public width (one-pass solvers)."""

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import QuantileRegressor

from sklearn_dpfair._loss import AbsoluteLoss, PinballLoss
from sklearn_dpfair._solvers.heavy_tail._fit import (
    HeavyTailConfig,
    _curvature_factors,
    _plan_budget,
    _resolve_curvature,
    smooths_loss,
)
from sklearn_dpfair._solvers.heavy_tail._smoothed_loss import smoothed_loss
from sklearn_dpfair.linear_model import HeavyTailDPRegressor


def _config(**changes):
    base = dict(
        loss_name="quantile", solver="sgd", clip_norm="auto", radius=None,
        moment_order=2.0, moment_bound=None, clip_ref=300.0, smoothness="auto",
        strong_convexity="auto", max_iter="auto", tuning_fraction=0.1,
        mode="practical", penalty=None, alpha=0.0, l1_ratio=0.15,
        fit_intercept=True, smoothing_width=0.5,
    )
    return HeavyTailConfig(**{**base, **changes})


@pytest.mark.parametrize("loss", [PinballLoss(0.8), PinballLoss(0.3), AbsoluteLoss()])
def test_smoothed_loss_is_the_uniform_kernel_average(loss):
    h = 0.7
    smooth = smoothed_loss(loss, h)
    y = np.zeros(1)
    u = np.linspace(-1.0, 1.0, 4001)
    for r in (-2.0, -0.69, -0.2, 0.0, 0.3, 0.69, 1.5):
        # E[l(r + h U)] by the trapezoid rule (error below 1e-6 here).
        values = loss.loss(np.zeros(len(u)), (r + h * u)[:, None])
        expected = np.trapezoid(values, u) / 2.0
        assert smooth.loss(y, np.array([[r]]))[0] == pytest.approx(expected, abs=1e-5)
        # Outside the window it is the loss itself.
        if abs(r) >= h:
            assert smooth.loss(y, np.array([[r]]))[0] == pytest.approx(
                loss.loss(y, np.array([[r]]))[0], rel=1e-12
            )


@pytest.mark.parametrize("loss", [PinballLoss(0.9), AbsoluteLoss()])
def test_smoothed_gradient_is_bounded_and_lipschitz_as_stated(loss):
    h = 0.4
    smooth = smoothed_loss(loss, h)
    r = np.linspace(-3.0, 3.0, 6001)[:, None]
    g = smooth.raw_gradient(np.zeros(len(r)), r)[:, 0]
    assert np.all(np.abs(g) <= smooth.raw_lipschitz + 1e-15)
    slopes = np.abs(np.diff(g) / np.diff(r[:, 0]))
    assert slopes.max() <= smooth.raw_smoothness * (1 + 1e-9)
    assert slopes.max() >= 0.99 * smooth.raw_smoothness
    # The gradient of the values (central differences, exact for a
    # piecewise quadratic up to round-off).
    v = smooth.loss(np.zeros(len(r)), r)
    numeric = (v[2:] - v[:-2]) / (r[2:, 0] - r[:-2, 0])
    assert np.max(np.abs(numeric - g[1:-1])) < 1e-3


def test_only_auto_smoothness_of_a_one_pass_solver_smooths():
    assert smooths_loss(_config())
    assert smooths_loss(_config(loss_name="absolute_error", solver="acsa"))
    assert smooths_loss(_config(solver="auto", penalty="l1"))
    assert not smooths_loss(_config(smoothness=2.0))
    assert not smooths_loss(_config(solver="localized"))
    assert not smooths_loss(_config(loss_name="huber"))


def test_public_curvature_factors_of_the_smoothed_losses():
    # (a + b) / (2 h) of the largest eigenvalue; 0 of the smallest.
    assert _curvature_factors(_config()) == (1.0, 0.0)
    assert _curvature_factors(_config(loss_name="absolute_error")) == (2.0, 0.0)
    assert _curvature_factors(_config(loss_name="huber")) == (1.0, 0.5)
    # A declared smoothness needs no private estimate; mu is the L2 penalty.
    config = _config(smoothness=2.0, penalty="l2", alpha=0.25)
    _, _, needs_curvature = _plan_budget(config, 0.05)
    assert not needs_curvature
    assert _resolve_curvature(config, None) == (2.25, 0.25)


@pytest.mark.parametrize(
    "params",
    [
        {"loss": "quantile", "solver": "sgd"},
        {"loss": "quantile", "quantile": 0.9, "solver": "acsa"},
        {"loss": "quantile", "solver": "prox"},
        {"loss": "absolute_error", "solver": "sgd"},
        # "auto" with an l1 penalty runs "prox".
        {"loss": "quantile", "penalty": "l1", "alpha": 0.01},
    ],
)
def test_one_pass_solvers_fit_the_piecewise_linear_losses_by_default(params):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 3))
    y = X @ [1.0, -2.0, 0.5] + 1.0 + rng.standard_t(3, size=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = HeavyTailDPRegressor(epsilon=8.0, random_state=0, **params).fit(X, y)
    assert np.all(np.isfinite(reg.coef_))
    assert np.allclose(reg.coef_, [1.0, -2.0, 0.5], atol=0.6)
    # The private lambda_max (about 1 here) times (a + b) / (2 h), h = 1.
    factor = 1.0 if params["loss"] == "absolute_error" else 0.5
    assert 0.5 * factor < reg.smoothness_ < 3.0 * factor


@pytest.mark.parametrize("solver", ["sgd", "acsa", "prox"])
def test_infinite_epsilon_is_sklearn_quantile_regressor_on_raw_scale(solver):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 2)) + 500.0
    y = (X - 500.0) @ [1.0, -2.0] + 3.0 + rng.standard_t(3, size=400)
    ref = QuantileRegressor(quantile=0.7, alpha=0.0, solver="highs").fit(X, y)
    reg = HeavyTailDPRegressor(
        loss="quantile", quantile=0.7, epsilon=math.inf, solver=solver
    ).fit(X, y)
    # Both solve the same linear program; the raw-scale intercept absorbs
    # 500 times the coefficients' round-off.
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=1e-6)
    assert reg.intercept_ == pytest.approx(ref.intercept_, abs=1e-3)
