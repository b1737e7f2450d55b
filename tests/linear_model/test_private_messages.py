# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Errors and warnings name the problem and the parameter, never the private data.

Validation is outside the guarantee, but what it prints need not publish the
private values that failed it. Each test feeds one distinctive private value
(a label, a group, a count of rows) and checks that the message does not
contain it.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    DPMLPClassifier,
    FERMIClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
    SemiLocalDPLinearRegression,
)
from sklearn_dpfair.fairness import encode_sensitive_features
from sklearn_dpfair.utils._validation import resolve_classes

SECRET_LABEL = 987654321
SECRET_GROUP = "Zq-secret-4242"
FAST = dict(max_iter=1, batch_size=50)


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    s = rng.integers(0, 2, size=n)
    return X, y, s


def _message(excinfo):
    return str(excinfo.value)


def _assert_hidden(text, *secrets):
    for secret in secrets:
        assert str(secret) not in text, text


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPLogisticRegression(classes=[0, 1], **FAST),
        lambda: DPLogisticRegression(
            classes=[0, 1],
            solver="dp-frank-wolfe",
            l1_radius=1.0,
            feature_inf_bound=5.0,
        ),
        lambda: DPLogisticRegression(
            classes=[0, 1],
            solver="output-perturbation",
            alpha=1.0,
            feature_norm_bound=1.0,
        ),
        lambda: DPFERMIClassifier(classes=[0, 1], groups=[0, 1], **FAST),
    ],
    ids=["dp-sgd", "frank-wolfe", "output-perturbation", "dp-fermi"],
)
def test_a_label_outside_the_declared_classes_is_not_printed(make):
    X, y, s = _data()
    y = y.copy()
    y[7] = SECRET_LABEL
    fit_kw = {"sensitive_features": s} if isinstance(make(), DPFERMIClassifier) else {}
    with pytest.raises(ValueError, match="not in the declared classes") as exc:
        make().fit(X, y, **fit_kw)
    _assert_hidden(_message(exc), SECRET_LABEL)
    assert "classes" in _message(exc)


def test_resolve_classes_names_the_parameter_not_the_labels():
    y = np.array([0, 1, SECRET_LABEL, 1])
    with pytest.raises(ValueError, match="declared classes") as exc:
        resolve_classes([0, 1], y)
    _assert_hidden(_message(exc), SECRET_LABEL)


@pytest.mark.parametrize(
    "estimator",
    [
        DPLogisticRegression(classes=["no", "yes"], **FAST),
        DPMLPClassifier(classes=["no", "yes"], hidden_layer_sizes=(2,)),
        DPFERMIClassifier(classes=["no", "yes"], groups=[0, 1]),
    ],
    ids=["logistic", "mlp", "dpfermi"],
)
def test_a_label_of_another_type_is_reported_as_undeclared(estimator):
    # A 3 among string labels: the check of the declared set matches labels
    # by equality, never sorting y (the int and the strings do not order).
    X, y, s = _data()
    y = np.where(y == 1, "yes", "no").astype(object)
    y[7] = SECRET_LABEL
    groups = {"sensitive_features": s} if "FERMI" in type(estimator).__name__ else {}
    with pytest.raises(ValueError, match="not in the declared classes") as exc:
        estimator.fit(X, y, **groups)
    _assert_hidden(_message(exc), SECRET_LABEL)


def test_resolve_classes_matches_an_object_y_by_equality():
    y = np.array(["yes", "no", "yes"], dtype=object)
    classes_, y_encoded, _ = resolve_classes(["yes", "no"], y)
    assert classes_.tolist() == ["no", "yes"] and y_encoded.tolist() == [1, 0, 1]
    y[1] = SECRET_LABEL
    with pytest.raises(ValueError, match="declared classes") as exc:
        resolve_classes(["yes", "no"], y)
    _assert_hidden(_message(exc), SECRET_LABEL)


@pytest.mark.parametrize(
    "make",
    [HeavyTailDPRegressor, SemiDPLinearRegression, SemiLocalDPLinearRegression],
)
@pytest.mark.parametrize("where", ["X", "y"])
def test_an_unparsable_value_names_its_input_not_the_value(make, where):
    # The value is the message's only locator; redacted, the message says
    # which argument held it.
    X, _, _ = _data()
    y = (X @ [1.0, 2.0, 3.0]).astype(object)
    X = X.astype(object)
    {"X": X[7], "y": y}[where][1] = SECRET_GROUP
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=f"^Input {where}: could not") as exc:
            make().fit(X, y)
    _assert_hidden(_message(exc), SECRET_GROUP)


def test_a_single_inferred_class_is_not_printed():
    X, _, _ = _data()
    y = np.full(X.shape[0], SECRET_LABEL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="only one class") as exc:
            DPLogisticRegression(**FAST).fit(X, y)
    _assert_hidden(_message(exc), SECRET_LABEL)


@pytest.mark.parametrize(
    "groups, secret_column",
    [
        ([0, 1], lambda s: np.where(np.arange(s.size) == 5, SECRET_LABEL, s)),
        (
            ["a", "b"],
            lambda s: np.where(np.arange(s.size) == 5, SECRET_GROUP, s.astype(str))
            .astype(object)
            .tolist(),
        ),
    ],
    ids=["integer-groups", "string-groups"],
)
def test_a_group_outside_the_declared_groups_is_not_printed(groups, secret_column):
    X, y, s = _data()
    if groups == ["a", "b"]:
        s = np.where(s == 0, "a", "b")
    sf = secret_column(s)
    secret = SECRET_LABEL if groups == [0, 1] else SECRET_GROUP
    with pytest.raises(ValueError, match="not in the declared groups") as exc:
        DPFERMIClassifier(classes=[0, 1], groups=groups, **FAST).fit(
            X, y, sensitive_features=sf
        )
    _assert_hidden(_message(exc), secret)
    assert "groups" in _message(exc)


def test_intersectional_groups_outside_the_declared_ones_are_not_printed():
    sf = pd.DataFrame({"sex": ["F", "M", "F"], "race": ["w", SECRET_GROUP, "b"]})
    with pytest.raises(ValueError, match="not in the declared groups") as exc:
        encode_sensitive_features(sf, groups=[("F", "w"), ("F", "b"), ("M", "w")])
    _assert_hidden(_message(exc), SECRET_GROUP)


def test_a_scalar_sensitive_feature_is_not_printed():
    with pytest.raises(ValueError, match="1-D or 2-D") as exc:
        encode_sensitive_features(SECRET_GROUP)
    _assert_hidden(_message(exc), SECRET_GROUP)


def test_the_number_of_missing_groups_is_not_printed():
    X, y, s = _data()
    sf = s.astype(float)
    n_missing = 37
    sf[:n_missing] = np.nan
    with pytest.raises(ValueError, match="missing values") as exc:
        DPFERMIClassifier(classes=[0, 1], groups=[0, 1], **FAST).fit(
            X, y, sensitive_features=sf
        )
    _assert_hidden(_message(exc), n_missing)


@pytest.mark.parametrize("cls", [DPFERMIClassifier, FERMIClassifier])
def test_a_single_group_is_not_printed(cls):
    X, y, _ = _data()
    sf = np.full(X.shape[0], SECRET_GROUP, dtype=object)
    kw = dict(classes=[0, 1], **FAST) if cls is DPFERMIClassifier else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(**kw).fit(X, y, sensitive_features=sf)
    texts = [str(w.message) for w in caught]
    assert any("single group" in t for t in texts)
    for text in texts:
        _assert_hidden(text, SECRET_GROUP)


def test_inferred_classes_are_not_printed_for_a_wrong_opportunity_class():
    X, y, s = _data()
    y = np.where(y == 1, SECRET_LABEL, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the inferred label set's own warning
        with pytest.raises(ValueError, match="is not one of the classes") as exc:
            DPFERMIClassifier(
                constraint="equal_opportunity", opportunity_class=5, **FAST
            ).fit(X, y, sensitive_features=s)
    _assert_hidden(_message(exc), SECRET_LABEL)


def test_inferred_groups_left_out_for_their_size_are_named_by_position():
    # The group set read from the private sensitive_features (warned and
    # recorded as outside the guarantee) is not printed again by the
    # min_group_size warning: it names positions in groups_. Declared
    # groups are public and keep their labels.
    X, y, s = _data(n=600)
    sf = np.where(s == 0, SECRET_GROUP, "b")
    kw = dict(epsilon=1.0, classes=[0, 1], min_group_size=500, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPFERMIClassifier(**kw, **FAST).fit(X, y, sensitive_features=sf)
    small = [str(w.message) for w in caught if "min_group_size" in str(w.message)]
    assert len(small) == 1 and "groups_[0], groups_[1]" in small[0]
    _assert_hidden(small[0], SECRET_GROUP)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPFERMIClassifier(groups=[SECRET_GROUP, "b"], **kw, **FAST).fit(
            X, y, sensitive_features=sf
        )
    small = [str(w.message) for w in caught if "min_group_size" in str(w.message)]
    assert len(small) == 1 and f"{SECRET_GROUP}, b" in small[0]
