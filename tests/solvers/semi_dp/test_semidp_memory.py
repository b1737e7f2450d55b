# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The semi-DP fit reads private rows in place (peak memory <= 2x data).

The solver's masked form (``SemiDPData.private_rows``) must give the run of
the copied-blocks form, and a whole fit must not copy the private rows. A
sparse X is never densified and is read by row blocks, so a fit peaks
below twice its sparse storage, with the dense fit's results.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._solvers import _linear, _row_blocks
from sklearn_dpfair._solvers.semi_dp._public_geometry import (
    pda_md_preconditioner,
    public_geometry,
    public_warm_start,
)
from sklearn_dpfair._solvers.semi_dp._solver import SemiDPData, semidp_gradient_descent
from sklearn_dpfair.linear_model import SemiDPLinearRegression
from sklearn_dpfair.privacy._mechanism import GaussianMechanism


def _problem(seed=0, n=3000, d=5, public_fraction=0.2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, size=d)
    y = X @ rng.standard_normal(d) + 1.0 + 0.5 * rng.standard_normal(n)
    # Interleaved, so that masked rows are not one contiguous block.
    mask = rng.random(n) < public_fraction
    return X, y, mask


def _run(data, q, seed):
    return semidp_gradient_descent(
        data,
        np.zeros((data.n_params, 1)),
        mechanisms=[GaussianMechanism(clip_norm=1.0, noise_multiplier=2.0)],
        alpha=np.array([0.8]),
        learning_rate=np.array([1.5]),
        n_steps=np.array([12]),
        clip_norm=1.0,
        public_clipping=False,
        sampling_probability=q,
        preconditioner=None,
        rngs=[np.random.default_rng(seed)],
        tail_fraction=0.5,
    ).params[:, 0]


@pytest.mark.parametrize("q", [1.0, 0.1])
@pytest.mark.parametrize("s", [1.0, 0.0])
def test_masked_private_rows_equal_copied_rows(q, s):
    X, y, mask = _problem()
    copied = SemiDPData(X[~mask], y[~mask], X[mask], y[mask], s)
    masked = SemiDPData(X, y, X[mask], y[mask], s, private_rows=~mask)
    assert masked.n_private == copied.n_private == (~mask).sum()
    # Same noise, same Poisson batches; only the summation order of the
    # full-batch products may differ (zero-weight rows add exact zeros).
    np.testing.assert_allclose(_run(masked, q, 5), _run(copied, q, 5), rtol=1e-11)


def test_masked_rows_ignore_non_finite_residuals_of_excluded_rows():
    # An excluded row's weight is set to 0, not multiplied by 0: an inf
    # target there must not turn the private sum into nan.
    X, y, mask = _problem()
    y_bad = y.copy()
    y_bad[mask] = np.inf
    copied = SemiDPData(X[~mask], y[~mask], X[:0], y[:0], 1.0)
    masked = SemiDPData(X, y_bad, X[:0], y[:0], 1.0, private_rows=~mask)
    with np.errstate(invalid="ignore"):  # the inf residuals' own nan weights
        got = _run(masked, 1.0, 3)
    np.testing.assert_allclose(got, _run(copied, 1.0, 3), rtol=1e-11)


@pytest.mark.parametrize("s", [1.0, 2.5, 0.0])
def test_public_statistics_equal_the_stacked_intercept_column(s):
    # The Gram blocks replace stacking a constant column onto the public rows.
    X, y, mask = _problem()
    Xp, yp = X[mask], y[mask]
    Xa = np.hstack([Xp, np.full((Xp.shape[0], 1), s)]) if s else Xp
    H = Xa.T @ Xa / Xp.shape[0]
    geo = public_geometry(Xp, yp, intercept_scaling=s, ridge=0.0, n_features=X.shape[1])
    np.testing.assert_allclose(
        geo.warm_start, np.linalg.lstsq(Xa, yp, rcond=None)[0], rtol=1e-9
    )
    scaled = H / np.sqrt(np.outer(geo.scale, geo.scale))
    np.testing.assert_allclose(
        geo.eigvecs @ np.diag(geo.eigvals) @ geo.eigvecs.T, scaled, atol=1e-12
    )
    P = pda_md_preconditioner(Xp, s, 1)
    H_reg = H + np.eye(H.shape[0]) * 0.01 / H.shape[0]
    full = P.eigvecs @ np.diag(P.spectrum[:, 0]) @ P.eigvecs.T
    np.testing.assert_allclose(
        full,
        np.linalg.inv(H_reg) * np.linalg.eigvalsh(H_reg).min(),
        rtol=1e-9,
        atol=1e-12,
    )


@pytest.mark.parametrize(
    "params",
    [
        {"solver": "semidp-gd", "alpha": 0.8, "learning_rate": 0.5},
        {"solver": "semidp-sgd", "alpha": 0.8, "learning_rate": 0.5},
        {"solver": "pda-md", "learning_rate": 0.5},
    ],
    ids=lambda params: params["solver"],
)
def test_fit_allocates_far_less_than_a_copy_of_the_private_rows(params):
    # The fit once copied the private rows (80 % of X here) and
    # stacked an intercept column onto the public ones; now the only copy
    # of size n x d is the public block (20 % of X).
    rng = np.random.default_rng(0)
    n, d = 20_000, 50
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + rng.standard_normal(n)
    mask = np.arange(n) % 5 == 0
    # Explicit hyperparameters: the "auto" grid's fixed-size tables would
    # dominate the allocations at this small n (not at 1e6 rows).
    # Unscaled columns (feature_scaling=None): no copy of the rows at all.
    reg = SemiDPLinearRegression(
        adjacency="add_remove", max_iter=3, random_state=0, feature_scaling=None,
        **params,
    )
    assert _fit_peak(reg, X, y, mask) < 0.5 * X.nbytes


def _fit_peak(reg, X, y, mask):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # A first fit fills the memoized noise calibration, whose accountant
        # tables do not scale with the data and are not what is measured.
        reg.fit(X, y, public_mask=mask)
        tracemalloc.start()
        try:
            reg.fit(X, y, public_mask=mask)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    return peak


def test_scaled_fit_makes_one_copy_of_the_rows():
    # Scaling the columns (the default) costs one scaled copy of X (two
    # temporaries would be 2x, a float64 copy of float32 rows 2x too), plus
    # the public block's statistics in float64 (0.4x of float32 rows here).
    rng = np.random.default_rng(0)
    n, d = 20_000, 50
    for dtype in (np.float64, np.float32):
        X = (rng.standard_normal((n, d)) * 100 + 500).astype(dtype)
        y = X @ rng.standard_normal(d) + rng.standard_normal(n)
        mask = np.arange(n) % 5 == 0
        reg = SemiDPLinearRegression(
            adjacency="add_remove", max_iter=3, random_state=0, alpha=0.8,
            learning_rate=0.5,
        )
        assert _fit_peak(reg, X, y, mask) < 1.8 * X.nbytes


def _sparse_problem(n, dtype, seed=0, d=100, density=0.01):
    # About one stored entry per row: ~16 bytes per row of storage (12 in
    # float32), so every per-row float64 array weighs half of it.
    rng = np.random.default_rng(seed)
    X = sp.random(
        n, d, density=density, format="csr", random_state=rng,
        data_rvs=rng.standard_normal,
    ).astype(dtype)
    y = X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)
    return X, y, rng.random(n) < 0.25


SPARSE_SOLVER_CASES = [
    {"solver": "semidp-gd"},
    {"solver": "semidp-gd", "preconditioner": None, "public_clipping": "clip"},
    {"solver": "semidp-sgd", "adjacency": "add_remove", "batch_size": 200},
    {"solver": "dp-gd"},
    {"solver": "pda-md"},
    {"solver": "semidp-gd", "fit_intercept": False},
]


@pytest.mark.parametrize(
    "params", SPARSE_SOLVER_CASES, ids=lambda p: "-".join(map(str, p.values()))
)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [0.2, 0.6])
def test_sparse_row_blocks_give_the_dense_fit(params, weighted, density, monkeypatch):
    # Small blocks, so that every sum and norm of this small problem runs
    # over many blocks (and a last, partial one): only the summation order
    # differs from the dense fit, which is one block. The row norms are
    # recomputed per block at 4 stored entries per row, stored at 12.
    monkeypatch.setattr(_row_blocks, "block_rows", lambda X: 128)
    X, y, mask = _sparse_problem(1500, np.float64, d=20, density=density)
    stored = _linear.stored_row_norms(X, 1.0)
    assert (stored is None) == (density < 0.5)
    weights = None
    if weighted:
        weights = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    # Unscaled: a dense X is scaled with centring, a sparse one without, so
    # the scaled fits are two different (equally valid) models.
    dense = SemiDPLinearRegression(
        random_state=3, feature_scaling=None, **params
    ).fit(X.toarray(), y, public_mask=mask, sample_weight=weights)
    sparse = SemiDPLinearRegression(
        random_state=3, feature_scaling=None, **params
    ).fit(X, y, public_mask=mask, sample_weight=weights)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    assert sparse.intercept_ == pytest.approx(dense.intercept_, rel=1e-10, abs=1e-12)
    # alpha_ is a smooth function of public sums (Gram matrix, row norms)
    # whose additions the dense BLAS product and the sparse blocks order
    # differently: equal to round-off, like the coefficients, not bit for
    # bit. The step count is an integer.
    assert sparse.alpha_ == pytest.approx(dense.alpha_, rel=1e-10)
    assert sparse.t_ == dense.t_


@pytest.mark.parametrize("s", [1.0, 0.0])
def test_sparse_public_statistics_equal_the_dense_ones(s, monkeypatch):
    monkeypatch.setattr(_row_blocks, "block_rows", lambda X: 100)
    X, y, mask = _sparse_problem(3000, np.float64, d=20, density=0.2)
    Xp, yp = X[mask], y[mask]
    options = {"intercept_scaling": s, "ridge": 1e-6, "n_features": 20}
    dense = public_geometry(Xp.toarray(), yp, **options)
    sparse = public_geometry(Xp, yp, **options)
    np.testing.assert_allclose(
        sparse.warm_start, dense.warm_start, rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(sparse.eigvals, dense.eigvals, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.row_norms, dense.row_norms, rtol=1e-14)
    assert sparse.noise_variance == pytest.approx(dense.noise_variance, rel=1e-10)
    P_sparse = pda_md_preconditioner(Xp, s, 1)
    P_dense = pda_md_preconditioner(Xp.toarray(), s, 1)
    np.testing.assert_allclose(
        P_sparse.eigvecs @ np.diag(P_sparse.spectrum[:, 0]) @ P_sparse.eigvecs.T,
        P_dense.eigvecs @ np.diag(P_dense.spectrum[:, 0]) @ P_dense.eigvecs.T,
        rtol=1e-9, atol=1e-12,
    )


def _offset_problem(n=1000, seed=0):
    # Sparse columns beside stored ones whose offset exceeds their spread
    # (500 + 1e-6 z is the case the one-pass centring cancelled to noise),
    # one of them with a few zeros.
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 5))
    X = Z * [1e-6, 3.0, 1.0, 1.0, 2.0] + [500.0, -1e3, 0.0, 0.0, 40.0]
    X[rng.random((n, 5)) < [0.0, 0.0, 0.8, 0.6, 0.01]] = 0.0
    y = Z @ [1.0, 0.3, -2.0, 0.5, 1.0] + 150.0 + 0.3 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("ridge", [0.0, 1e-6, 0.1])
def test_sparse_public_warm_start_centres_columns_with_an_offset(ridge, monkeypatch):
    # Several row blocks (and a partial last one), so that the centred
    # offset columns are summed across blocks as on a large X.
    monkeypatch.setattr(_row_blocks, "block_rows", lambda X: 128)
    X, y = _offset_problem()
    options = {"intercept_scaling": 1.0, "ridge": ridge, "n_features": 5}
    dense = public_geometry(X, y, **options)
    sparse = public_geometry(sp.csr_matrix(X), y, **options)
    np.testing.assert_allclose(sparse.warm_start, dense.warm_start, rtol=1e-9)
    # The residuals subtract predictions near 5e8 (offset 500 times a
    # coefficient near 1e6) from targets near 150: each keeps ~1e-7 of
    # rounding, summed in another order on sparse rows.
    assert sparse.noise_variance == pytest.approx(dense.noise_variance, rel=1e-6)


@pytest.mark.parametrize("s", [1.0, 0.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_public_warm_start_is_the_geometry_s(s, sparse):
    X, y, mask = _sparse_problem(1000, np.float64, d=8, density=0.5)
    Xp, yp = X[mask], y[mask]
    Xp = Xp if sparse else Xp.toarray()
    options = {"intercept_scaling": s, "ridge": 1e-6, "n_features": 8}
    np.testing.assert_allclose(
        public_warm_start(Xp, yp, **options),
        public_geometry(Xp, yp, **options).warm_start,
        rtol=1e-12, atol=1e-14,
    )


@pytest.mark.parametrize("s", [1.0, 0.0])
def test_public_warm_start_is_zero_where_it_cannot_be_formed(s):
    # Second moments beyond float64 (public_geometry refuses them) and no
    # public row: a zero start, with no warning.
    options = {"intercept_scaling": s, "ridge": 0.0, "n_features": 2}
    huge = np.array([[1e300, 1.0], [-1e300, 2.0], [3e300, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        start = public_warm_start(huge, np.array([1.0, 2.0, 3.0]), **options)
        assert np.all(np.isfinite(start))
        empty = public_warm_start(np.zeros((0, 2)), np.zeros(0), **options)
    np.testing.assert_array_equal(empty, np.zeros(2 + int(s)))
    if not s:
        np.testing.assert_array_equal(start, np.zeros(2))
    with pytest.raises(ValueError, match="overflow"):
        public_geometry(huge, np.array([1.0, 2.0, 3.0]), **options)


def test_sparse_row_blocks_sum_duplicate_entries(monkeypatch):
    # A CSR matrix may store one position twice (its value is the sum). The
    # row blocks share the entries of X; the row norms behind the clipping
    # must still sum the duplicates first (a norm from the split halves
    # would be too small, and a clipped term too large): the fit is that of
    # the canonical matrix.
    monkeypatch.setattr(_row_blocks, "block_rows", lambda X: 128)
    X, y, mask = _sparse_problem(1500, np.float64, d=20, density=0.2)
    doubled = sp.csr_matrix(
        (
            np.repeat(X.data / 2, 2),
            np.repeat(X.indices, 2),
            2 * X.indptr,
        ),
        shape=X.shape,
    )
    assert not doubled.has_canonical_format
    params = {"solver": "semidp-gd", "clip_norm": 0.1, "random_state": 3}
    ref = SemiDPLinearRegression(**params).fit(X, y, public_mask=mask)
    got = SemiDPLinearRegression(**params).fit(doubled, y, public_mask=mask)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
