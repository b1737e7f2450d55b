# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The fairness knob: convergence at any weight and scale, and disparity_bound."""

import math
import os
import warnings

import dp_accounting
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair._solvers.fermi._fit import PRIVATE_BOUND_WEIGHTS, fermi_event
from sklearn_dpfair.fairness import make_constraint
from sklearn_dpfair.fairness._disparity import hard_disparity, prediction_counts
from sklearn_dpfair.metrics import ermi_score

CONSTRAINTS = ["demographic_parity", "equalized_odds", "equal_opportunity"]
WEIGHTS = [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 1000.0]


def synthetic(seed, n=1500, correlation=1.0, scale=1.0, n_groups=2, n_classes=2):
    """Label and a proxy feature both depend on the group, by ``correlation``.

    ``scale`` multiplies every feature (large row norms).
    """
    rng = np.random.default_rng(seed)
    s = rng.integers(0, n_groups, n)
    u = rng.normal(size=n) + correlation * (s - (n_groups - 1) / 2)
    score = u + 0.5 * rng.normal(size=n)
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.searchsorted(edges, score)
    X = np.column_stack(
        [
            u + 0.3 * rng.normal(size=n),
            rng.normal(size=n) + correlation * s,
            rng.normal(size=(n, 2)),
        ]
    )
    return X * scale, y, s


def _train_disparity(est, X, y, s, constraint):
    classes = est.classes_
    y_idx = np.searchsorted(classes, y)
    pred = np.searchsorted(classes, est.predict(X))
    con = make_constraint(
        constraint, class_index=1 if constraint == "equal_opportunity" else None
    )
    return hard_disparity(pred, y_idx, s, con, classes.size, int(s.max()) + 1)


# -- convergence ---------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 100.0])
@pytest.mark.parametrize("weight", [0.0, 8.0, 1000.0])
def test_full_batch_phase_reaches_stationarity_at_any_weight_and_scale(scale, weight):
    # Constant SGDA steps oscillate at large weights and row norms; the
    # full-batch phase ends at a stationary point of the soft objective.
    X, y, s = synthetic(0, correlation=2.0, scale=scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = FERMIClassifier(fairness_weight=weight, random_state=0).fit(
            X, y, sensitive_features=s
        )
    assert est.stationarity_ <= est.tol
    assert est.n_full_batch_iter_ > 0
    assert est.training_disparity_ == pytest.approx(
        _train_disparity(est, X, y, s, "demographic_parity")
    )


def test_scale_of_the_features_does_not_change_the_model():
    # The same problem in other units: the preconditioned phase finds the
    # same predictions (the SGDA phase alone does not).
    X, y, s = synthetic(1, correlation=1.5)
    a = FERMIClassifier(fairness_weight=16.0, random_state=0, tol=1e-6).fit(
        X, y, sensitive_features=s
    )
    b = FERMIClassifier(fairness_weight=16.0, random_state=0, tol=1e-6).fit(
        X * 50.0, y, sensitive_features=s
    )
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * 50.0), atol=2e-3)


@pytest.mark.parametrize("constraint", ["demographic_parity", "equal_opportunity"])
def test_auto_dual_step_is_the_inverse_dual_smoothness(constraint):
    # 1 / (2 w_max): 0.5 for demographic parity; equal opportunity weights
    # its block by 1 / P(Y = a), so 0.5 P(Y = a) (from the released noisy
    # marginals for DP-FERMI, hence approximately).
    X, y, s = synthetic(0)
    expected = 0.5 if constraint == "demographic_parity" else 0.5 * np.mean(y == 1)
    plain = FERMIClassifier(constraint=constraint, dual_learning_rate="auto")
    private = DPFERMIClassifier(
        constraint=constraint,
        dual_learning_rate="auto",
        classes=[0, 1],
        groups=[0, 1],
        random_state=0,
    )
    for est, rel in ((plain, 1e-12), (private, 0.1)):
        est.fit(X, y, sensitive_features=s)
        assert est.dual_learning_rate_ == pytest.approx(expected, rel=rel)
        assert est.learning_rate_ == est.learning_rate


def test_convergence_warning_when_the_budget_of_iterations_is_short():
    X, y, s = synthetic(0, correlation=2.0, scale=30.0)
    est = FERMIClassifier(
        fairness_weight=100.0, max_iter=1, max_full_batch_iter=1, random_state=0
    )
    with pytest.warns(ConvergenceWarning, match="max_full_batch_iter"):
        est.fit(X, y, sensitive_features=s)
    assert est.stationarity_ > est.tol


def test_without_full_batch_phase_no_stationarity_is_reported():
    X, y, s = synthetic(0)
    est = FERMIClassifier(full_batch_phase=None, random_state=0).fit(
        X, y, sensitive_features=s
    )
    assert est.stationarity_ is None
    assert est.n_full_batch_iter_ == 0


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_knob_on_synthetic_data(constraint):
    # Light form of the property test (the Adult grid is behind `slow`).
    # Converged solutions: the soft ERMI that the weight penalizes is
    # non-increasing in the weight all the way to 1,000, and the hard
    # training disparity is non-increasing (within 0.005) up to the weight
    # where it is least. Beyond it the hard disparity may rise again while
    # the soft ERMI keeps falling (predictions pushed to the boundary):
    # a property of the surrogate, which disparity_bound handles.
    X, y, s = synthetic(2, n=1200, correlation=1.5)
    soft, hard = [], []
    for weight in WEIGHTS:
        est = FERMIClassifier(
            constraint=constraint, fairness_weight=weight, random_state=0
        ).fit(X, y, sensitive_features=s)
        assert est.stationarity_ <= est.tol, weight
        soft.append(
            ermi_score(
                y,
                y_proba=est.predict_proba(X),
                sensitive_features=s,
                constraint=constraint,
                opportunity_class=1 if constraint == "equal_opportunity" else None,
            )
        )
        hard.append(est.training_disparity_)
    assert np.all(np.diff(soft) <= 1e-4), soft
    least = int(np.argmin(hard))
    assert np.all(np.diff(hard[: least + 1]) <= 0.005), hard
    assert hard[least] < 0.5 * hard[0]


# -- disparity_bound -------------------------------------------------------------


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("bound", [0.05, 0.02])
def test_disparity_bound_is_met_on_the_training_data(constraint, bound):
    X, y, s = synthetic(3, correlation=1.5)
    est = FERMIClassifier(
        constraint=constraint, disparity_bound=bound, random_state=0
    ).fit(X, y, sensitive_features=s)
    assert est.training_disparity_ <= bound
    assert _train_disparity(est, X, y, s, constraint) <= bound
    assert est.fairness_weight_ > 0
    # The most accurate feasible point of the searched path.
    feasible = [p for p in est.weight_path_ if p["training_disparity"] <= bound]
    best = min(p["training_error"] for p in feasible)
    assert 1.0 - est.score(X, y) == pytest.approx(best)
    # The parameter is untouched; the weight is a fitted attribute.
    assert est.fairness_weight == 4.0
    assert est.get_params()["disparity_bound"] == bound


def test_disparity_bound_already_met_keeps_weight_zero():
    X, y, s = synthetic(3, correlation=0.0)
    est = FERMIClassifier(disparity_bound=0.5, random_state=0).fit(
        X, y, sensitive_features=s
    )
    assert est.fairness_weight_ == 0.0
    assert len(est.weight_path_) == 1


def test_disparity_bound_multiclass_and_intersectional():
    X, y, s = synthetic(4, n=2000, correlation=1.0, n_groups=3, n_classes=3)
    rng = np.random.default_rng(0)
    other = rng.integers(0, 2, s.size)
    groups = np.column_stack([s, other])
    est = FERMIClassifier(disparity_bound=0.08, random_state=0).fit(
        X, y, sensitive_features=groups
    )
    assert est.coef_.shape == (3, X.shape[1])
    assert len(est.groups_) == 6
    codes = np.array([est.groups_.tolist().index((a, b)) for a, b in groups])
    pred = np.searchsorted(est.classes_, est.predict(X))
    dp = make_constraint("demographic_parity")
    assert hard_disparity(pred, y, codes, dp, 3, 6) <= 0.08
    assert est.training_disparity_ <= 0.08


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_multiclass_intersectional_converges_at_large_weight(constraint):
    X, y, s = synthetic(7, n=1500, correlation=1.0, n_groups=3, n_classes=3)
    groups = np.column_stack([s, np.random.default_rng(1).integers(0, 2, s.size)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = FERMIClassifier(
            constraint=constraint,
            opportunity_class=2 if constraint == "equal_opportunity" else None,
            fairness_weight=200.0,
            random_state=0,
        ).fit(X * 20.0, y, sensitive_features=groups)
    assert est.stationarity_ <= est.tol
    assert np.all(np.isfinite(est.coef_))
    assert est.predict_proba(X * 20.0).shape == (X.shape[0], 3)


def test_unreachable_bound_warns_and_returns_the_fairest_model():
    # A short search (weights up to the public maximum 1) cannot reach a
    # tight bound here (three classes: no shared-threshold fallback).
    X, y, s = synthetic(3, correlation=2.0, n_classes=3)
    with pytest.warns(UserWarning, match="0.001 is not met") as record:
        est = FERMIClassifier(
            disparity_bound=0.001, max_fairness_weight=1.0, random_state=0
        ).fit(X, y, sensitive_features=s)
    assert max(p["fairness_weight"] for p in est.weight_path_) == 1.0
    least = min(p["training_disparity"] for p in est.weight_path_)
    assert est.training_disparity_ == least
    assert est.bound_met_ is False
    # The message names the least disparity reached, and points at this file.
    (warning,) = [w for w in record if "is not met" in str(w.message)]
    assert f"{least:.4g}" in str(warning.message)
    assert warning.filename == __file__


def test_binary_bound_uses_a_shared_threshold_when_the_weight_cannot():
    # Strong correlation: the soft penalty alone stalls above the bound
    # (hard disparity ~0.03 at weight 1024); a threshold shared by all
    # groups meets it, and prediction still never reads the group.
    X, y, s = synthetic(3, correlation=1.5)
    est = FERMIClassifier(disparity_bound=0.01, random_state=0).fit(
        X, y, sensitive_features=s
    )
    assert _train_disparity(est, X, y, s, "demographic_parity") <= 0.01
    assert est.training_disparity_ == pytest.approx(
        _train_disparity(est, X, y, s, "demographic_parity")
    )


@pytest.mark.parametrize("bound", [-0.1, 1.5, "0.1"])
def test_bad_disparity_bound(bound):
    X, y, s = synthetic(0, n=200)
    for est in (
        FERMIClassifier(disparity_bound=bound),
        DPFERMIClassifier(disparity_bound=bound, classes=[0, 1], groups=[0, 1]),
    ):
        with pytest.raises(ValueError, match="disparity_bound"):
            est.fit(X, y, sensitive_features=s)


def test_disparity_bound_needs_the_full_batch_phase():
    X, y, s = synthetic(0, n=200)
    est = FERMIClassifier(disparity_bound=0.05, full_batch_phase=None)
    with pytest.raises(ValueError, match="full_batch_phase"):
        est.fit(X, y, sensitive_features=s)


# -- the private selection ---------------------------------------------------


def _dp(**params):
    base = dict(
        classes=[0, 1],
        groups=[0, 1],
        batch_size=300,
        max_iter=12,
        random_state=0,
    )
    return DPFERMIClassifier(**{**base, **params})


def test_private_selection_is_accounted_in_the_same_epsilon():
    X, y, s = synthetic(5, n=3000, correlation=1.5)
    bounded = _dp(disparity_bound=0.05).fit(X, y, sensitive_features=s)
    plain = _dp().fit(X, y, sensitive_features=s)
    assert bounded.epsilon_ <= 1.0
    assert bounded.fairness_weight_ in PRIVATE_BOUND_WEIGHTS
    assert bounded.selection_noise_multiplier_ > 0
    assert plain.selection_noise_multiplier_ == 0
    # The selection spends budget: the steps get more noise than without it.
    assert bounded.noise_multiplier_ > plain.noise_multiplier_
    # dp_event_ is the event the fields describe, and epsilon_ recomputes.
    rec = bounded.privacy_record_
    rebuilt = fermi_event(
        rec.noise_multiplier,
        rec.sampling_probability,
        rec.steps,
        bounded.marginal_noise_multiplier_,
        bounded.selection_noise_multiplier_,
    )
    assert rebuilt == bounded.dp_event_
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(bounded.dp_event_)
    assert acc.get_epsilon(bounded.delta_) == pytest.approx(bounded.epsilon_)
    assert "candidate models" in rec.mechanism
    # Without the selection Gaussian the same steps would spend less.
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(fermi_event(rec.noise_multiplier, rec.sampling_probability,
                            rec.steps, bounded.marginal_noise_multiplier_))
    assert acc.get_epsilon(bounded.delta_) < bounded.epsilon_


def test_private_selection_with_a_given_noise_multiplier():
    X, y, s = synthetic(5, n=3000, correlation=1.5)
    est = _dp(disparity_bound=0.05, selection_noise_multiplier=50.0).fit(
        X, y, sensitive_features=s
    )
    assert est.selection_noise_multiplier_ == 50.0
    assert est.epsilon_ <= 1.0
    path = est.weight_path_
    assert [p["fairness_weight"] for p in path] == list(PRIVATE_BOUND_WEIGHTS)
    # The rule: the smallest weight whose noisy disparity plus its margin
    # meets the bound, else the least noisy disparity.
    feasible = [p for p in path if p["training_disparity"] + p["margin"] <= 0.05]
    expected = (
        feasible[0]
        if feasible
        else min(path, key=lambda p: p["training_disparity"])
    )
    assert est.fairness_weight_ == expected["fairness_weight"]
    assert est.training_disparity_ == expected["training_disparity"]


def test_selection_counts_have_sensitivity_one_per_candidate():
    # The released table of one candidate: adding or removing one record
    # moves exactly one cell by one (L2 sensitivity 1; sqrt(K) for K tables).
    rng = np.random.default_rng(0)
    y, pred, codes = (rng.integers(0, 2, 50) for _ in range(3))
    full = prediction_counts(pred, y, codes, 2, 2)
    for i in (0, 17, 49):
        keep = np.arange(50) != i
        diff = full - prediction_counts(pred[keep], y[keep], codes[keep], 2, 2)
        assert np.abs(diff).sum() == 1.0
        assert np.linalg.norm(diff) == 1.0


def test_private_selection_reduces_disparity():
    X, y, s = synthetic(6, n=4000, correlation=1.5)
    plain = _dp(fairness_weight=0.0, epsilon=3.0).fit(X, y, sensitive_features=s)
    bounded = _dp(disparity_bound=0.05, epsilon=3.0).fit(X, y, sensitive_features=s)
    assert _train_disparity(bounded, X, y, s, "demographic_parity") < 0.5 * (
        _train_disparity(plain, X, y, s, "demographic_parity")
    )


def test_private_selection_budget_too_small_for_the_selection():
    X, y, s = synthetic(5, n=3000)
    est = _dp(disparity_bound=0.05, epsilon=0.05, selection_noise_multiplier=1.0)
    with pytest.raises(ValueError, match="selection of fairness_weight"):
        est.fit(X, y, sensitive_features=s)


# -- the full Adult grid (slow) ----------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("DPFAIR_FULL"), reason="the Adult grid runs with DPFAIR_FULL=1"
)
@pytest.mark.parametrize(
    "representation", ["numeric", "standard_all", "minmax", "spline"]
)
@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_knob_on_adult(representation, constraint):
    import sys

    here = os.path.dirname(__file__)
    sys.path.insert(0, os.path.join(here, "..", "..", "benchmarks"))
    from bench_fermi import load_representation

    X, y, s, *_ = load_representation(representation)
    hard = []
    for weight in WEIGHTS:
        # Large weights are ill-conditioned: more L-BFGS iterations (on the
        # spline features 1000 leave stationarity 3e-3 at weight 1000, with
        # a ConvergenceWarning).
        est = FERMIClassifier(
            constraint=constraint,
            fairness_weight=weight,
            max_full_batch_iter=5000,
            random_state=0,
        ).fit(X, y, sensitive_features=s)
        assert est.stationarity_ <= est.tol
        hard.append(est.training_disparity_)
    least = int(np.argmin(hard))
    if constraint == "demographic_parity":
        assert np.all(np.diff(hard[: least + 1]) <= 0.005), hard
    # Equalized odds / opportunity: the hard gap is a maximum over labels
    # (TPR and FPR differences) of what the soft ERMI trades off jointly; on
    # Adult it is not monotone even below its least weight (numeric
    # features: 0.071, 0.043, 0.061, 0.064, 0.041, 0.017 at 0..16), at
    # stationary points. disparity_bound is the interface for it.
    for bound in (0.05, 0.02, 0.01):
        if bound >= hard[least]:
            est = FERMIClassifier(
                constraint=constraint, disparity_bound=bound, random_state=0
            ).fit(X, y, sensitive_features=s)
            assert est.training_disparity_ <= bound
    assert math.isfinite(hard[least])


@pytest.mark.parametrize("alpha", [0.0, 0.1])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_binary_full_batch_phase_solves_the_two_logit_objective(alpha, fit_intercept):
    # The binary phase works on one logit; at its solution the gradient of
    # the two-logit objective (the model as returned) is ~0 along the
    # coordinates it can move (coef[:, 1] - coef[:, 0], the intercept).
    from sklearn_dpfair._solvers.fermi._lbfgs import (
        exact_dual_objective,
        refine_full_batch,
    )
    from sklearn_dpfair.fairness._ermi import ERMIRegularizer

    X, y, s = synthetic(8, n=800, correlation=1.5, scale=5.0)
    ps = np.bincount(s) / s.size
    reg = ERMIRegularizer(ps[None, :], np.ones(1), 2)
    cells = reg.row_cells(np.zeros(s.size, dtype=int), s)
    kw = dict(
        regularizer=reg,
        cells=cells,
        fairness_weight=20.0,
        alpha=alpha,
        intercept_scaling=1.0 if fit_intercept else 0.0,
    )
    fit = refine_full_batch(
        X, y, coef=np.zeros((4, 2)), w0=np.zeros(2), tol=1e-8, max_iter=2000, **kw
    )
    params = np.concatenate([fit.coef.ravel(), fit.w0])
    value, grad = exact_dual_objective(params, X, y, **kw)
    assert value == pytest.approx(fit.objective, rel=1e-10)
    g_coef = grad[:8].reshape(4, 2)
    assert np.max(np.abs(g_coef[:, 1] - g_coef[:, 0])) < 1e-6
    if fit_intercept:
        assert abs(grad[9] - grad[8]) < 1e-6
    else:
        assert np.all(fit.w0 == 0)
