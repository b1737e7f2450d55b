# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from sklearn_dpfair._solvers._linear import augmented_row_norms
from sklearn_dpfair.privacy._clipping import clip_factors


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

    from sklearn_dpfair.privacy._clipping import stable_row_norms

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

    from sklearn_dpfair.privacy._clipping import squared_row_norms

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
    # peak below 3 float64 vectors of n (the squares, the result and
    # reduceat's index cast), not 5 (a scattered copy and its indices too).
    import tracemalloc

    import scipy.sparse as sp

    from sklearn_dpfair.privacy._clipping import squared_row_norms

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
    assert peak < 3.3 * 8 * n
