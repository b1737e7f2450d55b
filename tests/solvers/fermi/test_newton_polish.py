"""Second-order polish of the binary full-batch phase (fermi/_newton_polish)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair import FERMIClassifier
from sklearn_dpfair._solvers.fermi import _lbfgs, _newton_polish
from sklearn_dpfair._solvers.fermi._lbfgs import (
    column_scales,
    exact_dual_objective,
    refine_full_batch,
)
from sklearn_dpfair._solvers.fermi._newton_polish import (
    POLISH_MAX_PARAMS,
    binary_exact_dual_hessian,
    polish_applies,
    preconditioned_polish,
)
from sklearn_dpfair.fairness._ermi import ERMIRegularizer

_HALF = np.array([-0.5, 0.5])


def _problem(seed=0, n=3000, d=6, constraint="eo", weighted=False, n_groups=2):
    """A binary problem whose labels lean on the group, and its ERMI terms.

    Equalized odds: one block per label; demographic parity: one block.
    Group marginals are the empirical ones, as the estimator computes them.
    """
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_groups, n)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d)
    X[:, 0] += 1.5 * codes
    y = (X[:, 0] + X[:, 1] + rng.standard_normal(n) > 1.0).astype(np.int8)
    blocks = y.astype(int) if constraint == "eo" else np.zeros(n, dtype=int)
    n_blocks = int(blocks.max()) + 1
    marg = np.array(
        [np.bincount(codes[blocks == b], minlength=n_groups) for b in range(n_blocks)],
        dtype=float,
    )
    marg /= marg.sum(axis=1, keepdims=True)
    reg = ERMIRegularizer(marg, np.full(n_blocks, 1.0 / n_blocks), 2)
    sw = rng.uniform(0.5, 1.5, n) if weighted else None
    if sw is not None:
        sw /= sw.mean()
    kw = {
        "regularizer": reg,
        "cells": reg.row_cells(blocks, codes),
        "fairness_weight": 16.0,
        "alpha": 0.0,
        "intercept_scaling": 1.0,
        "sample_weight": sw,
    }
    return X, y, kw


def _reduced(X, y, kw, scale):
    """The phase's objective in its coordinates ``u = [v * scale, b]``.

    Built from the two-logit :func:`exact_dual_objective` (the same ``f``
    as the phase's single-logit form), independent of the polish's code.
    """
    d = X.shape[1]

    def fun(u):
        v = u[:d] / scale
        params = np.concatenate([np.outer(v, _HALF).ravel(), u[d] * _HALF])
        value, grad = exact_dual_objective(params, X, y, **kw)
        g_coef = grad[: 2 * d].reshape(d, 2)
        g_b = grad[2 * d :] @ _HALF
        return value, np.concatenate([(g_coef @ _HALF) / scale, [g_b]])

    return fun


def _layouts(X):
    return {
        "dense": X,
        "csr": sp.csr_matrix(X),
        "float32": X.astype(np.float32),
        "csr-float32": sp.csr_matrix(X.astype(np.float32)),
    }


@pytest.mark.parametrize("layout", ["dense", "csr", "float32", "csr-float32"])
@pytest.mark.parametrize(
    "constraint, weighted, alpha, s",
    [("eo", False, 0.0, 1.0), ("dp", True, 0.3, 2.0), ("eo", True, 0.1, 0.5)],
)
def test_hessian_matches_finite_differences_of_the_gradient(
    layout, constraint, weighted, alpha, s
):
    # Central differences of the (independently computed) gradient along
    # random directions: O(h^2) truncation, h = 1e-5 on an objective of
    # order 1 with O(1) third derivatives, far below the 1e-5 relative
    # tolerance; a wrong term of the Hessian (the sigma'' part, the
    # low-rank cells, the intercept, the column scales) is O(1) off.
    X, y, kw = _problem(1, constraint=constraint, weighted=weighted)
    kw.update(alpha=alpha, intercept_scaling=s)
    X = _layouts(X)[layout]
    scale = column_scales(X, kw["sample_weight"])
    fun = _reduced(X, y, kw, scale)
    rng = np.random.default_rng(2)
    u = rng.normal(0.0, 0.5, X.shape[1] + 1)
    H = binary_exact_dual_hessian(X, u, scale=scale, **kw)
    np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-12 * np.abs(H).max())
    h = 1e-5
    for _ in range(3):
        e = rng.standard_normal(u.size)
        e /= np.linalg.norm(e)
        fd = (fun(u + h * e)[1] - fun(u - h * e)[1]) / (2 * h)
        np.testing.assert_allclose(H @ e, fd, rtol=1e-5, atol=1e-7)


def test_hessian_without_fairness_term_is_the_logistic_one():
    X, _, kw = _problem(3, d=3)
    kw.update(regularizer=None, cells=None, fairness_weight=0.0)
    scale = np.ones(3)
    u = np.array([0.2, -0.4, 0.1, 0.3])
    z = X @ u[:3] + u[3]
    p = 1.0 / (1.0 + np.exp(-z))
    Xt = np.column_stack([X, np.ones(len(z))])
    want = Xt.T @ (Xt * (p * (1 - p))[:, None]) / len(z)
    got = binary_exact_dual_hessian(X, u, scale=scale, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def _refine(X, y, kw, second_order, tol=1e-6, start=None, max_iter=500):
    d = X.shape[1]
    coef = np.zeros((d, 2)) if start is None else start[0]
    w0 = np.zeros(2) if start is None else start[1]
    return refine_full_batch(
        X, y, coef=coef, w0=w0, tol=tol, max_iter=max_iter,
        second_order=second_order, **kw,
    )


@pytest.mark.parametrize("layout", ["dense", "csr", "float32", "csr-float32"])
@pytest.mark.parametrize("constraint, weighted", [("eo", False), ("dp", True)])
def test_polish_meets_tol_no_higher_than_lbfgs(layout, constraint, weighted):
    # Both stop at max |grad_u f| <= tol (the same norm and coordinates).
    # Near a minimum of curvature mu, a point of stationarity g is at most
    # about g^2 / mu above it: with tol = 1e-6 and mu >~ 1e-3 on these
    # problems, 1e-9 covers where L-BFGS stopped below the polished point.
    X, y, kw = _problem(4, constraint=constraint, weighted=weighted)
    X = _layouts(X)[layout]
    plain = _refine(X, y, kw, False)
    polished = _refine(X, y, kw, True)
    assert plain.converged and polished.converged
    assert polished.stationarity <= 1e-6
    assert polished.objective <= plain.objective + 1e-9
    # The same model up to the stationarity of both ends.
    np.testing.assert_allclose(polished.coef, plain.coef, rtol=0, atol=1e-3)


def test_polish_reads_stationarity_as_the_phase_does():
    # The stopping rule is the phase's: the returned stationarity is
    # max |grad_u f| of the independently computed objective at the
    # returned point, and it is <= tol.
    X, y, kw = _problem(5)
    fit = _refine(X, y, kw, True, tol=1e-5)
    scale = column_scales(X)
    u = np.concatenate([(fit.coef[:, 1] - fit.coef[:, 0]) * scale,
                        [fit.w0[1] - fit.w0[0]]])
    _, grad = _reduced(X, y, kw, scale)(u)
    assert fit.converged and fit.stationarity <= 1e-5
    np.testing.assert_allclose(np.max(np.abs(grad)), fit.stationarity, rtol=1e-6)


def test_polish_runs_and_leaves_plain_lbfgs_nothing(monkeypatch):
    # Fails if the second-order polish is skipped: the Hessian is formed,
    # and the plain L-BFGS that follows starts at a point already within
    # tol (no iteration).
    X, y, kw = _problem(6)
    hessians, plain_iters = [], []
    hessian = _newton_polish.binary_exact_dual_hessian
    minimize = _lbfgs.minimize

    def count_hessian(*args, **kwargs):
        hessians.append(1)
        return hessian(*args, **kwargs)

    def spy_minimize(*args, **kwargs):
        res = minimize(*args, **kwargs)
        plain_iters.append(res.nit)
        return res

    monkeypatch.setattr(_newton_polish, "binary_exact_dual_hessian", count_hessian)
    monkeypatch.setattr(_lbfgs, "minimize", spy_minimize)
    fit = _refine(X, y, kw, True)
    assert hessians == [1] and plain_iters == [0]
    assert fit.converged and fit.n_iter > 0


def test_bounded_path_polishes_with_the_hessian(monkeypatch):
    # The weight search's polish at tol uses the second-order polish.
    calls = []
    polish = _newton_polish.preconditioned_polish

    def spy(*args, **kwargs):
        result = polish(*args, **kwargs)
        calls.append((kwargs["tol"], result.converged))
        return result

    monkeypatch.setattr(_newton_polish, "preconditioned_polish", spy)
    X, y, kw = _problem(1, n=2000, d=4)
    s = np.asarray(kw["cells"]) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = FERMIClassifier(
            constraint="equalized_odds", disparity_bound=0.02, random_state=0
        ).fit(X, y, sensitive_features=s)
    assert calls and all(tol == est.tol for tol, _ in calls)
    assert est.stationarity_ <= est.tol


@pytest.mark.parametrize("failure", ["no_hessian", "poor_metric"])
def test_fallback_to_lbfgs(monkeypatch, failure):
    # Where the Hessian cannot be formed, or its metric is so poor that
    # the polish stops short (here: a metric that trusts one direction only,
    # cut after 2 iterations), plain L-BFGS finishes from the polish's last
    # point: the same target, an objective as low.
    X, y, kw = _problem(8)
    plain = _refine(X, y, kw, False)
    if failure == "no_hessian":
        monkeypatch.setattr(
            _newton_polish, "binary_exact_dual_hessian", lambda *a, **k: None
        )
    else:
        p = X.shape[1] + 1
        monkeypatch.setattr(
            _newton_polish,
            "binary_exact_dual_hessian",
            lambda *a, **k: np.diag(np.r_[1e8, np.ones(p - 1)]),
        )
        monkeypatch.setattr(_newton_polish, "EIGEN_FLOOR", 1e-12)
    polish = _newton_polish.preconditioned_polish
    ends = []

    def spy(*args, **kwargs):
        if failure == "poor_metric":
            kwargs["max_iter"] = 2
        result = polish(*args, **kwargs)
        ends.append(result)
        return result

    monkeypatch.setattr(_newton_polish, "preconditioned_polish", spy)
    fit = _refine(X, y, kw, True)
    assert len(ends) == 1 and not ends[0].converged
    assert fit.converged and fit.stationarity <= 1e-6
    assert fit.objective <= plain.objective + 1e-9
    assert fit.objective <= ends[0].value


def test_polish_never_ends_above_its_start():
    # A metric that leads nowhere (the objective rises along every
    # direction L-BFGS is given) returns the start, not converged.
    def fun(u):
        return float(u @ u), 2.0 * u

    u0 = np.array([1.0, -2.0])
    res = preconditioned_polish(
        fun, u0, *fun(u0), lambda u: None, tol=1e-8, max_iter=10, maxcor=10
    )
    assert not res.converged and res.n_iter == 0
    np.testing.assert_array_equal(res.u, u0)
    # With the true Hessian of the quadratic, one iteration reaches 0.
    res = preconditioned_polish(
        fun, u0, *fun(u0), lambda u: 2.0 * np.eye(2), tol=1e-8, max_iter=10,
        maxcor=10,
    )
    assert res.converged and res.n_iter <= 2 and res.value <= fun(u0)[0]


def test_multiclass_and_wide_models_keep_lbfgs(monkeypatch):
    hessians = []
    monkeypatch.setattr(
        _newton_polish, "binary_exact_dual_hessian",
        lambda *a, **k: hessians.append(1),
    )
    rng = np.random.default_rng(9)
    n, d = 600, 3
    X = rng.standard_normal((n, d))
    y = rng.integers(0, 3, n).astype(np.int8)
    codes = rng.integers(0, 2, n)
    reg = ERMIRegularizer(np.full((1, 2), 0.5), np.ones(1), 3)
    kw = {"regularizer": reg, "cells": reg.row_cells(np.zeros(n, int), codes),
          "fairness_weight": 4.0, "alpha": 0.0, "intercept_scaling": 1.0}
    fit = refine_full_batch(X, y, coef=np.zeros((d, 3)), w0=np.zeros(3), tol=1e-5,
                            max_iter=300, second_order=True, **kw)
    assert fit.converged and hessians == []
    assert polish_applies(np.zeros((2, POLISH_MAX_PARAMS - 1)), 2)
    assert not polish_applies(np.zeros((2, POLISH_MAX_PARAMS)), 2)
    assert not polish_applies(np.zeros((2, 3)), 3)


@pytest.mark.parametrize("layout", ["csr", "float32"])
def test_hessian_holds_temporaries_of_one_block_of_rows(layout):
    # The Hessian is formed block of rows by block: its traced peak stays a
    # fraction of X's storage even for a sparse X of 10 entries a row (about
    # 0.3 here; holding a dozen n-long arrays at once, as a whole-matrix
    # pass would, takes about 1.0 of a CSR X and 0.48 of a float32 one).
    import gc
    import tracemalloc

    X, _, kw = _problem(0, n=20000, d=100)
    rng = np.random.default_rng(0)
    X = X * (rng.random(X.shape) < 0.1)
    A = sp.csr_matrix(X) if layout == "csr" else X.astype(np.float32)
    del X
    storage = (
        A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
        if sp.issparse(A)
        else A.nbytes
    )
    scale = column_scales(A)
    u = rng.normal(0.0, 0.1, A.shape[1] + 1)
    binary_exact_dual_hessian(A, u, scale=scale, **kw)  # caches filled
    gc.collect()
    tracemalloc.start()
    try:
        binary_exact_dual_hessian(A, u, scale=scale, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.4 * storage
