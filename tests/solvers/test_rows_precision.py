# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clipping is exact in the precision it runs in.

Every clipped term, its norm computed in float64 from the (float32) values
that are actually summed, is at most the clip norm: not "up to rounding".
The rows are adversarial float32 rows (huge, tiny, subnormal, mixed
magnitudes), and rows whose squares underflow must not get norm 0.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._solvers._linear import LinearModel, augmented_row_norms
from sklearn_dpfair.privacy._clipping import clip_factors_from_norms, clip_margin
from sklearn_dpfair._solvers._rows import (
    clip_factors,
    clip_rows_to_norm,
    clipped_rows,
    stable_row_norms,
)

N_ROWS = 300


def extreme_rows(rng, n, d, dtype=np.float32):
    """``n`` rows of ``d`` finite entries of ``dtype`` at extreme magnitudes.

    Each row is one of: huge (near the largest float), tiny (down to the
    subnormals), mixed (every entry at its own magnitude) or ordinary; with
    random signs and random zeros.
    """
    info = np.finfo(dtype)
    top = np.log10(float(info.max)) - 0.5 - np.log10(d)
    bottom = np.log10(float(info.smallest_subnormal)) + 1.0
    kind = rng.integers(0, 4, n)
    low = np.select([kind == 0, kind == 1, kind == 2], [top - 3, bottom, bottom], -1)
    high = np.select([kind == 0, kind == 1, kind == 2], [top, bottom + 8, top], 1)
    exponents = rng.uniform(low[:, None], high[:, None], (n, d))
    X = rng.choice([-1.0, 1.0], (n, d)) * 10.0**exponents
    X[rng.random((n, d)) < 0.2] = 0.0
    return X.astype(dtype)


def extreme_residuals(rng, n, k, dtype=np.float32):
    info = np.finfo(dtype)
    top = np.log10(float(info.max)) - 0.5
    exponents = rng.uniform(np.log10(float(info.smallest_subnormal)) + 1, top, (n, k))
    return (rng.choice([-1.0, 1.0], (n, k)) * 10.0**exponents).astype(dtype)


def rank_one_norms(X, s, weighted):
    """Float64 Frobenius norms of the terms ``[x_i, s] weighted_i^T``."""
    X64 = X.toarray() if sp.issparse(X) else np.asarray(X)
    rows = np.column_stack([X64.astype(np.float64), np.full(X64.shape[0], s)])
    w = np.asarray(weighted, dtype=np.float64)
    # ||u v^T|| = ||u|| ||v||; each computed by scaling (no over/underflow).
    return np.array([_norm(u) * _norm(v) for u, v in zip(rows, w)])


def _norm(v):
    m = np.max(np.abs(v))
    return 0.0 if m == 0 else m * np.linalg.norm(v / m)


# Small bounds make bound / ||x|| of huge rows subnormal in float32.
@pytest.mark.parametrize("bound", [1.0, 0.37, 2.5e3, 1e-3, 1e-6])
@pytest.mark.parametrize("sparse", [False, True])
def test_projected_float32_rows_are_inside_the_ball(bound, sparse):
    rng = np.random.default_rng(0)
    X = extreme_rows(rng, N_ROWS, 7)
    # Ordinary rows just outside the ball too, where the factor is near 1.
    near = rng.standard_normal((N_ROWS, 7))
    near *= bound * (1 + rng.uniform(0, 1e-6, (N_ROWS, 1))) / np.linalg.norm(
        near, axis=1, keepdims=True
    )
    X = np.vstack([X, near.astype(np.float32)])
    out = clip_rows_to_norm(sp.csr_matrix(X) if sparse else X, bound)
    assert out.dtype == np.float32
    dense = out.toarray() if sparse else out
    norms = np.array([_norm(row) for row in dense.astype(np.float64)])
    assert np.max(norms) <= bound
    # Clipped, not erased: rows outside the ball end on (just inside) it.
    outside = np.array([_norm(row) for row in X.astype(np.float64)]) > bound
    assert np.all(norms[outside] >= bound * (1 - 1e-6))


@pytest.mark.parametrize("s", [0.0, 1.0])
@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("clip_norm", [1.0, 0.05, 40.0, 1e-300])
def test_rank_one_float32_terms_are_within_the_clip(s, n_outputs, weights, clip_norm):
    rng = np.random.default_rng(1)
    X = extreme_rows(rng, N_ROWS, 6)
    R = extreme_residuals(rng, N_ROWS, n_outputs)
    if weights:
        # float32 residuals times float64 public weights: float64 residuals
        # of float32 rows, whose row norms are float32.
        R = R * rng.uniform(0.1, 10.0, N_ROWS)[:, None]
    weighted = clipped_rows(R, augmented_row_norms(X, s), clip_norm)
    assert np.max(rank_one_norms(X, s, weighted)) <= clip_norm


@pytest.mark.parametrize("clip_norm", [1.0, 1e-6])
def test_clip_factors_from_float32_norms_keep_the_terms_within_the_clip(clip_norm):
    # The mean oracle's use: rows scaled by the factors of their own norms.
    rng = np.random.default_rng(2)
    Z = extreme_rows(rng, N_ROWS, 9)
    factors = clip_factors_from_norms(stable_row_norms(Z), clip_norm)
    terms = Z.astype(np.float64) * factors[:, None]
    assert max(_norm(t) for t in terms) <= clip_norm


@pytest.mark.parametrize("sparse", [False, True])
def test_rows_whose_factor_would_be_subnormal_are_projected(sparse):
    # float64 rows whose squared norm does not overflow, against a bound so
    # tiny that R / ||x|| is subnormal (a few significant bits): x times it
    # could leave the ball; such rows are projected from their largest entry.
    bound = 1e-162
    X = np.array([[1.7e153, 0.0], [-9.1e152, 1.3e152], [3e-163, 4e-163]])
    X = np.vstack([X, np.linspace(1e148, 1.7e153, 500)[:, None] * [1.0, 0.5]])
    out = clip_rows_to_norm(sp.csr_matrix(X) if sparse else X, bound)
    dense = out.toarray() if sparse else out
    norms = np.array([_norm(row) for row in dense])
    assert np.max(norms) <= bound * (1 + 4e-16)
    # Projected onto the ball, not erased; the row inside it is kept.
    assert np.min(np.delete(norms, 2)) >= bound * (1 - 4e-16)
    np.testing.assert_array_equal(dense[2], X[2])
    np.testing.assert_allclose(dense[0], [bound, 0.0], rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_tiny_row_times_a_huge_residual_is_clipped(dtype, sparse):
    # Without an intercept, a row whose squares underflow must not get norm
    # 0 (factor 1): its term with a huge residual is far above the clip.
    tiny, huge = (1e-23, 1e30) if dtype == np.float32 else (1e-170, 1e300)
    X = np.array([[tiny, 0.0], [3.0, 4.0], [0.0, 0.0]], dtype=dtype)
    R = np.array([[huge], [1.0], [huge]], dtype=dtype)
    rows = sp.csr_matrix(X) if sparse else X
    norms = augmented_row_norms(rows, 0.0)
    np.testing.assert_allclose(norms, [tiny, 5.0, 0.0], rtol=1e-6)
    weighted = clipped_rows(R, norms, 1.0)
    terms = rank_one_norms(X, 0.0, weighted)
    assert np.max(terms) <= 1.0
    assert terms[0] == pytest.approx(1.0, rel=1e-6)  # clipped, not erased
    np.testing.assert_allclose(
        stable_row_norms(rows), [tiny, 5.0, 0.0], rtol=1e-6
    )


@pytest.mark.parametrize("s", [0.0, 1.0])
@pytest.mark.parametrize("loss_name", ["log", "squared"])
def test_dp_sgd_float32_clipped_sum_of_one_record_is_within_the_clip(s, loss_name):
    # DP-SGD's clipped sum (LinearModel.clipped_gradient_sum) of a batch of
    # one record is that record's term, as the solver sums it.
    from sklearn_dpfair._loss import BinaryLogisticLoss, SquaredLoss

    rng = np.random.default_rng(3)
    X = extreme_rows(rng, N_ROWS, 5)
    model = LinearModel(n_outputs=1, intercept_scaling=s)
    coef = rng.standard_normal((5, 1)).astype(np.float32)
    w0 = np.ones(1, dtype=np.float32)
    if loss_name == "log":
        loss, y = BinaryLogisticLoss(), (rng.random(N_ROWS) < 0.5).astype(np.float32)
    else:
        loss, y = SquaredLoss(), extreme_residuals(rng, N_ROWS, 1)[:, 0]
    worst = 0.0
    for i in range(N_ROWS):
        Xi, yi = X[i : i + 1], y[i : i + 1]
        raw = loss.raw_gradient(yi, model.raw_predictions(Xi, coef, w0))
        g_coef, g_w0 = model.clipped_gradient_sum(Xi, raw, model.row_norms(Xi), 1.0)
        term = np.append(np.ravel(g_coef), np.ravel(g_w0)).astype(np.float64)
        worst = max(worst, _norm(term))
    assert worst <= 1.0


def test_float64_clipping_is_unchanged():
    # The margin applies to lower precision only: float64 factors are the
    # plain min(1, C / norm), bit for bit.
    rng = np.random.default_rng(4)
    X, R = rng.standard_normal((50, 4)), rng.standard_normal((50, 2)) * 10
    norms = augmented_row_norms(X, 1.0)
    expected = np.minimum(1.0, 1.0 / (np.linalg.norm(R, axis=1) * norms))
    np.testing.assert_allclose(clip_factors(R, norms, 1.0), expected, rtol=1e-15)
    assert clip_margin(np.float64, X) == 1.0
    assert clip_margin(np.float32) == 1.0 - 2 * float(np.finfo(np.float32).eps)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("clip_norm", [1.0, 1e-6])
def test_a_term_whose_norm_overflows_is_clipped_not_dropped(dtype, clip_norm):
    # ||r_i|| ||u_i|| past the largest float (a public weight of 1e308, a
    # row of 1e308 values), or C / norm subnormal: the term is still
    # representable, and is clipped to C like any other, in float64 as in
    # float32 (where the same weight saturates at float32's largest).
    weight = min(1e308, float(np.finfo(dtype).max))
    big = 1e308 if dtype == np.float64 else 1e38
    X = np.array([[3.0, 4.0], [big, big], [0.0, 0.0]], dtype=dtype)
    R = np.array([[0.5 * weight], [-0.5], [0.5 * clip_norm]])
    weighted = clipped_rows(R, augmented_row_norms(X, 1.0), clip_norm)
    assert np.all(np.isfinite(weighted))
    terms = rank_one_norms(X, 1.0, weighted)
    assert np.max(terms) <= clip_norm * (1 + 4e-16)
    np.testing.assert_allclose(terms[:2], clip_norm, rtol=1e-6)
    # A term inside the ball keeps its plain factor 1.
    np.testing.assert_array_equal(weighted[2], R[2])


def test_the_rescue_of_an_overflowing_term_warns_nothing():
    # A term of norm 2e288 (within C = 1e300) whose ||r|| overflows takes
    # the rescue, whose radius C / ||u_i|| overflowed with a numpy warning
    # that the record decides.
    from sklearn_dpfair._solvers._linear import clipped_gradient_sum

    x = np.array([[1e-20]])
    r = np.array([[1.5e308, -1.5e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        norms = augmented_row_norms(x, 0.0)
        coef_sum, _ = clipped_gradient_sum(x, r, norms, 1e300, 0.0)
    assert np.all(np.isfinite(coef_sum))
    # Its norm, computed without squaring 1e288.
    assert np.linalg.norm(coef_sum / 1e288) * 1e288 <= 1e300


@pytest.mark.parametrize("sparse", [False, True])
def test_subnormal_rows_get_norms_rounded_up(sparse):
    # Rows of subnormal entries (multiples of 2**-1074): their rescued norm
    # is a multiple of 2**-1074 too, and rounded to nearest the norm of
    # (1, 1) units would be 1 unit, so a record clipped by it would reach
    # sqrt(2) times the clip norm.
    k = np.array([[1, 1], [1, 0], [3, 4], [2, 3], [7, 1]])
    X = np.ldexp(k.astype(np.float64), -1074)
    rows = sp.csr_matrix(X) if sparse else X
    units = np.ldexp(stable_row_norms(rows), 1074)  # exact: a power of two
    exact = np.sqrt((k**2).sum(axis=1))
    # An upper bound, one step above the nearest subnormal at most.
    assert np.all(units >= exact)
    assert np.all(units <= np.round(exact) + 1)
    # Without an intercept, a public weight of 1e300 times the residual:
    # each clipped term [x_i] w_i, measured exactly in those units.
    norms = augmented_row_norms(rows, 0.0)
    weighted = clipped_rows(np.full((5, 1), 1e300), norms, 1e-40)
    terms = exact * np.ldexp(np.abs(weighted[:, 0]), -1074)
    assert np.max(terms) <= 1e-40
    assert np.min(terms) >= 1e-40 / 2  # clipped, not erased


@pytest.mark.parametrize("s", [0.0, 1.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_float32_rows_beyond_the_largest_float32_norm_are_clipped(s, sparse):
    # (3e38, 3e38) is finite in float32, its norm 4.2e38 is not: the record
    # is clipped to C as in a float64 fit, not dropped by an inf norm.
    X = np.array([[3e38, 3e38], [3.0, 4.0]], dtype=np.float32)
    rows = sp.csr_matrix(X) if sparse else X
    model = LinearModel(n_outputs=1, intercept_scaling=s)
    norms = model.row_norms(rows)
    assert np.all(np.isfinite(norms))
    np.testing.assert_allclose(norms[0], np.hypot(np.hypot(3e38, 3e38), s), rtol=1e-6)
    raw = np.ones((1, 1), dtype=np.float32)  # a float32 fit's raw gradient
    g_coef, g_w0 = model.clipped_gradient_sum(rows[:1], raw, norms[:1], 1.0)
    term = np.append(np.ravel(g_coef), np.ravel(g_w0)).astype(np.float64)
    assert _norm(term) <= 1.0
    assert _norm(term) == pytest.approx(1.0, rel=1e-6)


def test_a_float32_row_beyond_the_largest_norm_keeps_the_others_margin():
    # With float64 residuals (semi-DP's), the clip margin of float32 rows is
    # read from the norms; one record whose norm needs float64 must not take
    # it away from every other record (their terms would exceed C).
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2000, 7)).astype(np.float32)
    X = np.vstack([X, np.full((1, 7), 3e38, dtype=np.float32)])
    norms = augmented_row_norms(X, 1.0)
    weighted = clipped_rows(np.full((X.shape[0], 1), 1e3), norms, 1.0)
    terms = rank_one_norms(X, 1.0, weighted)
    assert np.max(terms) <= 1.0
    assert terms[-1] == pytest.approx(1.0, rel=1e-6)  # clipped, not dropped


# float64 rows whose squares underflow (entries below ~1.5e-154: plain norm
# 0, or too small), beside subnormal, huge, ordinary and zero rows.
UNDERFLOW_ROWS = np.array(
    [
        [5e-324, 5e-324, 0.0],
        [1e-310, 1e-310, 1e-310],
        [1e-165, 0.0, 0.0],
        [1.5e-162, 1.5e-162, 1.5e-162],
        [1e-200, 1e-160, 1e-320],
        [1e-152, 1e-170, 0.0],
        [1e308, 1e308, 0.0],
        [3.0, 4.0, 0.0],
        [0.0, 0.0, 0.0],
    ]
)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bound", [1e-170, 2.3e-162, 1e-155, 2.3e-308, 1.0])
def test_rows_whose_squares_underflow_are_projected(dtype, sparse, bound):
    # A nonzero row whose squared entries underflow got norm 0, factor 1:
    # kept whole against a bound below its norm (output perturbation's
    # clip). Every row ends inside the ball; those inside are kept as given.
    X = UNDERFLOW_ROWS
    if dtype == np.float32:
        X = np.clip(X, -3e38, 3e38).astype(np.float32)
    rows = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = clip_rows_to_norm(rows, bound)
    dense = out.toarray() if sparse else out
    given = [_norm(row.astype(np.float64)) for row in X]
    norms = np.array([_norm(row.astype(np.float64)) for row in dense])
    assert np.max(norms) <= bound * (1 + 4e-16)
    inside = np.array(given) <= bound
    np.testing.assert_array_equal(dense[inside], X[inside])
    if dtype == np.float64:
        # Projected onto the sphere, not erased (a float32 row on a sphere
        # below the float32 subnormals rounds to 0).
        assert np.all(norms[~inside] >= bound * (1 - 1e-15))
