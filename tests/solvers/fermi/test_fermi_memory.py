# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The FERMI fits read X in place and hold O(1) bytes a row besides it.

A fit's peak memory (``tracemalloc``, which sees numpy's and scipy's
buffers) stays below 2x the storage of a CSR matrix, even at one stored
entry a row (about 16 bytes a row: the labels, groups, per-row constants
and the full-batch temporaries must fit in as much again), and below the
storage of a float32 matrix (a float64 copy of it would be twice that).
The column sums, products and blocked full-batch terms that avoid the
copies give the values of the copying forms.
"""

import gc
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair import FERMIClassifier
from sklearn_dpfair._solvers.fermi import _lbfgs
from sklearn_dpfair._solvers.fermi._lbfgs import (
    column_scales,
    exact_dual_objective,
    keeps_terms,
)


def _data(n, d=100, density=1.0, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.standard_normal((n, d))
    if density < 1.0:
        X *= rng.random((n, d)) < density
    X[:, 0] += s
    y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0.5).astype(int)
    return X, y, s


def _fit(X, y, s, cls=FERMIClassifier):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(max_iter=2, random_state=0).fit(X, y, sensitive_features=s)


def _peak(X, y, s, cls=FERMIClassifier):
    """Peak traced bytes of a fit (after an untraced one that fills caches)."""
    _fit(X[:500], y[:500], s[:500], cls)
    gc.collect()
    tracemalloc.start()
    try:
        est = _fit(X, y, s, cls)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return est, peak


def _csr_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def test_sparse_fit_peak_is_below_twice_the_storage():
    X, y, s = _data(20_000, density=0.1)
    X_csr = sp.csr_matrix(X)
    del X
    _, peak = _peak(X_csr, y, s)
    # The column scales used to square a copy of the whole matrix (2.5x).
    assert peak < 2.0 * _csr_bytes(X_csr)


def test_float32_fit_makes_no_float64_copy_of_x():
    X, y, s = _data(20_000)
    X32 = X.astype(np.float32)
    del X
    est, peak = _peak(X32, y, s)
    assert est.coef_.dtype == np.float32
    # A float64 copy of X alone would be 2x X32.nbytes (the products with
    # the float64 parameters used to make one).
    assert peak < X32.nbytes


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("canonical", [True, False])
def test_sparse_column_scales_equal_the_squared_copy(weighted, canonical):
    rng = np.random.default_rng(1)
    # More stored entries than one block of the column sum.
    X = sp.random(3000, 40, density=0.7, format="csr", random_state=rng)
    X.data = rng.standard_normal(X.data.size) * 1e3
    if not canonical:
        # A duplicate of row 0's first stored entry.
        data = np.r_[1.0, X.data]
        indices = np.r_[X.indices[0], X.indices]
        X = sp.csr_matrix((data, indices, np.r_[0, X.indptr[1:] + 1]), shape=X.shape)
        assert not X.has_canonical_format
    w = rng.random(3000) * 3 if weighted else None
    X2 = X.multiply(X)
    if weighted:
        X2 = X2.multiply(w[:, None])
    squares = np.asarray(X2.sum(axis=0)).ravel()
    expected = np.sqrt(squares / (3000 if w is None else w.sum()))
    # Sums of 3000 non-negative terms: any order of the additions is within
    # (n - 1) u of the exact sum, relatively (u = eps / 2), so two orders are
    # within n eps; the square root halves it. Not bit for bit: the
    # reference is scipy's sparse sum, whose order is scipy's to change.
    np.testing.assert_allclose(
        column_scales(X, w), expected, rtol=3000 * np.finfo(np.float64).eps, atol=0
    )


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("m", [2, 3])
def test_blocked_full_batch_terms_equal_one_block(monkeypatch, weighted, m, keep):
    # The terms computed by blocks of rows give the gradient of a single
    # block bit for bit (each row's terms are its own, the dual's cell sums
    # go on in row order), whether the first pass's softmax terms are kept
    # or computed again; only the value's sum is added in another order.
    from sklearn_dpfair.fairness._ermi import ERMIRegularizer

    rng = np.random.default_rng(3)
    n, d = 3000, 5
    X = rng.standard_normal((n, d))
    y = rng.integers(0, m, n).astype(np.int8)
    codes = rng.integers(0, 3, n)
    reg = ERMIRegularizer(np.full((1, 3), 1 / 3), np.ones(1), m)
    kw = dict(
        regularizer=reg,
        cells=reg.row_cells(np.zeros(n, dtype=int), codes),
        fairness_weight=5.0,
        alpha=0.1,
        intercept_scaling=1.0,
        weight_scale=1.2,
        sample_weight=rng.random(n) * 2 if weighted else None,
    )
    params = rng.standard_normal((d + 1) * m)
    monkeypatch.setattr(_lbfgs, "term_rows", lambda X, m: X.shape[0])
    value, grad = exact_dual_objective(params, X, y, **kw)
    monkeypatch.setattr(_lbfgs, "term_rows", lambda X, m: 256)
    monkeypatch.setattr(_lbfgs, "keeps_terms", lambda X, m: keep)
    value_b, grad_b = exact_dual_objective(params, X, y, **kw)
    np.testing.assert_array_equal(grad_b, grad)
    assert value_b == pytest.approx(value, rel=1e-13)
    # Dense X of 5 columns: the terms are not kept (7 float64 a row > 5/8).
    assert not keeps_terms(X, 3)
    assert keeps_terms(np.zeros((10, 100)), 3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fair", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_multiclass_objective_equals_the_whole_matrix_one(
    monkeypatch, weighted, fair, dtype
):
    # With more than two classes a sparse X's logits are computed block of
    # rows by block and each block's gradient summed at once (no n x m
    # array): the value and gradient of the whole-matrix computation on the
    # dense X, up to the order of the sums.
    from sklearn_dpfair.fairness._ermi import ERMIRegularizer

    rng = np.random.default_rng(4)
    n, d, m = 3000, 20, 3
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng,
                  data_rvs=rng.standard_normal, dtype=dtype)
    y = rng.integers(0, m, n).astype(np.int8)
    codes = rng.integers(0, 3, n)
    reg = ERMIRegularizer(np.full((1, 3), 1 / 3), np.ones(1), m)
    kw = dict(
        regularizer=reg if fair else None,
        cells=reg.row_cells(np.zeros(n, dtype=int), codes) if fair else None,
        fairness_weight=5.0 if fair else 0.0,
        alpha=0.1,
        intercept_scaling=1.0,
        weight_scale=1.2,
        sample_weight=rng.random(n) * 2 if weighted else None,
    )
    params = rng.standard_normal((d + 1) * m)
    expected = exact_dual_objective(params, X.toarray(), y, **kw)
    blocks = []
    logits = _lbfgs.block_logits
    monkeypatch.setattr(
        _lbfgs, "block_logits",
        lambda X, *a: blocks.append(a[-1]) or logits(X, *a),
    )
    value, grad = exact_dual_objective(params, X, y, **kw)
    # Each row's logits are computed once a pass (two passes with the
    # penalty's dual), by blocks: never those of all the rows at once.
    assert sum(b.stop - b.start for b in blocks) == (2 if fair else 1) * n
    assert max(b.stop - b.start for b in blocks) < n
    assert value == pytest.approx(expected[0], rel=1e-13)
    np.testing.assert_allclose(grad, expected[1], rtol=1e-12, atol=1e-15)
