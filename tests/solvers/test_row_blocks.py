# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The float64 products of lower-precision rows, dense and sparse."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._solvers._row_blocks import float64_product


@pytest.mark.parametrize("to_sparse", [False, True])
@pytest.mark.parametrize("m", [None, 3])
def test_float32_products_equal_those_of_the_float64_copy(to_sparse, m):
    rng = np.random.default_rng(2)
    # More rows than one block of the products (2 MB of float64: 2**18 entries).
    X = rng.standard_normal((7000, 50)).astype(np.float32)
    v = rng.standard_normal(50 if m is None else (50, m))
    g = rng.standard_normal(7000 if m is None else (7000, m))
    X64 = X.astype(np.float64)
    if to_sparse:
        X, X64 = sp.csr_matrix(X), sp.csr_matrix(X64)
    got, got_t = float64_product(X, v), float64_product(X, g, transpose_a=True)
    assert got.dtype == got_t.dtype == np.float64
    np.testing.assert_allclose(got, X64 @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_t, X64.T @ g, rtol=1e-12, atol=1e-10)
    # float64 X: the plain products, unchanged.
    np.testing.assert_array_equal(float64_product(X64, v), X64 @ v)
    np.testing.assert_array_equal(float64_product(X64, g, transpose_a=True), X64.T @ g)
