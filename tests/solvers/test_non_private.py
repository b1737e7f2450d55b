"""The non-private limit's full-batch solvers (sklearn_dpfair._solvers._non_private)."""

import itertools
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression, QuantileRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair._loss import (
    AbsoluteLoss,
    BinaryLogisticLoss,
    HuberLoss,
    PinballLoss,
    SoftmaxLoss,
    SquaredLoss,
)
from sklearn_dpfair._solvers._non_private import (
    column_moments,
    minimize_l1_ball,
    minimize_linear,
    minimize_pinball,
    minimize_regression,
    non_private_record,
)
from sklearn_dpfair.privacy import PrivacyBudget

# Columns as a user has them: a price, a count in the ten thousands, a
# timestamp-like column (offset 1e5, spread 1e-3), a unit-scale one.
SCALES = np.array([100.0, 1e4, 1e-3, 1.0])
SHIFTS = np.array([500.0, 0.0, 1e5, 0.0])
BETA = np.array([1.0, -0.8, 0.6, 0.4])


def _raw(n=2000, seed=0, task="classification", k=2):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 4))
    if task == "classification":
        if k == 2:
            y = (rng.random(n) < 1 / (1 + np.exp(-(Z @ BETA)))).astype(float)
        else:
            logits = Z @ rng.standard_normal((4, k))
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            y = np.array([rng.choice(k, p=row) for row in p]).astype(float)
    else:
        y = 150 + 40 * (Z @ BETA) + 40 * rng.standard_t(3, size=n)
    return Z * SCALES + SHIFTS, y


def _log_loss(coef, intercept, X, y):
    z = X @ coef[:, 0] + intercept[0]
    return float(np.mean(np.logaddexp(0, z) - y * z))


def test_column_moments_keep_a_tiny_spread_under_a_huge_offset():
    X, _ = _raw()
    mean, scale = column_moments(X)
    np.testing.assert_allclose(mean, X.mean(0), rtol=1e-12)
    # The one-pass E[x^2] - E[x]^2 of column 2 is ~1e10 - 1e10: noise.
    np.testing.assert_allclose(scale, X.std(0), rtol=1e-6)
    assert 0.9e-3 < scale[2] < 1.1e-3


@pytest.mark.parametrize("value", [0.1, 0.3, 0.7, 1e5 + 0.1])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_constant_column_gets_the_scale_one(value, sparse):
    # Its computed spread is rounding (1.4e-17 for 0.1): dividing by it
    # would turn the column into noise times 1e16.
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=3000), np.full(3000, value)])
    X = sp.csr_matrix(X) if sparse else X
    w = rng.uniform(0.5, 2.0, 3000)
    for weights in (None, w):
        _, scale = column_moments(X, weights)
        assert scale[1] == 1.0 and 0.9 < scale[0] < 1.1


def test_column_moments_of_sparse_rows_equal_the_dense_ones():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5)) * (rng.random((300, 5)) < 0.3) + 0.0
    X[:, 4] = 0.0  # an empty column gets the scale 1
    w = rng.uniform(0.5, 2.0, 300)
    dense = column_moments(X, w)
    sparse = column_moments(sp.csr_matrix(X), w)
    for a, b in zip(dense, sparse):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)
    assert dense[1][4] == 1.0


def test_logistic_minimizer_on_raw_columns_is_lbfgs_on_standardized_ones():
    X, y = _raw()
    fit = minimize_linear(X, y, BinaryLogisticLoss())
    assert fit.converged
    ref = make_pipeline(StandardScaler(), LogisticRegression(C=np.inf, tol=1e-10))
    ref.fit(X, y)
    ours = _log_loss(fit.coef, fit.intercept, X, y)
    rows = np.arange(len(y)), y.astype(int)
    theirs = float(np.mean(-np.log(ref.predict_proba(X)[rows])))
    assert ours <= theirs * (1 + 1e-6)
    # The same model in the user's units.
    np.testing.assert_allclose(
        X @ fit.coef[:, 0] + fit.intercept[0], ref.decision_function(X), atol=1e-4
    )


def test_softmax_minimizer_matches_multinomial_lbfgs():
    X, y = _raw(k=3)
    fit = minimize_linear(X, y, SoftmaxLoss(3), n_outputs=3)
    ref = make_pipeline(StandardScaler(), LogisticRegression(C=np.inf, tol=1e-10))
    ref.fit(X, y)
    raw = X @ fit.coef + fit.intercept
    rows = np.arange(len(y)), y.astype(int)
    ours = np.mean(np.logaddexp.reduce(raw, axis=1) - raw[rows])
    theirs = np.mean(-np.log(ref.predict_proba(X)[rows]))
    assert ours <= theirs * (1 + 1e-6)


def test_least_squares_on_raw_columns_is_ols():
    X, y = _raw(task="regression")
    fit = minimize_regression(X, y, SquaredLoss())
    ref = make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)
    pred = X @ fit.coef[:, 0] + fit.intercept[0]
    assert np.mean((y - pred) ** 2) <= np.mean((y - ref.predict(X)) ** 2) * (1 + 1e-8)


def _unit_problem(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, X @ np.array([1.0, 2.0, 3.0]) + rng.standard_normal(n)


@pytest.mark.parametrize("offset", [1e6, 1e9, 1e12])
@pytest.mark.parametrize("loss", [SquaredLoss(), HuberLoss(1.0)], ids=["sq", "huber"])
def test_a_target_offset_only_shifts_the_intercept(loss, offset):
    # A target far from 0 (a price, a timestamp): divided by the objective
    # at an intercept of 0, the solve stopped once the intercept had found
    # the target, with the coefficients far from the minimizer (squared
    # loss), or stalled at zero coefficients (Huber).
    X, y = _unit_problem()
    ref = minimize_linear(X, y, loss)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = minimize_linear(X, y + offset, loss)
    assert fit.converged
    # y + 1e12 is rounded to 1e-4: the minimizer moves by about 1e-6.
    np.testing.assert_allclose(fit.coef, ref.coef, atol=1e-4)
    assert fit.intercept[0] - offset == pytest.approx(ref.intercept[0], abs=1e-3)


def test_a_target_offset_is_least_squares_from_a_zero_warm_start():
    # A zero warm start (the semi-private fit's without public rows) is
    # 1e18 times a row's loss away from the least-squares objective.
    X, y = _unit_problem()
    fit = minimize_linear(
        X, y + 1e9, SquaredLoss(), coef_init=np.zeros(3), intercept_init=[0.0]
    )
    ref = LinearRegression().fit(X, y + 1e9)
    np.testing.assert_allclose(fit.coef[:, 0], ref.coef_, rtol=1e-6)


@pytest.mark.parametrize("unit", [1e-9, 1e12])
def test_the_target_units_only_scale_the_fit(unit):
    # A gradient tolerance in the target's units stopped a target in units
    # of 1e12 at its start.
    X, y = _unit_problem()
    ref = minimize_linear(X, y, SquaredLoss())
    fit = minimize_linear(X, y * unit, SquaredLoss())
    assert fit.converged
    np.testing.assert_allclose(fit.coef / unit, ref.coef, rtol=1e-8)


def test_a_constant_target_is_its_intercept_without_a_warning():
    X, _ = _unit_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = minimize_linear(X, np.full(X.shape[0], 0.1), SquaredLoss())
    np.testing.assert_allclose(fit.coef, 0.0, atol=1e-12)
    assert fit.intercept[0] == pytest.approx(0.1, rel=1e-12)


@pytest.mark.parametrize("loss", [SquaredLoss(), HuberLoss(1.0), PinballLoss(0.8)])
def test_a_constant_target_far_from_zero_is_predicted_exactly(loss):
    # A target exactly 1e9 left nothing to normalize the solve by from a
    # zero warm start: coefficients of -1.8 and predictions 15 off, no
    # warning. The null model predicts it exactly.
    X, _ = _unit_problem()
    y = np.full(X.shape[0], 1e9)
    fit = minimize_linear(X, y, loss, coef_init=np.zeros(3), intercept_init=[0.0])
    assert fit.converged
    np.testing.assert_array_equal(fit.coef, 0.0)
    assert fit.intercept[0] == 1e9


@pytest.mark.parametrize("unit", [1e-6, 1e6])
def test_without_an_intercept_the_tolerance_is_in_the_targets_units(unit):
    # Without an intercept the solve kept the objective's squared units: on
    # 150 uncentred columns a target in units of 1e6 stopped with the
    # coefficients 1% off, no warning.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 150)) + 1.0
    y = X @ rng.normal(size=150) + rng.normal(size=400)
    ref = np.linalg.lstsq(X, y, rcond=None)[0]
    fit = minimize_linear(X, y * unit, SquaredLoss(), fit_intercept=False)
    assert fit.converged
    np.testing.assert_allclose(fit.coef[:, 0] / unit, ref, rtol=1e-5, atol=1e-6)


def test_a_penalized_intercept_keeps_the_unscaled_solve():
    # Output perturbation's objective penalizes the intercept: it is not
    # shift-invariant, and a solve started at the target's median, in units
    # of its spread, stopped 'converged' at an objective 1,650 times the
    # minimum's.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) * [1, 1e3, 1e-3] + [0, 500, 5]
    y = 1e9 + 1e-3 * (X @ [1.0, 2.0, 3.0] + 0.5 * rng.normal(size=60))
    loss, alpha = HuberLoss(1e-3), 1e-2
    fit = minimize_linear(X, y, loss, alpha=alpha, penalize_intercept=True)

    def objective(coef, b):
        raw = (X @ coef + b)[:, None]
        return np.mean(loss.loss(y, raw)) + alpha / 2 * (coef @ coef + b * b)

    # The intercept's penalty dominates: at most the objective of the
    # model (coef 0, intercept 0.1), about 1e6.
    assert objective(fit.coef[:, 0], fit.intercept[0]) <= objective(np.zeros(3), 0.1)


@pytest.mark.parametrize("loss, q", [(AbsoluteLoss(), 0.5), (PinballLoss(0.8), 0.8)])
@pytest.mark.parametrize("sparse", [False, True])
def test_pinball_linear_program_is_quantile_regression(loss, q, sparse):
    X, y = _raw(n=600, task="regression")
    ref = make_pipeline(
        StandardScaler(), QuantileRegressor(quantile=q, alpha=0.0, solver="highs")
    ).fit(X, y)
    fit = minimize_regression(sp.csr_matrix(X) if sparse else X, y, loss)

    def pinball(pred):
        r = y - pred
        return np.mean(np.maximum(q * r, (q - 1) * r))

    ours = pinball(X @ fit.coef[:, 0] + fit.intercept[0])
    assert ours <= pinball(ref.predict(X)) * (1 + 1e-6)


@pytest.mark.parametrize("l1", [0.02, 0.1])
def test_absolute_loss_l1_penalty_is_not_doubled(l1):
    # mean|r| + l1 ||coef||_1 is twice QuantileRegressor's objective at
    # alpha = l1 / 2 (its pinball_0.5 is half the absolute loss).
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 2)) * [1.0, 100.0] + [0.0, 50.0]
    y = X @ [0.3, 0.002] + rng.standard_normal(1000)
    ref = QuantileRegressor(quantile=0.5, alpha=l1 / 2, solver="highs").fit(X, y)
    fit = minimize_regression(X, y, AbsoluteLoss(), l1=l1)
    np.testing.assert_allclose(fit.coef[:, 0], ref.coef_, rtol=1e-6, atol=1e-9)
    assert fit.intercept[0] == pytest.approx(ref.intercept_, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("offset, unit", [(500.0, 1e-6), (1e8, 1.0), (0.0, 1.0)])
@pytest.mark.parametrize(
    "loss, alpha",
    [(AbsoluteLoss(), 0.0), (PinballLoss(0.2), 0.0), (AbsoluteLoss(), 1e-3)],
)
def test_sparse_rows_with_an_offset_column_give_the_dense_minimizer(
    offset, unit, loss, alpha
):
    # A column stored on every row, its offset far above its spread: scaled
    # but not centred, HiGHS (and the ridge's active-set refinement) saw it
    # collinear with the intercept and returned coefficient 0, 36% above the
    # minimum. Its centred stored entries are the dense fit's columns.
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((200, 3))
    Z[rng.random((200, 3)) < 0.5 * np.array([0, 0, 1])] = 0.0  # a sparse column
    y = 10 + Z @ [1.0, 2.0, 1.5] + rng.standard_normal(200)
    X = np.c_[offset + unit * Z[:, 0], Z[:, 1:]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dense = minimize_regression(X, y, loss, alpha=alpha)
        csr = minimize_regression(sp.csr_matrix(X), y, loss, alpha=alpha)

    def objective(fit):
        raw = (X @ fit.coef[:, 0] + fit.intercept[0])[:, None]
        coef = fit.coef[:, 0]
        return np.mean(loss.loss(y, raw)) + 0.5 * alpha * coef @ coef

    # Relative 1e-7: the raw predictions near 1e8 round at 1e-8 a row.
    assert objective(csr) <= objective(dense) * (1 + 1e-7)
    scaled = [unit, 1.0, 1.0]
    np.testing.assert_allclose(
        csr.coef[:, 0] * scaled, dense.coef[:, 0] * scaled, atol=1e-6
    )


def test_standardized_sparse_rows_add_no_entry():
    # Only the columns stored on every row are centred: the standardized
    # copy holds the matrix's entries, no more (a fit's memory stays bounded
    # by the sparse storage).
    from sklearn_dpfair._solvers._non_private import _standardized_rows

    rng = np.random.default_rng(0)
    X = sp.random(300, 5, density=0.1, format="csr", random_state=0)
    column = sp.csr_matrix(500 + rng.standard_normal((300, 1)))
    X = sp.hstack([X, column], format="csr")
    mean, scale, Xs = _standardized_rows(X, None, True)
    assert Xs.nnz == X.nnz
    assert mean[:5].tolist() == [0.0] * 5 and mean[5] == pytest.approx(500, abs=0.2)
    dense = (X.toarray() - mean) / scale
    np.testing.assert_allclose(Xs.toarray(), dense, rtol=1e-12, atol=1e-12)


def test_l1_penalty_is_handled_by_split_bounds():
    # l1 large enough to zero the weak columns: the l1-penalized minimizer
    # (checked by its optimality conditions in standardized units).
    X, y = _raw(task="regression")
    mean, scale = column_moments(X)
    Xs = (X - mean) / scale
    fit = minimize_linear(Xs, y, SquaredLoss(), l1=20.0)
    beta = fit.coef[:, 0]
    resid = y - Xs @ beta - fit.intercept[0]
    grad = -(Xs.T @ resid) / len(y)
    active = beta != 0
    np.testing.assert_allclose(grad[active], -20.0 * np.sign(beta[active]), atol=1e-3)
    assert np.all(np.abs(grad[~active]) <= 20.0 + 1e-3)


def test_sparse_and_float32_rows_give_the_dense_float64_minimizer():
    X, y = _raw()
    X = X[:, [0, 1, 3]]  # float32 cannot hold the 1e5 + 1e-3 column
    dense = minimize_linear(X, y, BinaryLogisticLoss())
    X32 = X.astype(np.float32)
    for A in (sp.csr_matrix(X), X32, sp.csr_matrix(X32)):
        other = minimize_linear(A, y, BinaryLogisticLoss())
        loss_ratio = _log_loss(other.coef, other.intercept, X, y) / _log_loss(
            dense.coef, dense.intercept, X, y
        )
        assert loss_ratio <= 1 + 1e-6


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_exact_warm_start_converges_without_a_warning(seed, fit_intercept):
    # Noise-free targets and a warm start at the minimizer (a public least
    # squares fit): F(start) ~ 1e-30 once normalized the objective, whose
    # gradient's rounding then failed the stationarity test ("ABNORMAL").
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((20, 2))
    y = X @ [1.0, 2.0] + (3.0 if fit_intercept else 0.0)
    start = np.linalg.lstsq(X[:10], y[:10] - (3.0 if fit_intercept else 0.0))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = minimize_linear(
            X, y, SquaredLoss(), fit_intercept=fit_intercept,
            coef_init=start, intercept_init=[3.0] if fit_intercept else None,
        )
    assert fit.converged
    np.testing.assert_allclose(fit.coef[:, 0], [1.0, 2.0], rtol=1e-9)
    assert fit.intercept[0] == pytest.approx(3.0 if fit_intercept else 0.0, abs=1e-9)


def test_separable_data_warn_as_scikit_learn_does():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        fit = minimize_linear(X, y, BinaryLogisticLoss(), max_iter=20)
    assert not fit.converged and np.all(np.isfinite(fit.coef))


def test_a_converged_solve_does_not_warn():
    X, y = _raw()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert minimize_linear(X, y, BinaryLogisticLoss()).converged


@pytest.mark.parametrize("offset", [0.0, 1e4])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_penalty_stiffer_than_the_loss_does_not_stall_the_solve(offset, sparse):
    # Columns in units of 1e-6 and 1e6: (alpha/2) ||coef||^2 has curvature
    # alpha / sd^2 = 1e9 on the first's standardized coefficient, and
    # L-BFGS-B stopped (no decrease of F) far from the minimum without a
    # warning. Checked by the optimality conditions in the user's units:
    # mean(P - Y) = 0 and X^T (P - Y) / n + alpha coef = 0.
    rng = np.random.default_rng(0)
    n, alpha = 300, 1e-3
    Z = rng.normal(size=(n, 3))
    y = np.digitize(Z @ [1.0, -1.0, 0.5] + rng.normal(size=n) * 0.5, [-0.5, 0.5])
    X = Z * [1.0, 1e-6, 1e6]
    X[:, 0] += offset
    A = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = minimize_linear(
            A, y.astype(float), SoftmaxLoss(3), n_outputs=3, alpha=alpha
        )
    assert fit.converged
    raw = X @ fit.coef + fit.intercept
    P = np.exp(raw - np.logaddexp.reduce(raw, axis=1, keepdims=True))
    R = P - np.eye(3)[y]
    assert np.max(np.abs(R.mean(axis=0))) <= 1e-9
    grad = X.T @ R / n + alpha * fit.coef
    # Unit column, in standardized units; the stiff one, relative to its
    # penalty's gradient (the 1e6 column's is rounding noise: not checked).
    assert np.max(np.abs(grad[0])) <= 1e-7
    assert np.max(np.abs(grad[1]) / np.abs(alpha * fit.coef[1])) <= 1e-8


def test_a_stop_without_progress_away_from_the_minimum_warns(monkeypatch):
    # scipy's status 0 at ftol = 0 also means "F did not decrease in an
    # iteration": far from a stationary point that is a stop short.
    from sklearn_dpfair._solvers import _non_private

    def no_progress(fun, x0, bounds, max_iter, tol):
        value, grad = fun(x0)
        return scipy.optimize.OptimizeResult(
            x=x0, fun=value, jac=grad, status=0, nit=1, success=True,
            message="CONVERGENCE: RELATIVE REDUCTION OF F <= FACTR*EPSMCH",
        )

    monkeypatch.setattr(_non_private, "_lbfgs", no_progress)
    X, y = _raw(n=200, k=3)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        fit = minimize_linear(X, y, SoftmaxLoss(3), n_outputs=3)
    assert not fit.converged


def test_an_overflowing_record_returns_the_start_with_a_warning():
    X, y = _raw(n=200, task="regression")
    X[0] = 1e200
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = minimize_linear(X, y, SquaredLoss())
    assert np.all(np.isfinite(fit.coef)) and np.all(np.isfinite(fit.intercept))
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_weights_are_duplicated_rows():
    X, y = _raw(n=300)
    w = np.random.default_rng(1).integers(0, 4, 300)
    weighted = minimize_linear(
        X, y, BinaryLogisticLoss(), sample_weight=w * 300 / w.sum()
    )
    repeated = minimize_linear(
        np.repeat(X, w, 0), np.repeat(y, w), BinaryLogisticLoss()
    )
    np.testing.assert_allclose(
        X @ weighted.coef[:, 0] + weighted.intercept[0],
        X @ repeated.coef[:, 0] + repeated.intercept[0],
        rtol=1e-6,
        atol=1e-6,
    )


def test_minimize_pinball_drops_zero_weight_rows():
    X, y = _raw(n=300, task="regression")
    w = np.ones(300)
    w[:50] = 0.0
    a = minimize_pinball(X, y, 0.5, sample_weight=w)
    b = minimize_pinball(X[50:], y[50:], 0.5)
    np.testing.assert_allclose(
        X @ a.coef[:, 0] + a.intercept, X @ b.coef[:, 0] + b.intercept, atol=1e-6
    )


def test_the_record_says_the_full_batch_solver_ran():
    budget = PrivacyBudget(np.inf, 1e-5)
    record = budget.account(
        budget.gaussian(1.0),
        description="DP-SGD",
        adjacency="add_remove",
        sampling_probability=0.1,
        steps=100,
    )
    new = non_private_record(record, 12)
    assert new.dp_event == record.dp_event and np.isinf(new.epsilon)
    assert "full-batch solver" in new.mechanism and "DP-SGD" in new.mechanism
    assert (new.steps, new.sampling_probability) == (12, None)


@pytest.mark.parametrize("radius", [1e3, 1.0, 1e-2, 1e-4])
def test_l1_ball_solution_is_certified_by_its_duality_gap(radius):
    # The constrained minimizer over {||coef||_1 <= r}: inside the ball the
    # free minimizer (l1 norm 600 here); on it, a point whose Frank-Wolfe
    # gap <g, coef> + r ||g||_inf (g the coefficients' gradient, the
    # intercept at its optimum) bounds F(coef) - F* by convexity (Jaggi,
    # 2013): certified within 1e-5 of the loss.
    X, y = _raw()
    fit = minimize_l1_ball(X, y, BinaryLogisticLoss(), radius)
    coef = fit.coef[:, 0]
    assert fit.converged
    if radius > 600:
        free = minimize_linear(X, y, BinaryLogisticLoss())
        np.testing.assert_allclose(coef, free.coef[:, 0], rtol=1e-6)
        return
    assert (1 - 1e-3) * radius <= np.abs(coef).sum() <= radius
    mean = X.mean(axis=0)
    z = (X - mean) @ coef + fit.intercept[0] + mean @ coef
    r = (1 / (1 + np.exp(-z)) - y) / len(y)
    assert abs(r.sum()) <= 1e-6 * np.abs(r).sum()  # the intercept is free
    g = (X - mean).T @ r  # centred: the intercept's own direction removed
    gap = g @ coef + radius * np.max(np.abs(g))
    assert 0 <= gap <= 1e-5 * _log_loss(fit.coef, fit.intercept, X, y)


def test_l1_ball_loss_does_not_increase_with_the_radius():
    X, y = _raw(n=800)
    losses = [
        _log_loss(*_coef_intercept(minimize_l1_ball(X, y, BinaryLogisticLoss(), r)), X, y)
        for r in (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
    ]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(losses))


def _coef_intercept(fit):
    return fit.coef, fit.intercept


@pytest.mark.parametrize("mostly_zero", [False, True])
def test_one_extreme_record_does_not_stop_the_solve_short(mostly_zero):
    # A column of spread 1e3 with one record at 1e12: its standard deviation
    # (4e10) standardized the bulk to 1e-8 of a unit, and L-BFGS-B stopped at
    # once (coef 5e-7 where the optimum is 7e-4). Located at its median and
    # scaled robustly (its interquartile range; for a column 80% zeros,
    # whose quartiles are 0, the deviation of all but its farthest rows),
    # the bulk has unit scale.
    from sklearn_dpfair import DPLogisticRegression

    rng = np.random.default_rng(0)
    n, alpha = 600, 0.01
    Z = rng.normal(size=(n, 2))
    nonzero = rng.random(n) < 0.2 if mostly_zero else np.ones(n, dtype=bool)
    y = (Z @ [-1.0, 0.5] + 0.5 * rng.normal(size=n) > 0).astype(int)
    X = np.column_stack([Z[:, 0] * 1e-3, np.where(nonzero, Z[:, 1] * 1e3, 0.0)])
    # On the side of its label: the optimum is then well defined.
    first = np.flatnonzero(nonzero)[0]
    X[first, 1] = 1e12 if y[first] == 1 else -1e12
    reference = LogisticRegression(C=1 / (alpha * n), tol=1e-12, max_iter=10_000)
    reference.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = DPLogisticRegression(epsilon=np.inf, alpha=alpha, classes=[0, 1]).fit(
            X, y
        )
    np.testing.assert_allclose(fit.coef_, reference.coef_, rtol=1e-4)
    np.testing.assert_allclose(fit.intercept_, reference.intercept_, rtol=1e-4)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("center", [True, False])
def test_sparse_column_moments_equal_the_dense_ones(weighted, center):
    # Blocked (more stored entries than one block), and no cancellation on
    # a column of offset 1e5 and spread 1e-3 stored on every row.
    rng = np.random.default_rng(4)
    n = 40_000
    X = rng.standard_normal((n, 3)) * (rng.uniform(size=(n, 3)) < 0.4)
    X[:, 1] = rng.standard_normal(n) * 1e-3 + 1e5
    w = rng.uniform(0.1, 3.0, n) if weighted else None
    mean, scale = column_moments(sp.csr_matrix(X), w, center=center)
    ref_mean, ref_scale = column_moments(X, w, center=center)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-12, atol=0)
    np.testing.assert_allclose(scale, ref_scale, rtol=1e-6, atol=0)
    if center:
        assert scale[1] == pytest.approx(1e-3, rel=0.02)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_column_moments_of_a_spread_beyond_float64_squares(sparse, center, weighted):
    # A spread beyond 1e154 overflows the squares of a plain sum: the
    # column would look constant (scale 1). Scaled by its magnitude first,
    # it keeps its moments; only a constant column gets scale 1.
    rng = np.random.default_rng(0)
    base = rng.normal(size=(500, 3)) * (rng.random((500, 3)) < 0.7)
    base[:, 2] = 0.0
    w = rng.uniform(0.5, 2.0, 500) if weighted else None
    expected_mean, expected_scale = column_moments(base, w, center=center)
    units = np.array([1e160, 1e300, 1.0])
    X = base * units
    X = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean, scale = column_moments(X, w, center=center)
    np.testing.assert_allclose(mean, expected_mean * units, rtol=1e-12)
    np.testing.assert_allclose(scale[:2], expected_scale[:2] * units[:2], rtol=1e-12)
    assert scale[2] == 1.0


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("center", [True, False])
def test_column_moments_ignore_a_row_of_weight_zero(sparse, center):
    # A row of weight 0 is absent: at 1e300 it set its columns' magnitudes
    # and underflowed the other rows' squares to a spread of 0 (scale 1).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2)) * [1e-3, 1.0] + [5.0, 0.0]
    expected = column_moments(X, center=center)
    X0 = np.vstack([X, [[1e300, -1e300]]])
    w = np.r_[np.ones(50), 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = column_moments(sp.csr_matrix(X0) if sparse else X0, w, center=center)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_column_moments_near_the_largest_float():
    # Values of 1e308 of either sign: no difference nor square overflows.
    X = np.array([[1e308], [-1e308], [1e308], [-1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean, scale = column_moments(X)
    np.testing.assert_allclose(mean, [0.0], atol=1e290)
    np.testing.assert_allclose(scale, [1e308])


@pytest.mark.parametrize("unit", [1e-300, 1e-310])
def test_column_moments_take_a_spread_whose_square_underflows_as_constant(unit):
    # As scikit-learn's StandardScaler finds it (scale 1): read exactly by the
    # power-of-two scaling, a spread of 1e-310 gave the callers 1 / scale =
    # inf (HeavyTailDPRegressor at epsilon=inf returned inf coefficients or
    # raised inside linprog).
    X = np.random.default_rng(0).normal(size=(200, 2)) * [1.0, unit]
    _, scale = column_moments(X)
    assert scale[1] == 1.0
    assert scale[1] == StandardScaler().fit(X).scale_[1]
    assert 0.5 < scale[0] < 2.0


@pytest.mark.parametrize("sparse", [False, True])
def test_elastic_net_in_mixed_units_reaches_scikit_learns_minimum(sparse):
    # The sqrt(alpha) floor of the standardizing scales is for an L2 penalty
    # alone: with the l1 split it made L-BFGS-B stop on "no decrease" 0.024
    # away from the minimum (in predictions), without a warning.
    import scipy.sparse as sp
    from sklearn.datasets import make_regression
    from sklearn.linear_model import ElasticNet

    from sklearn_dpfair import HeavyTailDPRegressor

    X, y = make_regression(400, 15, n_informative=5, noise=5, random_state=0)
    X = X * np.r_[[1e-3] * 5, [1.0] * 5, [1e3] * 5] + 100
    ref = ElasticNet(alpha=1.0, l1_ratio=0.15, tol=1e-14, max_iter=1_000_000)
    ref.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = HeavyTailDPRegressor(
            epsilon=np.inf, penalty="elasticnet", alpha=1.0
        ).fit(sp.csr_matrix(X) if sparse else X, y)
    assert np.max(np.abs(model.predict(X) - ref.predict(X))) < 1e-4


def test_dp_fermi_non_private_limit_warns_once_with_its_gradient(monkeypatch):
    # The solve's own warning and DP-FERMI's both fired for one cause, the
    # second printing a made-up max|grad| = inf.
    from sklearn.exceptions import ConvergenceWarning

    import sklearn_dpfair._solvers._non_private as non_private
    from sklearn_dpfair import DPFERMIClassifier

    monkeypatch.setattr(non_private, "MAX_ITER", 3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4)) * [1.0, 10.0, 100.0, 1000.0]
    y = (X[:, 0] + X[:, 1] / 10 > 0).astype(int)
    s = rng.integers(0, 2, 400)
    clf = DPFERMIClassifier(epsilon=np.inf, classes=[0, 1], groups=[0, 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y, sensitive_features=s)
    stops = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(stops) == 1
    assert "DPFERMIClassifier" in str(stops[0].message)
    assert "= inf" not in str(stops[0].message)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("loss", [AbsoluteLoss(), PinballLoss(0.8)])
def test_piecewise_linear_loss_with_l2_is_minimized_exactly(
    loss, fit_intercept, sparse
):
    # A quadratic program: L-BFGS-B stops at a kink short of its tolerance
    # (it warned on every such fit); the active-set refinement returns the
    # minimizer, which no move along a coordinate improves.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) * [1.0, 100.0, 1e-3] + [0.0, 500.0, 0.0]
    y = X @ [1.0, 0.01, 300.0] + rng.standard_t(3, size=300)
    w = rng.integers(0, 3, 300).astype(float)
    w /= w.mean()
    alpha = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = minimize_regression(
            sp.csr_matrix(X) if sparse else X,
            y,
            loss,
            alpha=alpha,
            fit_intercept=fit_intercept,
            sample_weight=w,
        )
    assert fit.converged

    def objective(params):
        coef, b = params[:3], params[3] if fit_intercept else 0.0
        raw = (X @ coef + b)[:, None]
        return np.mean(w * loss.loss(y, raw)) + 0.5 * alpha * coef @ coef

    best = np.append(fit.coef[:, 0], fit.intercept[0])
    at_best = objective(best)
    for j in range(4 if fit_intercept else 3):
        for h in (1e-7, 1e-5, 1e-3):
            for sign in (1.0, -1.0):
                step = np.zeros(4)
                step[j] = sign * h * max(abs(best[j]), 1e-3)
                # Within the certificate's tolerances (relative 1e-10 of
                # the objective, as the refinement's own guard).
                assert objective(best + step) >= at_best * (1 - 1e-10)


def test_piecewise_linear_refinement_never_worsens_the_objective():
    # An ill-conditioned active-set solve once passed the certificate 7e-9
    # above the minimum (a column of offset 500, pinball 0.9, alpha 0.1):
    # the refined point is kept only where it is at least as good.
    rng = np.random.default_rng(0)
    n, d = int(rng.integers(5, 60)), int(rng.integers(1, 5))
    X = rng.normal(size=(n, d)) * rng.choice([1, 1e-3, 1e3], size=d)
    X = X + rng.choice([0, 500], size=d)
    if rng.random() < 0.3:
        X = np.round(X)
    y = X @ rng.normal(size=d) + rng.standard_t(2, size=n) * rng.choice([1, 10])
    if rng.random() < 0.3:
        y = np.round(y)
    w = rng.choice(
        [np.ones(n), rng.integers(0, 4, size=n).astype(float), rng.exponential(size=n)]
    )
    q = rng.choice([0.5, 0.2, 0.9])
    alpha = float(rng.choice([1e-3, 0.1, 1.0, 10.0]))
    loss = PinballLoss(q)

    def objective(fit):
        r = y - X @ fit.coef[:, 0] - fit.intercept[0]
        terms = np.where(r > 0, q * r, (q - 1) * r)
        return np.sum(w * terms) / n + alpha / 2 * fit.coef[:, 0] @ fit.coef[:, 0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = minimize_regression(X, y, loss, alpha=alpha, sample_weight=w)
        reference = minimize_linear(
            X, y, loss, alpha=alpha, sample_weight=w, warn=False
        )
    assert objective(fit) <= objective(reference) * (1 + 1e-10)


@pytest.mark.parametrize("seed", range(12))
def test_piecewise_linear_ridge_is_exact_on_ill_conditioned_columns(seed):
    # Columns of offset 500 and spreads from 1e-3 to 1e2, weights with
    # zeros, a small penalty: pivoting from L-BFGS-B's point cycled (on a
    # quarter of such problems, dense or CSR, and on CSR alone under another
    # BLAS), and one solve of the active set's equations left the zero
    # residuals 1e-7 of the target's spread away from zero. Every one of
    # these fits is now certified exact, with no warning.
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 400)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, d)) * rng.choice([1, 1e-3, 1e2], size=d)
    X = X + rng.choice([0, 500], size=d)
    y = X @ rng.normal(size=d) + rng.standard_t(3, size=n)
    w = rng.integers(0, 3, n).astype(float)
    w = w / max(w.mean(), 1e-9)
    # The absolute loss is twice the pinball loss of level 0.5.
    q, scale = (0.5, 2.0) if seed % 2 else (float(rng.choice([0.2, 0.8])), 1.0)
    loss = AbsoluteLoss() if seed % 2 else PinballLoss(q)
    for sparse in (False, True):
        for fit_intercept in (True, False):
            alpha = float(rng.choice([1e-3, 0.1, 1.0]))
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                fit = minimize_regression(
                    sp.csr_matrix(X) if sparse else X,
                    y,
                    loss,
                    alpha=alpha,
                    fit_intercept=fit_intercept,
                    sample_weight=w,
                )
            assert fit.converged
            coef, b = fit.coef[:, 0], fit.intercept[0]

            def objective(coef, b):
                r = y - X @ coef - b
                terms = scale * np.where(r > 0, q * r, (q - 1) * r)
                return np.mean(w * terms) + 0.5 * alpha * coef @ coef

            at_best = objective(coef, b)
            for j in range(d):
                for sign in (1.0, -1.0):
                    step = np.zeros(d)
                    step[j] = sign * 1e-4 * max(abs(coef[j]), 1e-3)
                    assert objective(coef + step, b) >= at_best * (1 - 1e-10)


def test_the_robust_scales_read_missing_columns_without_warning(filter_swaps):
    # A column of NaN only has no quartiles: it keeps the moments it was
    # given. The solver read it inside warnings.catch_warnings, which swaps
    # the process-wide filters (two fits in two threads could leave an
    # "ignore" filter installed); it now warns nothing to silence.
    from sklearn_dpfair._solvers._non_private import _robust_moments

    rng = np.random.default_rng(0)
    n = 400
    X = np.column_stack([
        np.full(n, np.nan),
        np.append(rng.normal(size=n - 1), 1e12),  # dominated by one record
        np.where(np.arange(n) < 396, np.nan, rng.normal(size=n)),  # 4 values
        rng.normal(size=n),
    ])
    mean, scale = np.array([7.0, 2.5e9, 0.0, 0.0]), np.array([3.0, 5e10, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        filter_swaps.clear()  # this test's own block
        located, scaled = _robust_moments(X, mean, scale)
    assert filter_swaps == []
    # Only the dominated column moves: to its median, at its bulk's scale.
    np.testing.assert_array_equal(located[[0, 2, 3]], mean[[0, 2, 3]])
    np.testing.assert_array_equal(scaled[[0, 2, 3]], scale[[0, 2, 3]])
    assert abs(located[1]) < 0.2 and 0.8 < scaled[1] < 1.2


def test_the_l1_ball_solve_leaves_the_warning_filters_alone(filter_swaps):
    # Each Lagrangian solve is asked not to warn (warn=False) rather than
    # silenced by a catch_warnings block; the solve warns once for all.
    X, y = _raw()
    fit = minimize_l1_ball(X, y, BinaryLogisticLoss(), 1e-2)
    assert fit.converged and filter_swaps == []
