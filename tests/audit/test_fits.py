# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The audited fits: seeded clones, and the refusal of estimators without a claim."""

import threading
import warnings

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier

from sklearn_dpfair.audit import audit_estimator, audit_gradient_canary, make_neighbours
from sklearn_dpfair.audit._fits import fit_clone, repeat_quietly, require_claim
from sklearn_dpfair.linear_model import DPLogisticRegression


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


def _warning_fit(seed, *, show_warnings):
    X, y = _data()
    est = SGDClassifier(max_iter=1, tol=1e-3)  # too few iterations: it warns
    return fit_clone(est, X, y, {}, seed, show_warnings=show_warnings).coef_


def test_runs_in_threads_are_silenced_by_one_block_in_the_calling_thread(
    filter_swaps,
):
    # catch_warnings swaps the process-wide filters: blocks entered by runs
    # in several threads interleave and can leave "ignore" installed.
    before = list(warnings.filters)
    main = threading.current_thread().name
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with parallel_config(backend="threading"):
            threaded = repeat_quietly(_warning_fit, [(s,) for s in range(8)], n_jobs=2)
        assert filter_swaps == ["sklearn_dpfair.audit._fits"]
        assert filter_swaps.threads == [main]
        in_turn = repeat_quietly(_warning_fit, [(s,) for s in range(8)], n_jobs=1)
    assert not shown
    assert warnings.filters == before
    # One after another, each run silences its own, in the calling thread.
    assert filter_swaps[1:] == ["sklearn_dpfair.audit._fits"] * 8
    assert filter_swaps.threads[1:] == [main] * 8
    for a, b in zip(threaded, in_turn):
        np.testing.assert_allclose(a, b)


def test_audits_in_threads_enter_warning_blocks_in_the_calling_thread_only(
    filter_swaps,
):
    X, y = _data()
    nb = make_neighbours(X, y, canary=(np.array([5.0, 0.0, 0.0]), 1))
    est = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], batch_size="full", max_iter=1
    )
    before = list(warnings.filters)
    main = threading.current_thread().name
    with parallel_config(backend="threading"):
        audit_estimator(est, nb, n_runs=8, n_jobs=2, random_state=0)
        audit_gradient_canary(est, X, y, n_runs=8, n_jobs=2, random_state=0)
    assert filter_swaps
    assert set(filter_swaps.threads) == {main}
    assert warnings.filters == before
