"""DPLogisticRegression's small_budget rule: the intercept-only model, planned."""

import numpy as np
import pytest

from sklearn_dpfair.linear_model import DPLogisticRegression

SMALL = dict(epsilon=0.1, classes=[0, 1])  # 300 * 0.1 < 5 * 21


def _data(n=300, d=20, seed=0, shift=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] > shift).astype(int)


@pytest.mark.parametrize("solver_kwargs", [{}, {"solver": "output-perturbation",
                                                "feature_norm_bound": 5.0, "alpha": 0.1}])
def test_a_small_budget_releases_the_planned_intercept_only_model(solver_kwargs):
    X, y = _data()
    est = DPLogisticRegression(random_state=0, **SMALL, **solver_kwargs)
    with pytest.warns(UserWarning, match=r"300 \* 0.1 = 30 is below 5 \* \(n_features"):
        est.fit(X, y)
    assert est.intercept_only_ and not np.any(est.coef_)
    assert est.coef_.shape == (1, 20) and est.n_iter_ == 0
    assert est.privacy_plan(300, 20).dp_event == est.dp_event_
    assert est.epsilon_ <= 0.1 + 1e-9 and est.adjacency_ == "add_remove"
    # A constant predictor: the (noisy) majority class for every row.
    assert np.unique(est.predict(X)).size == 1


def test_the_decision_reads_public_counts_only():
    # Two datasets of the same shape with opposite label balance: both fall
    # back; the rule never looks at the labels or the signal.
    for shift in (-1.0, 1.0):
        X, y = _data(shift=shift)
        with pytest.warns(UserWarning, match="small_budget"):
            est = DPLogisticRegression(random_state=0, **SMALL).fit(X, y)
        assert est.intercept_only_
    # The intercept follows the (noisy) label balance: logit of classes_[1].
    X, y = _data(n=2000, d=1000, shift=1.0)  # 2000 * 1 < 5 * 1001
    est = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
    with pytest.warns(UserWarning):
        est.fit(X, y)
    assert est.intercept_[0] == pytest.approx(np.log(y.mean() / (1 - y.mean())), abs=0.05)


def test_fit_always_fits_and_large_budgets_are_unaffected():
    X, y = _data()
    est = DPLogisticRegression(small_budget="fit", random_state=0, **SMALL).fit(X, y)
    assert not est.intercept_only_ and np.any(est.coef_)
    est = DPLogisticRegression(epsilon=2.0, classes=[0, 1], random_state=0).fit(X, y)
    assert not est.intercept_only_  # 300 * 2 >= 5 * 21
    # A user noise multiplier, epsilon = inf and delta = 0 are not decided by it.
    for kwargs in ({"noise_multiplier": 200.0}, {"epsilon": np.inf}):
        est = DPLogisticRegression(classes=[0, 1], **{"epsilon": 0.1, **kwargs}).fit(X, y)
        assert not est.intercept_only_


def test_multiclass_and_float32():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 20)).astype(np.float32)
    y = rng.integers(0, 3, 300)
    with pytest.warns(UserWarning, match="small_budget"):
        est = DPLogisticRegression(epsilon=0.1, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert est.coef_.shape == (3, 20) and est.coef_.dtype == np.float32
    assert est.intercept_.dtype == np.float32
    proba = est.predict_proba(X[:3])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert est.privacy_plan(300, 20, n_classes=3).dp_event == est.dp_event_
