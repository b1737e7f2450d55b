# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import numpy as np
import pytest

from sklearn_dpfair._solvers._linear import augmented_row_norms, clipped_gradient_sum
from sklearn_dpfair.privacy._clipping import clip_factors


def _per_sample_gradients(X, R, s):
    Xa = np.hstack([X, np.full((X.shape[0], 1), s)])
    return np.einsum("ik,ij->ijk", R, Xa)  # (n, d+1, K)


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("s", [0.0, 1.0])
def test_factorized_clipping_equals_materialized(global_random_seed, k, s):
    rng = np.random.default_rng(global_random_seed)
    X = rng.normal(size=(50, 4)) * rng.exponential(3, size=(50, 1))
    R = rng.normal(size=(50, k))
    C = 1.5
    G = _per_sample_gradients(X, R, s)
    norms = np.linalg.norm(G.reshape(50, -1), axis=1)
    expected = (G * np.minimum(1, C / norms)[:, None, None]).sum(axis=0)
    coef_block, intercept_block = clipped_gradient_sum(
        X, R, augmented_row_norms(X, s), C, s
    )
    np.testing.assert_allclose(coef_block, expected[:-1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(intercept_block, expected[-1], rtol=1e-10, atol=1e-12)


def test_neighbouring_datasets_move_clipped_sum_by_at_most_clip_norm(
    global_random_seed,
):
    # Add/remove sensitivity: adding one record (even a huge one) moves the
    # stacked clipped sum by at most C.
    rng = np.random.default_rng(global_random_seed)
    X = rng.normal(size=(30, 5))
    R = rng.normal(size=(30, 2))
    C = 0.7
    for scale in (1e-3, 1.0, 1e6):
        x_new = rng.normal(size=(1, 5)) * scale
        r_new = rng.normal(size=(1, 2)) * scale
        X2, R2 = np.vstack([X, x_new]), np.vstack([R, r_new])
        a = clipped_gradient_sum(X, R, augmented_row_norms(X, 1.0), C, 1.0)
        b = clipped_gradient_sum(X2, R2, augmented_row_norms(X2, 1.0), C, 1.0)
        diff = np.sqrt(np.sum((a[0] - b[0]) ** 2) + np.sum((a[1] - b[1]) ** 2))
        assert diff <= C * (1 + 1e-12)


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


def test_sparse_clipped_gradient_sum_equals_dense():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 8)) * (rng.random((50, 8)) < 0.3)
    R = rng.normal(size=(50, 3))
    S = sp.csr_matrix(X)
    dense = clipped_gradient_sum(X, R, augmented_row_norms(X, 1.0), 0.5, 1.0)
    sparse = clipped_gradient_sum(S, R, augmented_row_norms(S, 1.0), 0.5, 1.0)
    assert isinstance(sparse[0], np.ndarray)
    for a, b in zip(sparse, dense):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_sparse_row_norms_count_duplicate_entries_as_their_sum():
    """A CSR row storing (0, 0) twice holds their sum: its norm is 2, not sqrt 2."""
    import scipy.sparse as sp

    A = sp.csr_matrix((np.ones(3), [0, 0, 1], [0, 2, 3]), shape=(2, 2))
    assert not A.has_canonical_format
    np.testing.assert_allclose(augmented_row_norms(A, 0.0), [2.0, 1.0])
    # Clipping relies on it: the record's clipped term stays within C = 1.
    coef_block, _ = clipped_gradient_sum(
        A, np.array([[1.0], [0.0]]), augmented_row_norms(A, 0.0), 1.0, 0.0
    )
    assert np.linalg.norm(coef_block) <= 1.0 + 1e-12
    assert not A.has_canonical_format  # the caller's matrix is not modified
