# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression on neighbouring datasets that differ in one crafted record.

The record holds huge but finite features: its plain prediction ``x @ coef``
overflows to ``inf`` (or is ``inf - inf = nan``) once the coefficients exceed
1, and its squared norm overflows. Whatever it holds, the fit must end the
same way as on the neighbouring dataset (a finite model, the same privacy
record, the same warnings), and the model's predictions must be finite.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sklearn_dpfair import DPLogisticRegression


def _records(dtype, n_features=2):
    # Fractions of the largest float, so that float32 gets the same cases.
    big = float(np.finfo(dtype).max)
    return {
        "max-0": [0.95 * big, 0.0],
        "opposite": [-0.95 * big, 0.95 * big],
        "norm-overflows": [big**0.6] * n_features,
    }


def _data(n_classes, dtype, seed=0):
    # Well separated classes: the coefficients grow beyond 1, so the crafted
    # record's plain prediction overflows during the fit.
    X, y = make_classification(
        n_samples=300,
        n_features=2,
        n_informative=2,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        class_sep=3.0,
        random_state=seed,
    )
    return X.astype(dtype), y


_SOLVERS = {
    # epsilon = 8 and a large step: coefficients of a few units.
    "dp-sgd": dict(epsilon=8.0, learning_rate=5.0),
    "output-perturbation": dict(
        solver="output-perturbation", alpha=1e-2, feature_norm_bound=1e3
    ),
}


def _fit(X, y, n_classes, params):
    clf = DPLogisticRegression(classes=list(range(n_classes)), random_state=0, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    return clf, [(w.category, str(w.message)) for w in caught]


def _assert_same_record(a, b):
    for name in ("epsilon_", "delta_", "dp_event_", "noise_multiplier_", "adjacency_"):
        assert getattr(a, name) == getattr(b, name), name
    assert a.privacy_caveats_ == b.privacy_caveats_
    assert str(a.privacy_record_) == str(b.privacy_record_)


@pytest.mark.parametrize("n_classes", [2, 3], ids=["binary", "softmax"])
@pytest.mark.parametrize("solver", sorted(_SOLVERS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("record", ["max-0", "opposite", "norm-overflows"])
def test_one_huge_record_gives_a_finite_model_and_the_same_record(
    n_classes, solver, dtype, record
):
    X, y = _data(n_classes, dtype)
    crafted = np.array([_records(dtype)[record]], dtype=dtype)
    # Replace-one neighbours (same n, so every public quantity is equal):
    # the crafted record instead of an ordinary one.
    X_crafted = np.vstack([X[:-1], crafted])
    with_record, warned = _fit(X_crafted, y, n_classes, _SOLVERS[solver])
    without, warned_without = _fit(X, y, n_classes, _SOLVERS[solver])

    for clf in (with_record, without):
        assert np.isfinite(clf.coef_).all() and np.isfinite(clf.intercept_).all()
    _assert_same_record(with_record, without)
    # No warning may tell the two worlds apart (numpy overflow warnings did).
    assert warned == warned_without
    # The fitted model predicts finite values on the crafted record too.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for predict in ("decision_function", "predict_proba", "predict_log_proba"):
            assert np.isfinite(getattr(with_record, predict)(X_crafted)).all()


def test_add_remove_neighbour_has_a_finite_model():
    X, y = _data(3, np.float64)
    params = _SOLVERS["dp-sgd"]
    for record in _records(np.float64).values():
        clf, _ = _fit(np.vstack([X, record]), np.append(y, 0), 3, params)
        assert np.isfinite(clf.coef_).all() and np.isfinite(clf.intercept_).all()


def test_output_perturbation_projects_a_huge_record_instead_of_dropping_it():
    # The row [1e200, 0] is clipped to [R, 0] like any long row (before, its
    # norm overflowed and the row became 0): same model as with [2R, 0].
    X, y = _data(2, np.float64)
    params = dict(_SOLVERS["output-perturbation"], feature_norm_bound=2.0)
    huge, _ = _fit(np.vstack([X[:-1], [1e200, 0.0]]), y, 2, params)
    long, _ = _fit(np.vstack([X[:-1], [4.0, 0.0]]), y, 2, params)
    np.testing.assert_allclose(huge.coef_, long.coef_, rtol=1e-12)
    np.testing.assert_allclose(huge.intercept_, long.intercept_, rtol=1e-12)


def test_federated_silo_with_a_huge_record_gives_a_finite_model():
    X, y = _data(3, np.float64)
    silos = np.repeat(["a", "b"], [150, 150])
    X_crafted = X.copy()
    X_crafted[0] = [-1.7e308, 1.7e308]  # in silo "a"
    params = dict(epsilon=8.0, learning_rate=5.0, batch_size=50, random_state=0)
    fits = []
    for data in (X_crafted, X):
        clf = DPLogisticRegression(classes=[0, 1, 2], **params)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf.fit(data, y, silos=silos)
        fits.append((clf, [str(w.message) for w in caught]))
    (crafted, warned), (ordinary, warned_ordinary) = fits
    assert np.isfinite(crafted.coef_).all() and np.isfinite(crafted.intercept_).all()
    assert np.abs(crafted.coef_).max() > 1.0  # the record's prediction overflowed
    _assert_same_record(crafted, ordinary)
    assert warned == warned_ordinary

