# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public feature_bounds in federated fits (``fit(X, y, silos=...)``).

Every silo maps its own rows by the same public map (midpoint and
half-width of the declared bounds) before the rounds: no data read, no
budget spent, so the silos' records and ``dp_event_`` are the unscaled
fit's; the model comes back in the user's units.
"""

import warnings

import numpy as np
import pytest
from raw_bounds_data import BOUNDS, SCALING, raw_table
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import DPLogisticRegression, DPMLPClassifier

SIZES = (900, 1300, 1800)


@pytest.fixture(scope="module")
def data():
    X, y = raw_table(sum(SIZES), 0)
    X_test, y_test = raw_table(4000, 1)
    silos = np.repeat(["north", "south", "west"], SIZES)
    reference = LogisticRegression(max_iter=1000).fit(X, y).score(X_test, y_test)
    return X, y, silos, X_test, y_test, reference


ESTIMATORS = {
    "logistic": lambda **kw: DPLogisticRegression(classes=[0, 1], random_state=0, **kw),
    "mlp": lambda **kw: DPMLPClassifier(
        (4,), classes=[0, 1], random_state=0, max_iter=30, **kw
    ),
}


def _fit(name, X, y, silos, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ESTIMATORS[name](**kw).fit(X, y, silos=silos)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_bounds_rescue_raw_columns_in_silos(data, name):
    # noise_multiplier=0: no noise, but every silo still clips its
    # gradients, so the unscaled fit is as broken as a private one (the
    # test can fail). (The unscaled network's iterates leave the float
    # range on these raw columns: the server refuses its diverged step.)
    X, y, silos, X_test, y_test, reference = data
    noiseless = dict(epsilon=np.inf, noise_multiplier=0.0)
    try:
        plain = _fit(name, X, y, silos, **noiseless).score(X_test, y_test)
    except ValueError as error:
        assert name == "mlp" and "lower learning_rate" in str(error)
        plain = 0.0
    scaled = _fit(
        name, X, y, silos, feature_scaling="auto", feature_bounds=BOUNDS, **noiseless
    )
    assert plain < reference - 0.1
    assert scaled.score(X_test, y_test) >= reference - 0.02


@pytest.mark.parametrize("name", ESTIMATORS)
def test_non_private_silos_standardize_their_columns_exactly(data, name):
    # epsilon = inf alone in every silo releases nothing: the columns are
    # standardized by their exact moments (the unscaled fit scored 0.50
    # before, the network refused its non-finite model), and the record
    # says so. One private silo keeps the columns as given (the network's
    # iterates then leave the float range, as above).
    X, y, silos, X_test, y_test, reference = data
    exact = _fit(name, X, y, silos, epsilon=np.inf)
    assert exact.score(X_test, y_test) >= reference - 0.02
    assert "exact means" in exact.privacy_record_.mechanism
    if name == "logistic":
        one_private = {"north": 1.0, "south": np.inf, "west": np.inf}
        mixed = _fit(name, X, y, silos, epsilon=np.inf, silo_epsilon=one_private)
        assert "exact means" not in mixed.privacy_record_.mechanism


@pytest.mark.parametrize("name", ESTIMATORS)
def test_silo_model_in_user_units_and_event_unchanged(data, name):
    X, y, silos, _, _, _ = data
    kw = dict(epsilon=1.0)
    scaled = _fit(name, X, y, silos, feature_scaling="auto", feature_bounds=BOUNDS, **kw)
    # Same seed, same rounds: the fit on the publicly mapped rows, mapped
    # back by hand.
    manual = _fit(name, SCALING.transform(X), y, silos, **kw)
    if name == "logistic":
        coef, intercept = SCALING.coefficients_in_user_units(
            manual.coef_, manual.intercept_
        )
        np.testing.assert_allclose(scaled.coef_, coef, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(scaled.intercept_, intercept, rtol=1e-9, atol=1e-9)
    else:
        # Hidden units of the raw rows equal those of the mapped rows.
        np.testing.assert_allclose(
            X @ scaled.coefs_[0] + scaled.intercepts_[0],
            SCALING.transform(X) @ manual.coefs_[0] + manual.intercepts_[0],
            rtol=1e-7,
            atol=1e-7,
        )
        for a, b in zip(scaled.coefs_[1:], manual.coefs_[1:]):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(
        scaled.predict_proba(X), manual.predict_proba(SCALING.transform(X)),
        rtol=1e-7, atol=1e-9,
    )
    plain = _fit(name, X, y, silos, **kw)
    plan = scaled.privacy_plan(*X.shape, n_silos=len(SIZES))
    assert scaled.dp_event_ == plain.dp_event_ == plan.dp_event
    assert scaled.silo_noise_multiplier_ == plain.silo_noise_multiplier_
    assert "declared feature_bounds" in scaled.privacy_record_.mechanism
    assert scaled.epsilon_ == plain.epsilon_


@pytest.mark.parametrize("name", ESTIMATORS)
def test_private_scales_are_refused_in_silos(data, name):
    X, y, silos, _, _, _ = data
    est = ESTIMATORS[name](feature_scaling="auto")
    with pytest.raises(ValueError, match="silos= needs public feature_bounds"):
        est.fit(X, y, silos=silos)
    assert not hasattr(est, "classes_")


def test_a_record_outside_the_bounds_is_clipped_like_any_other(data):
    # The map is affine, not a clip: a record at 1e300 maps to a huge row
    # that every silo's per-example clip bounds (tests/privacy/
    # test_neighbours_bounds.py checks the first release's sensitivity).
    X, y, silos, _, _, _ = data
    X_huge = X.copy()
    X_huge[0] = [1e300, -1e300]
    kw = dict(epsilon=1.0, feature_scaling="auto", feature_bounds=BOUNDS)
    a, b = _fit("logistic", X, y, silos, **kw), _fit("logistic", X_huge, y, silos, **kw)
    assert np.all(np.isfinite(b.coef_)) and a.dp_event_ == b.dp_event_


@pytest.mark.parametrize("name", ESTIMATORS)
def test_raw_columns_warn_when_some_silo_is_private(data, name):
    # The silos' clip norm and step size assume unit-scale columns; a
    # federation none of whose silos is private standardizes them exactly
    # (no warning), any private silo trains on them as given.
    X, y, silos, *_ = data

    def warned(**kw):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                ESTIMATORS[name](**kw).fit(X, y, silos=silos)
            except ValueError:
                pass  # the network may refuse its non-finite model (see above)
        return any("a quarter of the values" in str(w.message) for w in caught)

    one_private = {"north": 1.0, "south": np.inf, "west": np.inf}
    assert not warned(epsilon=np.inf)
    # The silos' budgets decide, not the estimator's default epsilon.
    assert not warned(epsilon=1.0, silo_epsilon=np.inf)
    assert warned(epsilon=np.inf, silo_epsilon=one_private)
    assert warned(epsilon=1.0)
    assert not warned(epsilon=1.0, feature_scaling="auto", feature_bounds=BOUNDS)


def test_non_private_silos_ignore_declared_bounds_and_solve_exactly():
    # With no silo private nothing is released, so the silos standardize by
    # the exact moments, as the central fit's non-private limit ignores the
    # bounds. Mapped by bounds of +-5 sd instead, the columns spread over a
    # fifth of the unit scale the step size assumes, and the default epochs
    # stopped at max|dproba| ~0.27 from scikit-learn's unpenalized fit.
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(1)
    n = 600
    Z = rng.normal(size=(n, 3))
    y = (Z @ [1.5, -1.0, 0.7] + rng.logistic(size=n) > 0).astype(int)
    X = np.column_stack([Z[:, 0] + 500, Z[:, 1] * 1e-6, Z[:, 2] * 1e6])
    silos = np.repeat(["a", "b", "c"], 200)
    bounds = [(495, 505), (-5e-6, 5e-6), (-5e6, 5e6)]
    scaler = StandardScaler().fit(X)
    reference = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10000).fit(
        scaler.transform(X), y
    )
    expected = reference.predict_proba(scaler.transform(X))
    est = DPLogisticRegression(
        epsilon=np.inf,
        feature_scaling="auto",
        feature_bounds=bounds,
        classes=[0, 1],
        random_state=0,
    ).fit(X, y, silos=silos)
    assert np.abs(est.predict_proba(X) - expected).max() < 0.05
    plain = DPLogisticRegression(epsilon=np.inf, classes=[0, 1], random_state=0)
    plain.fit(X, y, silos=silos)
    np.testing.assert_allclose(est.coef_, plain.coef_, rtol=1e-9)
    mechanism = est.privacy_record_.mechanism
    assert "exact means" in mechanism and "feature_bounds" not in mechanism
    assert est.privacy_plan(*X.shape, n_silos=3).mechanism == mechanism
