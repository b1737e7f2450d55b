# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Output perturbation with Laplace noise: pure epsilon-DP (delta = 0)."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair._solvers._output_perturbation import certified_regularized_erm
from sklearn_dpfair._solvers._private_fit import (
    OutputPerturbationParams,
    output_perturbation_setup,
)
from sklearn_dpfair.privacy import LaplaceMechanism, PrivacyBudget
from sklearn_dpfair._solvers._rows import clip_rows_to_norm

R, ALPHA, N, D = 2.0, 0.05, 300, 4


def _data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = (X @ [1.0, -1.0, 0.5, 0.0] + rng.logistic(size=n) > 0).astype(int)
    return X, y


def _minimizer(X, y, loss, setup):
    return certified_regularized_erm(
        clip_rows_to_norm(X, R), y, loss, alpha=ALPHA, intercept_scaling=1.0,
        tol=1e-6, smoothness=setup.smoothness,
    )


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)])
def test_l1_sensitivity_holds_on_adversarial_neighbours(loss):
    params = OutputPerturbationParams(feature_norm_bound=R, alpha=ALPHA, tol=1e-6)
    setup = output_perturbation_setup(
        N, D, loss, params, PrivacyBudget(1.0, 0.0), weighted=False
    )
    assert isinstance(setup.mechanism, LaplaceMechanism)
    # l1 <= sqrt(p) l2 over the p = (d + 1) K coefficients, with the l2
    # sensitivity 2 L / (alpha n) + 2 tol of the certified minimizer.
    lipschitz = loss.raw_lipschitz * math.hypot(R, 1.0)
    l2 = 2.0 * lipschitz / (ALPHA * N) + 2e-6
    p = (D + 1) * loss.n_outputs
    assert setup.mechanism.sensitivity == pytest.approx(math.sqrt(p) * l2, rel=1e-12)
    X, y = _data()
    if loss.n_outputs > 1:
        y = np.arange(N) % 3
    base = _minimizer(X, y, loss, setup)
    for row, label in [
        (np.full(D, 1e6), 1),  # huge, clipped to R
        (np.zeros(D), 0),
        (-X[0] * 50, 1 - y[0] if loss.n_outputs == 1 else 2),
    ]:
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = row, label
        moved = np.abs(_minimizer(X2, y2, loss, setup) - base).sum()
        assert moved <= setup.mechanism.sensitivity


def test_fit_is_pure_and_planned():
    X, y = _data(n=2000)
    est = DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", feature_norm_bound=R,
        alpha=ALPHA, epsilon=2.0, delta=0.0,
    )
    plan = est.privacy_plan(2000, D)
    est.fit(X, y)
    assert est.delta_ == 0.0 and est.epsilon_ == pytest.approx(2.0)
    assert est.dp_event_ == plan.dp_event
    assert type(est.dp_event_).__name__ == "LaplaceDpEvent"
    assert "pure epsilon-DP" in est.privacy_summary()
    assert "(2, 0)-differential privacy" in est.privacy_summary()


def test_utility_rises_with_epsilon():
    X, y = _data(n=4000)
    X_test, y_test = _data(seed=1, n=4000)
    scores = []
    for eps in (0.05, 1.0, math.inf):
        accs = [
            DPLogisticRegression(
                classes=[0, 1], solver="output-perturbation", feature_norm_bound=R,
                alpha=ALPHA, epsilon=eps, delta=0.0, random_state=seed,
            ).fit(X, y).score(X_test, y_test)
            for seed in range(5)
        ]
        scores.append(np.mean(accs))
    assert scores[0] < scores[1] <= scores[2] + 0.01


@pytest.mark.parametrize(
    "params",
    [{"solver": "dp-sgd"}, {"solver": "dp-frank-wolfe", "l1_radius": 1.0}],
)
def test_other_solvers_refuse_delta_zero(params):
    X, y = _data()
    est = DPLogisticRegression(classes=[0, 1], delta=0.0, **params)
    with pytest.raises(ValueError, match="delta=0"):
        est.fit(X, y)
    with pytest.raises(ValueError, match="delta=0"):
        est.privacy_plan(N, D)
    assert not hasattr(est, "coef_")


def test_delta_zero_warns_nothing_about_delta():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPLogisticRegression(
            classes=[0, 1], solver="output-perturbation", feature_norm_bound=R,
            alpha=ALPHA, delta=0.0,
        ).fit(X, y)
