"""epsilon = inf is non-private, on any columns: every private estimator
against its non-private reference on raw-scale data (offsets and scales
from 1e-3 to 1e5) and on scikit-learn's raw diabetes data, within 1% of the
reference's loss.

The references are scikit-learn's on the same columns behind a
StandardScaler: the unpenalized models are invariant to it, and it only
conditions lbfgs (LinearRegression's least squares on these raw columns
loses the 1e-3 column: 40% above the minimum).
"""

import re
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import (
    HuberRegressor,
    Lasso,
    LinearRegression,
    LogisticRegression,
    QuantileRegressor,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    FERMIClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
)
from sklearn_dpfair._solvers import _non_private
from sklearn_dpfair.metrics import ermi_score

SCALES = np.array([100.0, 1e4, 1e-3, 1.0])
SHIFTS = np.array([500.0, 0.0, 1e5, 0.0])
BETA = np.array([1.0, -0.8, 0.6, 0.4])
PARITY = 1.01


def _raw_classification(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 4))
    y = (rng.random(n) < 1 / (1 + np.exp(-(Z @ BETA)))).astype(int)
    return Z * SCALES + SHIFTS, y


def _raw_regression(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 4))
    y = 150 + 40 * (Z @ BETA) + 40 * rng.standard_normal(n)
    return Z * SCALES + SHIFTS, y


def _diabetes():
    return load_diabetes(return_X_y=True, scaled=False)


def _log_loss(model, X, y):
    p = np.clip(model.predict_proba(X)[:, 1], 1e-300, 1 - 1e-16)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def _mse(model, X, y):
    return float(np.mean((y - model.predict(X)) ** 2))


def _pinball(model, X, y, q):
    r = y - model.predict(X)
    return float(np.mean(np.maximum(q * r, (q - 1) * r)))


def _huber(model, X, y, t):
    r = np.abs(y - model.predict(X))
    return float(np.mean(np.where(r <= t, 0.5 * r**2, t * (r - 0.5 * t))))


def _lbfgs(X, y):
    return make_pipeline(StandardScaler(), LogisticRegression(C=np.inf)).fit(X, y)


def _ols(X, y):
    return make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)


@pytest.mark.parametrize("container", ["dense", "float32", "csr"])
def test_dp_logistic_regression_is_lbfgs_on_raw_columns(container):
    X, y = _raw_classification()
    if container != "dense":
        # float32 cannot hold the 1e5 + 1e-3 column (its spacing there is
        # 0.008): those inputs get the other three.
        X = X[:, [0, 1, 3]]
    ref = _lbfgs(X, y)
    A = {"dense": X, "float32": X.astype(np.float32), "csr": sp.csr_matrix(X)}[
        container
    ]
    clf = DPLogisticRegression(epsilon=np.inf, classes=[0, 1], random_state=0)
    clf.fit(A, y)
    assert _log_loss(clf, X, y) <= PARITY * _log_loss(ref, X, y)
    assert clf.score(X, y) >= ref.score(X, y) - 0.01
    assert clf.epsilon_ == np.inf
    assert clf.privacy_record_.mechanism.startswith("non-private limit")
    if container == "float32":
        assert clf.coef_.dtype == np.float32


def test_dp_logistic_regression_multinomial_on_raw_columns():
    X, y = _raw_classification()
    y = y + (X[:, 3] > 1)
    ref = _lbfgs(X, y)
    clf = DPLogisticRegression(epsilon=np.inf, classes=[0, 1, 2]).fit(X, y)
    proba = clf.predict_proba(X)[np.arange(len(y)), y]
    ref_proba = ref.predict_proba(X)[np.arange(len(y)), y]
    assert -np.mean(np.log(proba)) <= PARITY * -np.mean(np.log(ref_proba))


@pytest.mark.parametrize(
    "fit",
    [
        lambda X, y: DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(X, y),
        lambda X, y: HeavyTailDPRegressor(epsilon=np.inf).fit(X, X[:, 0] + y),
        lambda X, y: SemiDPLinearRegression(epsilon=np.inf).fit(
            X, X[:, 0] + y, public_mask=np.arange(len(y)) % 2 == 0
        ),
        lambda X, y: DPFERMIClassifier(
            epsilon=np.inf, classes=[0, 1], groups=[0, 1]
        ).fit(X, y, sensitive_features=y),
    ],
    ids=["logistic", "heavy_tail", "semi_dp", "fermi"],
)
def test_an_unconverged_solve_warns_as_scikit_learn_does(fit, monkeypatch):
    # The internal iteration cap set to 2: every estimator's non-private
    # limit reports that it stopped short, once (DP-FERMI in its own words,
    # with the gradient it stopped at).
    monkeypatch.setattr(_non_private, "MAX_ITER", 2)
    X, y = _raw_classification(n=500)
    with pytest.warns(ConvergenceWarning) as caught:
        fit(X, y)
    stops = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(stops) == 1
    assert re.search(r"did not converge|stopped at stationarity", str(stops[0].message))


def test_a_private_fit_never_runs_the_full_batch_solver():
    X, y = _raw_classification(n=500)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
        clf.fit(X, y)
    assert clf.privacy_record_.mechanism.startswith("DP-SGD")


@pytest.mark.parametrize("data", ["synthetic", "diabetes"])
def test_heavy_tail_squared_loss_is_ols(data):
    X, y = _raw_regression() if data == "synthetic" else _diabetes()
    reg = HeavyTailDPRegressor(epsilon=np.inf, random_state=0).fit(X, y)
    assert _mse(reg, X, y) <= PARITY * _mse(_ols(X, y), X, y)
    assert reg.privacy_record_.mechanism.startswith("non-private limit")


@pytest.mark.parametrize("data", ["synthetic", "diabetes"])
def test_heavy_tail_huber_loss_is_huber_regression(data):
    # HuberRegressor's coefficients minimize the Huber loss at the threshold
    # epsilon * scale_ (its scale at the joint optimum); ours is given in
    # units of target_scale_.
    X, y = _raw_regression() if data == "synthetic" else _diabetes()
    ref = make_pipeline(
        StandardScaler(), HuberRegressor(epsilon=1.35, alpha=0.0, max_iter=10_000)
    ).fit(X, y)
    threshold = 1.35 * ref[-1].scale_
    scale = HeavyTailDPRegressor(epsilon=np.inf).fit(X, y).target_scale_
    reg = HeavyTailDPRegressor(
        epsilon=np.inf, loss="huber", huber_threshold=threshold / scale
    ).fit(X, y)
    assert _huber(reg, X, y, threshold) <= PARITY * _huber(ref, X, y, threshold)


@pytest.mark.parametrize("loss, q", [("absolute_error", 0.5), ("quantile", 0.8)])
@pytest.mark.parametrize("data", ["synthetic", "diabetes"])
def test_heavy_tail_pinball_losses_are_quantile_regression(loss, q, data):
    X, y = _raw_regression(n=1000) if data == "synthetic" else _diabetes()
    ref = make_pipeline(
        StandardScaler(), QuantileRegressor(quantile=q, alpha=0.0, solver="highs")
    ).fit(X, y)
    reg = HeavyTailDPRegressor(epsilon=np.inf, loss=loss, quantile=q).fit(X, y)
    assert _pinball(reg, X, y, q) <= PARITY * _pinball(ref, X, y, q)


@pytest.mark.parametrize("container", ["float32", "csr"])
def test_heavy_tail_float32_and_sparse_rows(container):
    X, y = _diabetes()
    A = X.astype(np.float32) if container == "float32" else sp.csr_matrix(X)
    reg = HeavyTailDPRegressor(epsilon=np.inf).fit(A, y)
    assert _mse(reg, X, y) <= PARITY * _mse(_ols(X, y), X, y)


@pytest.mark.parametrize("data", ["synthetic", "diabetes"])
@pytest.mark.parametrize("container", ["dense", "csr"])
def test_semi_dp_is_ols_on_all_rows(data, container):
    X, y = _raw_regression() if data == "synthetic" else _diabetes()
    if container == "csr":
        X = X[:, [0, 1, 3]] if data == "synthetic" else X
    mask = np.zeros(len(y), bool)
    mask[::10] = True
    A = sp.csr_matrix(X) if container == "csr" else X
    reg = SemiDPLinearRegression(epsilon=np.inf).fit(A, y, public_mask=mask)
    assert _mse(reg, X, y) <= PARITY * _mse(_ols(X, y), X, y)
    assert np.isnan(reg.alpha_)


@pytest.mark.parametrize("shift", [0.0, 3.0])
def test_semi_dp_noise_free_target_fits_without_a_warning(shift):
    # The public least squares start is already the minimizer: a
    # ConvergenceWarning ("ABNORMAL") once said otherwise.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    y = X @ [1.0, 2.0] + shift
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = SemiDPLinearRegression(epsilon=np.inf).fit(
            X, y, public_mask=np.arange(20) < 10
        )
    np.testing.assert_allclose(reg.coef_, [1.0, 2.0], rtol=1e-9)
    assert reg.intercept_ == pytest.approx(shift, abs=1e-9)


def test_dp_fermi_without_fairness_is_lbfgs_on_raw_columns():
    X, y = _raw_classification()
    groups = (X[:, 3] > 0).astype(int)
    clf = DPFERMIClassifier(
        epsilon=np.inf, fairness_weight=0.0, classes=[0, 1], groups=[0, 1],
        random_state=0,
    ).fit(X, y, sensitive_features=groups)
    assert _log_loss(clf, X, y) <= PARITY * _log_loss(_lbfgs(X, y), X, y)
    assert clf.privacy_record_.mechanism.startswith("non-private limit")


def test_dp_fermi_weights_are_duplicated_rows_in_its_marginals_too():
    # At the non-private limit a weight of 2 is a duplicated row: in the
    # loss and in the group marginals of the fairness term (as FERMI's).
    X, y = _raw_classification()
    groups = (X[:, 3] > 0).astype(int)
    w = np.where(groups == 1, 2.0, 1.0)
    rows = np.r_[np.arange(len(y)), np.flatnonzero(groups == 1)]
    kw = dict(fairness_weight=8.0, classes=[0, 1], groups=[0, 1], random_state=0)
    weighted = DPFERMIClassifier(epsilon=np.inf, **kw).fit(
        X, y, sample_weight=w, sensitive_features=groups
    )
    doubled = DPFERMIClassifier(epsilon=np.inf, **kw).fit(
        X[rows], y[rows], sensitive_features=groups[rows]
    )
    np.testing.assert_allclose(
        weighted.group_marginals_, doubled.group_marginals_, rtol=1e-12
    )
    share = np.mean(groups == 1)
    assert weighted.group_marginals_[1] == pytest.approx(2 * share / (1 + share))


def _fermi_objective(model, X, y, groups, fairness_weight):
    # FERMI's objective with the dual at its maximiser: the soft ERMI.
    ermi = ermi_score(None, y_proba=model.predict_proba(X), sensitive_features=groups)
    return _log_loss(model, X, y) + fairness_weight * ermi


@pytest.mark.parametrize("container", ["dense", "float32"])
def test_fermi_without_fairness_is_lbfgs_on_raw_columns(container):
    # FERMIClassifier is non-private, but its SGDA warm start and its
    # root-mean-square preconditioning assumed unit-scale columns: on these
    # columns its log-loss was 5.5 against lbfgs's 0.527, and 6% above it
    # once the warm start was dropped.
    X, y = _raw_classification()
    if container == "float32":
        # float32 cannot hold the 1e-3 spread at the 1e5 offset.
        X = X[:, [0, 1, 3]]
    groups = (X[:, -1] > 0).astype(int)
    A = X.astype(np.float32) if container == "float32" else X
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = FERMIClassifier(fairness_weight=0.0, random_state=0).fit(
            A, y, sensitive_features=groups
        )
    assert _log_loss(clf, X, y) <= PARITY * _log_loss(_lbfgs(X, y), X, y)


@pytest.mark.parametrize("fairness_weight", [1.0, 8.0])
def test_fermi_objective_does_not_depend_on_the_columns_units(fairness_weight):
    # Without a penalty the model class is invariant to an affine map of
    # the columns: raw and standardized columns reach the same objective
    # (raw: 5.63 at weight 8 before, its training disparity unchanged from
    # weight 0's).
    X, y = _raw_classification()
    groups = (X[:, 3] > 0).astype(int)
    standard = StandardScaler().fit_transform(X)
    raw = FERMIClassifier(fairness_weight=fairness_weight, random_state=0).fit(
        X, y, sensitive_features=groups
    )
    scaled = FERMIClassifier(fairness_weight=fairness_weight, random_state=0).fit(
        standard, y, sensitive_features=groups
    )
    assert _fermi_objective(raw, X, y, groups, fairness_weight) <= PARITY * (
        _fermi_objective(scaled, standard, y, groups, fairness_weight)
    )
    unfair = FERMIClassifier(fairness_weight=0.0, random_state=0).fit(
        X, y, sensitive_features=groups
    )
    gap = np.ptp([raw.predict(X)[groups == g].mean() for g in (0, 1)])
    unfair_gap = np.ptp([unfair.predict(X)[groups == g].mean() for g in (0, 1)])
    assert gap < unfair_gap


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_fermi_disparity_bound_does_not_depend_on_the_columns_units(constraint):
    # The weight path solves every weight in the same coordinates as the
    # fixed-weight fit (equalized odds at 0.02: log-loss 0.567 on raw
    # columns against 0.535 on standardized ones before).
    X, y = _raw_classification()
    groups = (X[:, 3] > 0).astype(int)
    standard = StandardScaler().fit_transform(X)
    params = dict(disparity_bound=0.02, constraint=constraint, random_state=0)
    raw = FERMIClassifier(**params).fit(X, y, sensitive_features=groups)
    scaled = FERMIClassifier(**params).fit(standard, y, sensitive_features=groups)
    assert raw.bound_met_ and scaled.bound_met_
    assert _log_loss(raw, X, y) <= PARITY * _log_loss(scaled, standard, y)


def test_dp_fermi_disparity_bound_is_fermi_weight_path_on_raw_columns():
    # The limit ran the private selection's staged SGDA before: on these
    # columns a constant model (log-loss 18.5, accuracy 0.496) that met the
    # bound by predicting one class.
    X, y = _raw_classification()
    groups = (X[:, 3] > 0).astype(int)
    params = dict(disparity_bound=0.02, max_fairness_weight=64.0, random_state=0)
    clf = DPFERMIClassifier(
        epsilon=np.inf, classes=[0, 1], groups=[0, 1], **params
    ).fit(X, y, sensitive_features=groups)
    reference = FERMIClassifier(**params).fit(X, y, sensitive_features=groups)
    assert clf.bound_met_
    assert _log_loss(clf, X, y) <= PARITY * _log_loss(reference, X, y)
    assert clf.fairness_weight_ == reference.fairness_weight_
    assert "weight path" in clf.privacy_record_.mechanism
    assert clf.privacy_record_.sampling_probability is None


def test_output_perturbation_clips_no_row_without_privacy():
    # The public row bound (1.0 here, ~1e4 below the rows' norms) binds only
    # the private fit. Its objective penalizes the intercept too, in the
    # user's units: a small alpha, and columns without the 1e5 offset.
    X, y = _raw_classification()
    X = X[:, [0, 1, 3]]
    clf = DPLogisticRegression(
        solver="output-perturbation", alpha=1e-8, feature_norm_bound=1.0,
        epsilon=np.inf, classes=[0, 1],
    ).fit(X, y)
    assert _log_loss(clf, X, y) <= PARITY * _log_loss(_lbfgs(X, y), X, y)
    assert clf.privacy_record_.mechanism.startswith("non-private limit")


@pytest.mark.parametrize("container", ["float32", "csr"])
def test_dp_fermi_float32_and_sparse_rows(container):
    X, y = _raw_classification()
    X = X[:, [0, 1, 3]]
    groups = (X[:, 2] > 0).astype(int)
    A = X.astype(np.float32) if container == "float32" else sp.csr_matrix(X)
    clf = DPFERMIClassifier(
        epsilon=np.inf, fairness_weight=0.0, classes=[0, 1], groups=[0, 1],
        random_state=0,
    ).fit(A, y, sensitive_features=groups)
    assert _log_loss(clf, X, y) <= PARITY * _log_loss(_lbfgs(X, y), X, y)


def _l1_ball_reference(X, y, radius):
    """The minimum of the mean log-loss over ``{||coef||_1 <= radius}`` (intercept free).

    An independent solver: SLSQP on ``coef = (p - m) / sd`` with ``p, m >= 0``
    and the linear constraint ``sum (p + m) / sd <= radius``, in centred and
    scaled columns (the same problem, so its optimum is the reference).
    """
    n, d = X.shape
    mu, sd = X.mean(axis=0), X.std(axis=0)
    Xs = (X - mu) / sd

    def f(v):
        beta, c = v[:d] - v[d : 2 * d], v[2 * d]
        z = Xs @ beta + c
        g = (1 / (1 + np.exp(-z)) - y) / n
        gb = Xs.T @ g
        return np.mean(np.logaddexp(0, z) - y * z), np.r_[gb, -gb, g.sum()]

    constraint = {
        "type": "ineq",
        "fun": lambda v: radius - np.sum((v[:d] + v[d : 2 * d]) / sd),
        "jac": lambda v: np.r_[-1 / sd, -1 / sd, 0.0],
    }
    res = scipy.optimize.minimize(
        f, np.zeros(2 * d + 1), jac=True, method="SLSQP",
        bounds=[(0, None)] * (2 * d) + [(None, None)], constraints=[constraint],
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert res.success
    return res.fun


@pytest.mark.parametrize("container", ["dense", "csr"])
@pytest.mark.parametrize("radius", [1e4, 1.0, 0.01])
def test_frank_wolfe_is_the_l1_ball_optimum_on_raw_columns(radius, container):
    # The non-private limit of private Frank-Wolfe is its objective over its
    # l1 ball (the public radius in the user's units; the intercept free,
    # the features unclipped). Radius 1e4: the ball does not bind and the
    # reference is lbfgs; 1.0 and 0.01 bind (the unconstrained l1 norm is
    # 600), the reference SLSQP on the ball. The private loop without noise
    # (1000 Frank-Wolfe steps, features clipped, |b| <= 5) failed every case.
    X, y = _raw_classification()
    if container == "csr":
        X = X[:, [0, 1, 3]]
    reference = (
        _log_loss(_lbfgs(X, y), X, y) if radius > 1e3
        else _l1_ball_reference(X, y, radius)
    )
    A = sp.csr_matrix(X) if container == "csr" else X
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = DPLogisticRegression(
            epsilon=np.inf, solver="dp-frank-wolfe", l1_radius=radius,
            feature_inf_bound=1.0, classes=[0, 1],
        ).fit(A, y)
    assert np.abs(clf.coef_).sum() <= radius * (1 + 1e-9)
    assert _log_loss(clf, X, y) <= PARITY * reference
    assert clf.privacy_record_.mechanism.startswith("non-private limit")
    assert clf.epsilon_ == np.inf


def test_frank_wolfe_multinomial_on_raw_columns():
    X, y = _raw_classification()
    y = y + (X[:, 3] > 1)
    ref = _lbfgs(X, y)
    clf = DPLogisticRegression(
        epsilon=np.inf, solver="dp-frank-wolfe", l1_radius=1e4,
        feature_inf_bound=1.0, classes=[0, 1, 2],
    ).fit(X, y)
    proba = clf.predict_proba(X)[np.arange(len(y)), y]
    ref_proba = ref.predict_proba(X)[np.arange(len(y)), y]
    assert -np.mean(np.log(proba)) <= PARITY * -np.mean(np.log(ref_proba))


def test_frank_wolfe_l1_ball_solve_warns_when_it_stops_short(monkeypatch):
    monkeypatch.setattr(_non_private, "MAX_ITER", 2)
    X, y = _raw_classification(n=500)
    with pytest.warns(ConvergenceWarning, match="l1-ball solve did not converge"):
        DPLogisticRegression(
            epsilon=np.inf, solver="dp-frank-wolfe", l1_radius=1.0,
            feature_inf_bound=1.0, classes=[0, 1],
        ).fit(X, y)


_ONE_PASS = ["sgd", "acsa", "prox", "localized"]
# The one-pass solvers that need a curvature take it declared with the
# nonsmooth losses (their private estimate is for smooth losses only);
# without privacy the solve does not use it.
_CURVATURE = {"smoothness": 1.0, "strong_convexity": 0.1}


@pytest.mark.parametrize("solver", _ONE_PASS)
@pytest.mark.parametrize("data", ["synthetic", "diabetes"])
def test_one_pass_squared_loss_is_ols(solver, data):
    # Before: the one-pass loops without noise, projected on their default
    # radius 10 in the data's units: 1.7-1.9x the OLS training MSE on raw
    # diabetes ("acsa", "prox", "localized"), with a radius warning.
    X, y = _raw_regression() if data == "synthetic" else _diabetes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = HeavyTailDPRegressor(epsilon=np.inf, solver=solver).fit(X, y)
    assert _mse(reg, X, y) <= PARITY * _mse(_ols(X, y), X, y)
    assert reg.solver_ == solver and reg.radius_hit_ is None
    assert reg.privacy_record_.mechanism.startswith("non-private limit")
    assert reg.epsilon_ == np.inf


@pytest.mark.parametrize("solver", _ONE_PASS)
@pytest.mark.parametrize("data", ["synthetic", "diabetes"])
def test_one_pass_huber_loss_is_huber_regression(solver, data):
    # huber_threshold is in the units of y with the one-pass solvers.
    X, y = _raw_regression() if data == "synthetic" else _diabetes()
    ref = make_pipeline(
        StandardScaler(), HuberRegressor(epsilon=1.35, alpha=0.0, max_iter=10_000)
    ).fit(X, y)
    threshold = 1.35 * ref[-1].scale_
    reg = HeavyTailDPRegressor(
        epsilon=np.inf, solver=solver, loss="huber", huber_threshold=threshold
    ).fit(X, y)
    assert _huber(reg, X, y, threshold) <= PARITY * _huber(ref, X, y, threshold)


@pytest.mark.parametrize("solver", _ONE_PASS)
@pytest.mark.parametrize("loss, q", [("absolute_error", 0.5), ("quantile", 0.8)])
def test_one_pass_pinball_losses_are_quantile_regression(solver, loss, q):
    X, y = _diabetes()
    ref = make_pipeline(
        StandardScaler(), QuantileRegressor(quantile=q, alpha=0.0, solver="highs")
    ).fit(X, y)
    kwargs = {} if solver == "localized" else _CURVATURE
    reg = HeavyTailDPRegressor(
        epsilon=np.inf, solver=solver, loss=loss, quantile=q, **kwargs
    ).fit(X, y)
    assert _pinball(reg, X, y, q) <= PARITY * _pinball(ref, X, y, q)


def test_prox_l1_penalty_is_the_lasso_on_raw_columns():
    # The l1-penalized squared loss: scikit-learn's Lasso minimizes
    # (1/2n) ||y - X w - b||^2 + alpha ||w||_1, our objective with the
    # penalty on the coefficients in the user's units.
    X, y = _diabetes()
    alpha = 2.0
    ref = Lasso(alpha=alpha, tol=1e-12, max_iter=1_000_000).fit(X, y)

    def objective(model):
        return 0.5 * _mse(model, X, y) + alpha * np.abs(model.coef_).sum()

    reg = HeavyTailDPRegressor(epsilon=np.inf, penalty="l1", alpha=alpha).fit(X, y)
    assert reg.solver_ == "prox"
    assert objective(reg) <= PARITY * objective(ref)
    assert np.count_nonzero(reg.coef_) < X.shape[1]  # the l1 term binds


def test_prox_l1_penalty_with_the_absolute_loss_is_quantile_regression():
    # The documented objective mean|r| + alpha ||coef||_1 is twice
    # QuantileRegressor's mean pinball_0.5 + (alpha / 2) ||coef||_1: the
    # linear program once minimized mean pinball_0.5 + alpha ||coef||_1, a
    # doubled penalty (coefficient 0 here, the minimizer's is ~0.1).
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1000, 2)) * [1.0, 100.0] + [0.0, 50.0]
    y = X @ [0.3, 0.002] + rng.standard_normal(1000)
    alpha = 0.1
    ref = QuantileRegressor(quantile=0.5, alpha=alpha / 2, solver="highs").fit(X, y)

    def objective(model):
        r = y - model.predict(X)
        return np.mean(np.abs(r)) + alpha * np.abs(model.coef_).sum()

    reg = HeavyTailDPRegressor(
        epsilon=np.inf, loss="absolute_error", penalty="l1", alpha=alpha
    ).fit(X, y)
    assert objective(reg) <= objective(ref) * (1 + 1e-9)
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-6, atol=1e-9)


def test_one_pass_non_private_limit_keeps_the_public_refusals():
    # A refusal that reads public parameters only is the same with or
    # without privacy.
    X, y = _diabetes()
    for epsilon in (np.inf, 1.0):
        with pytest.raises(ValueError, match="penalty='l1' needs solver='prox'"):
            HeavyTailDPRegressor(
                epsilon=epsilon, solver="sgd", penalty="l1", alpha=0.1
            ).fit(X, y)


def test_one_pass_non_private_limit_warns_when_it_stops_short(monkeypatch):
    monkeypatch.setattr(_non_private, "MAX_ITER", 2)
    X, y = _diabetes()
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        HeavyTailDPRegressor(epsilon=np.inf, solver="acsa").fit(X, y)
