# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""One contract over every pointwise loss: gradients match finite differences."""

import numpy as np
import pytest

from sklearn_dpfair._loss import (
    AbsoluteLoss,
    BinaryLogisticLoss,
    HuberLoss,
    PinballLoss,
    SoftmaxLoss,
    SquaredLoss,
)

LOSSES = [
    BinaryLogisticLoss(),
    SoftmaxLoss(3),
    SquaredLoss(),
    HuberLoss(0.7),
    AbsoluteLoss(),
    PinballLoss(0.2),
    PinballLoss(0.9),
]


def _name(loss):
    params = getattr(loss, "threshold", getattr(loss, "quantile", ""))
    return f"{type(loss).__name__}({params})"


def _data(loss, rng, n=200):
    k = loss.n_outputs
    raw = rng.normal(scale=2.0, size=(n, k))
    if isinstance(loss, BinaryLogisticLoss):
        y = rng.integers(0, 2, size=n).astype(float)
    elif isinstance(loss, SoftmaxLoss):
        y = rng.integers(0, k, size=n)
    else:
        y = rng.standard_t(3, size=n)
    return y, raw


@pytest.mark.parametrize("loss", LOSSES, ids=_name)
def test_raw_gradient_matches_finite_differences(loss, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    y, raw = _data(loss, rng)
    if not np.isfinite(loss.raw_smoothness):
        # Stay away from the kink of nonsmooth losses (residual 0).
        raw[np.abs(raw[:, 0] - y) < 1e-3, 0] += 0.1
    h = 1e-6
    grad = loss.raw_gradient(y, raw)
    assert grad.shape == raw.shape
    for j in range(raw.shape[1]):
        step = np.zeros_like(raw)
        step[:, j] = h
        numeric = (loss.loss(y, raw + step) - loss.loss(y, raw - step)) / (2 * h)
        np.testing.assert_allclose(grad[:, j], numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss", LOSSES, ids=_name)
def test_raw_lipschitz_bounds_the_gradient(loss, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    y, raw = _data(loss, rng)
    norms = np.linalg.norm(loss.raw_gradient(y, 10.0 * raw), axis=1)
    assert np.all(norms <= loss.raw_lipschitz + 1e-12)
    assert loss.loss(y, raw).shape == (raw.shape[0],)
    assert np.all(loss.loss(y, raw) >= 0)


@pytest.mark.parametrize("loss", LOSSES, ids=_name)
def test_raw_smoothness_bounds_gradient_changes(loss, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    y, raw = _data(loss, rng)
    other = raw + rng.normal(scale=0.5, size=raw.shape)
    diff = np.linalg.norm(
        loss.raw_gradient(y, raw) - loss.raw_gradient(y, other), axis=1
    )
    bound = loss.raw_smoothness * np.linalg.norm(raw - other, axis=1)
    assert np.all(diff <= bound + 1e-12)


def test_huber_is_squared_inside_and_linear_outside():
    loss = HuberLoss(1.0)
    y = np.zeros(3)
    raw = np.array([[0.5], [2.0], [-3.0]])
    np.testing.assert_allclose(loss.loss(y, raw), [0.125, 1.5, 2.5])


def test_pinball_minimizer_is_the_quantile():
    rng = np.random.default_rng(0)
    y = rng.exponential(size=20001)
    grid = np.linspace(0, 4, 4001)
    loss = PinballLoss(0.8)
    risks = [loss.loss(y, np.full((y.size, 1), c)).mean() for c in grid]
    assert abs(grid[np.argmin(risks)] - np.quantile(y, 0.8)) < 2e-3
    assert AbsoluteLoss().raw_lipschitz == 1.0


@pytest.mark.parametrize("quantile", [0.0, 1.0, -0.1, 1.5])
def test_pinball_rejects_levels_outside_unit_interval(quantile):
    with pytest.raises(ValueError, match="quantile"):
        PinballLoss(quantile)


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)], ids=_name)
def test_classification_losses_are_finite_at_infinite_scores(loss):
    # An overflowed prediction (+-inf) has a finite gradient within the
    # Lipschitz bound, and finite (log-)probabilities: the limits at +-inf.
    big = np.finfo(np.float64).max
    k = loss.n_outputs
    rows = [np.inf, -np.inf, big, -big, 0.0, -800.0]
    raw = np.array([[r] + [0.0, -np.inf][: k - 1] for r in rows])
    y = np.zeros(raw.shape[0])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        grad = loss.raw_gradient(y, raw)
        proba = loss.predict_proba(raw)
        log_proba = loss.predict_log_proba(raw)
    assert np.isfinite(grad).all()
    assert np.all(np.linalg.norm(grad, axis=1) <= loss.raw_lipschitz + 1e-12)
    assert np.isfinite(proba).all() and np.isfinite(log_proba).all()
    np.testing.assert_allclose(np.exp(log_proba), proba, atol=1e-15)
    # An underflowed probability (exp(-800) = 0) keeps its exact log.
    assert proba[-1, 1 if k == 1 else 0] == 0.0
    assert log_proba[-1, 1 if k == 1 else 0] == -800.0
