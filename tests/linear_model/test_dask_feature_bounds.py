# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public feature_bounds on Dask collections (DPLogisticRegression, DPFERMIClassifier).

Every worker maps its partition by the same public map as it loads it; the
fit's event is the unscaled fit's and the model is in the user's units.
One LocalCluster with two worker processes (``dask_client``) serves the module.
"""

import warnings

import numpy as np
import pytest
from raw_bounds_data import BOUNDS, SCALING, raw_table
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import DPFERMIClassifier, DPLogisticRegression

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")



@pytest.fixture(scope="module")
def data():
    X, y = raw_table(4000, 0)
    X_test, y_test = raw_table(4000, 1)
    reference = LogisticRegression(max_iter=1000).fit(X, y).score(X_test, y_test)
    groups = (np.arange(4000) % 2).astype(int)
    return X, y, groups, X_test, y_test, reference


ESTIMATORS = {
    "logistic": lambda **kw: DPLogisticRegression(
        classes=[0, 1], random_state=0, max_iter=5, **kw
    ),
    "fermi": lambda **kw: DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], random_state=0, max_iter=5, **kw
    ),
}


def _fit(name, X, y, groups, **kw):
    Xd = da.from_array(X, chunks=(1000, -1))
    yd = da.from_array(y, chunks=1000)
    extra = {}
    if name == "fermi":
        extra["sensitive_features"] = da.from_array(groups, chunks=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ESTIMATORS[name](**kw).fit(Xd, yd, **extra)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_bounds_rescue_raw_columns_on_dask(dask_client, data, name):
    # A huge epsilon (almost no noise; the clips still apply).
    X, y, groups, X_test, y_test, reference = data
    plain = _fit(name, X, y, groups, epsilon=1e6)
    scaled = _fit(
        name, X, y, groups, epsilon=1e6, feature_scaling="auto", feature_bounds=BOUNDS
    )
    assert plain.score(X_test, y_test) < reference - 0.1
    assert scaled.score(X_test, y_test) >= reference - 0.02


@pytest.mark.parametrize("name", ESTIMATORS)
def test_dask_model_in_user_units_and_event_unchanged(dask_client, data, name):
    X, y, groups, _, _, _ = data
    scaled = _fit(name, X, y, groups, feature_scaling="auto", feature_bounds=BOUNDS)
    manual = _fit(name, SCALING.transform(X), y, groups)
    coef, intercept = SCALING.coefficients_in_user_units(manual.coef_, manual.intercept_)
    np.testing.assert_allclose(scaled.coef_, coef, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scaled.intercept_, intercept, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        scaled.decision_function(X),
        manual.decision_function(SCALING.transform(X)),
        rtol=1e-7,
        atol=1e-7,
    )
    plain = _fit(name, X, y, groups)
    counts = {"n_groups": 2} if name == "fermi" else {}
    plan = scaled.privacy_plan(*X.shape, **counts)
    assert scaled.dp_event_ == plain.dp_event_ == plan.dp_event
    assert "declared feature_bounds" in scaled.privacy_record_.mechanism


@pytest.mark.parametrize("name", ESTIMATORS)
def test_non_private_dask_fit_standardizes_exactly_whatever_the_bounds(
    dask_client, data, name
):
    # Nothing is released at epsilon=inf, so the exact moments cost nothing;
    # columns mapped by bounds of +-w standard deviations spread over 1/w of
    # the unit scale the steps are sized for, and the epochs stopped far from
    # the minimizer (coefficient 0.11 against scikit-learn's 1.35 at +-10).
    X, y, groups, _, _, _ = data
    plain = _fit(name, X, y, groups, epsilon=np.inf)
    bounded = _fit(
        name, X, y, groups, epsilon=np.inf, feature_scaling="auto",
        feature_bounds=BOUNDS,
    )
    np.testing.assert_allclose(bounded.coef_, plain.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        bounded.intercept_, plain.intercept_, rtol=1e-9, atol=1e-9
    )
    assert "exact" in bounded.privacy_record_.mechanism
    assert "declared feature_bounds" not in bounded.privacy_record_.mechanism


@pytest.mark.parametrize("name", ESTIMATORS)
def test_private_scales_are_refused_on_dask(dask_client, data, name):
    X, y, groups, _, _, _ = data
    with pytest.raises(ValueError, match="Dask collection X needs public feature_bounds"):
        _fit(name, X, y, groups, feature_scaling="auto")


FLAGGED = "a quarter of the values"


@pytest.mark.parametrize("name", ESTIMATORS)
def test_private_dask_fit_on_raw_columns_warns(dask_client, data, name):
    # The partitions count their rows beyond the unit-scale limit; the
    # driver sees one count per column and partition, and the warning is
    # the in-memory fit's (same columns, no value).
    X, y, groups, *_ = data

    def flagged(X_fit, **kw):
        Xd = da.from_array(X_fit, chunks=(1000, -1))
        yd = da.from_array(y, chunks=1000)
        extra = {}
        if name == "fermi":
            extra["sensitive_features"] = da.from_array(groups, chunks=1000)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ESTIMATORS[name](**kw).fit(Xd, yd, **extra)
        return [str(w.message) for w in caught if FLAGGED in str(w.message)]

    in_memory = ESTIMATORS[name](epsilon=1.0)
    fit_params = {"sensitive_features": groups} if name == "fermi" else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        in_memory.fit(X, y, **fit_params)
    expected = [str(w.message) for w in caught if FLAGGED in str(w.message)]
    assert len(expected) == 1
    assert flagged(X, epsilon=1.0) == expected
    # Nothing released (exact standardization), public bounds, unit columns.
    assert flagged(X, epsilon=np.inf) == []
    assert flagged(X, epsilon=1.0, feature_scaling="auto", feature_bounds=BOUNDS) == []
    assert flagged(SCALING.transform(X), epsilon=1.0) == []
