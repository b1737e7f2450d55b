"""epsilon = inf is non-private, on any columns: every private estimator
against its non-private reference on raw-scale data (offsets and scales
from 1e-3 to 1e5) and on scikit-learn's raw diabetes data, within 1% of the
reference's loss.

The references are scikit-learn's on the same columns behind a
StandardScaler: the unpenalized models are invariant to it, and it only
conditions lbfgs (LinearRegression's least squares on these raw columns
loses the 1e-3 column: 40% above the minimum).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import (
    HuberRegressor,
    LinearRegression,
    LogisticRegression,
    QuantileRegressor,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
)
from sklearn_dpfair._solvers import _non_private

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
    # limit reports that it stopped short.
    monkeypatch.setattr(_non_private, "MAX_ITER", 2)
    X, y = _raw_classification(n=500)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        fit(X, y)


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


def test_dp_fermi_without_fairness_is_lbfgs_on_raw_columns():
    X, y = _raw_classification()
    groups = (X[:, 3] > 0).astype(int)
    clf = DPFERMIClassifier(
        epsilon=np.inf, fairness_weight=0.0, classes=[0, 1], groups=[0, 1],
        random_state=0,
    ).fit(X, y, sensitive_features=groups)
    assert _log_loss(clf, X, y) <= PARITY * _log_loss(_lbfgs(X, y), X, y)
    assert clf.privacy_record_.mechanism.startswith("non-private limit")


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
