# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPMLPClassifier on raw-scale columns: feature_scaling, feature_bounds, eps = inf."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair.neural import DPMLPClassifier

# Columns in mixed units: scales 1e-3 .. 1e4, two shifted by 500.
SCALES = np.array([1e-3, 1e-1, 1.0, 1e2, 1e3, 1e4])
OFFSETS = np.array([500.0, 0.0, 0.0, 500.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def raw():
    X, y = make_classification(
        n_samples=6000, n_features=6, n_informative=4, random_state=0
    )
    X = X * SCALES + OFFSETS
    return X[:4000], y[:4000], X[4000:], y[4000:]


def _clf(**kw):
    return DPMLPClassifier(**{"classes": [0, 1], "random_state": 0, **kw})


def test_infinite_epsilon_matches_scikit_learn_on_raw_columns(raw):
    # The non-private reference on the same raw columns: MLPClassifier
    # (adam) on the standardized columns, the best scikit-learn gets (it
    # reaches 0.77 on the raw columns themselves).
    X, y, X_test, y_test = raw
    scaler = StandardScaler().fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = MLPClassifier((64,), random_state=0, max_iter=200)
        reference.fit(scaler.transform(X), y)
    expected = reference.score(scaler.transform(X_test), y_test)
    clf = _clf(epsilon=math.inf).fit(X, y)
    assert clf.score(X_test, y_test) >= expected - 0.01
    # The first layer reads the raw columns: no scaler is kept beside it.
    assert np.isfinite(clf.coefs_[0]).all()
    assert clf.predict_proba(X_test).shape == (len(y_test), 2)


def test_private_scales_rescue_raw_columns_at_epsilon_one(raw):
    X, y, X_test, y_test = raw
    scaled = [_clf(feature_scaling="auto", random_state=s).fit(X, y) for s in (0, 1)]
    plain = [_clf(random_state=s).fit(X, y) for s in (0, 1)]
    acc_scaled = np.mean([c.score(X_test, y_test) for c in scaled])
    acc_plain = np.mean([c.score(X_test, y_test) for c in plain])
    assert acc_scaled > 0.85
    assert acc_scaled > acc_plain + 0.05
    for clf in scaled:
        assert clf.epsilon_ <= 1.0
        assert "private quantiles" in clf.privacy_record_.mechanism
        # The quantiles are composed into the one event the plan predicts.
        assert clf.privacy_plan(len(y), X.shape[1]).dp_event == clf.dp_event_
        assert clf.dp_event_ != plain[0].dp_event_


def test_public_bounds_spend_nothing(raw):
    X, y, X_test, y_test = raw
    bounds = np.column_stack([OFFSETS - 5 * SCALES, OFFSETS + 5 * SCALES])
    clf = _clf(feature_scaling="auto", feature_bounds=bounds).fit(X, y)
    plain = _clf().fit(X, y)
    assert clf.dp_event_ == plain.dp_event_
    assert "feature_bounds" in clf.privacy_record_.mechanism
    assert clf.score(X_test, y_test) > 0.85


def test_private_scales_are_refused_with_silos(raw):
    # Silos take public feature_bounds only (tests/federated/
    # test_silos_feature_bounds.py); without them the refusal names them.
    X, y, _, _ = raw
    with pytest.raises(ValueError, match="needs public feature_bounds"):
        _clf(feature_scaling="auto").fit(X, y, silos=np.arange(len(y)) % 2)
    with pytest.raises(ValueError, match="needs public feature_bounds"):
        _clf(feature_scaling="auto").privacy_plan(len(y), X.shape[1], n_silos=2)


def _tiny_unit_column(n=2000):
    # Column 0 in units of 1e-39 (float32 holds it as subnormals): its
    # first-layer weights in the user's units are about 1e39.
    X, y = make_classification(n, 3, n_informative=2, n_redundant=0, random_state=1)
    X[:, 0] *= 1e-39
    return X, y


def test_a_float64_network_promotes_float32_input_to_predict():
    # Narrowed to float32, the float64 weights of the tiny-unit column
    # would be inf (an overflow warning) and every probability NaN;
    # promoted, as scikit-learn's MLP does, float32 input predicts as the
    # float64 input does.
    X, y = _tiny_unit_column()
    clf = _clf(hidden_layer_sizes=(8,), epsilon=math.inf, max_iter=5).fit(X, y)
    assert np.abs(clf.coefs_[0]).max() > np.finfo(np.float32).max
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = clf.predict_proba(X.astype(np.float32))
    assert np.isfinite(proba).all()
    np.testing.assert_array_equal(
        proba.argmax(axis=1), clf.predict_proba(X).argmax(axis=1)
    )


def test_a_float32_fit_at_infinite_epsilon_keeps_large_weights_finite():
    # The exact standardization maps the first layer back to the user's
    # units: 1e39 is kept in float64, never stored as inf.
    X, y = _tiny_unit_column()
    X32 = X.astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf = _clf(hidden_layer_sizes=(8,), epsilon=math.inf, max_iter=5)
        clf.fit(X32, y)
        proba = clf.predict_proba(X32)
    assert all(np.isfinite(W).all() for W in clf.coefs_)
    assert np.isfinite(proba).all()
    assert clf.score(X32, y) > 0.85


def test_infinite_epsilon_standardizes_a_column_of_huge_spread():
    # A column in units of 1e160: its squares overflow float64, so the
    # exact moments are computed on the column scaled by its magnitude;
    # the fit then learns it as it learns the column in plain units.
    X, y = make_classification(
        3000, 4, n_informative=2, n_redundant=0, random_state=1
    )
    huge = X.copy()
    huge[:, 1] *= 1e160
    plain = _clf(hidden_layer_sizes=(8,), epsilon=math.inf).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        scaled = _clf(hidden_layer_sizes=(8,), epsilon=math.inf).fit(huge, y)
    assert scaled.score(huge, y) >= plain.score(X, y) - 0.02
