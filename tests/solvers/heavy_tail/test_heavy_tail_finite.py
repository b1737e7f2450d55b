# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Heavy-tail solver terms stay finite and bounded whatever one record holds.

Neighbouring inputs differ in one crafted record (huge finite features or
targets): every term that enters a noisy sum must stay finite and within its
clip bound, the private quantile's utility must keep sensitivity 1, and none
of it may raise or warn.
"""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair._loss import HuberLoss, PinballLoss, SquaredLoss
from sklearn_dpfair._solvers.heavy_tail._fit import zcdp_budget
from sklearn_dpfair._solvers.heavy_tail._mean_oracle import (
    clipped_gradient_mean,
    gradient_norms_at_zero,
    mean_oracle,
)
from sklearn_dpfair._solvers.heavy_tail._private_curvature import private_curvature
from sklearn_dpfair.privacy._quantile import (
    LOG_GRID,
    private_quantile,
    quantile_utility,
)
from sklearn_dpfair.privacy import GaussianMechanism
from sklearn_dpfair._solvers._rows import per_example_norms

# (row, target) of one crafted record; d = 2 features.
CRAFTED = [
    ([1.7e308, 0.0], 0.0),
    ([1.7e308, 0.0], 1.0),
    ([1e200, 1e200], 0.0),
    ([1.7e308, 1.7e308], 3.0),
    ([0.0, 0.0], 1e308),
    ([0.0, 0.0], -1.7e308),
    ([1e200, 1e200], 1e308),
    ([-1.7e308, 1.7e308], -1.7e308),
]


def _parts(rho_scale, rho_matrix):
    """The curvature's two budget parts, of these zCDP rhos (inf: exact)."""
    return zcdp_budget(rho_scale, 1e-5), zcdp_budget(rho_matrix, 1e-5)


def _batch(rng, n=64):
    X = rng.normal(size=(n, 2))
    y = X @ np.array([1.0, -1.0]) + rng.normal(size=n)
    return X, y


def _neighbour(X, y, row, target):
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = row, target
    return X2, y2


@pytest.mark.parametrize("row, target", CRAFTED)
@pytest.mark.parametrize("loss", [SquaredLoss(), HuberLoss(1.0), PinballLoss(0.3)])
def test_clipped_mean_of_a_crafted_record_is_finite_and_bounded(row, target, loss):
    # MeanOracle1 without noise: replacing one record by a crafted one moves
    # the clipped sum by at most 2 C (replace-one sensitivity), the sum is
    # finite, and nothing warns. Before the fix the sum was nan.
    rng = np.random.default_rng(0)
    X, y = _batch(rng)
    X2, y2 = _neighbour(X, y, row, target)
    clip = 0.7
    for w in (np.zeros(3), np.array([1.0, -2.0, 0.5]), np.array([1e3, -1e3, 0.0])):
        sums = []
        for A, b in ((X, y), (X2, y2)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                mean = clipped_gradient_mean(
                    A,
                    b,
                    w,
                    loss,
                    clip_norm=clip,
                    mechanism=GaussianMechanism(2 * clip, 0.0),
                    intercept_scaling=1.0,
                    rng=np.random.default_rng(1),
                )
            assert np.all(np.isfinite(mean))
            sums.append(mean * A.shape[0])
        assert np.linalg.norm(sums[0] - sums[1]) <= 2 * clip * (1 + 1e-12)


def test_explicit_oracle_clips_huge_vectors_and_zeroes_non_finite_ones():
    # Clipping is scale invariant: a vector whose norm overflows is clipped
    # to the same point as a moderately large one in its direction (before:
    # factor C / inf = 0, i.e. dropped), and a non-finite vector contributes
    # the fixed value 0 (before: 0 * inf = nan).
    mech = GaussianMechanism(2.0, 0.0)
    rng = np.random.default_rng(0)
    base = np.array([[0.3, 0.4], [0.0, 0.0]])
    Z = np.vstack([base, [[1e200, 1e200]]])
    Z_ref = np.vstack([base, [[1e3, 1e3]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = mean_oracle(Z, 1.0, mech, rng)
    np.testing.assert_allclose(out, mean_oracle(Z_ref, 1.0, mech, rng))
    # A non-finite vector: 0.
    for bad in ([np.inf, 0.0], [np.nan, 1.0]):
        Z = np.vstack([base, [bad]])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = mean_oracle(Z, 1.0, mech, rng)
        np.testing.assert_allclose(out, base.sum(axis=0) / 3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "huge", [[1.7e308, 0.0], [1.7e308, 1.7e308], [-1e308, 1e300]], ids=str
)
def test_explicit_oracle_clips_vectors_near_the_largest_float(huge, dtype):
    # A norm past the largest float, or a factor C / ||z|| below the
    # smallest normal float, is projected onto the ball, not dropped: the
    # vector's term is C in its direction (before: factor 0, term 0).
    big = float(np.finfo(dtype).max) / 1.7e308
    z = np.array([huge], dtype=np.float64) * big
    Z = np.vstack([[[0.0, 0.0]], z]).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = mean_oracle(Z, 1.0, GaussianMechanism(2.0, 0.0), np.random.default_rng(0))
    term = 2 * out.astype(np.float64)
    direction = z[0] / np.max(np.abs(z[0]))
    direction /= np.linalg.norm(direction)
    assert np.linalg.norm(term) <= 1.0 + 1e-15
    np.testing.assert_allclose(term, direction, rtol=1e-6, atol=1e-12)


def test_gradient_norms_never_nan():
    # 0 * inf (a zero gradient on a row whose norm overflows) is 0, a
    # non-finite gradient has norm inf, huge finite products stay exact;
    # nothing warns.
    X = np.array([[1.7e308, 1.7e308], [1e200, 0.0], [3.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        norms = per_example_norms(
            np.array([[0.0], [np.nan], [-np.inf], [1e200], [2.0]]),
            np.array([np.inf, 1.0, 1.0, 1e200, 3.0]),
        )
        at_zero = gradient_norms_at_zero(X, np.array([0.0, 2.0, 4.0]), SquaredLoss(), 4)
    np.testing.assert_array_equal(norms, [0.0, np.inf, np.inf, np.inf, 6.0])
    np.testing.assert_allclose(at_zero, [0.0, 2e200, 20.0])


@pytest.mark.parametrize("crafted", [np.inf, np.nan, 1e308, 0.0, 1e-300])
@pytest.mark.parametrize("quantile", [0.5, 0.9])
def test_quantile_utility_is_finite_with_sensitivity_one(crafted, quantile):
    # The exponential mechanism's scores stay finite and move by at most 1
    # between neighbours, whatever the crafted value; non-finite values
    # count as above the grid.
    rng = np.random.default_rng(0)
    values = rng.lognormal(size=501)
    neighbour = values.copy()
    neighbour[7] = crafted
    u, u2 = quantile_utility(values, quantile), quantile_utility(neighbour, quantile)
    assert np.all(np.isfinite(u2))
    assert np.max(np.abs(u - u2)) <= 1.0
    if not np.isfinite(crafted):
        above = neighbour.copy()
        above[7] = 2 * LOG_GRID[-1]
        np.testing.assert_array_equal(u2, quantile_utility(above, quantile))
        # Same utility, same draw: the release does not see inf vs nan.
        assert private_quantile(
            neighbour, quantile, 0.01, np.random.default_rng(3)
        ) == private_quantile(above, quantile, 0.01, np.random.default_rng(3))


def test_curvature_clips_an_overflowing_row_like_any_other():
    # A row whose squared norm overflows (1e200^2) is clipped to norm
    # sqrt(C_S) in its own direction, exactly as a row 1e100 times smaller:
    # the estimates agree. Before the fix its factor was sqrt(C_S / inf) = 0
    # (the row vanished) and a zero row overflowed C_S / tiny with a warning.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    X[1] = 0.0
    estimates = []
    for scale in (1e100, 1e200):
        X2 = X.copy()
        X2[0] = scale * np.array([1.0, -2.0, 0.5])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est = private_curvature(
                X2, 1.0, *_parts(0.05, 0.2), np.random.default_rng(4)
            )
        assert math.isfinite(est.smoothness) and math.isfinite(est.strong_convexity)
        estimates.append((est.smoothness, est.strong_convexity, est.row_clip))
    np.testing.assert_allclose(estimates[0], estimates[1], rtol=1e-12)


def test_curvature_term_of_a_crafted_row_is_within_its_bound():
    # Without noise the released matrix is (1/n) sum of clipped terms, each
    # of Frobenius norm <= C_S: replacing one row by a crafted one moves the
    # top eigenvalue by at most 2 C_S / n.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    base = private_curvature(X, 1.0, *_parts(math.inf, math.inf), None)
    for row, _ in CRAFTED:
        X2 = X.copy()
        X2[0] = row
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est = private_curvature(X2, 1.0, *_parts(math.inf, math.inf), None)
        assert math.isfinite(est.smoothness)
        bound = 2 * max(base.row_clip, est.row_clip) / X.shape[0]
        if est.row_clip == base.row_clip:
            assert abs(est.smoothness - base.smoothness) <= bound * (1 + 1e-9)


@pytest.mark.parametrize("weight", [1.0, 50.0, 1e6])
def test_weighted_clipped_mean_moves_by_at_most_two_clips(weight):
    # Replace-one neighbours: one record (of any public weight) changes the
    # noiseless clipped sum by at most 2 C, since it is weighted, then clipped.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(64, 3)), rng.normal(size=64)
    weights = np.ones(64)
    weights[0] = weight
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = 1e3, -1e5
    mech = GaussianMechanism(2.0, 0.0)
    w = np.array([0.5, -0.2, 0.1, 0.3])

    def total(Xb, yb):
        return 64 * clipped_gradient_mean(
            Xb,
            yb,
            w,
            SquaredLoss(),
            clip_norm=1.0,
            mechanism=mech,
            intercept_scaling=1.0,
            rng=None,
            sample_weight=weights,
        )

    assert np.linalg.norm(total(X, y) - total(X2, y2)) <= 2.0 + 1e-12


@pytest.mark.parametrize("weight", [1.0, 1e6, 1e300])
def test_weighted_curvature_terms_are_within_the_row_clip(weight):
    from sklearn_dpfair._solvers.heavy_tail._private_curvature import (
        _weighted_row_scale,
    )

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    X[1] = 1e200
    weights = np.ones(500)
    weights[0] = weight
    scale, row_clip = _weighted_row_scale(X, 1.0, 0.05, rng, weights)
    rows = np.column_stack([X, np.ones(500)])
    # The weighted clipped term's Frobenius norm is ||scale_i x~_i||^2
    # (hypot: overflow-safe row norms of the 1e200 row).
    norms = scale * np.hypot.reduce(rows, axis=1)
    assert np.all(np.isfinite(norms)) and np.all(norms**2 <= row_clip * (1 + 1e-9))


@pytest.mark.parametrize("intercept_scaling", [0.0, 1.0])
def test_float32_weighted_curvature_terms_are_clipped_not_dropped(intercept_scaling):
    # sqrt(w) = 1e50 of a public weight overflows float32: the factors are
    # formed in float64, so an all-zero row's factor stays finite (its term
    # 0, not 0 * inf = NaN) and a nonzero row's term is clipped to the
    # bound C_S, not dropped by a factor 0 from an overflowed weighted norm.
    from sklearn_dpfair._solvers.heavy_tail._private_curvature import (
        _weighted_row_scale,
    )

    s = intercept_scaling
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)).astype(np.float32)
    X[0] = 0.0
    X[1] = 1.0
    weights = np.ones(500)
    weights[:2] = 1e100
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scale, row_clip = _weighted_row_scale(X, s, 0.05, rng, weights)
    rows = np.column_stack([X.astype(np.float64), np.full(500, s)])
    terms = np.square(scale * np.linalg.norm(rows, axis=1))
    assert np.all(np.isfinite(scale)) and np.all(terms <= row_clip)
    # The heavy nonzero rows ([1, 1, 1, s], and [0, 0, 0, 1] with an
    # intercept) are at the bound (within float32's margin); the all-zero
    # row's term is 0; unit weights are never scaled up.
    heavy = [0, 1] if s else [1]
    np.testing.assert_allclose(terms[heavy], row_clip, rtol=1e-6)
    assert s or terms[0] == 0.0
    assert np.all(scale[2:] <= 1.0)


def test_float32_heavy_weight_curvature_release_is_within_its_bound(monkeypatch):
    # Neighbours whose record 0 (public weight 1e100) is an all-zero or a
    # nonzero float32 row: both fits end; the curvature matrix released
    # (before noise) differs between them by that record's clipped term,
    # which is within the release's sensitivity 2 C_S / n, and is that
    # term at its bound (clipped, not dropped). Before, the zero row's
    # 0 * inf = NaN made the fit raise (LinAlgError) and the nonzero row's
    # term was dropped.
    from sklearn_dpfair import HeavyTailDPRegressor
    from sklearn_dpfair.privacy import _mechanism

    seen = []
    privatize_symmetric = _mechanism.GaussianMechanism.privatize_symmetric

    def spy(self, matrix, rng):
        seen.append((np.array(matrix, dtype=float), self.clip_norm))
        return privatize_symmetric(self, matrix, rng)

    monkeypatch.setattr(_mechanism.GaussianMechanism, "privatize_symmetric", spy)
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.normal(size=(n, 3)).astype(np.float32)
    y = (X @ np.array([1.0, -1.0, 0.5]) + rng.normal(size=n)).astype(np.float32)
    weights = np.ones(n)
    weights[0] = 1e100
    for solver in ("sgd", "acsa"):
        seen.clear()
        for value in (0.0, 1.0):
            X2 = X.copy()
            X2[0] = value
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                reg = HeavyTailDPRegressor(
                    solver=solver, fit_intercept=False, random_state=0
                ).fit(X2, y, sample_weight=weights)
            assert np.all(np.isfinite(reg.coef_)) and math.isfinite(reg.smoothness_)
        (zero, sensitivity), (nonzero, sensitivity2) = seen
        assert sensitivity == sensitivity2  # the same private clip C_S
        assert np.all(np.isfinite(zero)) and np.all(np.isfinite(nonzero))
        moved = np.linalg.norm(nonzero - zero)
        # One clipped term over n: C_S / n = half the sensitivity.
        assert moved <= sensitivity
        np.testing.assert_allclose(moved, sensitivity / 2, rtol=1e-5)


def test_float32_unweighted_curvature_term_is_within_its_bound(monkeypatch):
    # float32 rows without an intercept column: the squared norms that set
    # each row's factor are summed in float64 and rounded up. A float32 sum
    # of a row with a few large and many small entries fell short of the
    # true squared norm by more than float32's clip margin, so that row's
    # clipped term x^_0 x^_0^T (Frobenius norm ||x^_0||^2) exceeded C_S.
    from sklearn_dpfair._solvers.heavy_tail import _private_curvature

    seen = []
    factors_from_norms = _private_curvature.clip_factors_from_norms

    def spy(norms, clip, **kwargs):
        out = factors_from_norms(norms, clip, **kwargs)
        seen.append((clip, np.array(out)))
        return out

    monkeypatch.setattr(_private_curvature, "clip_factors_from_norms", spy)
    d = 64
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(50, d)) / np.sqrt(d)).astype(np.float32)
    # float32 sums put its squared norm 7e-7 (relative) below the true one.
    X[0] = 0.1
    X[0, 0] = 64.0
    private_curvature(X, 0.0, *_parts(math.inf, math.inf), None)
    ((row_clip, factors),) = seen
    clipped = X.astype(np.float64) * np.sqrt(factors)[:, None]
    terms = np.sum(clipped**2, axis=1)
    assert terms[0] > 0.99 * row_clip  # record 0 is clipped
    # Within float64's last roundings of the factor and the sum (1e-16).
    assert np.all(terms <= row_clip * (1 + 1e-12))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("intercept_scaling", [0.0, 1.0])
@pytest.mark.parametrize("huge", [[1.7e308, 0.0], [1.7e308, -1.7e308]], ids=str)
def test_curvature_term_of_a_row_near_the_largest_float_is_clipped_not_dropped(
    huge, intercept_scaling, weighted, sparse, monkeypatch
):
    # A row whose norm exceeds the largest float, or whose factor
    # sqrt(C_S) / ||x~|| is below the smallest normal float ([1.7e308, 0]
    # with C_S of a few units), had factor 0: its term was missing from the
    # released matrix. Projected from its largest entry, its term is the
    # one of a row 1e-298 times smaller in the same direction (clipped to
    # C_S as well): the two matrices agree.
    import scipy.sparse as sp

    from sklearn_dpfair.privacy import _mechanism

    seen = []
    privatize_symmetric = _mechanism.GaussianMechanism.privatize_symmetric

    def spy(self, matrix, rng):
        seen.append(np.array(matrix, dtype=float))
        return privatize_symmetric(self, matrix, rng)

    monkeypatch.setattr(_mechanism.GaussianMechanism, "privatize_symmetric", spy)
    rng = np.random.default_rng(0)
    n = 300
    X = rng.normal(size=(n, 2))
    weights = None
    if weighted:
        weights = np.ones(n)
        weights[0] = 3.0
    clips = []
    for row in (np.array(huge), np.array(huge) * 1e-298):
        X2 = X.copy()
        X2[0] = row
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est = private_curvature(
                sp.csr_matrix(X2) if sparse else X2, intercept_scaling,
                *_parts(math.inf, math.inf), None, sample_weight=weights,
            )
        clips.append(est.row_clip)
    assert clips[0] == clips[1]
    huge_term, reference = seen
    assert np.all(np.isfinite(huge_term))
    assert n * np.linalg.norm(huge_term - reference) <= 1e-8 * clips[0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("intercept_scaling", [0.0, 1.0])
def test_clipped_mean_of_a_weight_whose_gradient_overflows(intercept_scaling, dtype):
    # A weight of 1e308 on a residual of 3: w psi = inf, and the record's
    # term counted as not finite (0) where its weight can raise it only up
    # to C. Saturated at the largest float, the term is C in its direction.
    x = np.array([[3.0, 4.0]], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = clipped_gradient_mean(
            x, np.array([1.0], dtype=dtype), np.array([0.5, 0.5, 0.5]),
            SquaredLoss(), clip_norm=1.0, mechanism=GaussianMechanism(2.0, 0.0),
            intercept_scaling=intercept_scaling, rng=np.random.default_rng(0),
            sample_weight=np.array([1e308]),
        )
    row = np.array([3.0, 4.0, intercept_scaling])
    # The residual 0.5 (3 + 4) + 0.5 s - 1 > 0: the direction of +x~.
    np.testing.assert_allclose(g, row / np.linalg.norm(row), rtol=1e-6)
    assert np.linalg.norm(g) <= 1.0 + 1e-15
