# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import pickle

import numpy as np
import pytest
import sklearn
from fairlearn.metrics import demographic_parity_difference
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV

from sklearn_dpfair.metrics import ermi_score, make_fairness_scorer


@pytest.fixture
def fitted():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 400)
    X = rng.normal(size=(400, 2)) + s[:, None]
    y = (X[:, 0] > 0.5).astype(int)
    return LogisticRegression().fit(X, y), X, y, s


@pytest.fixture(autouse=True)
def routing():
    # Passing sensitive_features to a scikit-learn scorer needs routing.
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_scores_match_their_formulas(fitted):
    clf, X, y, s = fitted
    pred = clf.predict(X)
    gap = demographic_parity_difference(y, pred, sensitive_features=s)
    assert make_fairness_scorer()(clf, X, y, sensitive_features=s) == pytest.approx(
        -gap
    )
    scorer = make_fairness_scorer(
        base_metric="accuracy", fairness_penalty=2.0, tolerance=0.05
    )
    expected = accuracy_score(y, pred) - 2.0 * max(0.0, gap - 0.05)
    assert scorer(clf, X, y, sensitive_features=s) == pytest.approx(expected)
    ermi = make_fairness_scorer("ermi")
    assert ermi(clf, X, y, sensitive_features=s) == pytest.approx(
        -ermi_score(y, pred, sensitive_features=s)
    )


def test_scorer_requests_sensitive_features_and_explains_its_absence(fitted):
    clf, X, y, _s = fitted
    with sklearn.config_context(enable_metadata_routing=False):
        scorer = make_fairness_scorer()  # made without routing, works with it
    routing = scorer.get_metadata_routing()
    assert routing.score.requests["sensitive_features"] is True
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        scorer(clf, X, y)


def test_grid_search_routes_validation_groups(fitted):
    _, X, y, s = fitted
    search = GridSearchCV(
        LogisticRegression(),
        {"C": [0.01, 1.0]},
        cv=3,
        scoring=make_fairness_scorer("demographic_parity_linf"),
    )
    search.fit(X, y, sensitive_features=s)
    assert np.all(search.cv_results_["mean_test_score"] <= 0)


def test_scorer_pickles_and_rejects_unknown_names(fitted):
    clf, X, y, s = fitted
    scorer = pickle.loads(pickle.dumps(make_fairness_scorer(base_metric="accuracy")))
    assert np.isfinite(scorer(clf, X, y, sensitive_features=s))
    with pytest.raises(ValueError, match="Unknown fairness_metric"):
        make_fairness_scorer("parity")
    with pytest.raises(ValueError, match="Unknown base_metric"):
        make_fairness_scorer(base_metric="f1")
    with pytest.raises(ValueError, match="fairness_penalty"):
        make_fairness_scorer(fairness_penalty=-1)


@pytest.mark.parametrize("tolerance", [np.nan, np.inf, -0.1])
def test_tolerance_must_be_finite_and_non_negative(tolerance):
    # A NaN tolerance turned the penalty off: no gap is above NaN.
    with pytest.raises(ValueError, match="tolerance must be"):
        make_fairness_scorer(base_metric="accuracy", tolerance=tolerance)


def _unmeasurable(y_true, y_pred, *, sensitive_features):
    return np.nan


def test_nan_gap_scores_as_the_worst(fitted):
    clf, X, y, s = fitted
    # A gap nobody could measure is not a gap of 0: max(0, nan) was 0, so
    # the penalized score was the bare accuracy.
    for base in (None, "accuracy"):
        scorer = make_fairness_scorer(_unmeasurable, base_metric=base)
        assert scorer(clf, X, y, sensitive_features=s) == -np.inf
    # Without a penalty the gap does not count, measured or not.
    scorer = make_fairness_scorer(
        _unmeasurable, base_metric="accuracy", fairness_penalty=0.0
    )
    accuracy = accuracy_score(y, clf.predict(X))
    assert scorer(clf, X, y, sensitive_features=s) == accuracy
