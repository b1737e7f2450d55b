# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The semi-DP solver core, the public geometry and the public-only tuning model."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._solvers.semi_dp._public_geometry import (
    newton_preconditioner,
    pda_md_preconditioner,
    public_geometry,
)
from sklearn_dpfair._solvers.semi_dp._public_tuning import (
    choose_hyperparameters,
    clipped_gradient_moments,
)
from sklearn_dpfair._solvers.semi_dp._solver import (
    SemiDPData,
    _clipped_sum,
    semidp_gradient_descent,
)
from sklearn_dpfair._solvers._linear import augmented_row_norms
from sklearn_dpfair.privacy._mechanism import GaussianMechanism


def _problem(seed=0, n=2000, d=4, n_pub=300, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    y = X @ w + 1.0 + noise * rng.standard_normal(n)
    mask = np.zeros(n, dtype=bool)
    mask[:n_pub] = True
    return X, y, mask, w


def _data(X, y, mask, s=1.0):
    return SemiDPData(X[~mask], y[~mask], X[mask], y[mask], s)


def _run(data, K, *, alpha, lr, steps, z, seeds, P=None, public_clipping=False):
    p = data.n_params
    return semidp_gradient_descent(
        data,
        np.zeros((p, K)),
        mechanisms=[GaussianMechanism(clip_norm=1.0, noise_multiplier=z)] * K,
        alpha=np.broadcast_to(alpha, (K,)),
        learning_rate=np.broadcast_to(lr, (K,)),
        n_steps=np.broadcast_to(steps, (K,)),
        clip_norm=1.0,
        public_clipping=public_clipping,
        sampling_probability=1.0,
        preconditioner=P,
        rngs=[np.random.default_rng(s) for s in seeds],
        tail_fraction=0.75,
    )


def test_batched_columns_equal_single_runs():
    # Column k of a batched run is the single run with generator k: the
    # benchmark's batched baselines are the estimator's solver.
    X, y, mask, _ = _problem()
    data = _data(X, y, mask)
    alpha, lr, steps = np.array([0.9, 0.5, 1.0]), np.array([2.0, 4.0, 1.0]), [5, 9, 3]
    batched = _run(data, 3, alpha=alpha, lr=lr, steps=np.array(steps), z=3.0, seeds=[1, 2, 3])
    for k in range(3):
        single = _run(
            data, 1, alpha=alpha[k], lr=lr[k], steps=steps[k], z=3.0, seeds=[k + 1]
        )
        np.testing.assert_allclose(batched.params[:, k], single.params[:, 0], rtol=1e-12)


@pytest.mark.parametrize("layout", ["dense", "csr", "float32", "csr-float32"])
@pytest.mark.parametrize("factor", [1.0, 2.0])
def test_clipped_sum_sensitivity_on_neighbours(factor, layout):
    # Replacing one private row moves the clipped sum by at most 2 C (one row
    # removed, one added), and removing one by at most C; also on sparse
    # rows, and on float32 rows (whose sums are accumulated in float64: a
    # float32 sum rounds by more than 1e-6 C here).
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3)) * (rng.random((50, 3)) < 0.7)
    y = rng.standard_normal(50)
    W = rng.standard_normal((4, 2))
    X2, y2 = X.copy(), y.copy()
    X2[7] = 1e6 * rng.standard_normal(3)
    y2[7] = -1e9
    dtype = np.float32 if "float32" in layout else np.float64

    def total(X, y):
        X, y = X.astype(dtype), y.astype(dtype)
        R = X @ W[:3].astype(dtype) + W[3].astype(dtype) - y[:, None]
        Xl = sp.csr_matrix(X) if layout.startswith("csr") else X
        out = _clipped_sum(Xl, R, augmented_row_norms(Xl, 1.0), factor, 1.0)
        assert out.dtype == np.float64
        return out

    replaced = np.linalg.norm(total(X, y) - total(X2, y2), axis=0)
    removed = np.linalg.norm(total(X, y) - total(np.delete(X, 7, 0), np.delete(y, 7)), axis=0)
    assert np.all(replaced <= 2 * factor * (1 + 1e-12))
    assert np.all(removed <= factor * (1 + 1e-12))


def test_dp_gd_matches_reference_on_all_rows():
    # dp-gd's code path (alpha = n_priv/n, clipped public gradients, no
    # preconditioner) is an independent textbook DP-GD on the concatenated rows.
    X, y, mask, _ = _problem(n_pub=200)
    data = _data(X, y, mask)
    n, steps, lr, z = X.shape[0], 6, 3.0, 2.0
    got = _run(
        data, 1, alpha=(~mask).sum() / n, lr=lr, steps=steps, z=z, seeds=[5],
        public_clipping=True,
    )
    rng = np.random.default_rng(5)
    Xa = np.hstack([np.vstack([X[~mask], X[mask]]), np.ones((n, 1))])
    ya = np.concatenate([y[~mask], y[mask]])
    w = np.zeros(Xa.shape[1])
    tail = []
    for t in range(steps):
        r = Xa @ w - ya
        g = r[:, None] * Xa
        norms = np.linalg.norm(g, axis=1)
        g *= np.minimum(1.0, 1.0 / norms)[:, None]
        noisy = g.sum(axis=0) + rng.normal(0.0, z * 1.0, size=w.shape)
        w = w - lr * noisy / n
        if t >= steps - int(np.ceil(0.75 * steps)):
            tail.append(w)
    np.testing.assert_allclose(got.params[:, 0], np.mean(tail, axis=0), rtol=1e-9)


def test_public_geometry_warm_start_is_public_ols():
    X, y, mask, _ = _problem()
    geo = public_geometry(X[mask], y[mask], intercept_scaling=1.0, ridge=0.0, n_features=4)
    Xa = np.hstack([X[mask], np.ones((mask.sum(), 1))])
    ols, *_ = np.linalg.lstsq(Xa, y[mask], rcond=None)
    np.testing.assert_allclose(geo.warm_start, ols, rtol=1e-8)
    # Unbiased residual variance (true 0.25), and no private row was read.
    assert abs(geo.noise_variance - 0.25) < 0.05
    assert geo.n_public == mask.sum() and geo.row_norms.shape == (mask.sum(),)


def test_public_geometry_warm_start_keeps_a_small_spread_under_a_large_offset():
    # The warm start is solved in centred columns; the spectrum stays that
    # of the uncentred Gram matrix of [x, 1], the Hessian in the solvers'
    # coordinates that the preconditioners read.
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((60, 2))
    X = np.column_stack([500.0 + 1e-3 * Z[:, 0], Z[:, 1]])
    y = Z @ [1.0, 2.0] + 3.0 + 0.1 * rng.standard_normal(60)
    geo = public_geometry(X, y, intercept_scaling=1.0, ridge=0.0, n_features=2)
    A = np.column_stack([X - X.mean(0), np.ones(60)])
    exact = np.linalg.lstsq(A, y, rcond=None)[0]
    np.testing.assert_allclose(geo.warm_start[:2], exact[:2], rtol=1e-6)
    prediction = X @ geo.warm_start[:2] + geo.warm_start[2]
    np.testing.assert_allclose(prediction, A @ exact, atol=1e-6)
    Xa = np.column_stack([X, np.ones(60)])
    H = Xa.T @ Xa / 60
    np.testing.assert_allclose(geo.scale, np.diag(H), rtol=1e-12)
    scaled = H / np.sqrt(np.outer(geo.scale, geo.scale))
    np.testing.assert_allclose(
        geo.eigvecs @ np.diag(geo.eigvals) @ geo.eigvecs.T, scaled, atol=1e-12
    )
    # Three parameters seen by 60 rows.
    residual = prediction - y
    assert geo.noise_variance == pytest.approx(residual @ residual / 57, rel=1e-6)


def test_public_geometry_without_public_rows():
    geo = public_geometry(
        np.empty((0, 3)), np.empty(0), intercept_scaling=0.0, ridge=1e-6, n_features=3
    )
    assert geo.n_public == 0 and np.all(geo.warm_start == 0) and geo.warm_start.shape == (3,)


def test_public_geometry_without_ridge_ignores_unseen_directions():
    # A zero public column with ridge = 0: its eigenvalue is exactly 0, whose
    # ratio 0 / 0 made the degrees of freedom NaN (a RuntimeWarning, then a
    # false "only 10 public rows for 4 parameters" and the target variance).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3))
    X[:, 2] = 0.0
    y = X[:, 0] + 0.5 * rng.normal(size=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        geo = public_geometry(X, y, intercept_scaling=1.0, ridge=0.0, n_features=3)
    residual = X @ geo.warm_start[:3] + geo.warm_start[3] - y
    # Three seen directions (two columns and the intercept) of ten rows.
    assert geo.noise_variance == pytest.approx(residual @ residual / 7, rel=1e-9)


@pytest.mark.parametrize("n_pub", [40, 3])
def test_public_targets_near_the_largest_float_give_an_infinite_variance(n_pub):
    # Residuals (or, with too few public rows, targets) of 1e300 square past
    # the largest float: the variance is inf, without numpy's overflow warning.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_pub, 3))
    y = X @ [1.0, 2.0, 3.0] * 1e300 + rng.normal(size=n_pub) * 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.filterwarnings("ignore", "Only 3 public rows", UserWarning)
        geo = public_geometry(X, y, intercept_scaling=1.0, ridge=0.0, n_features=3)
    assert geo.noise_variance == np.inf


def test_tuning_public_only_candidate_on_unseen_directions_ranks_last():
    # alpha = 0 in a direction no public row sees is 0 / 0 in the risk
    # model: ranked last, without a numpy RuntimeWarning.
    geo = public_geometry(
        np.ones((1, 2)), np.ones(1), intercept_scaling=1.0, ridge=0.0, n_features=2
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        choice = choose_hyperparameters(
            geo,
            clip_norm=1.0,
            public_clipping=True,
            n_private=1000,
            step_noise_var_of=lambda t: 1e-4 * t,
            alphas=[0.0, 0.5],
        )
    assert np.isfinite(choice.predicted_excess_risk) and choice.alpha == 0.5


def _raw_constant_column_problem(seed=0, n=1000, n_pub=40):
    # Raw columns of magnitude 100 (clip_norm 1 saturates every clip: the
    # model's private curvature k is ~1e-5) and a binary column equal to 1
    # on every public row, so that it is collinear with the intercept in the
    # public second moments: one direction with h ~ 0.
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [100.0 + 30.0 * rng.standard_normal((n, 3)), 1.0 + (rng.random(n) < 0.5)]
    )
    y = X @ np.array([1.0, -0.5, 0.3, 20.0]) + 10.0 * rng.standard_normal(n)
    mask = np.zeros(n, dtype=bool)
    mask[rng.permutation(np.flatnonzero(X[:, 3] == 1.0))[:n_pub]] = True
    return X, y, mask


def test_newton_preconditioner_inverts_public_hessian():
    X, y, mask, _ = _problem()
    geo = public_geometry(X[mask], y[mask], intercept_scaling=1.0, ridge=0.0, n_features=4)
    # alpha = 0, c = 1: P is the inverse of H = X~^T X~ / n_pub.
    P = newton_preconditioner(geo, [0.0], [1.0], 1.0)
    Xa = np.hstack([X[mask], np.ones((mask.sum(), 1))])
    H = Xa.T @ Xa / mask.sum()
    v = np.random.default_rng(0).standard_normal((5, 1))
    np.testing.assert_allclose(P.apply(H @ v, np.array([0])), v, rtol=1e-8)


def test_pda_md_preconditioner_is_normalized():
    X, _, mask, _ = _problem()
    P = pda_md_preconditioner(X[mask], 0.0, 2)
    assert P.spectrum.max() == pytest.approx(1.0)
    assert P.spectrum.shape == (4, 2)


def test_clipped_gradient_moments_match_monte_carlo():
    rng = np.random.default_rng(0)
    norms = np.array([0.5, 2.0, 5.0])
    sd, C = 0.7, 1.0
    r = sd * rng.standard_normal((400_000, 1))
    c = C / norms[None, :]
    psi = np.clip(r, -c, c) / C  # clipped, C-normalized raw gradient
    slope = np.mean(np.abs(r) < c) / C
    var = np.mean(psi**2)
    k, s2 = clipped_gradient_moments(np.array([sd]), norms, C)
    assert k[0] == pytest.approx(slope, rel=0.01)
    assert s2[0] == pytest.approx(var, rel=0.01)
    k_inf, s2_inf = clipped_gradient_moments(np.array([sd]), norms, np.inf)
    assert k_inf[0] == 1.0 and s2_inf[0] == pytest.approx(sd**2)


def test_clipped_gradient_moments_of_an_infinite_spread_clip_everything():
    # A public target near 1e300 makes the public residual variance inf:
    # every residual is clipped (curvature 0, variance c^2), without numpy's
    # inf * 0 warning.
    norms = np.array([0.5, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k, s2 = clipped_gradient_moments(np.array([np.inf, 1.0]), norms, 1.0)
    assert k[0] == 0.0 and s2[0] == pytest.approx(np.mean((1.0 / norms) ** 2))
    assert 0.0 < k[1] < 1.0 and np.isfinite(s2[1])


def test_auto_alpha_without_noise_weights_rows_equally():
    # epsilon = inf, no clipping: the inverse-variance weight of the private
    # mean is n_priv / n (OLS on all rows), up to the grid's resolution.
    X, y, mask, _ = _problem(n=4000, n_pub=400)
    geo = public_geometry(X[mask], y[mask], intercept_scaling=1.0, ridge=0.0, n_features=4)
    choice = choose_hyperparameters(
        geo,
        clip_norm=np.inf,
        public_clipping=False,
        n_private=3600,
        step_noise_var_of=lambda T: 0.0,
        alphas=np.linspace(0.5, 0.99, 50),
    )
    assert choice.alpha == pytest.approx(0.9, abs=0.01)


def test_auto_alpha_falls_with_the_budget():
    # Less budget, more noise: the model trusts the public rows more.
    X, y, mask, _ = _problem(n=4000, n_pub=400)
    geo = public_geometry(X[mask], y[mask], intercept_scaling=1.0, ridge=0.0, n_features=4)
    alphas = [
        choose_hyperparameters(
            geo,
            clip_norm=1.0,
            public_clipping=False,
            n_private=3600,
            step_noise_var_of=lambda T, s=scale: (s * np.sqrt(T) / 3600) ** 2,
            max_iters=[10],
            learning_rates=[0.5],
        ).alpha
        for scale in (1.0, 30.0, 300.0)
    ]
    assert alphas[0] > alphas[1] > alphas[2]


# Example 19 of the thesis (Chapter 2, Section 2.2, Eq. (2.6)): n = 10,000, V = 1, rho-zCDP Gaussian
# noise of total variance N = 2 d B^2 / rho per unit weight; the improvement
# factor of the inverse-variance mix over the better of throw-away and the
# Gaussian mechanism on all rows.
@pytest.mark.parametrize(
    "n_pub, d, rho, B, factor",
    [
        (100, 10_000, 1, 25, 1.0783),
        (100, 1_000, 1, 25, 1.7779),
        (100, 10_000, 10, 25, 1.7779),
        (100, 100, 0.1, 25, 1.7779),
        (80, 100, 0.1, 25, 1.9763),
        (10, 100, 0.01, 25, 1.7978),
        (10, 100, 1, 500, 1.1996),
        (10 ** 0.4, 100, 1, 500, 1.7956),
        (5_000, 10_000, 1, 1, 1.2000),
    ],
)
def test_inverse_variance_weight_reproduces_example_19(n_pub, d, rho, B, factor):
    from sklearn_dpfair._solvers.semi_dp._public_tuning import inverse_variance_weight

    n, V2 = 10_000, 1.0
    n_priv = n - n_pub
    N = 2 * d * B**2 / rho
    alpha, mse = inverse_variance_weight(V2 / n_pub, V2 / n_priv + N / n_priv**2)
    baseline = min(V2 / n_pub, N / n**2 + V2 / n)
    assert baseline / mse == pytest.approx(factor, abs=6e-4)
    assert 0 < alpha < 1


# -- a record near the float64 limit -----------------------------------------

HUGE = [
    ([1.7e308, 0.0, 0.0, 0.0], 1.0),
    ([-1.7e308, 1.7e308, 0.0, 0.0], 1.0),
    ([1e200, 1e200, 1e200, 1e200], 1.0),
    ([1.7e308, 0.0, 0.0, 0.0], -1.7e308),  # residual x~ w - y overflows
    ([0.5, 0.1, 0.0, 0.0], 1.7e308),  # huge target alone
]


@pytest.mark.parametrize("clip", [1.0, np.inf])
def test_clipped_sum_of_non_finite_residuals_is_finite(clip):
    # A residual that is inf (or nan) used to meet clip factor 0 (0 * inf =
    # nan) or factor 1 (no clipping: public rows, epsilon = inf); it now
    # contributes exactly 0, in every column, and a clipped column stays
    # within C per row even for rows near the float64 limit.
    X = np.array([[1.7e308, 0.0], [1.0, 2.0], [-1.7e308, 1.7e308], [0.5, 0.5]])
    R = np.array([[np.inf, 0.5], [0.3, np.nan], [1e300, -np.inf], [0.2, 0.4]])
    with np.errstate(all="ignore"):  # the solver silences them (see below)
        norms = augmented_row_norms(X, 1.0)
        total = _clipped_sum(X, R.copy(), norms, clip, 1.0)
        if np.isfinite(clip):
            assert np.all(np.isfinite(total))
            for k in range(R.shape[1]):
                for i in range(X.shape[0]):
                    term = _clipped_sum(
                        X[[i]], R[[i], k : k + 1].copy(), norms[[i]], clip, 1.0
                    )
                    assert np.all(np.isfinite(term))
                    assert np.linalg.norm(term) <= clip * (1 + 1e-12)
        else:
            # Unclipped: the rows with a non-finite residual add nothing.
            finite = np.isfinite(R)
            expected = np.column_stack(
                [
                    _clipped_sum(X[finite[:, k]], R[finite[:, k], k : k + 1].copy(),
                                 norms[finite[:, k]], clip, 1.0)[:, 0]
                    for k in range(2)
                ]
            )
            np.testing.assert_array_equal(total[:, 1], expected[:, 1])
            assert np.all(np.isfinite(total[:, 1]))


class _Recording(GaussianMechanism):
    """A Gaussian mechanism that keeps a copy of every sum it privatizes."""

    def __init__(self, clip_norm, noise_multiplier):
        super().__init__(clip_norm, noise_multiplier)
        object.__setattr__(self, "sums", [])

    def privatize(self, clipped_sum, rng):
        self.sums.append(np.array(clipped_sum, copy=True))
        return super().privatize(clipped_sum, rng)


@pytest.mark.parametrize("row, target", HUGE, ids=lambda v: str(v))
@pytest.mark.parametrize("q", [1.0, 0.5])
def test_a_huge_private_record_has_a_finite_term_within_the_clip(row, target, q):
    # The private block is the one record: every privatized sum is its term.
    # Noise moves the iterate so that x~ w overflows too; public rows (clean)
    # keep the model moving.
    X, y, mask, _ = _problem(n=301, n_pub=300)
    X[300], y[300] = row, target
    mech = _Recording(2.0, 30.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = semidp_gradient_descent(
            SemiDPData(X, y, X[mask], y[mask], 1.0, private_rows=~mask),
            np.zeros((5, 1)),
            mechanisms=[mech],
            alpha=np.array([0.5]),
            learning_rate=np.array([1.0]),
            n_steps=np.array([10]),
            clip_norm=2.0,
            public_clipping=False,
            sampling_probability=q,
            preconditioner=None,
            rngs=[np.random.default_rng(0)],
            tail_fraction=0.5,
        )
    assert len(mech.sums) == 10
    for term in mech.sums:
        assert np.all(np.isfinite(term))
        assert np.linalg.norm(term) <= 2.0 * (1 + 1e-12)
    assert np.all(np.isfinite(result.params))
