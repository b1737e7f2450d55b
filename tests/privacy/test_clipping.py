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
