# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from sklearn_dpfair._solvers._linear import augmented_row_norms
from sklearn_dpfair._solvers._rows import clip_factors


def test_zero_gradient_has_factor_one():
    f = clip_factors(np.zeros((2, 1)), np.array([0.0, 1.0]), 1.0)
    np.testing.assert_array_equal(f, [1.0, 1.0])


def test_infinite_clip_norm_disables_clipping():
    f = clip_factors(np.full((3, 2), 1e9), np.ones(3), np.inf)
    np.testing.assert_array_equal(f, np.ones(3))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_row_norms_equal_dense_ones_for_huge_and_empty_rows(fmt, dtype):
    import scipy.sparse as sp

    from sklearn_dpfair._solvers._rows import stable_row_norms

    big = np.finfo(dtype).max / 2
    X = np.array(
        [[0, 0, 0], [big, big, 0], [0, 0, 0], [1, 0, 2], [0, 3, 4], [0, 0, 0]],
        dtype=dtype,
    )
    S = sp.csr_matrix(X).asformat(fmt)
    with np.errstate(over="ignore"):
        for s in (0.0, 1.0):
            np.testing.assert_allclose(
                augmented_row_norms(S, s), augmented_row_norms(X, s), rtol=1e-6
            )
        np.testing.assert_allclose(stable_row_norms(S), stable_row_norms(X), rtol=1e-6)
    assert np.isfinite(augmented_row_norms(S, 1.0)[1])


@pytest.mark.parametrize(
    "dense",
    [
        [[0.0, 0.0], [3.0, 4.0], [0.0, 0.0], [0.0, 2.0], [0.0, 0.0]],  # empty ends
        [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [2.0, 2.0]],  # empty middle
        [[0.0, 0.0], [0.0, 0.0]],  # no stored entry
        [[5.0, 12.0]],
    ],
)
def test_sparse_row_norms_with_empty_rows_match_dense(dense):
    # The sparse row reduction (one in-place reduceat) gives each empty row 0
    # and each other row its own entries, wherever the empty rows are.
    import scipy.sparse as sp

    from sklearn_dpfair._solvers._rows import squared_row_norms

    X = np.array(dense)
    np.testing.assert_array_equal(
        squared_row_norms(sp.csr_matrix(X)), np.sum(X * X, axis=1)
    )
    np.testing.assert_array_equal(
        augmented_row_norms(sp.csr_matrix(X), 1.0), augmented_row_norms(X, 1.0)
    )


def test_sparse_row_norms_allocate_no_index_copy():
    # With one stored entry per row, n-length temporaries weigh as much as
    # the matrix: the norms of a 200,000-row CSR matrix (2.4 MB of storage)
    # peak at the result (one float64 vector of n) plus the temporaries of
    # one block of rows, not 3 vectors (the squares of all entries and
    # reduceat's intp copy of indptr too) nor 5 (a scattered copy).
    import tracemalloc

    import scipy.sparse as sp

    from sklearn_dpfair._solvers._rows import squared_row_norms

    n = 200_000
    rows = np.arange(n)
    X = sp.csr_matrix((np.ones(n), (rows, rows % 7)), shape=(n, 7))
    X = sp.vstack([sp.csr_matrix((1, 7)), X, sp.csr_matrix((1, 7))]).tocsr()
    squared_row_norms(X[:10])
    tracemalloc.start()
    try:
        squared_row_norms(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.3 * 8 * n


@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 13])
def test_sparse_row_reduction_is_the_same_for_every_block_size(monkeypatch, block):
    # Rows are reduced block by block (a bounded temporary); the blocks follow
    # row boundaries, so every row's sum is that of the whole-matrix
    # reduction whatever the block size, with empty rows anywhere.
    import scipy.sparse as sp

    from sklearn_dpfair._solvers import _rows as _clipping

    rng = np.random.default_rng(0)
    dense = rng.standard_normal((60, 9)) * (rng.random((60, 9)) < 0.3)
    dense[[0, 1, 17, 18, 19, 58, 59]] = 0.0
    dense[5, :] = rng.standard_normal(9)  # a row longer than small blocks
    X = sp.csr_matrix(dense)
    reference = _clipping.squared_row_norms(X)
    monkeypatch.setattr(_clipping, "_REDUCE_BLOCK", block)
    np.testing.assert_array_equal(_clipping.squared_row_norms(X), reference)
    np.testing.assert_allclose(reference, np.sum(dense * dense, axis=1), rtol=1e-14)
    big = X.copy()
    big.data[big.indptr[5] : big.indptr[6]] *= 1e300  # rescued by max-scaling
    np.testing.assert_allclose(
        _clipping.stable_row_norms(big)[5], 1e300 * np.linalg.norm(dense[5]), rtol=1e-12
    )
