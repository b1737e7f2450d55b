# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public feature_bounds on DPLogisticRegression's full-batch solvers.

dp-newton, output perturbation and Frank-Wolfe map the columns by the
declared bounds (midpoint and half-width) before their public row bounds
clip them: the map reads no data and spends no budget, so the event is the
unscaled fit's, and the model is reported in the user's units.
"""

import warnings

import numpy as np
import pytest
from raw_bounds_data import BOUNDS, SCALING, raw_table
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import DPLogisticRegression

SOLVERS = {
    # Large coefficients in scaled units: 30 steps to converge from 0.
    "dp-newton": dict(solver="dp-newton", feature_norm_bound=1.5, newton_steps=30),
    "output-perturbation": dict(
        solver="output-perturbation", feature_norm_bound=1.5, alpha=1e-4
    ),
    "dp-frank-wolfe": dict(
        solver="dp-frank-wolfe", feature_inf_bound=1.0, l1_radius=30.0
    ),
}


@pytest.fixture(scope="module")
def data():
    X, y = raw_table(4000, 0)
    X_test, y_test = raw_table(4000, 1)
    reference = LogisticRegression(max_iter=1000).fit(X, y).score(X_test, y_test)
    return X, y, X_test, y_test, reference


def _fit(params, X, y, **kw):
    # A huge epsilon: almost no noise, the clips still apply (epsilon=inf
    # is the exact non-private solve, on any scale).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPLogisticRegression(
            classes=[0, 1], epsilon=1e6, random_state=0, **params, **kw
        ).fit(X, y)


@pytest.mark.parametrize("solver", SOLVERS)
def test_bounds_rescue_raw_columns(data, solver):
    X, y, X_test, y_test, reference = data
    plain = _fit(SOLVERS[solver], X, y)
    scaled = _fit(SOLVERS[solver], X, y, feature_scaling="auto", feature_bounds=BOUNDS)
    # Unscaled, the raw column fills the public row bound: the fit is far
    # from the reference (the test can fail).
    assert plain.score(X_test, y_test) < reference - 0.1
    assert scaled.score(X_test, y_test) >= reference - 0.02


@pytest.mark.parametrize("solver", SOLVERS)
def test_model_in_user_units_and_event_unchanged(data, solver):
    X, y, _, _, _ = data
    params = SOLVERS[solver]
    scaled = _fit(params, X, y, feature_scaling="auto", feature_bounds=BOUNDS)
    # Same seed, same releases: the fit on the publicly mapped columns, its
    # coefficients mapped back by hand.
    manual = _fit(params, SCALING.transform(X), y)
    coef, intercept = SCALING.coefficients_in_user_units(manual.coef_, manual.intercept_)
    np.testing.assert_allclose(scaled.coef_, coef, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(scaled.intercept_, intercept, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(
        scaled.decision_function(X),
        manual.decision_function(SCALING.transform(X)),
        rtol=1e-6,
        atol=1e-6,
    )
    # No budget spent: the unscaled fit's event, and the plan's.
    plain = _fit(params, X, y)
    assert scaled.dp_event_ == plain.dp_event_ == scaled.privacy_plan(*X.shape).dp_event
    assert (scaled.epsilon_, scaled.delta_) == (plain.epsilon_, plain.delta_)
    assert "declared feature_bounds" in scaled.privacy_record_.mechanism


@pytest.mark.parametrize("solver", SOLVERS)
def test_private_scales_are_refused_naming_feature_bounds(data, solver):
    X, y, _, _, _ = data
    est = DPLogisticRegression(classes=[0, 1], feature_scaling="auto", **SOLVERS[solver])
    with pytest.raises(ValueError, match="needs public feature_bounds"):
        est.fit(X, y)
    with pytest.raises(ValueError, match="needs public feature_bounds"):
        est.privacy_plan(*X.shape)


def test_frank_wolfe_needs_a_public_bound_of_the_scaled_columns(data):
    X, y, _, _, _ = data
    params = {**SOLVERS["dp-frank-wolfe"], "feature_inf_bound": None}
    est = DPLogisticRegression(
        classes=[0, 1], feature_scaling="auto", feature_bounds=BOUNDS, **params
    )
    with pytest.raises(ValueError, match="feature_inf_bound"):
        est.fit(X, y)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_record_outside_the_bounds_stays_within_the_row_bound(data, solver):
    # The map is affine, not a clip: a record at 1e300 (far outside the
    # bounds) maps to a huge scaled row, which the solver's public clip
    # then bounds. Neighbouring worlds with and without it keep every
    # per-example term within its bound (tests/privacy/
    # test_neighbours_bounds.py checks the first release's sensitivity);
    # here: the fit is finite and records the same event.
    X, y, _, _, _ = data
    X_huge = X.copy()
    X_huge[0] = [1e300, -1e300]
    kw = dict(feature_scaling="auto", feature_bounds=BOUNDS)
    a = _fit(SOLVERS[solver], X, y, **kw)
    b = _fit(SOLVERS[solver], X_huge, y, **kw)
    assert np.all(np.isfinite(b.coef_)) and np.all(np.isfinite(b.intercept_))
    assert a.dp_event_ == b.dp_event_


@pytest.mark.parametrize("silos", [None, "three"])
def test_bounds_without_scaling_warn_that_they_are_ignored(silos):
    # A public parameter that does nothing says so (it reads no data).
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(600, 3)), np.arange(600) % 2
    fit = {} if silos is None else {"silos": np.arange(600) % 3}
    clf = DPLogisticRegression(
        classes=[0, 1], feature_bounds=[(-4.0, 4.0)] * 3, max_iter=2
    )
    with pytest.warns(UserWarning, match="feature_bounds is ignored") as record:
        clf.fit(X, y, **fit)
    ignored = [w for w in record if "feature_bounds is ignored" in str(w.message)]
    assert len(ignored) == 1 and ignored[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.set_params(feature_scaling="auto").fit(X, y, **fit)


@pytest.mark.parametrize("n_features", [3, 4])
def test_a_pair_of_bound_arrays_is_refused_naming_the_shape_it_needs(n_features):
    # (lower, upper) as two arrays of 3 is shape (2, 3): the message asked
    # for "(n_features, 2) = (2, 2)", the first axis read as the columns,
    # then "= (3, 2)" whatever X's width (4 here), read from the bounds by a
    # check that runs before X is read.
    X = np.zeros((10, n_features))
    lower, upper = np.full(3, -1.0), np.full(3, 1.0)
    est = DPLogisticRegression(classes=[0, 1], feature_bounds=(lower, upper))
    with pytest.raises(ValueError, match=r"got \(2, 3\).*column_stack") as error:
        est.fit(X, np.arange(10) % 2)
    assert "= (3, 2)" not in str(error.value)
