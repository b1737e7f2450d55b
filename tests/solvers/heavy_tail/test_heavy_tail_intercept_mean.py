# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The private intercept step of "dp-sgd": sensitivity, accounting, limits."""

import math

import dp_accounting
import numpy as np
import pytest

from sklearn_dpfair import HeavyTailDPRegressor
from sklearn_dpfair._loss import SquaredLoss
from sklearn_dpfair._solvers.heavy_tail._dpsgd import (
    DPSGD_SCHEDULE,
    fit_heavy_tail_dpsgd,
    intercept_clip,
)
from sklearn_dpfair._solvers.heavy_tail._fit import zcdp_budget
from sklearn_dpfair._solvers.heavy_tail._intercept_mean import (
    intercept_mean_noise_std,
    private_intercept_step,
)
from sklearn_dpfair.privacy import PrivacyBudget, epsilon_of
from sklearn_dpfair.privacy._zcdp import rho_for_epsilon

from heavy_tail_config import dpsgd_config

_NON_PRIVATE = zcdp_budget(math.inf, 1e-5)




def _skewed(n, seed=0, d=3):
    """Centred Pareto(2.5) noise: mean 0, median well below it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    noise = rng.pareto(2.5, size=n) + 1.0 - 2.5 / 1.5
    return X, X @ np.ones(d) + 1.0 + noise


def _clipped_sum(X, y, coef, intercept, clip, weights=None):
    """The noiseless sum of the step (rho = inf): -step * n."""
    step = private_intercept_step(
        X, y, coef, intercept, clip, zcdp_budget(math.inf, 1e-5), None,
        sample_weight=weights,
    )
    return -step * X.shape[0]


@pytest.mark.parametrize(
    "row, target, weight",
    [
        (1e300, -1e300, 1.0),
        (0.0, 1e308, 1.0),
        (1e154, 1e154, 1.0),
        (0.0, np.inf, 1.0),
        (np.nan, 0.0, 1.0),
        (3.0, -7.0, 50.0),
    ],
)
def test_one_record_moves_the_clipped_sum_by_at_most_the_clip(row, target, weight):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X @ np.ones(3) + rng.normal(size=200)
    weights = np.ones(200)
    coef, intercept, clip = np.full(3, 0.9), 0.1, 0.7
    X2 = np.vstack([X, np.full((1, 3), row)])
    y2 = np.append(y, target)
    w2 = np.append(weights, weight)
    for w, ww in ((None, None), (weights, w2)):
        if w is None and weight != 1.0:
            continue
        base = _clipped_sum(X, y, coef, intercept, clip, w)
        added = _clipped_sum(X2, y2, coef, intercept, clip, ww)
        assert np.isfinite(added)
        # Add/remove adjacency: one record adds one term within [-clip, clip].
        assert abs(added - base) <= clip * (1 + 1e-12)


def test_noise_std_is_the_clip_over_sqrt_two_rho_over_n():
    X, y = _skewed(500)
    rho, clip = 0.02, 3.0
    steps = [
        private_intercept_step(
            X, y, np.ones(3), 1.0, clip, zcdp_budget(rho, 1e-5),
            np.random.default_rng(seed),
        )
        for seed in range(400)
    ]
    expected = intercept_mean_noise_std(clip, rho, 500)
    assert expected == pytest.approx(clip / math.sqrt(2 * rho) / 500)
    assert np.std(steps) == pytest.approx(expected, rel=0.15)


def test_step_removes_most_of_the_clipping_bias_of_skewed_noise():
    X, y = _skewed(200_000)
    # At the true coefficients and the residuals' median (where clipped
    # steps on skewed noise settle), the step moves towards the mean 1.0.
    median = 1.0 + np.median(y - X @ np.ones(3) - 1.0)
    step = private_intercept_step(
        X, y, np.ones(3), median, 30.0, zcdp_budget(math.inf, 1e-5), None
    )
    assert abs(median + step - 1.0) < 0.2 * abs(median - 1.0)


def _fit(X, y, epsilon, **config):
    return fit_heavy_tail_dpsgd(
        X,
        y,
        SquaredLoss(),
        dpsgd_config(**config),
        PrivacyBudget(epsilon, 1e-5),
        np.random.default_rng(0),
    )


def test_accounting_composes_the_step_with_the_scales_and_the_steps():
    X, y = _skewed(20_000)
    epsilon = 1.0
    fit = _fit(X, y, epsilon)
    rho = rho_for_epsilon(epsilon, 1e-5)
    assert fit.rho_spent["intercept_mean"] == pytest.approx(
        DPSGD_SCHEDULE.intercept_fraction * rho
    )
    # The composed event holds one zCDP event per private release (each
    # per-column entry is d releases: the range, location and scale of each
    # column) and the step, next to the subsampled Gaussian steps, and meets
    # the target.
    event = fit.record.dp_event
    assert isinstance(event, dp_accounting.ComposedDpEvent)
    zcdp = list(event.events[0].events)
    assert len(fit.rho_spent) == 8
    assert len(zcdp) == 5 + 3 * X.shape[1]
    assert sum(e.rho for e in zcdp) == pytest.approx(sum(fit.rho_spent.values()))
    assert fit.record.epsilon <= epsilon
    assert epsilon_of(event, 1e-5, "rdp") == pytest.approx(fit.record.epsilon)
    assert "intercept" in fit.record.mechanism


def test_step_skipped_where_its_noise_is_too_large():
    # Small epsilon * n: no share is spent, the budget stays with the steps.
    X, y = _skewed(400, seed=1)
    fit = _fit(X, y, 1.0)
    assert "intercept_mean" not in fit.rho_spent
    assert np.all(np.isfinite(fit.coef)) and np.isfinite(fit.intercept)
    clip = intercept_clip(1.0, 400, 2.0)
    rho = DPSGD_SCHEDULE.intercept_fraction * rho_for_epsilon(1.0, 1e-5)
    noise = intercept_mean_noise_std(clip, rho, 400)
    assert noise > DPSGD_SCHEDULE.intercept_max_noise
    # Not for the bounded-gradient losses, nor without an intercept.
    X, y = _skewed(20_000)
    assert "intercept_mean" not in _fit(X, y, 1.0, loss_name="huber").rho_spent
    assert "intercept_mean" not in _fit(X, y, 1.0, fit_intercept=False).rho_spent
    # Without privacy: no step (full-batch steps are unclipped).
    fit = fit_heavy_tail_dpsgd(
        X,
        y,
        SquaredLoss(),
        dpsgd_config(),
        PrivacyBudget(math.inf, 0.0),
        np.random.default_rng(0),
    )
    assert fit.rho_spent == {}


def test_raw_scale_target_on_few_rows_stays_finite_and_accounted():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 5))
    y = 150.0 + 75.0 * (X @ np.full(5, 0.3) + rng.standard_t(2.5, size=2000))
    est = HeavyTailDPRegressor(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y)
    assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
    assert est.epsilon_ <= 1.0
    mse = np.mean((est.predict(X) - y) ** 2)
    assert mse < np.var(y)


@pytest.mark.parametrize("sparse", [False, True])
def test_step_keeps_float32_x_in_float32(sparse):
    # The residuals are taken with coefficients in X's precision: a float64
    # coef made the product promote a float32 X to a float64 copy of all of
    # it (2x X in memory). For sparse X, by row blocks. The step equals the
    # float64 one to float32 precision.
    import tracemalloc

    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40_000, 50))
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.02))
    y = rng.standard_normal(40_000)
    coef = rng.standard_normal(50)
    X32 = X.astype(np.float32)
    step64 = private_intercept_step(X, y, coef, 0.1, 3.0, _NON_PRIVATE, None)
    tracemalloc.start()
    try:
        step32 = private_intercept_step(X32, y, coef, 0.1, 3.0, _NON_PRIVATE, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    storage = X32.data.nbytes + (X32.indices.nbytes + X32.indptr.nbytes if sparse else 0)
    assert peak < 0.6 * storage
    assert step32 == pytest.approx(step64, rel=1e-5, abs=1e-6)
