# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Double-noise private Newton steps: sensitivities, plan, accounting, releases."""

import math

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair._solvers._newton import (
    CURVATURE_BOUND,
    MAX_FEATURES,
    MAX_STEPS,
    NewtonParams,
    _statistics,
    clipped_rows,
    direction_sensitivity,
    newton_event,
    noisy_newton,
    plan,
    scaled_direction_sensitivity,
)
from sklearn_dpfair._solvers._private_fit import dp_newton_setup
from sklearn_dpfair._solvers._private_fit import fit_dp_newton as _fit_planned


def fit_dp_newton(X, y, loss, params, budget, *, rng, sample_weight=None):
    """The fit of the set-up planned for X's shape (as the estimator runs it)."""
    setup = dp_newton_setup(
        *X.shape, params, budget, weighted=sample_weight is not None
    )
    return _fit_planned(X, y, loss, setup, rng=rng, sample_weight=sample_weight)
from sklearn_dpfair.privacy import PrivacyBudget
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._releases import logged_releases
from sklearn_dpfair.privacy._weights import capped_weights

R = 2.0
# Floating-point slack on the bounds: sums of n terms in float64.
SLACK = 1 + 1e-9


def _data(n=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 1.5
    y = (rng.random(n) < 0.5).astype(float)
    return X, y


# Records a neighbour may add, whatever they hold: overflowing, huge but
# finite, zero, on the ball's edge; with weights that the fit caps at 1.
ADVERSARIAL = [
    (np.full(5, 1e300), 1.0, None),
    (np.full(5, -1e154), 0.0, None),
    (np.zeros(5), 1.0, None),
    (np.array([R, 0, 0, 0, 0]), 0.0, None),
    (np.array([1e6, -3, 2, 0, 1]), 1.0, 1e6),
    (np.array([-0.1, 0.2, 0.3, -5, 1]), 0.0, 0.0),
]


def _sums(X, y, w, weights, curvature, fit_intercept=True):
    """Sums (not means) of the gradient and curvature terms, normalized rows."""
    params = NewtonParams(R, 1, 0.0, fit_intercept=fit_intercept)
    g, H = _statistics(
        clipped_rows(X, R),
        y,
        w,
        params.row_bound,
        params.intercept_scaling,
        capped_weights(weights),
        curvature=curvature,
    )
    n = X.shape[0]
    return g * n, H * n


@pytest.mark.parametrize("curvature", [True, "bound"])
@pytest.mark.parametrize("record", range(len(ADVERSARIAL)))
@pytest.mark.parametrize("sparse", [False, True])
def test_each_release_moves_by_at_most_its_sensitivity(curvature, record, sparse):
    # Add/remove one record at a public divisor n: the gradient sum moves by
    # <= 1 (normalized rows, |r| <= 1), the trace by <= beta, and the
    # regularized direction, for any released g~, by <= Delta_d.
    X, y = _data()
    x_new, y_new, w_new = ADVERSARIAL[record]
    X2, y2 = np.vstack([X, x_new]), np.append(y, y_new)
    weights = None if w_new is None else np.append(np.ones(len(y)), w_new)
    if sparse:
        X, X2 = sp.csr_matrix(X), sp.csr_matrix(X2)
    rng = np.random.default_rng(record)
    n = 200
    for _ in range(3):
        w = rng.normal(size=6) * 3
        g1, H1 = _sums(X, y, w, None if weights is None else weights[:-1], curvature)
        g2, H2 = _sums(X2, y2, w, weights, curvature)
        assert np.all(np.isfinite(g2)) and np.all(np.isfinite(H2))
        assert np.linalg.norm(g2 - g1) <= SLACK
        assert abs(np.trace(H2) - np.trace(H1)) <= CURVATURE_BOUND * SLACK
        # The change of H is PSD and rank one, of norm <= beta.
        assert np.linalg.eigvalsh(H2 - H1)[0] >= -1e-9
        assert np.linalg.norm(H2 - H1, 2) <= CURVATURE_BOUND * SLACK
        g_released = rng.normal(size=6)
        for shift in (1.0 / n, 1e-2, 0.3):
            d1 = np.linalg.solve(H1 / n + shift * np.eye(6), g_released)
            d2 = np.linalg.solve(H2 / n + shift * np.eye(6), g_released)
            bound = direction_sensitivity(np.linalg.norm(g_released), shift, n)
            assert np.linalg.norm(d2 - d1) <= bound * SLACK


@pytest.mark.parametrize("curvature", [True, "bound"])
def test_float32_rows_keep_the_curvature_sensitivity(curvature):
    # The trace release (sensitivity beta) and the direction bound assume a
    # neighbour's curvature sum differs by a PSD rank-one term of trace
    # <= beta. A float32 X must not make the sum round in float32: over
    # 60000 rows its relative rounding (~6e-8 of a trace of 15000 * beta)
    # exceeds beta's own 1e-4. Accumulated in float64 the slack is tiny.
    rng = np.random.default_rng(0)
    n, d = 60000, 5
    X = rng.normal(size=(n, d))
    X *= R / np.linalg.norm(X, axis=1, keepdims=True)
    X = X.astype(np.float32)
    y = (rng.random(n) < 0.5).astype(float)
    record = (np.full((1, d), R / np.sqrt(d))).astype(np.float32)
    X2, y2 = np.vstack([X, record]), np.append(y, 1.0)
    worst = 0.0
    for _ in range(3):
        w = rng.normal(size=d + 1) * 0.1
        _, H1 = _sums(X, y, w, None, curvature)
        _, H2 = _sums(X2, y2, w, None, curvature)
        change = H2 - H1
        worst = max(worst, np.trace(change) / CURVATURE_BOUND)
        assert np.linalg.eigvalsh(change)[0] >= -1e-9
        assert np.linalg.norm(change, 2) <= CURVATURE_BOUND * SLACK
    assert worst <= SLACK


def test_the_direction_bound_is_attained_up_to_a_constant():
    # Not vacuous: a rank-one change along g~ moves the direction by a
    # sizeable fraction of Delta_d.
    n, shift = 100, 1e-2
    g = np.array([1.0, 0.0])
    H1 = np.zeros((2, 2))
    H2 = CURVATURE_BOUND / n * np.outer(g, g)
    moved = np.linalg.norm(
        np.linalg.solve(H2 + shift * np.eye(2), g)
        - np.linalg.solve(H1 + shift * np.eye(2), g)
    )
    assert moved == pytest.approx(direction_sensitivity(1.0, shift, n))


@pytest.mark.parametrize("alpha", [0.0, 1e-3, 1.0, 1e4])
@pytest.mark.parametrize("removed", [False, True])
def test_the_scaled_direction_moves_by_at_most_its_sensitivity(alpha, removed):
    # With a penalty A the direction d = (H + A + lambda I)^(-1) (g~ + A w)
    # is released as Q d, Q = (A + lambda I)^(1/2): a neighbour's H differs
    # by a PSD rank-one v v^T, ||v||^2 <= beta / n, added or removed, and
    # Q d moves by at most the scaled sensitivity, whatever w and v.
    rng = np.random.default_rng(int(alpha * 10) + removed)
    n, dim = 50, 5
    penalty = np.full(dim, alpha)
    penalty[-1] = 0.0  # the intercept is not penalized
    worst = 0.0
    for _ in range(200):
        A = rng.normal(size=(dim, dim)) / n
        H = A @ A.T
        v = rng.normal(size=dim)
        v *= math.sqrt(CURVATURE_BOUND / n) / np.linalg.norm(v)
        H1, H2 = (H + np.outer(v, v), H) if removed else (H, H + np.outer(v, v))
        w = rng.normal(size=dim) * 10.0 ** rng.integers(-3, 4)
        g = rng.normal(size=dim) / n + penalty * w
        for shift in (1.0 / n, 1e-2, 0.3):
            q = np.sqrt(penalty + shift)
            d1 = q * np.linalg.solve(H1 + np.diag(penalty + shift), g)
            d2 = q * np.linalg.solve(H2 + np.diag(penalty + shift), g)
            bound = scaled_direction_sensitivity(np.linalg.norm(g / q), shift, n)
            worst = max(worst, np.linalg.norm(d2 - d1) / bound)
    assert worst <= 1 + 1e-9


def test_a_large_penalty_keeps_the_private_newton_steps_bounded():
    # The unscaled release's sensitivity grew as ||A w||: its noise, fed
    # back through A w, made the iterates diverge (coefficients of 1e6 at
    # alpha = 10, NaN at 1e200). Released in Q coordinates they shrink
    # towards 0 as the penalty asks.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = (X[:, 0] > 0).astype(float)
    for alpha in (10.0, 1e200):
        params = NewtonParams(feature_norm_bound=5.0, alpha=alpha, n_steps=10)
        for seed in range(3):
            fit = fit_dp_newton(
                X, y, BinaryLogisticLoss(), params, PrivacyBudget(1.0, 1e-5),
                rng=np.random.default_rng(seed),
            )
            assert np.all(np.isfinite(fit.coef)) and np.all(np.isfinite(fit.intercept))
            assert np.abs(fit.coef).max() < 1.0


def test_a_step_count_that_would_run_for_ever_is_refused_by_the_plan():
    # newton_steps=10**30 planned (one Gaussian, any T) and then looped.
    budget = PrivacyBudget(1.0, 1e-5)
    plan(500, 3, NewtonParams(R, MAX_STEPS, 0.0), budget)
    with pytest.raises(ValueError, match=r"^newton_steps=10001 exceeds 10000"):
        plan(500, 3, NewtonParams(R, MAX_STEPS + 1, 0.0), budget)


def test_clipped_rows_read_as_projected_rows():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [1e300, -1e300], [0.0, 0.0]])
    rows = clipped_rows(X, 1.0)
    assert rows.factors.tolist()[:2] == pytest.approx([0.2, 1.0])
    assert rows.factors[2] == 0.0 and rows.overflowed.tolist() == [2]
    assert np.linalg.norm(rows.extra, axis=1) == pytest.approx([1.0])
    X32 = X[:2].astype(np.float32)
    f32 = clipped_rows(X32, 1.0).factors
    # float32 rows scaled inside the ball by their rounding margin.
    assert np.all(np.linalg.norm(X32 * f32[:, None], axis=1) <= 1.0)


def test_plan_is_calibrated_and_matches_its_event():
    params = NewtonParams(R, 4, 0.0)
    budget = PrivacyBudget(1.0, 1e-5)
    p = plan(10_000, 5, params, budget)
    assert p.gradient.clip_norm == pytest.approx(1e-4)
    assert p.trace.clip_norm == pytest.approx(CURVATURE_BOUND * 1e-4)
    # 3 T releases composing to one Gaussian of multiplier sigma.
    z = [p.gradient.noise_multiplier, p.trace.noise_multiplier,
         p.direction_noise_multiplier]
    assert sum(4 / zk**2 for zk in z) == pytest.approx(p.noise_multiplier**-2)
    assert epsilon_of(p.dp_event, 1e-5, "rdp") <= 1.0
    # Tight: 1% less noise overspends.
    looser = newton_event(0.99 * p.noise_multiplier, 4, params.shares())
    assert epsilon_of(looser, 1e-5, "rdp") > 1.0
    # More steps, same budget: more noise per release.
    assert plan(10_000, 5, NewtonParams(R, 8, 0.0), budget).gradient.noise_multiplier > (
        p.gradient.noise_multiplier
    )


def test_plan_refusals_are_decided_from_public_values():
    with pytest.raises(ValueError, match="noise_multiplier"):
        plan(100, 3, NewtonParams(R, 2, 0.0), PrivacyBudget(1.0, 1e-5, "rdp", 2.0))
    with pytest.raises(ValueError, match="n_features"):
        plan(100, MAX_FEATURES + 1, NewtonParams(R, 2, 0.0), PrivacyBudget(1.0, 1e-5))
    X, y = _data()
    with pytest.raises(ValueError, match="binary"):
        fit_dp_newton(
            X, y, SoftmaxLoss(3), NewtonParams(R, 2, 0.0), PrivacyBudget(1.0, 1e-5),
            rng=np.random.default_rng(0),
        )


@pytest.mark.parametrize("epsilon", [1.0, math.inf])
@pytest.mark.parametrize("bound", [1e155, 1e200])
def test_a_feature_norm_bound_whose_square_overflows_is_refused(epsilon, bound):
    # The rows are normalized by R^2 n: past float64 the fit raised a bare
    # OverflowError mid-fit. Refused by the plan, from public values, at
    # every budget: by privacy_plan() and fit() alike, before any state.
    from sklearn_dpfair.linear_model import DPLogisticRegression

    with pytest.raises(ValueError, match="feature_norm_bound"):
        plan(500, 3, NewtonParams(bound, 2, 0.0), PrivacyBudget(epsilon, 1e-5))
    X, y = _data(n=500)
    est = DPLogisticRegression(
        solver="dp-newton", feature_norm_bound=bound, epsilon=epsilon,
        classes=[0, 1], random_state=0,
    )
    with pytest.raises(ValueError, match="feature_norm_bound"):
        est.privacy_plan(*X.shape)
    with pytest.raises(ValueError, match="feature_norm_bound"):
        est.fit(X, y)
    assert not hasattr(est, "n_features_in_")


@pytest.mark.parametrize("curvature", ["hessian", "upper-bound"])
def test_fit_releases_exactly_its_planned_event(curvature):
    X, y = _data(n=500)
    params = NewtonParams(R, 3, 1e-3, curvature=curvature)
    budget = PrivacyBudget(2.0, 1e-5)
    with logged_releases() as log:
        fit = fit_dp_newton(
            X, y, BinaryLogisticLoss(), params, budget, rng=np.random.default_rng(0)
        )
    p = plan(500, 5, params, budget)
    assert fit.record.dp_event == p.dp_event
    assert isinstance(p.dp_event, dp_accounting.ComposedDpEvent)
    assert sum(log.counts.values()) == 9
    assert dict(log.counts) == {
        ("gaussian", p.gradient.noise_multiplier): 3,
        ("gaussian", p.trace.noise_multiplier): 3,
        ("gaussian", p.direction_noise_multiplier): 3,
    }
    assert fit.record.epsilon <= 2.0 and fit.record.adjacency == "add_remove"
    assert fit.coef.shape == (1, 5) and fit.intercept.shape == (1,)


def test_sparse_input_gives_the_dense_fit():
    X, y = _data(n=300)
    X[np.abs(X) < 1.0] = 0.0
    args = (BinaryLogisticLoss(), NewtonParams(R, 3, 0.0), PrivacyBudget(1.0, 1e-5))
    dense = fit_dp_newton(X, y, *args, rng=np.random.default_rng(0))
    sparse = fit_dp_newton(sp.csr_matrix(X), y, *args, rng=np.random.default_rng(0))
    np.testing.assert_allclose(sparse.coef, dense.coef, rtol=1e-8, atol=1e-10)


def test_weights_are_capped_at_one():
    # A weight above 1 counts as 1 (the sensitivities are bounded, not
    # clipped): weights of 1 and of 50 give the same fit.
    X, y = _data(n=300)
    args = (BinaryLogisticLoss(), NewtonParams(R, 2, 0.0), PrivacyBudget(1.0, 1e-5))
    ones = fit_dp_newton(
        X, y, *args, rng=np.random.default_rng(0), sample_weight=np.full(300, 1.0)
    )
    big = fit_dp_newton(
        X, y, *args, rng=np.random.default_rng(0), sample_weight=np.full(300, 50.0)
    )
    np.testing.assert_allclose(big.coef, ones.coef, rtol=1e-10)
    assert any("sample_weight" in c for c in big.record.caveats)


def test_noiseless_steps_converge_to_the_minimizer():
    # The update itself (no noise, Hessian, no shift beyond 1/n) is Newton's
    # method: it reaches the unregularized minimizer of the clipped data.
    from scipy.optimize import minimize

    X, y = _data(n=400, d=3)
    X = X / np.maximum(1.0, np.linalg.norm(X, axis=1) / R)[:, None]  # in the ball
    params = NewtonParams(R, 12, 0.0, curvature="hessian")
    p = plan(400, 3, params, PrivacyBudget(math.inf, 1e-5))
    coef, intercept = noisy_newton(X, y, p, params, rng=np.random.default_rng(0))

    def objective(v):
        z = X @ v[:3] + v[3]
        return np.mean(np.logaddexp(0, z) - y * z)

    ref = minimize(objective, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(np.append(coef, intercept), ref, atol=1e-3)


@pytest.mark.parametrize("sparse", [False, True])
def test_rows_whose_squares_underflow_are_read_clipped(sparse):
    # A nonzero row whose squared entries underflow (below ~1.5e-154) got
    # norm 0 and factor 1: read whole against a bound below its norm.
    bound = 2.3e-162
    X = np.array(
        [
            np.full(100, 1.5e-162),
            [1e-165] + [0.0] * 99,
            [1e-300] * 100,
            [1e300] * 100,
            [0.0] * 100,
        ]
    )
    rows = clipped_rows(sp.csr_matrix(X) if sparse else X, bound)
    if sparse:
        read = rows.X.toarray()
    else:
        read = X * rows.factors[:, None]
        read[rows.overflowed] = rows.extra
    scale = np.max(np.abs(read), axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    norms = scale[:, 0] * np.linalg.norm(read / scale, axis=1)
    assert np.max(norms) <= bound * (1 + 4e-16)
    assert norms[0] == pytest.approx(bound, rel=1e-12)  # clipped, not erased
    np.testing.assert_array_equal(read[1:3], X[1:3])  # inside: kept


@pytest.mark.parametrize("epsilon", [1.0, math.inf])
@pytest.mark.parametrize(
    "bound, alpha", [(1e-170, 0.0), (1e-155, 1e-3), (1e-150, 1e10)]
)
def test_a_feature_norm_bound_whose_square_underflows_is_refused(epsilon, bound, alpha):
    # Without an intercept R~ = R: R^2 underflowing to 0 made the penalty
    # alpha / R^2 raise ZeroDivisionError mid-fit (after the data were
    # read), and alpha / R^2 may overflow. Refused by the plan, from public
    # values, at every budget: by privacy_plan() and fit() alike.
    from sklearn_dpfair.linear_model import DPLogisticRegression

    params = NewtonParams(bound, 2, alpha, fit_intercept=False)
    with pytest.raises(ValueError, match="feature_norm_bound"):
        plan(500, 3, params, PrivacyBudget(epsilon, 1e-5))
    X, y = _data(n=500)
    est = DPLogisticRegression(
        solver="dp-newton", feature_norm_bound=bound, alpha=alpha,
        fit_intercept=False, epsilon=epsilon, classes=[0, 1], random_state=0,
    )
    with pytest.raises(ValueError, match="feature_norm_bound"):
        est.privacy_plan(*X.shape)
    with pytest.raises(ValueError, match="feature_norm_bound"):
        est.fit(X * bound, y)
    assert not hasattr(est, "n_features_in_")
    # With an intercept the rows are normalized by R^2 + 1: planned.
    plan(500, 3, NewtonParams(bound, 2, alpha), PrivacyBudget(epsilon, 1e-5))
