# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A declared ``classes`` is sorted into ``classes_``, as scikit-learn sorts it.

scikit-learn's scorers and its binary ``decision_function`` convention read
``classes_[1]`` as the positive class, so the order in which a label set is
declared must change neither ``classes_`` nor the fitted model.
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import cross_val_score

from sklearn_dpfair import DPFERMIClassifier, DPLogisticRegression, DPMLPClassifier
from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
from sklearn_dpfair.utils._validation import resolve_classes


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 300
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    groups = rng.integers(0, 2, size=n)
    return X, y, groups


# Non-private fits (epsilon=inf), seeded: the two declarations of one set must
# give the same model.
CLASSIFIERS = {
    "logistic": (lambda c: DPLogisticRegression(epsilon=np.inf, classes=c), False),
    "mlp": (
        lambda c: DPMLPClassifier(
            epsilon=np.inf, classes=c, max_iter=20, random_state=0
        ),
        False,
    ),
    "fermi": (
        lambda c: DPFERMIClassifier(
            epsilon=np.inf, classes=c, groups=[0, 1], max_iter=5, random_state=0
        ),
        True,
    ),
}


def _fit(name, classes, X, y, groups):
    make, fair = CLASSIFIERS[name]
    extra = {"sensitive_features": groups} if fair else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make(classes).fit(X, y, **extra)


@pytest.mark.parametrize(
    "declared, expected",
    [
        ([1, 0], [0, 1]),
        ((2, 0, 1), [0, 1, 2]),
        (["yes", "no"], ["no", "yes"]),
        ([True, False], [False, True]),
        ([1, 0.0], [0.0, 1.0]),
    ],
    ids=["int", "int-3", "str", "bool", "int-float"],
)
def test_resolve_classes_sorts_the_declared_set(declared, expected):
    # As scikit-learn's partial_fit(classes=...): the set sorted.
    sorted_ = SGDClassifier().partial_fit([[0.0]], [declared[0]], classes=declared)
    assert sorted_.classes_.tolist() == expected
    y = np.array([declared[0], declared[-1], declared[0]])
    classes_, y_encoded, caveats = resolve_classes(declared, y)
    assert classes_.tolist() == expected
    # The codes index the sorted classes_.
    assert classes_[y_encoded].tolist() == y.tolist()
    assert caveats == []


def test_resolve_classes_keeps_its_refusals():
    with pytest.raises(ValueError, match="not in the declared classes"):
        resolve_classes([1, 0], np.array([0, 2]))
    with pytest.raises(ValueError, match="duplicate"):
        resolve_classes([1, 0, 1], np.array([0, 1]))
    with pytest.raises(ValueError, match="at least two"):
        resolve_classes([1], np.array([1]))


@pytest.mark.parametrize("declared", [[0, 1, np.nan], [0.0, float("nan")], ["a", None]])
def test_a_missing_declared_label_is_refused(declared):
    # NaN was kept as a third class no row can have (NaN != NaN), and None
    # beside numbers raised numpy's TypeError from the sort.
    with pytest.raises(ValueError, match="classes contains a missing value"):
        resolve_classes(declared, np.array([0, 1]))


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_declared_order_gives_the_same_fit(name, data):
    X, y, groups = data
    ordered = _fit(name, [0, 1], X, y, groups)
    reversed_ = _fit(name, [1, 0], X, y, groups)
    assert ordered.classes_.tolist() == reversed_.classes_.tolist() == [0, 1]
    np.testing.assert_allclose(
        reversed_.predict_proba(X), ordered.predict_proba(X), rtol=1e-9, atol=1e-12
    )
    assert np.array_equal(reversed_.predict(X), ordered.predict(X))
    # The positive class is classes_[1] = 1: its probability rises with the
    # feature that makes y = 1.
    assert np.corrcoef(reversed_.predict_proba(X)[:, 1], X[:, 0])[0, 1] > 0.5


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_string_labels_are_sorted(name, data):
    X, y, groups = data
    labels = np.where(y == 1, "yes", "no")
    clf = _fit(name, ["yes", "no"], X, labels, groups)
    assert clf.classes_.tolist() == ["no", "yes"]
    assert set(clf.predict(X)) <= {"no", "yes"}
    # predict_proba's second column is "yes".
    proba_yes = clf.predict_proba(X)[:, 1]
    assert proba_yes[labels == "yes"].mean() > proba_yes[labels == "no"].mean()


@pytest.mark.parametrize("name", ["logistic", "mlp"])
def test_roc_auc_does_not_depend_on_the_declared_order(name, data):
    X, y, _ = data
    make, _ = CLASSIFIERS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auc = {
            tuple(c): cross_val_score(make(c), X, y, cv=3, scoring="roc_auc").mean()
            for c in ([0, 1], [1, 0])
        }
    assert auc[(0, 1)] > 0.9
    assert auc[(1, 0)] == pytest.approx(auc[(0, 1)], abs=1e-9)


def test_decision_function_sign_matches_sklearn(data):
    # The binary decision_function is the logit of classes_[1] = 1, as in
    # scikit-learn's LogisticRegression, whatever the declared order.
    from sklearn.linear_model import LogisticRegression

    X, y, _ = data
    ours = _fit("logistic", [1, 0], X, y, None)
    ref = LogisticRegression().fit(X, y)
    assert np.corrcoef(ours.decision_function(X), ref.decision_function(X))[0, 1] > 0.9
    assert np.sign(ours.coef_[0, 0]) == np.sign(ref.coef_[0, 0]) == 1.0


def test_fermi_default_opportunity_class_is_the_larger_label(data):
    # opportunity_class=None is classes_[1]: the sorted set's, so [1, 0] and
    # [0, 1] constrain the same class under equal opportunity.
    X, _, groups = data
    rng = np.random.default_rng(1)
    y = ((X[:, 0] + 0.8 * groups + 0.3 * rng.normal(size=len(groups))) > 0.4)
    y = y.astype(int)
    fits = []
    for classes in ([0, 1], [1, 0]):
        clf = DPFERMIClassifier(
            epsilon=np.inf,
            constraint="equal_opportunity",
            fairness_weight=32.0,
            classes=classes,
            groups=[0, 1],
            max_iter=5,
            random_state=0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(clf.fit(X, y, sensitive_features=groups))
    assert fits[0].classes_.tolist() == fits[1].classes_.tolist() == [0, 1]
    np.testing.assert_allclose(fits[1].coef_, fits[0].coef_, rtol=1e-9, atol=1e-12)


def test_search_classes_are_sorted():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=2000, random_state=0)
    search = PrivateHyperparameterSearch(
        DPLogisticRegression(classes=[1, 0], max_iter=5),
        {"clip_norm": [0.5, 2.0]},
        epsilon=2.0,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.classes_.tolist() == [0, 1]
    assert search.best_estimator_.classes_.tolist() == [0, 1]


def test_dask_fit_classes_are_sorted(dask_client, data):
    da = pytest.importorskip("dask.array")
    X, y, _ = data
    Xd, yd = da.from_array(X, chunks=(100, -1)), da.from_array(y, chunks=100)
    fits = []
    for classes in ([0, 1], [1, 0]):
        clf = DPLogisticRegression(
            classes=classes,
            execution="dask",
            epsilon=np.inf,
            max_iter=3,
            random_state=0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(clf.fit(Xd, yd))
    assert fits[1].classes_.tolist() == [0, 1]
    np.testing.assert_allclose(fits[1].coef_, fits[0].coef_, rtol=1e-9, atol=1e-12)


def test_federated_fit_classes_are_sorted(data):
    X, y, _ = data
    silos = np.repeat(["a", "b", "c"], len(y) // 3)
    fits = []
    for classes in ([0, 1], [1, 0]):
        clf = DPLogisticRegression(
            classes=classes, epsilon=4.0, max_iter=2, random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(clf.fit(X, y, silos=silos))
    assert fits[1].classes_.tolist() == [0, 1]
    np.testing.assert_allclose(fits[1].coef_, fits[0].coef_, rtol=1e-9, atol=1e-12)
