"""The certified solve behind output perturbation."""

import math

import numpy as np
import pytest

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._loss import BinaryLogisticLoss
from sklearn_dpfair._solvers._output_perturbation import (
    _objective,
    certified_regularized_erm,
    guaranteed_certificate_steps,
)


@pytest.mark.parametrize("alpha", [1e-2, 1e-1, 1.0])
def test_gradient_descent_from_zero_certifies_within_the_public_step_count(alpha):
    # The count is a worst case over datasets: plain gradient descent from 0
    # must reach the certificate within it on adversarial-looking data.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    X[0] = [1.0, 0.0, 0.0]
    y = (rng.random(50) < 0.5).astype(float)
    loss = BinaryLogisticLoss()
    s, tol = 1.0, 1e-6
    lipschitz = loss.raw_lipschitz * np.hypot(1.0, s)
    smoothness = loss.raw_smoothness * (1.0 + s**2)
    steps = guaranteed_certificate_steps(
        lipschitz=lipschitz, smoothness=smoothness, alpha=alpha, tol=tol
    )
    shape = (4, 1)
    args = (X, y, loss, alpha, s, shape)
    w = np.zeros(4)
    for _ in range(steps):
        _, g = _objective(w, *args)
        w = w - g / (smoothness + alpha)
    _, g = _objective(w, *args)
    assert np.linalg.norm(g) <= alpha * tol
    W = certified_regularized_erm(
        X, y, loss, alpha=alpha, intercept_scaling=s, tol=tol, smoothness=smoothness
    )
    _, g = _objective(W.ravel(), *args)
    assert np.linalg.norm(g) <= alpha * tol


def test_a_fit_that_could_fail_on_some_data_says_so_in_its_record():
    # Decided from public constants: both neighbours carry the same caveat.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), rng.integers(0, 2, 40)
    common = dict(solver="output-perturbation", epsilon=1.0, classes=[0, 1],
                  random_state=0)
    risky = DPLogisticRegression(alpha=1e-3, feature_norm_bound=1e3, **common)
    safe = DPLogisticRegression(alpha=0.1, feature_norm_bound=1.0, **common)
    assert any("certified solve may fail" in c for c in risky.fit(X, y).privacy_caveats_)
    assert not any("certified solve" in c for c in safe.fit(X, y).privacy_caveats_)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_estimator_fits_sparse_input_as_the_dense_one(fmt):
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 8)) * (rng.random((120, 8)) < 0.2) * 3
    y = rng.integers(0, 3, 120)
    params = dict(
        solver="output-perturbation", epsilon=1.0, classes=[0, 1, 2], alpha=0.1,
        feature_norm_bound=1.0, random_state=4,
    )
    dense = DPLogisticRegression(**params).fit(X, y)
    sparse = DPLogisticRegression(**params).fit(sp.csr_matrix(X).asformat(fmt), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(
        sparse.predict(sp.csr_matrix(X)), dense.predict(X)
    )


def test_estimator_keeps_float32():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)).astype(np.float32)
    y = rng.integers(0, 2, 80)
    clf = DPLogisticRegression(
        solver="output-perturbation", classes=[0, 1], alpha=0.1,
        feature_norm_bound=1.0, random_state=0,
    ).fit(X, y)
    assert clf.coef_.dtype == np.float32 and clf.intercept_.dtype == np.float32


def _stalling_problem():
    # Rows of norm about 63 (bound 600) and alpha = 1e-3: L-BFGS stops at
    # ||grad F|| ~ 3e-8, where F no longer decreases in float64, short of
    # the target alpha * tol = 1e-9; gradient descent at 1/beta would need
    # about beta / alpha ~ 2e8 steps per factor e from there.
    from sklearn_dpfair._loss import SoftmaxLoss
    from sklearn_dpfair._solvers._rows import clip_rows_to_norm

    rng = np.random.default_rng(0)
    X = clip_rows_to_norm(10.0 * rng.normal(size=(3000, 40)), 600.0)
    y = rng.integers(0, 3, size=3000)
    return X, y, SoftmaxLoss(3)


def test_a_solve_left_short_by_lbfgs_is_certified_by_newton_steps(monkeypatch):
    import sklearn_dpfair._solvers._output_perturbation as op

    X, y, loss = _stalling_problem()
    alpha, tol = 1e-3, 1e-6
    smoothness = loss.raw_smoothness * (600.0**2 + 1.0)
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return _objective(*args, **kwargs)

    monkeypatch.setattr(op, "_objective", counted)
    # A small fallback cap: the Newton steps, not gradient descent, certify
    # (the old solve ran all 100 000 fallback steps, minutes, then raised).
    monkeypatch.setattr(op, "MAX_FALLBACK_STEPS", 1000)
    W = certified_regularized_erm(
        X, y, loss, alpha=alpha, intercept_scaling=1.0, tol=tol, smoothness=smoothness
    )
    _, g = _objective(W.ravel(), X, y, loss, alpha, 1.0, W.shape)
    assert np.linalg.norm(g) <= alpha * tol
    # L-BFGS's few dozen evaluations, then one or two Newton steps.
    assert len(calls) < 1000


def test_the_sweep_configuration_releases_a_model(monkeypatch):
    import sklearn_dpfair._solvers._output_perturbation as op

    monkeypatch.setattr(op, "MAX_FALLBACK_STEPS", 1000)
    rng = np.random.default_rng(0)
    X = 10.0 * rng.normal(size=(3000, 40))
    y = rng.integers(0, 3, size=3000)
    est = DPLogisticRegression(
        solver="output-perturbation", accountant="pld", alpha=0.001,
        classes=[0, 1, 2], clip_norm=0.01, epsilon=0.05,
        feature_norm_bound=600.0, small_budget="fit", random_state=773,
    ).fit(X, y)
    assert np.all(np.isfinite(est.coef_)) and est.coef_.shape == (3, 40)


def test_a_tol_below_float64_round_off_is_refused_before_the_data():
    # The certificate ||grad|| <= alpha tol cannot be checked below the
    # gradient's round-off: whether a fit certified depended on one record.
    from sklearn_dpfair import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    y = (X[:, 0] + rng.normal(size=3000) > 0).astype(int)
    kw = dict(
        solver="output-perturbation", alpha=0.01, feature_norm_bound=2.0,
        classes=[0, 1], random_state=0,
    )
    tiny = DPLogisticRegression(tol=5e-16, **kw)
    with pytest.raises(ValueError, match=r"tol=5e-16 is below what float64"):
        tiny.privacy_plan(*X.shape)
    with pytest.raises(ValueError, match=r"tol=5e-16 is below what float64"):
        tiny.fit(X, y)
    floor = 64 * np.finfo(np.float64).eps * math.hypot(2.0, 1.0) / 0.01
    assert DPLogisticRegression(tol=1.01 * floor, **kw).fit(X, y).coef_.shape == (1, 5)
    # The non-private limit solves exactly and certifies nothing.
    exact = DPLogisticRegression(tol=5e-16, **{**kw, "epsilon": np.inf}).fit(X, y)
    assert exact.epsilon_ == np.inf


def test_extreme_public_constants_are_refused_or_planned_before_the_data():
    # feature_norm_bound**2 overflows float64 (it raised OverflowError), and
    # alpha**2 * tol underflows to 0 (it raised ZeroDivisionError).
    kw = dict(solver="output-perturbation", classes=[0, 1], random_state=0)
    huge = DPLogisticRegression(alpha=1.0, feature_norm_bound=1e160, **kw)
    with pytest.raises(ValueError, match=r"^feature_norm_bound is too large"):
        huge.privacy_plan(40, 2)
    assert guaranteed_certificate_steps(
        lipschitz=1.0, smoothness=0.25, alpha=1e-300, tol=1e300
    ) == math.inf
    tiny = DPLogisticRegression(alpha=1e-300, tol=1e300, feature_norm_bound=1.0, **kw)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), rng.integers(0, 2, 40)
    assert any("certified solve may fail" in c for c in tiny.fit(X, y).privacy_caveats_)


def test_a_sensitivity_that_overflows_is_refused_before_the_data():
    # 2 L / (alpha n) + 2 tol = inf released coefficients of +-inf.
    kw = dict(solver="output-perturbation", classes=[0, 1], feature_norm_bound=5.0)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), rng.integers(0, 2, 40)
    cases = [(1e308, 1e-5), (8e307, 1e-5), (8e307, 0.0)]  # Gaussian, Laplace
    for tol, delta in cases:  # the sensitivity, or only the noise, overflows
        est = DPLogisticRegression(alpha=0.1, tol=tol, delta=delta, **kw)
        with pytest.raises(ValueError, match=r"^tol or alpha makes .* overflow"):
            est.privacy_plan(40, 2)
        with pytest.raises(ValueError, match=r"^tol or alpha makes .* overflow"):
            est.fit(X, y)
        assert not hasattr(est, "coef_")


def _exact_norm(v):
    m = np.max(np.abs(v))
    return 0.0 if m == 0 else m * np.linalg.norm(v / m)


def test_the_certificate_is_not_passed_by_a_gradient_norm_that_underflows():
    # With tiny rows and alpha the gradient's squares underflow: its plain
    # norm 0 certified the starting point (distance ~4e-4 from the
    # minimizer, for tol=1e-9).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2)) * 1e-171
    y = (X[:, 0] > 0).astype(float)
    alpha, tol = 1e-168, 1e-9
    W = certified_regularized_erm(
        X, y, BinaryLogisticLoss(), alpha=alpha, intercept_scaling=0.0, tol=tol,
        smoothness=0.0,
    )
    _, grad = _objective(W.ravel(), X, y, BinaryLogisticLoss(), alpha, 0.0, (3, 1))
    assert _exact_norm(grad) <= alpha * tol
    assert np.all(np.isfinite(W)) and _exact_norm(W.ravel()) > 1e-4


def test_a_tiny_record_moves_the_minimizer_by_at_most_the_sensitivity():
    # Rows whose squares underflow must be clipped like any other: a record
    # of 1e-165 against feature_norm_bound=1e-170 (unclipped, it moved the
    # certified minimizer by ~2.5e4 times the sensitivity).
    from sklearn_dpfair._solvers._rows import clip_rows_to_norm

    rng = np.random.default_rng(0)
    n, bound, alpha, tol = 200, 1e-170, 1e-168, 1e-9
    X = rng.normal(size=(n, 2)) * 1e-171
    y = (X[:, 0] > 0).astype(float)
    neighbour, y_neighbour = X.copy(), y.copy()
    neighbour[0], y_neighbour[0] = [1e-165, 0.0], 0.0
    loss = BinaryLogisticLoss()

    def solve(rows, labels):
        return certified_regularized_erm(
            clip_rows_to_norm(rows, bound), labels, loss, alpha=alpha,
            intercept_scaling=0.0, tol=tol, smoothness=0.25 * bound * bound,
        ).ravel()

    sensitivity = 2 * bound / (alpha * n) + 2 * tol  # logistic: L = R
    moved = _exact_norm(solve(X, y) - solve(neighbour, y_neighbour))
    assert 0 < moved <= sensitivity
