"""The full-batch phase evaluates each point once (_lbfgs._last_point_cached)."""

import numpy as np

from sklearn_dpfair._solvers.fermi import _lbfgs
from sklearn_dpfair._solvers.fermi._lbfgs import _last_point_cached, refine_full_batch


def test_same_point_is_not_evaluated_again():
    calls = []

    def fun(u):
        calls.append(u.copy())
        return float(u @ u), 2.0 * u

    cached = _last_point_cached(fun)
    u = np.array([1.0, 2.0])
    v1, g1 = cached(u)
    g1[0] = 99.0  # a caller writing into the gradient does not touch the cache
    v2, g2 = cached(u.copy())
    assert len(calls) == 1 and v1 == v2 == 5.0
    np.testing.assert_array_equal(g2, [2.0, 4.0])
    cached(np.array([1.0, 2.0 + 1e-15]))
    assert len(calls) == 2


def test_refine_result_is_that_of_uncached_evaluations(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(np.intp)
    args = dict(
        regularizer=None, cells=None, fairness_weight=0.0, alpha=0.0,
        intercept_scaling=1.0, coef=np.zeros((4, 2)), w0=np.zeros(2), tol=1e-8,
        max_iter=100,
    )
    cached = refine_full_batch(X, y, **args)
    counted = []

    def plain(fun):
        def f(u):
            counted.append(1)
            return fun(u)

        return f

    monkeypatch.setattr(_lbfgs, "_last_point_cached", plain)
    uncached = refine_full_batch(X, y, **args)
    np.testing.assert_array_equal(cached.coef, uncached.coef)
    assert cached.stationarity == uncached.stationarity
    # Uncached, the start and the returned point are evaluated twice.
    assert len(counted) >= cached.n_iter + 3
