# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""MeanOracle1, the private quantile and the private curvature: statistics and sensitivity."""

import math
import os

import numpy as np
import pytest

from sklearn_dpfair._loss import HuberLoss, SquaredLoss
from sklearn_dpfair._solvers.heavy_tail._mean_oracle import (
    clipped_gradient_mean,
    mean_oracle,
)
from sklearn_dpfair._solvers.heavy_tail._fit import zcdp_budget
from sklearn_dpfair._solvers.heavy_tail._private_curvature import private_curvature
from sklearn_dpfair.privacy._quantile import LOG_GRID, private_quantile
from sklearn_dpfair.privacy import GaussianMechanism

FULL = bool(os.environ.get("DPFAIR_FULL"))


def _parts(rho_scale, rho_matrix):
    """The curvature's two budget parts, of these zCDP rhos (inf: exact)."""
    return zcdp_budget(rho_scale, 1e-5), zcdp_budget(rho_matrix, 1e-5)


def _oracle_mechanism(clip, eps):
    # rho_step = eps^2 / 2 on a sum of replace-one sensitivity 2C.
    return GaussianMechanism(2.0 * clip, 1.0 / eps)


def _pareto_batch(rng, reps, s, alpha, d):
    """``reps`` batches of s vectors ``rho e_1`` with rho ~ Pareto(alpha), x_m = 1."""
    Z = np.zeros((reps, s, d))
    Z[:, :, 0] = rng.pareto(alpha, size=(reps, s)) + 1.0
    return Z


def test_factorized_oracle_equals_the_explicit_one(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = rng.standard_t(3, size=(50, 4))
    y = rng.standard_t(2.5, size=50)
    w = rng.normal(size=5)
    for loss in (SquaredLoss(), HuberLoss(0.5)):
        psi = loss.raw_gradient(y, (X @ w[:-1] + w[-1])[:, None])[:, 0]
        G = psi[:, None] * np.column_stack([X, np.ones(50)])
        mech = _oracle_mechanism(1.5, 0.3)
        explicit = mean_oracle(G, 1.5, mech, np.random.default_rng(7))
        factorized = clipped_gradient_mean(
            X,
            y,
            w,
            loss,
            clip_norm=1.5,
            mechanism=mech,
            intercept_scaling=1.0,
            rng=np.random.default_rng(7),
        )
        np.testing.assert_allclose(factorized, explicit, rtol=1e-12, atol=1e-14)


def test_oracle_sensitivity_on_neighbouring_batches(global_random_seed):
    # Replacing one row moves the clipped sum by at most 2 C (replace-one).
    rng = np.random.default_rng(global_random_seed)
    X = rng.standard_t(2, size=(40, 3))
    y = rng.standard_t(2, size=40)
    w = rng.normal(size=4)
    clip, no_noise = 0.7, GaussianMechanism(1.4, 0.0)
    worst = 0.0
    for _ in range(50):
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(40)
        X2[i] = 1e6 * rng.normal(size=3)
        y2[i] = -1e6
        args = {
            "clip_norm": clip,
            "mechanism": no_noise,
            "intercept_scaling": 1.0,
            "rng": rng,
        }
        a = 40 * clipped_gradient_mean(X, y, w, SquaredLoss(), **args)
        b = 40 * clipped_gradient_mean(X2, y2, w, SquaredLoss(), **args)
        worst = max(worst, np.linalg.norm(a - b))
    assert worst <= 2 * clip + 1e-9
    assert worst > 1.5 * clip  # the bound is attained by outliers


def test_no_intercept_coordinate_stays_zero():
    rng = np.random.default_rng(0)
    g = clipped_gradient_mean(
        rng.normal(size=(20, 2)),
        rng.normal(size=20),
        np.zeros(3),
        SquaredLoss(),
        clip_norm=1.0,
        mechanism=GaussianMechanism(2.0, 5.0),
        intercept_scaling=0.0,
        rng=rng,
    )
    assert g[-1] == 0.0 and np.all(g[:-1] != 0)


def test_lemma49_bias_and_variance_bounds():
    # Monte Carlo of MeanOracle1 on one-sided Pareto vectors (biased clip).
    rng = np.random.default_rng(0)
    alpha, k, d, s, clip, eps = 4.4, 4.0, 5, 200, 2.0, 1.0
    reps = 4000 if FULL else 1500
    Z = _pareto_batch(rng, reps, s, alpha, d)
    mech = _oracle_mechanism(clip, eps)
    out = np.array([mean_oracle(z, clip, mech, rng) for z in Z])
    nu = np.zeros(d)
    nu[0] = alpha / (alpha - 1)
    r_k = alpha / (alpha - k)  # E||z||^k for Pareto(alpha), x_m = 1
    r_2 = alpha / (alpha - 2)
    bias = np.linalg.norm(out.mean(axis=0) - nu)
    exact_bias = clip ** (1 - alpha) / (alpha - 1)  # E(||z|| - C)_+
    assert bias <= r_k / ((k - 1) * clip ** (k - 1))
    assert bias == pytest.approx(exact_bias, rel=0.2)
    sigma = 2 * clip / (s * eps)
    variance = np.mean(np.sum((out - out.mean(axis=0)) ** 2, axis=1))
    assert variance <= d * sigma**2 + r_2 / s
    assert variance >= d * sigma**2  # the noise alone


def _oracle_error(rng, s, alpha, k, d, eps, reps):
    r_k = (alpha / (alpha - k)) ** (1 / k)
    clip = r_k * (eps * s / math.sqrt(d)) ** (1 / k)  # Algorithm 5's clip r_k (eps s / sqrt d)^(1/k)
    mech = _oracle_mechanism(clip, eps)
    nu = alpha / (alpha - 1)
    errors = []
    for _ in range(reps):
        z = np.zeros((s, d))
        z[:, 0] = rng.pareto(alpha, size=s) + 1.0
        est = mean_oracle(z, clip, mech, rng)
        est[0] -= nu
        errors.append(np.linalg.norm(est))
    return np.mean(errors)


def test_oracle_error_slope_in_batch_size():
    # k = 4, alpha = 4.4, theory C: error ~ s^(-3/4) (Algorithm 5's bias-variance balance; measured -0.72).
    rng = np.random.default_rng(1)
    sizes = np.array([1000, 4000, 16000, 64000])
    reps = 200 if FULL else 40
    errors = [_oracle_error(rng, s, 4.4, 4.0, 10, 1.0, reps) for s in sizes]
    slope = np.polyfit(np.log(sizes), np.log(errors), 1)[0]
    assert -0.85 <= slope <= -0.6


def test_oracle_error_slope_in_epsilon():
    # k = 2: the privacy term scales like eps^(-1/2).
    rng = np.random.default_rng(2)
    epsilons = np.array([0.05, 0.2, 0.8])
    reps = 200 if FULL else 60
    errors = [_oracle_error(rng, 4000, 2.2, 2.0, 10, e, reps) for e in epsilons]
    slope = np.polyfit(np.log(epsilons), np.log(errors), 1)[0]
    assert -0.7 <= slope <= -0.3


def test_example47_moments():
    # Thesis Example 47: 1-d linear regression on W = [-1, 1], Gaussian data;
    # sup_w |g| = (|x1| + |x2|) |x1| has small moments although L >= 1e20.
    rng = np.random.default_rng(3)
    x1, x2 = rng.normal(size=(2, 1_000_000))
    sup_grad = (np.abs(x1) + np.abs(x2)) * np.abs(x1)
    r2 = np.mean(sup_grad**2) ** 0.5
    r4 = np.mean(sup_grad**4) ** 0.25
    assert r2 <= 5 and r4 <= 8
    assert r2 == pytest.approx(2.56, abs=0.05)
    assert r4 == pytest.approx(4.38, abs=0.15)


def test_private_quantile_accuracy_and_utility_sensitivity(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    v = rng.lognormal(mean=1.0, size=5000)
    exact = np.median(v)
    assert private_quantile(v, 0.5, math.inf, rng) == pytest.approx(exact, rel=0.1)
    draws = [private_quantile(v, 0.5, 0.005, rng) for _ in range(30)]
    # Rank error ~ (2/eps) ln|G| = 240 rows of 5000: within 15% of the median.
    ranks = np.searchsorted(np.sort(v), draws) / v.size
    assert np.all(np.abs(ranks - 0.5) < 0.15)
    assert set(draws) <= set(LOG_GRID)
    # Utility u(c) = -|#{v <= c} - n/2| changes by at most 1 between neighbours.
    v2 = v.copy()
    v2[0] = 1e7
    u = lambda x: -np.abs(np.searchsorted(np.sort(x), LOG_GRID, "right") - x.size / 2)
    assert np.max(np.abs(u(v) - u(v2))) <= 1


def test_private_quantile_upper_level():
    v = np.arange(1, 10001, dtype=float)
    q = private_quantile(v, 0.9, math.inf, np.random.default_rng(0))
    assert q == pytest.approx(9000, rel=0.1)


def test_private_curvature_exact_and_noisy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50000, 4)) * np.array([1.0, 1.0, 2.0, 0.5])
    exact = private_curvature(X, 1.0, *_parts(math.inf, math.inf), rng)
    # Rows are clipped at twice the median squared norm: a mild shrinkage.
    assert 2.5 < exact.smoothness <= 4.05
    assert 0.2 < exact.strong_convexity <= 0.26
    noisy = [private_curvature(X, 1.0, *_parts(0.01, 0.04), rng) for _ in range(5)]
    assert all(est.smoothness >= exact.smoothness for est in noisy)
    kappas = [est.smoothness / max(est.strong_convexity, 1e-12) for est in noisy]
    assert np.median(kappas) < 3 * exact.smoothness / exact.strong_convexity


def test_private_curvature_sensitivity():
    # The clipped second moment moves by at most 2 C_S / n in Frobenius norm.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    row_clip = 5.0
    rows = np.column_stack([X, np.ones(200)])

    def moment(R):
        sq = np.einsum("ij,ij->i", R, R)
        c = R * np.sqrt(np.minimum(1.0, row_clip / sq))[:, None]
        return c.T @ c / R.shape[0]

    rows2 = rows.copy()
    rows2[0] = 1e4
    assert np.linalg.norm(moment(rows) - moment(rows2)) <= 2 * row_clip / 200 + 1e-12


@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_full_passes_by_row_blocks_match_dense(monkeypatch, weighted):
    # The gradient norms at zero and the scaled second moment read a sparse
    # X by blocks of rows (no n-length temporaries); small blocks give the
    # dense values, to round-off for the summed Gram matrix.
    import scipy.sparse as sp

    from sklearn_dpfair._loss import SquaredLoss
    from sklearn_dpfair._solvers import _row_blocks
    from sklearn_dpfair._solvers.heavy_tail._mean_oracle import (
        gradient_norms_at_zero,
        scaled_augmented_gram,
    )

    rng = np.random.default_rng(0)
    dense = rng.standard_normal((50, 6)) * (rng.random((50, 6)) < 0.4)
    X = sp.csr_matrix(dense)
    y = rng.standard_normal(50)
    weights = rng.uniform(0.5, 2.0, 50) if weighted else None
    whole = gradient_norms_at_zero(X, y, SquaredLoss(), 1.0, sample_weight=weights)
    monkeypatch.setattr(_row_blocks, "block_rows", lambda X: 7)
    blocked = gradient_norms_at_zero(X, y, SquaredLoss(), 1.0, sample_weight=weights)
    np.testing.assert_array_equal(blocked, whole)
    np.testing.assert_allclose(
        blocked,
        gradient_norms_at_zero(dense, y, SquaredLoss(), 1.0, sample_weight=weights),
        rtol=1e-14,
    )
    scale = rng.uniform(0.1, 1.0, 50)
    A = np.column_stack([dense, np.ones(50)]) * scale[:, None]
    np.testing.assert_allclose(scaled_augmented_gram(X, 1.0, scale), A.T @ A,
                               rtol=1e-12, atol=1e-12)
