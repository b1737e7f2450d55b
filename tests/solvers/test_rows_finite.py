"""Clipped per-example terms are finite and within the clip bound for any record."""

import numpy as np
import pytest

import scipy.sparse as sp

from sklearn_dpfair.privacy._clipping import clip_factors_from_norms

from sklearn_dpfair._solvers._rows import (

    clip_rows_to_norm,

    squared_row_norms,

    stable_row_norms,

)

HUGE_ROWS = np.array(
    [[1.7e308, 0.0], [1e200, -1e200], [1e-300, 0.0], [0.0, 0.0], [3.0, 4.0]]
)


def test_stable_row_norms_do_not_overflow_for_finite_norms():
    norms = stable_row_norms(HUGE_ROWS)
    assert np.all(np.isfinite(norms))
    np.testing.assert_allclose(norms[1], np.sqrt(2) * 1e200)
    assert norms[4] == 5.0


def test_non_finite_norms_give_factor_zero():
    factors = clip_factors_from_norms(np.array([np.inf, np.nan, 1.0]), 1.0)
    np.testing.assert_array_equal(factors, [0.0, 0.0, 1.0])


@pytest.mark.parametrize("bound", [0.5, 3.0, 1e300])
def test_rows_are_projected_onto_the_ball_whatever_they_hold(bound):
    # A row whose squared norm overflows is projected like any other row (not
    # zeroed by an inf norm); ordinary rows keep the plain formula exactly.
    X = np.vstack([HUGE_ROWS, [[1.7e308, 1.7e308], [-1e200, 1e200]]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        clipped = clip_rows_to_norm(X, bound)
    assert np.isfinite(clipped).all()
    assert np.all(stable_row_norms(clipped) <= bound * (1 + 1e-12))
    norms = np.linalg.norm(X[2:5], axis=1)
    with np.errstate(over="ignore"):
        factor = np.minimum(1.0, bound / np.maximum(norms, 1e-300))
    plain = X[2:5] * factor[:, None]
    np.testing.assert_array_equal(clipped[2:5], plain)
    for i in (0, 1, 5, 6):  # same direction, on the sphere when outside it
        direction = X[i] / np.max(np.abs(X[i]))
        direction /= np.linalg.norm(direction)
        expected = min(bound, stable_row_norms(X[i : i + 1])[0]) * direction
        np.testing.assert_allclose(clipped[i], expected, rtol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("bound", [0.5, 3.0, 1e300])
def test_sparse_rows_are_projected_as_the_dense_ones(fmt, bound):
    # Huge, tiny, empty and ordinary rows: the stored entries are scaled as
    # the dense rows are, the result stays sparse (never densified).
    X = np.vstack([HUGE_ROWS, [[1.7e308, 1.7e308], [-1e200, 1e200]]])
    S = sp.csr_matrix(X).asformat(fmt)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        clipped = clip_rows_to_norm(S, bound)
    assert sp.issparse(clipped) and clipped.format == "csr"
    assert clipped.nnz == sp.csr_matrix(X).nnz
    np.testing.assert_allclose(
        clipped.toarray(), clip_rows_to_norm(X, bound), rtol=1e-12, atol=0
    )
    assert S.format == fmt  # the caller's matrix is not modified


def test_sparse_clipped_rows_share_the_canonical_structure():
    # Only the values are new (with one stored entry per row a copy of the
    # indices and indptr weighed half the matrix); the caller's arrays are
    # shared, declared canonical, and never written.
    X = sp.csr_matrix(np.array([[3.0, 4.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.0]]))
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    clipped = clip_rows_to_norm(X, 1.0)
    assert np.shares_memory(clipped.indices, X.indices)
    assert np.shares_memory(clipped.indptr, X.indptr)
    assert not np.shares_memory(clipped.data, X.data)
    assert clipped.has_canonical_format
    clipped.sum_duplicates()
    clipped.sort_indices()
    for array, old in zip((X.data, X.indices, X.indptr), before):
        np.testing.assert_array_equal(array, old)
    # A matrix with duplicates is summed in a copy first: X is untouched.
    D = sp.csr_matrix((np.array([3.0, 3.0]), np.array([0, 0]), np.array([0, 2])),
                      shape=(1, 2))
    np.testing.assert_allclose(clip_rows_to_norm(D, 1.0).toarray(), [[1.0, 0.0]])
    assert D.nnz == 2


@pytest.mark.parametrize("sparse", [False, True])
def test_clipped_rows_keep_float32(sparse):
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(20, 4)) * 5).astype(np.float32)
    A = sp.csr_matrix(X) if sparse else X
    clipped = clip_rows_to_norm(A, 1.0)
    assert clipped.dtype == np.float32
    dense = clipped.toarray() if sparse else clipped
    assert np.all(np.linalg.norm(dense.astype(np.float64), axis=1) <= 1.0 + 1e-6)
    np.testing.assert_allclose(
        dense, clip_rows_to_norm(X.astype(np.float64), 1.0), rtol=1e-6
    )


def test_squared_row_norms_of_sparse_rows_equal_the_dense_ones():
    X = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 2.0]])
    np.testing.assert_array_equal(squared_row_norms(sp.csc_matrix(X)), [0, 25, 4])
    np.testing.assert_array_equal(squared_row_norms(X), [0, 25, 4])


@pytest.mark.parametrize("block", [1, 3, 1 << 13])
def test_sparse_rows_clipped_block_by_block_are_the_same(monkeypatch, block):
    # A sparse X is projected one block of rows at a time (no n- or
    # nnz-length temporaries); every row's clipped values are those of the
    # whole-matrix pass, huge (overflowed) and empty rows included.
    from sklearn_dpfair._solvers import _rows as _clipping

    rng = np.random.default_rng(0)
    dense = rng.standard_normal((40, 5)) * (rng.random((40, 5)) < 0.5)
    dense[3] = [1e300, -1e300, 0.0, 2.0, 0.0]
    dense[[0, 20, 39]] = 0.0
    for dtype in (np.float64, np.float32):
        X = sp.csr_matrix(dense.astype(dtype) if dtype == np.float64 else
                          np.clip(dense, -1e30, 1e30).astype(dtype))
        whole = clip_rows_to_norm(X, 1.5)
        monkeypatch.setattr(_clipping, "_REDUCE_BLOCK", block)
        blocked = clip_rows_to_norm(X, 1.5)
        monkeypatch.undo()
        assert blocked.dtype == X.dtype
        np.testing.assert_array_equal(blocked.toarray(), whole.toarray())
        np.testing.assert_allclose(
            blocked.toarray(), clip_rows_to_norm(X.toarray(), 1.5), rtol=1e-6
        )
