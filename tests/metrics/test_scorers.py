# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import pickle
import warnings
from fractions import Fraction

import numpy as np
import pytest
import sklearn
from fairlearn.metrics import (
    demographic_parity_difference,
    equal_opportunity_difference,
    equalized_odds_difference,
)
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from sklearn_dpfair.metrics import (
    demographic_parity_linf,
    ermi_score,
    make_fairness_scorer,
)


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


def test_missing_groups_message_says_a_direct_call_needs_routing(fitted):
    # With routing off, scikit-learn refuses the scorer's keyword arguments:
    # the message must say to enable routing for a direct call too.
    clf, X, y, s = fitted
    scorer = make_fairness_scorer()
    with sklearn.config_context(enable_metadata_routing=False):
        with pytest.raises(ValueError, match=r"config_context\(enable_metadata_rout"):
            scorer(clf, X, y)
    # The advice, followed, works.
    with sklearn.config_context(enable_metadata_routing=True):
        assert np.isfinite(scorer(clf, X, y, sensitive_features=s))


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


@pytest.mark.parametrize(
    "tolerance",
    [
        np.nan,
        np.inf,
        -0.1,
        pytest.param(10**400, id="1e400"),
        pytest.param(Fraction(10**400, 3), id="Fraction-1e400"),
        pytest.param(np.float16(np.nan), id="float16-nan"),
    ],
)
def test_tolerance_must_be_finite_and_non_negative(tolerance):
    # 10**400 made np.isfinite raise a TypeError naming no parameter.
    # A NaN tolerance turned the penalty off: no gap is above NaN.
    with pytest.raises(ValueError, match="tolerance must be"):
        make_fairness_scorer(base_metric="accuracy", tolerance=tolerance)


@pytest.mark.parametrize("param", ["fairness_penalty", "tolerance"])
@pytest.mark.parametrize(
    "value",
    [
        pytest.param(10**30, id="1e30"),
        pytest.param(2**64, id="2**64"),
        pytest.param(np.float16(0.5), id="float16"),
        pytest.param(Fraction(1, 3), id="Fraction"),
    ],
)
def test_a_large_int_or_a_numpy_float_is_taken_as_its_float(fitted, param, value):
    # An int beyond int64 made np.isfinite raise a TypeError naming no
    # parameter; a float16 was compared with the largest float cast to
    # float16, an overflow warning.
    clf, X, y, s = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scorer = make_fairness_scorer(base_metric="accuracy", **{param: value})
    pred = clf.predict(X)
    gap = demographic_parity_difference(y, pred, sensitive_features=s)
    penalty = float(value) if param == "fairness_penalty" else 1.0
    tolerance = float(value) if param == "tolerance" else 0.0
    expected = accuracy_score(y, pred) - penalty * max(0.0, gap - tolerance)
    assert scorer(clf, X, y, sensitive_features=s) == pytest.approx(expected)


def test_a_penalty_beyond_the_largest_float_is_refused_naming_it():
    with pytest.raises(ValueError, match="^fairness_penalty must be a finite"):
        make_fairness_scorer(fairness_penalty=10**400)


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


@pytest.mark.parametrize("param", ["fairness_penalty", "tolerance"])
@pytest.mark.parametrize("value", ["1", None, [0.1]])
def test_non_numeric_penalty_or_tolerance_is_a_type_error_naming_it(param, value):
    # numpy's "ufunc 'isfinite' not supported" named neither.
    with pytest.raises(TypeError, match=f"^{param} must be a real number"):
        make_fairness_scorer(base_metric="accuracy", **{param: value})


@pytest.mark.parametrize(
    "fairness, base, fairness_fn, base_fn",
    [
        (
            "demographic_parity_difference",
            "accuracy",
            demographic_parity_difference,
            accuracy_score,
        ),
        (
            "equalized_odds_difference",
            "balanced_accuracy",
            equalized_odds_difference,
            balanced_accuracy_score,
        ),
    ],
)
def test_sample_weight_weighs_the_gap_and_the_base_score(
    fitted, fairness, base, fairness_fn, base_fn
):
    clf, X, y, s = fitted
    w = np.random.default_rng(1).random(y.shape[0])
    pred = clf.predict(X)
    scorer = make_fairness_scorer(fairness, base_metric=base, fairness_penalty=3.0)
    gap = fairness_fn(y, pred, sensitive_features=s, sample_weight=w)
    expected = base_fn(y, pred, sample_weight=w) - 3.0 * gap
    assert expected != pytest.approx(scorer(clf, X, y, sensitive_features=s))
    assert scorer(clf, X, y, sensitive_features=s, sample_weight=w) == expected
    gap_scorer = make_fairness_scorer(fairness)
    assert gap_scorer(clf, X, y, sensitive_features=s, sample_weight=w) == -gap


def test_routed_sample_weight_reaches_the_scorer(fitted):
    _, X, y, s = fitted
    w = np.random.default_rng(1).random(y.shape[0])
    # A scorer's set_score_request replaces its requests: name both.
    scorer = make_fairness_scorer(base_metric="accuracy").set_score_request(
        sensitive_features=True, sample_weight=True
    )
    cv = KFold(3)
    result = cross_validate(
        LogisticRegression().set_fit_request(sample_weight=False),
        X,
        y,
        cv=cv,
        scoring=scorer,
        params={"sensitive_features": s, "sample_weight": w},
        error_score="raise",
    )
    for score, (train, test) in zip(result["test_score"], cv.split(X)):
        pred = LogisticRegression().fit(X[train], y[train]).predict(X[test])
        gap = demographic_parity_difference(
            y[test], pred, sensitive_features=s[test], sample_weight=w[test]
        )
        expected = accuracy_score(y[test], pred, sample_weight=w[test]) - gap
        assert score == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "weight, match",
    [(-3.0, "Negative values"), (np.nan, "NaN"), (np.inf, "infinity")],
)
@pytest.mark.parametrize("base", [None, "accuracy"])
def test_a_weight_no_gap_can_take_is_refused_naming_sample_weight(
    weight, match, base
):
    # fairlearn takes them as given: a weight of -3 gave a demographic
    # parity gap of 2.33 (accuracy - gap: -2.33), and a NaN weight a gap of
    # 0.0 (the group whose rate was NaN left the difference).
    y = np.array([0, 1, 0, 1, 0, 1])
    pred = np.array([1, 1, 0, 1, 0, 0])
    s = np.array([0, 0, 0, 1, 1, 1])
    score = make_fairness_scorer(
        "demographic_parity_difference", base_metric=base
    )._score_func
    w = np.ones(6)
    w[2] = weight
    with pytest.raises(ValueError, match=match) as exc:
        score(y, pred, sensitive_features=s, sample_weight=w)
    assert "sample_weight" in str(exc.value)
    assert score(y, pred, sensitive_features=s, sample_weight=np.ones(6)) == (
        score(y, pred, sensitive_features=s)
    )


def test_weighted_linf_is_the_linf_of_repeated_rows(fitted):
    clf, X, y, s = fitted
    pred = clf.predict(X)
    w = np.random.default_rng(1).integers(0, 4, y.shape[0])
    weighted = demographic_parity_linf(y, pred, sensitive_features=s, sample_weight=w)
    repeated = demographic_parity_linf(
        np.repeat(y, w), np.repeat(pred, w), sensitive_features=np.repeat(s, w)
    )
    assert weighted == pytest.approx(repeated, rel=1e-12)
    assert weighted != pytest.approx(
        demographic_parity_linf(y, pred, sensitive_features=s)
    )
    scorer = make_fairness_scorer("demographic_parity_linf")
    assert scorer(clf, X, y, sensitive_features=s, sample_weight=w) == -weighted


def test_sample_weight_for_a_metric_without_it_names_the_metric(fitted):
    clf, X, y, s = fitted
    w = np.ones(y.shape[0])
    with pytest.raises(TypeError, match="ermi_score.*takes no sample_weight"):
        make_fairness_scorer("ermi")(clf, X, y, sensitive_features=s, sample_weight=w)
    # Unweighted, the same scorer works.
    assert np.isfinite(make_fairness_scorer("ermi")(clf, X, y, sensitive_features=s))


class _Predicts(BaseEstimator):
    """An estimator whose predictions are fixed: no fit in the way."""

    def __init__(self, pred):
        self.pred = pred

    def predict(self, X):
        return self.pred


_POSITIVE_LABEL_METRICS = [
    ("demographic_parity_difference", demographic_parity_difference),
    ("equalized_odds_difference", equalized_odds_difference),
    ("equal_opportunity_difference", equal_opportunity_difference),
]


@pytest.mark.parametrize("name, metric", _POSITIVE_LABEL_METRICS)
@pytest.mark.parametrize(
    "negative, positive", [("denied", "approved"), (0, 2), (-3.5, 7.0)]
)
def test_pos_label_scores_other_labels_as_their_indicators(
    fitted, name, metric, negative, positive
):
    # fairlearn counts y_pred == 1: with "denied"/"approved" or 0/2 every
    # selection rate was 0, and every model scored perfectly fair.
    _, X, y, s = fitted
    pred = (X.sum(axis=1) > 1.5).astype(int)  # errs, more in one group
    assert metric(y, pred, sensitive_features=s) > 0
    relabel = np.array([negative, positive])
    y_text, pred_text = relabel[y], relabel[pred]
    scorer = make_fairness_scorer(name, pos_label=positive)
    expected = -metric(y, pred, sensitive_features=s)
    assert scorer(_Predicts(pred_text), X, y_text, sensitive_features=s) == expected
    # The positive label is the one named, not the larger one.
    flipped = make_fairness_scorer(name, pos_label=negative)
    assert flipped(_Predicts(pred_text), X, y_text, sensitive_features=s) == -metric(
        1 - y, 1 - pred, sensitive_features=s
    )


@pytest.mark.parametrize("name, _metric", _POSITIVE_LABEL_METRICS)
@pytest.mark.parametrize("labels", [("denied", "approved"), (7, 9)])
def test_other_labels_without_pos_label_are_refused_without_showing_them(
    fitted, name, _metric, labels
):
    clf, X, y, s = fitted
    relabel = np.array(labels)
    scorer = make_fairness_scorer(name, base_metric="accuracy")
    with pytest.raises(ValueError, match="pos_label=") as info:
        scorer(_Predicts(relabel[clf.predict(X)]), X, relabel[y], sensitive_features=s)
    kind = "strings" if isinstance(labels[0], str) else "numbers other than"
    assert kind in str(info.value)
    assert not any(str(label) in str(info.value) for label in labels)


@pytest.mark.parametrize("name, metric", _POSITIVE_LABEL_METRICS)
@pytest.mark.parametrize(
    "relabel", [np.array([0, 1]), np.array([-1, 1]), np.array([False, True])]
)
def test_labels_where_one_is_positive_reach_fairlearn_unchanged(
    fitted, name, metric, relabel
):
    clf, X, y, s = fitted
    y_true, y_pred = relabel[y], relabel[clf.predict(X)]
    gap = metric(y_true, y_pred, sensitive_features=s)
    for pos_label in (None, relabel[1].item()):
        scorer = make_fairness_scorer(name, pos_label=pos_label)
        assert scorer(_Predicts(y_pred), X, y_true, sensitive_features=s) == -gap


@pytest.mark.parametrize("name, _metric", _POSITIVE_LABEL_METRICS)
@pytest.mark.parametrize("pos_label", [None, 1])
def test_more_than_two_labels_are_refused_by_binary_metrics(
    fitted, name, _metric, pos_label
):
    clf, X, y, s = fitted
    y3 = y + (X[:, 1] > 1)  # 0, 1 and 2
    scorer = make_fairness_scorer(name, pos_label=pos_label)
    with pytest.raises(ValueError, match="more than two distinct labels"):
        scorer(_Predicts(clf.predict(X)), X, y3, sensitive_features=s)
    # The metrics that compare every class score them.
    assert np.isfinite(
        make_fairness_scorer("ermi")(_Predicts(y3), X, y3, sensitive_features=s)
    )


def test_pos_label_must_be_one_of_two_labels(fitted):
    clf, X, y, s = fitted
    relabel = np.array(["denied", "approved"])
    scorer = make_fairness_scorer(pos_label="yes")
    with pytest.raises(ValueError, match="pos_label='yes' is not one of") as info:
        scorer(_Predicts(relabel[clf.predict(X)]), X, relabel[y], sensitive_features=s)
    assert "approved" not in str(info.value)
    # A fold with one label only: nothing is positive, the gap is 0.
    one = np.full(y.shape[0], "denied")
    assert scorer(_Predicts(one), X, one, sensitive_features=s) == 0.0


def test_pos_label_with_every_class_metrics_or_callables():
    for name in ("demographic_parity_linf", "ermi"):
        with pytest.raises(ValueError, match="takes none"):
            make_fairness_scorer(name, pos_label="yes")
    with pytest.raises(ValueError, match="opportunity_class="):
        make_fairness_scorer("ermi", pos_label="yes", constraint="equal_opportunity")
    with pytest.raises(TypeError, match="pos_label must be a label"):
        make_fairness_scorer(pos_label=["yes"])
    seen = {}

    def gap(y_true, y_pred, *, sensitive_features, pos_label):
        seen["pos_label"] = pos_label
        return 0.0

    # A callable reads pos_label itself, as it did from metric_kwargs.
    scorer = make_fairness_scorer(gap, pos_label="yes")
    y = np.array(["no", "yes", "no", "yes"])
    scorer(_Predicts(y), None, y, sensitive_features=[0, 0, 1, 1])
    assert seen == {"pos_label": "yes"}


def test_search_with_string_labels_sees_the_gap(fitted):
    # A search penalizing the gap scored every model as if it were fair.
    _, X, y, s = fitted
    y_text = np.array(["denied", "approved"], dtype=object)[y]
    scores = {}
    for labels, pos_label in ((y, None), (y_text, "approved")):
        cv = cross_validate(
            LogisticRegression(),
            X,
            labels,
            cv=KFold(3),
            scoring=make_fairness_scorer(
                base_metric="accuracy", fairness_penalty=2.0, pos_label=pos_label
            ),
            params={"sensitive_features": s},
            error_score="raise",
        )
        scores[pos_label] = cv["test_score"]
    np.testing.assert_allclose(scores["approved"], scores[None], rtol=1e-12)
