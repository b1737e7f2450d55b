"""The certified solve behind output perturbation."""

import numpy as np
import pytest

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._loss import BinaryLogisticLoss
from sklearn_dpfair._solvers._output_perturbation import (
    certified_regularized_erm,
    guaranteed_certificate_steps,
)
from sklearn_dpfair._solvers._output_perturbation import _objective


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
