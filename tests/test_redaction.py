# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""No method of a private estimator prints the rows it is given.

``fit`` redacts third-party validation messages as it leaves
(``restored_on_failure``); the other methods that read rows (``predict``,
``transform``, ``score`` and the rest) read rows that can be private too (a
private test set, the training rows again), so they redact theirs as well,
and so do the private metrics, whose labels, probabilities and weights are
evaluated rows.
"""

import functools

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    PrivateHyperparameterSearch,
    SemiDPLinearRegression,
    make_private_pipeline,
)
from sklearn_dpfair.metrics import (
    demographic_parity_linf,
    ermi_score,
    make_fairness_scorer,
    renyi_correlation,
)
from sklearn_dpfair.neural import DPMLPClassifier
from sklearn_dpfair.preprocessing import DPStandardScaler

SECRET = "SECRET_42"


def _data(n=200):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


def _message(call):
    with pytest.raises((ValueError, TypeError)) as raised:
        call()
    text = str(raised.value)
    assert raised.value.__context__ is None and raised.value.__cause__ is None
    return text


def _message_if_any(call):
    """The message ``call`` raises, or "" (scikit-learn 1.6 accepts labels
    that mix strings and numbers where 1.7 refuses them, listing them)."""
    try:
        call()
    except (ValueError, TypeError) as exc:
        assert exc.__context__ is None and exc.__cause__ is None
        return str(exc)
    return ""


def _with_a_string(X):
    bad = X.astype(object)
    bad[7, 1] = SECRET
    return bad


_ESTIMATORS = {
    "DPLogisticRegression": lambda: DPLogisticRegression(classes=[0, 1]),
    "DPFERMIClassifier": lambda: DPFERMIClassifier(classes=[0, 1], small_budget="fit"),
    "DPMLPClassifier": lambda: DPMLPClassifier(classes=[0, 1], max_iter=2),
    "SemiDPLinearRegression": lambda: SemiDPLinearRegression(),
    "DPStandardScaler": lambda: DPStandardScaler(bounds=(-5, 5)),
    "PrivatePipeline": lambda: make_private_pipeline(
        DPStandardScaler(bounds=(-5, 5)),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
    ),
}


@functools.cache
def _fitted(name):
    X, y = _data()
    estimator = _ESTIMATORS[name]().set_params(random_state=0)
    if name == "SemiDPLinearRegression":
        return estimator.fit(X, X[:, 0], public_mask=np.arange(200) < 20)
    return estimator.fit(X, y)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", list(_ESTIMATORS))
@pytest.mark.parametrize(
    "method",
    ["predict", "predict_proba", "decision_function", "transform", "score"],
)
def test_methods_that_read_rows_print_none_of_them(name, method):
    estimator = _fitted(name)
    if not hasattr(estimator, method):
        pytest.skip(f"{name} has no {method}")
    X, y = _data()
    bad = _with_a_string(X)
    if method == "score":
        labels = y.astype(str)
        labels[5] = SECRET
        text = _message_if_any(lambda: estimator.score(X, labels))
        assert SECRET not in text, text
        calls = [lambda: estimator.score(bad, y)]
    else:
        one_dimensional = np.r_[123456.789, X[:5, 0]]
        calls = [
            lambda: getattr(estimator, method)(bad),
            lambda: getattr(estimator, method)(one_dimensional),
        ]
    for call in calls:
        text = _message(call)
        assert SECRET not in text and "123456" not in text, text


def test_a_pipeline_and_a_search_do_not_list_undeclared_categories():
    # A scikit-learn encoder with declared categories lists the unknown
    # values it found, inside the pipeline's and the search's predictions.
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"c": rng.choice(["a", "b"], n), "x": rng.normal(size=n)})
    y = (frame["x"] > 0).astype(int)
    pipe = make_private_pipeline(
        ColumnTransformer(
            [("onehot", OneHotEncoder(categories=[["a", "b"]]), ["c"])],
            remainder="passthrough",
        ),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        random_state=0,
    ).fit(frame, y)
    search = PrivateHyperparameterSearch(
        pipe, {"dplogisticregression__alpha": [1e-4, 1e-2]}, epsilon=2.0,
        random_state=0,
    ).fit(frame, y)
    bad = frame.copy()
    bad.loc[3, "c"] = SECRET
    for call in (
        lambda: pipe.predict(bad),
        lambda: pipe.predict_proba(bad),
        lambda: pipe.score(bad, y),
        lambda: search.predict(bad),
    ):
        text = _message(call)
        assert SECRET not in text and "Found unknown categories" in text


def test_the_metrics_print_no_evaluated_value():
    X, y = _data()
    groups = np.where(np.arange(200) % 2, "A", "B")
    proba = np.c_[np.full(200, 0.5), np.full(200, 0.5)].astype(object)
    proba[3, 0] = SECRET
    weight = np.ones(200).astype(object)
    weight[3] = SECRET
    labels = y.astype(str)
    labels[5] = SECRET
    scorer = make_fairness_scorer("demographic_parity_linf", base_metric="accuracy")
    calls = [
        lambda: ermi_score(y, y_proba=proba, sensitive_features=groups),
        lambda: renyi_correlation(y, y_proba=proba, sensitive_features=groups),
        lambda: ermi_score(
            y, y_proba=np.full(200, 123456.789), sensitive_features=groups
        ),
        lambda: demographic_parity_linf(
            y, y, sensitive_features=groups, sample_weight=weight
        ),
    ]
    for call in calls:
        text = _message(call)
        assert SECRET not in text and "123456" not in text, text
    text = _message_if_any(
        lambda: scorer._score_func(labels, y, sensitive_features=groups)
    )
    assert SECRET not in text, text
