"""DPFERMIClassifier(small_budget=): the intercept-only model a small budget affords."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair import DPFERMIClassifier

# 300 rows of 40 columns at epsilon = 1: 300 < 15 * 41, so "auto" falls back.
N, D = 300, 40


def _data(n=N, d=D, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d))
    y = np.minimum((rng.random(n) < 0.3).astype(int) + (rng.random(n) < 0.1), n_classes - 1)
    return X, y, s


def _fit(X, y, s, **params):
    est = DPFERMIClassifier(
        classes=list(range(int(y.max()) + 1)),
        groups=[0, 1],
        random_state=0,
        **params,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, sensitive_features=s)
    return est, [str(w.message) for w in caught if "small_budget" in str(w.message)]


def test_falls_back_with_a_warning_and_the_planned_event():
    X, y, s = _data()
    est, msgs = _fit(X, y, s)
    assert est.intercept_only_ is True
    assert len(msgs) == 1
    assert f"{N} * 1 = {N}" in msgs[0] and f"15 * {D + 1}" in msgs[0]
    np.testing.assert_array_equal(est.coef_, 0.0)
    # Majority class (0, at 70%) everywhere.
    np.testing.assert_array_equal(est.predict(X), 0)
    assert est.t_ == 0
    assert est.epsilon_ <= 1.0
    assert est.privacy_plan(N, D).dp_event == est.dp_event_
    assert "label counts" in est.privacy_record_.mechanism


def test_small_budget_fit_turns_it_off():
    X, y, s = _data()
    est, msgs = _fit(X, y, s, small_budget="fit")
    assert est.intercept_only_ is False
    assert not msgs
    assert np.any(est.coef_ != 0)
    assert est.privacy_plan(N, D).dp_event == est.dp_event_


@pytest.mark.parametrize(
    "params",
    [dict(epsilon=30.0), dict(epsilon=math.inf), dict(noise_multiplier=1.0, epsilon=math.inf)],
)
def test_large_or_uncalibrated_budgets_fit_the_model(params):
    X, y, s = _data()
    est, msgs = _fit(X, y, s, **params)
    assert est.intercept_only_ is False
    assert not msgs


def test_rule_reads_public_counts_only():
    # Two datasets of the same shape, opposite majorities: the same decision
    # (and event); only the released intercept differs.
    X, y, s = _data()
    a, _ = _fit(X, y, s)
    b, _ = _fit(X, 1 - y, s)
    assert a.intercept_only_ and b.intercept_only_
    assert a.dp_event_ == b.dp_event_
    assert a.intercept_[0] < 0 < b.intercept_[0]


def test_disparity_bound_is_met_by_the_constant():
    X, y, s = _data()
    est, msgs = _fit(X, y, s, disparity_bound=0.01, constraint="equalized_odds")
    assert est.intercept_only_ and msgs
    assert est.bound_met_ is True
    assert est.training_disparity_ == 0.0
    assert est.privacy_plan(N, D).dp_event == est.dp_event_


def test_multiclass_intercepts():
    X, y, s = _data(n_classes=3)
    est, msgs = _fit(X, y, s)
    assert est.intercept_only_ and msgs
    assert est.coef_.shape == (3, D) and est.intercept_.shape == (3,)
    np.testing.assert_allclose(np.exp(est.intercept_).sum(), 1.0)
    assert est.privacy_plan(N, D, n_classes=3).dp_event == est.dp_event_


def test_float32_and_proba():
    X, y, s = _data()
    est, _ = _fit(X.astype(np.float32), y, s)
    assert est.coef_.dtype == np.float32
    proba = est.predict_proba(X[:3])
    np.testing.assert_allclose(proba, np.tile(proba[0], (3, 1)))
