# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The linear-model layer: clipped sums, predictions, gradients, inputs."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._loss import (
    BinaryLogisticLoss,
    HuberLoss,
    PinballLoss,
    SoftmaxLoss,
    SquaredLoss,
)
from sklearn_dpfair._solvers._linear import (
    LinearModel,
    augmented_row_norms,
    clipped_gradient_sum,
    as_rows,
    raw_predictions,
    take_rows,
    weighted_raw_gradient,
)
from sklearn_dpfair.privacy import GaussianMechanism
from sklearn_dpfair._solvers._rows import clipped_rows

HUGE_ROWS = np.array(
    [[1.7e308, 0.0], [1e200, -1e200], [1e-300, 0.0], [0.0, 0.0], [3.0, 4.0]]
)


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


def test_augmented_row_norms_finite_for_huge_rows():
    norms = augmented_row_norms(HUGE_ROWS, 1.0)
    assert np.all(np.isfinite(norms))
    assert norms[3] == 1.0


@pytest.mark.parametrize("clip_norm", [0.5, 1.0, 30.0, np.inf])
def test_clipped_sum_finite_and_bounded_whatever_the_record(clip_norm):
    raw = np.array([[np.inf], [np.nan], [1e300], [-1e308], [0.5]])
    X = HUGE_ROWS
    weighted = clipped_rows(raw, augmented_row_norms(X, 1.0), clip_norm)
    assert np.all(np.isfinite(weighted))
    # The non-finite raw gradients contribute exactly nothing.
    assert weighted[0, 0] == 0.0 and weighted[1, 0] == 0.0
    coef, intercept = clipped_gradient_sum(
        X, raw, augmented_row_norms(X, 1.0), clip_norm, 1.0
    )
    assert np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))
    if np.isfinite(clip_norm):
        for i in range(X.shape[0]):
            c, b = clipped_gradient_sum(
                X[i : i + 1], raw[i : i + 1], augmented_row_norms(X[i : i + 1], 1.0),
                clip_norm, 1.0,
            )
            norm = np.sqrt(np.sum(c**2) + np.sum(b**2))
            assert norm <= clip_norm * (1 + 1e-12)


def test_float32_record_whose_norm_overflows_float32_is_still_clipped():
    # ||r|| ||x|| = 6e38 overflows float32 but not float64: the record gets
    # its clipped contribution (norm C), not the fallback 0.
    raw = np.array([[2.0], [0.5]], dtype=np.float32)
    X = np.array([[3e38, 0.0], [0.6, 0.8]], dtype=np.float32)
    norms = augmented_row_norms(X)
    coef, _ = clipped_gradient_sum(X[:1], raw[:1], norms[:1], 1.0, 0.0)
    np.testing.assert_allclose(coef.ravel(), [1.0, 0.0], rtol=1e-6)
    weighted = clipped_rows(raw, norms, 1.0)
    assert weighted[1, 0] == 0.5  # inside the ball: unchanged

def _problem(loss, n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    if isinstance(loss, SoftmaxLoss):
        y = rng.integers(0, loss.n_outputs, n).astype(float)
    elif isinstance(loss, BinaryLogisticLoss):
        y = rng.integers(0, 2, n).astype(float)
    else:
        y = rng.normal(size=n)
    return X, y


LOSSES = [
    BinaryLogisticLoss(),
    SoftmaxLoss(3),
    SquaredLoss(),
    HuberLoss(1.0),
    PinballLoss(0.3),
]


@pytest.mark.parametrize("loss", LOSSES, ids=lambda l: type(l).__name__)
@pytest.mark.parametrize("s", [0.0, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_loss_gradient_matches_finite_differences(loss, s, weighted):
    X, y = _problem(loss)
    rng = np.random.default_rng(1)
    weights = rng.uniform(0.2, 3.0, X.shape[0]) if weighted else None
    model = LinearModel(loss.n_outputs, s)
    W = rng.normal(size=(X.shape[1] + 1, loss.n_outputs)) * 0.3
    _, grad = model.loss_gradient(W, X, y, loss, alpha=0.1, sample_weight=weights)
    eps = 1e-6
    numeric = np.zeros_like(W)
    for idx in np.ndindex(*W.shape):
        E = np.zeros_like(W)
        E[idx] = eps
        up, _ = model.loss_gradient(W + E, X, y, loss, alpha=0.1, sample_weight=weights)
        down, _ = model.loss_gradient(
            W - E, X, y, loss, alpha=0.1, sample_weight=weights
        )
        numeric[idx] = (up - down) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("loss", LOSSES[:3], ids=lambda l: type(l).__name__)
def test_sparse_loss_gradient_equals_dense(fmt, loss):
    X, y = _problem(loss)
    model = LinearModel(loss.n_outputs, 1.0)
    W = np.random.default_rng(2).normal(size=(X.shape[1] + 1, loss.n_outputs))
    S = sp.csr_matrix(X).asformat(fmt)
    weights = np.linspace(0.5, 2.0, X.shape[0])
    for sw in (None, weights):
        dense = model.loss_gradient(W, X, y, loss, alpha=0.3, sample_weight=sw)
        sparse = model.loss_gradient(W, S, y, loss, alpha=0.3, sample_weight=sw)
        np.testing.assert_allclose(sparse[0], dense[0], rtol=1e-13)
        np.testing.assert_allclose(sparse[1], dense[1], rtol=1e-12, atol=1e-15)


def test_loss_gradient_keeps_float32_rows():
    loss = BinaryLogisticLoss()
    X, y = _problem(loss)
    model = LinearModel(1, 1.0)
    W = np.full((X.shape[1] + 1, 1), 0.1)
    value32, grad32 = model.loss_gradient(W, X.astype(np.float32), y, loss, alpha=0.1)
    value64, grad64 = model.loss_gradient(W, X, y, loss, alpha=0.1)
    assert grad32.dtype == np.float64  # the parameters' precision
    np.testing.assert_allclose(grad32, grad64, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda l: type(l).__name__)
@pytest.mark.parametrize("clip_norm", [0.3, np.inf])
def test_noisy_gradient_of_sparse_rows_equals_dense(loss, clip_norm):
    X, y = _problem(loss)
    model = LinearModel(loss.n_outputs, 1.0)
    sigma = 0.0 if np.isinf(clip_norm) else 1.5
    mech = GaussianMechanism(clip_norm=clip_norm, noise_multiplier=sigma)
    out = []
    for A in (X, as_rows(sp.csc_matrix(X))):
        coef, w0 = model.zeros(A)
        coef = coef + 0.2
        raw_grad = loss.raw_gradient(y, model.raw_predictions(A, coef, w0))
        out.append(model.noisy_gradient(
            A, raw_grad, model.row_norms(A), mechanism=mech, denominator=10.0,
            rng=np.random.default_rng(3),
        ))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_noise_draws_are_those_of_one_stacked_draw():
    # The coefficient block's noise first, then the intercept's: a solver
    # that privatizes the stacked (d + 1) x K sum at once draws the same.
    X, y = _problem(SoftmaxLoss(3))
    model = LinearModel(3, 1.0)
    mech = GaussianMechanism(clip_norm=0.5, noise_multiplier=2.0)
    raw_grad = SoftmaxLoss(3).raw_gradient(y, np.zeros((X.shape[0], 3)))
    norms = model.row_norms(X)
    g_coef, g_w0 = model.noisy_gradient(
        X, raw_grad, norms, mechanism=mech, denominator=1.0,
        rng=np.random.default_rng(4),
    )
    stacked = model.stack(*model.clipped_gradient_sum(X, raw_grad, norms, 0.5))
    expected = mech.privatize(stacked, np.random.default_rng(4))
    np.testing.assert_allclose(model.stack(g_coef, g_w0), expected, rtol=1e-14)
    np.testing.assert_array_equal(model.split(expected)[0], expected[:-1])


def test_without_intercept_the_intercept_stays_zero():
    X, y = _problem(SquaredLoss())
    model = LinearModel(1, 0.0)
    mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=3.0)
    coef, w0 = model.zeros(X)
    raw_grad = SquaredLoss().raw_gradient(y, model.raw_predictions(X, coef, w0))
    g_coef, g_w0 = model.noisy_gradient(
        X, raw_grad, model.row_norms(X), mechanism=mech, denominator=5.0,
        rng=np.random.default_rng(0),
    )
    np.testing.assert_array_equal(g_w0, 0.0)
    coef, w0 = model.gradient_step(
        coef, w0, g_coef, g_w0 + 1.0, learning_rate=0.1, alpha=0.1
    )
    np.testing.assert_array_equal(w0, 0.0)


def test_gradient_step_keeps_the_parameters_dtype_and_penalizes_coef_only():
    model = LinearModel(1, 1.0)
    coef = np.ones((2, 1), dtype=np.float32)
    w0 = np.ones(1, dtype=np.float32)
    new_coef, new_w0 = model.gradient_step(
        coef, w0, np.zeros((2, 1)), np.zeros(1), learning_rate=0.5, alpha=0.2
    )
    assert new_coef.dtype == np.float32 and new_w0.dtype == np.float32
    np.testing.assert_allclose(new_coef, 0.9)
    np.testing.assert_array_equal(new_w0, 1.0)
    assert model.penalty(coef, 0.2) == pytest.approx(0.2)


def test_weighted_record_is_clipped_after_weighting():
    # A huge public weight does not lift one record's term above the clip.
    model = LinearModel(1, 1.0)
    X = np.array([[3.0, 4.0]])
    raw_grad = np.array([[1.0]]) * np.array([1e6])[:, None]
    g_coef, g_w0 = model.clipped_gradient_sum(X, raw_grad, model.row_norms(X), 2.0)
    assert np.sqrt(np.sum(g_coef**2) + np.sum(g_w0**2)) == pytest.approx(2.0)


@pytest.mark.parametrize(
    "dtype, weight",
    [
        (np.float64, 1e308),
        (np.float64, np.finfo(np.float64).max),
        (np.float32, 3e38),
    ],
)
@pytest.mark.parametrize("target", [-3.0, 3.0])
def test_weight_times_residual_beyond_the_largest_float_is_clipped(
    dtype, weight, target
):
    # A squared-loss residual of 3 under a public weight near the largest
    # float overflows their product: it saturates silently (a warning would
    # depend on the record) and the term is clipped to C, not dropped.
    import warnings

    model = LinearModel(1, 1.0)
    X = np.array([[3.0, 4.0]], dtype=dtype)
    coef, w0 = model.zeros(X)
    raw = model.raw_predictions(X, coef, w0)
    residual = SquaredLoss().raw_gradient(np.array([target], dtype=dtype), raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raw_grad = weighted_raw_gradient(residual, np.array([weight], dtype=dtype))
        assert raw_grad.dtype == dtype
        assert np.all(np.isfinite(raw_grad))
        assert np.sign(raw_grad[0, 0]) == np.sign(residual[0, 0])
        g_coef, g_w0 = model.clipped_gradient_sum(
            X, raw_grad, model.row_norms(X), 2.0
        )
    norm = np.sqrt(np.sum(g_coef**2) + np.sum(g_w0**2))
    # Float32: the bound is C (1 - 2 eps) (the float32 margin).
    np.testing.assert_allclose(norm, 2.0, rtol=1e-6)
    assert norm <= 2.0 * (1 + 1e-12)
    # Its direction is the residual's: sign(r) [x, 1].
    np.testing.assert_allclose(
        np.concatenate([g_coef.ravel(), g_w0]) / norm,
        np.sign(residual[0, 0]) * np.array([3.0, 4.0, 1.0]) / np.sqrt(26.0),
        rtol=1e-6,
    )


@pytest.mark.parametrize("sparse", [False, True])
def test_huge_records_give_finite_predictions_and_bounded_terms(sparse):
    loss = BinaryLogisticLoss()
    X = np.vstack([HUGE_ROWS, [[-1.7e308, 1.7e308]]])
    y = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    A = sp.csr_matrix(X) if sparse else X
    model = LinearModel(1, 1.0)
    coef = np.array([[2.0], [1.5]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        raw = model.raw_predictions(A, coef, np.array([0.5]))
        assert np.isfinite(raw).all()
        raw_grad = loss.raw_gradient(y, raw)
        norms = model.row_norms(A)
        for i in range(X.shape[0]):
            c, b = model.clipped_gradient_sum(
                take_rows(A, [i]), raw_grad[i : i + 1], norms[i : i + 1], 1.0
            )
            assert np.isfinite(c).all() and np.isfinite(b).all()
            assert np.sqrt(np.sum(c**2) + np.sum(b**2)) <= 1.0 + 1e-12


def test_raw_predictions_of_sparse_rows_equal_dense():
    X, _ = _problem(SquaredLoss())
    coef = np.arange(10.0).reshape(5, 2)
    np.testing.assert_allclose(
        raw_predictions(sp.csr_matrix(X), coef, 1.0), raw_predictions(X, coef, 1.0),
        rtol=1e-13,
    )


def test_gradient_norms_are_the_per_example_gradient_norms():
    X, y = _problem(SoftmaxLoss(3))
    model = LinearModel(3, 1.0)
    R = np.random.default_rng(0).normal(size=(X.shape[0], 3))
    G = _per_sample_gradients(X, R, 1.0)
    np.testing.assert_allclose(
        model.gradient_norms(X, R),
        np.linalg.norm(G.reshape(X.shape[0], -1), axis=1),
        rtol=1e-12,
    )


def test_float32_rows_meet_float64_parameters_block_by_block(monkeypatch):
    # A float32 X is never promoted as a whole: the products run over row
    # blocks and give the float64 products of the float32 values.
    from sklearn_dpfair.utils import _array_api

    # Blocks of 7 rows of 5 float64 features (_problem's d).
    monkeypatch.setattr(_array_api, "_MIXED_CAST_BYTES", 7 * 5 * 8)
    loss = SoftmaxLoss(3)
    X, y = _problem(loss, n=40)
    X32 = X.astype(np.float32)
    W = np.random.default_rng(0).normal(size=(X.shape[1] + 1, 3))
    model = LinearModel(3, 1.0)
    got = model.loss_gradient(W, X32, y, loss, alpha=0.1)
    expected = model.loss_gradient(W, X32.astype(np.float64), y, loss, alpha=0.1)
    assert got[1].dtype == np.float64
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-14)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("s", [0.0, 1.0])
def test_private_step_is_the_noisy_gradient_then_the_step(s):
    # The update DP-SGD and DP-SGDA take from a clipped sum computed
    # elsewhere (a distributed one) is the in-memory noisy step, bit for bit.
    X, y = _problem(SoftmaxLoss(3))
    model = LinearModel(3, s)
    mech = GaussianMechanism(clip_norm=0.5, noise_multiplier=1.5)
    coef, w0 = np.full((X.shape[1], 3), 0.1), np.array([0.2, -0.1, 0.0])
    raw_grad = SoftmaxLoss(3).raw_gradient(y, model.raw_predictions(X, coef, w0))
    norms = model.row_norms(X)
    g = model.noisy_gradient(
        X, raw_grad, norms, mechanism=mech, denominator=7.0,
        rng=np.random.default_rng(5),
    )
    expected = model.gradient_step(coef, w0, *g, learning_rate=0.3, alpha=0.1)
    got = model.private_step(
        coef, w0, *model.clipped_gradient_sum(X, raw_grad, norms, 0.5),
        mechanism=mech, denominator=7.0, learning_rate=0.3, alpha=0.1,
        rng=np.random.default_rng(5),
    )
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    if not s:
        np.testing.assert_array_equal(got[1], w0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_row_norms_kept_or_recomputed_give_the_same_values(dtype):
    # Rows of ~10 stored entries: the norms are kept (they weigh less than
    # an eighth of the matrix); rows of ~1 entry: None, and each batch's
    # norms come from its gathered rows. Either way a row's norm is the
    # same, bit for bit, and a dense X always keeps its norms.
    from sklearn_dpfair._solvers._linear import row_norms_of, stored_row_norms

    rng = np.random.default_rng(0)
    idx = rng.choice(5_000, size=300, replace=False)
    for density, kept in ((0.1, True), (0.01, False)):
        X = sp.random(5_000, 100, density=density, format="csr", random_state=rng,
                      dtype=dtype)
        X.data = (X.data - 0.5) * 7
        reference = augmented_row_norms(X, 1.0)
        stored = stored_row_norms(X, 1.0)
        assert (stored is not None) == kept
        np.testing.assert_array_equal(row_norms_of(X[idx], idx, stored, 1.0),
                                      reference[idx])
        assert row_norms_of(X[idx], idx, stored, 1.0).dtype == reference.dtype
        np.testing.assert_array_equal(
            stored_row_norms(X.toarray(), 1.0), augmented_row_norms(X.toarray(), 1.0)
        )
