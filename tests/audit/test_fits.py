# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The audited fits: seeded clones, and the refusal of estimators without a claim."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier

from sklearn_dpfair.audit import audit_estimator, audit_gradient_canary, make_neighbours
from sklearn_dpfair.audit._fits import fit_clone, require_claim


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, (X[:, 0] > 0).astype(int)


def test_fit_clone_seeds_a_clone_and_leaves_the_estimator():
    X, y = _data()
    est = SGDClassifier(max_iter=5, tol=None)
    a = fit_clone(est, X, y, {}, 7)
    b = fit_clone(est, X, y, {}, 7)
    assert a is not est and a.random_state == 7
    assert est.random_state is None and not hasattr(est, "coef_")
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_require_claim_names_the_missing_attribute():
    X, y = _data()
    fitted = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="LogisticRegression sets no delta_"):
        require_claim(fitted, ("coef_", "delta_"))
    require_claim(fitted, ("coef_",))  # present: silent


def test_audits_refuse_an_estimator_without_a_claim():
    X, y = _data()
    nb = make_neighbours(X, y, canary=(X[0], y[0]))
    with pytest.raises(ValueError, match="sets no dp_event_: it makes no privacy"):
        audit_estimator(LogisticRegression(), nb, n_runs=4)
    with pytest.raises(ValueError, match="sets no dp_event_: it makes no privacy"):
        audit_gradient_canary(LogisticRegression(), X, y, n_runs=4)


def test_fit_clone_shows_warnings_only_when_asked():
    X, y = _data()
    est = SGDClassifier(max_iter=1, tol=1e-3)  # too few iterations: it warns
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        fit_clone(est, X, y, {}, 0)
    assert not shown
    with pytest.warns(ConvergenceWarning):
        fit_clone(est, X, y, {}, 0, show_warnings=True)
