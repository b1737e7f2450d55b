# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Column scales of raw features: public bounds or private robust statistics."""

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import DPFERMIClassifier, DPLogisticRegression, DPMLPClassifier
from sklearn_dpfair._solvers._feature_scaling import (
    UNIT_SCALE_LIMIT,
    FeatureScaling,
    columns_off_unit_scale,
    exact_feature_scaling,
    first_layer_in_user_units,
    fit_feature_scaling,
    narrowed_if_finite,
    plan_feature_scaling,
    public_scaling_plan,
    reach_capped_weights,
    scaled_columns,
)
from sklearn_dpfair.privacy import PrivacyBudget
from sklearn_dpfair.privacy._accounting import epsilon_of

# Raw columns: an offset of 500, a scale of 1e4 with an offset of 1e5, a
# scale of 1e-3, and a unit column (the synthetic table of the raw-data page).
SCALES, OFFSETS = np.array([100.0, 1e4, 1e-3, 1.0]), np.array([500.0, 1e5, 0.0, 0.0])


def _raw(n, seed):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 4))
    y = (Z @ [1.0, -1.0, 0.5, 0.0] + rng.logistic(size=n) > 0).astype(int)
    return Z * SCALES + OFFSETS, y


def test_coefficients_in_user_units_give_the_same_scores():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) * [10.0, 1e3, 1e-2] + [5.0, -2e4, 1.0]
    scaling = FeatureScaling(np.array([5.0, -2e4, 1.0]), np.array([10.0, 1e3, 1e-2]))
    coef, intercept = rng.normal(size=(2, 3)), rng.normal(size=2)
    raw_coef, raw_intercept = scaling.coefficients_in_user_units(coef, intercept)
    np.testing.assert_allclose(
        X @ raw_coef.T + raw_intercept,
        scaling.transform(X) @ coef.T + intercept,
        rtol=1e-9,
        atol=1e-9,
    )


def test_public_bounds_spend_nothing():
    budget = PrivacyBudget(1.0, 1e-5)
    plan = plan_feature_scaling("auto", [(0, 1000), (0, 2e5), (-1, 1), (-5, 5)], 4, budget)
    assert plan.mode == "bounds" and plan.event is None
    X, y = _raw(2000, 0)
    scaled = DPLogisticRegression(
        classes=[0, 1], feature_scaling="auto",
        feature_bounds=[(0, 1000), (0, 2e5), (-1, 1), (-5, 5)],
    ).fit(X, y)
    plain = DPLogisticRegression(classes=[0, 1]).fit(X, y)
    assert scaled.dp_event_ == plain.dp_event_
    assert "declared feature_bounds" in scaled.privacy_record_.mechanism


def test_private_scales_are_composed_into_the_event():
    X, y = _raw(3000, 0)
    est = DPLogisticRegression(classes=[0, 1], feature_scaling="auto", max_iter=5)
    plan = est.privacy_plan(3000, 4)
    est.fit(X, y)
    assert est.dp_event_ == plan.dp_event
    scales_event, steps_event = est.dp_event_.events
    # 4 exponential-mechanism quantiles a column (two medians and the
    # quartiles), then the DP-SGD steps.
    assert scales_event.count == 4 * 4
    assert epsilon_of(est.dp_event_, 1e-5, "rdp") == est.epsilon_ <= 1.0 + 1e-9
    assert est.privacy_record_.accountant == "rdp"
    assert "private robust statistics" in est.privacy_record_.mechanism
    # The steps alone spend less than the whole: the scales cost budget.
    assert epsilon_of(steps_event, 1e-5, "rdp") < est.epsilon_


def test_private_scales_fit_raw_columns_at_epsilon_one():
    X, y = _raw(15_000, 0)
    X_test, y_test = _raw(15_000, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = LogisticRegression(max_iter=2000).fit(X, y).score(X_test, y_test)
    plain = DPLogisticRegression(classes=[0, 1], random_state=0).fit(X, y)
    scaled = DPLogisticRegression(
        classes=[0, 1], feature_scaling="auto", random_state=0
    ).fit(X, y)
    # Without scales the 1e5 column saturates every clipped gradient.
    assert plain.score(X_test, y_test) < 0.55
    assert scaled.score(X_test, y_test) >= reference - 0.02


def test_scales_stay_finite_on_adversarial_columns():
    X, _ = _raw(500, 0)
    X[0] = [1e300, -1e300, 1e-300, 0.0]  # one extreme record
    X[:, 3] = 7.0  # a constant column
    plan = plan_feature_scaling("auto", None, 4, PrivacyBudget(1.0, 1e-5))
    scaling = fit_feature_scaling(X, plan, np.random.default_rng(0))
    assert np.all(np.isfinite(scaling.location)) and np.all(scaling.scale > 0)
    assert np.all(np.isfinite(scaling.transform(X[1:])))


def test_sparse_columns_are_scaled_by_bounds_only():
    budget = PrivacyBudget(1.0, 1e-5)
    # Asked for scales that cannot be drawn: refused, not skipped silently.
    with pytest.raises(ValueError, match="sparse X needs public feature_bounds"):
        plan_feature_scaling("auto", None, 3, budget, sparse=True)
    # The non-private limit scales nothing, whatever the layout; it refuses
    # what a private fit refuses (the layout decides, not the budget).
    unbounded = PrivacyBudget(np.inf, 1e-5)
    with pytest.raises(ValueError, match="sparse X needs public feature_bounds"):
        plan_feature_scaling("auto", None, 3, unbounded, sparse=True)
    assert plan_feature_scaling(None, None, 3, unbounded, sparse=True).mode == "none"
    assert (
        plan_feature_scaling("auto", [(0, 10)] * 3, 3, unbounded, sparse=True).mode
        == "none"
    )
    plan = plan_feature_scaling("auto", [(0, 10)] * 3, 3, budget, sparse=True)
    scaling = fit_feature_scaling(None, plan, None)
    X = sp.random(20, 3, density=0.3, format="csr", random_state=0) * 10
    out = scaling.transform(X)
    assert sp.issparse(out) and out.nnz == X.nnz
    np.testing.assert_allclose(out.toarray(), X.toarray() / 10.0)


def test_bounds_as_wide_as_the_floats_give_a_finite_map():
    # (-1e308, 1e308): the sum of the bounds is finite, their width is not;
    # (1e308, 1.7e308): the sum overflows.
    bounds = [(-1e308, 1e308), (1e308, 1.7e308), (-1.0, 1.0)]
    plan = plan_feature_scaling("auto", bounds, 3, PrivacyBudget(1.0, 1e-5))
    scaling = fit_feature_scaling(None, plan, None)
    np.testing.assert_allclose(scaling.location, [0.0, 1.35e308, 0.0])
    np.testing.assert_allclose(scaling.scale, [1e308, 0.35e308, 1.0])
    X = np.array([[1e308, 1.7e308, 1.0], [-1e308, 1e308, -1.0]])
    np.testing.assert_allclose(
        scaling.transform(X), [[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]]
    )


def test_without_intercept_columns_are_not_centred():
    plan = plan_feature_scaling(
        "auto", [(400.0, 600.0)], 1, PrivacyBudget(1.0, 1e-5), fit_intercept=False
    )
    scaling = fit_feature_scaling(None, plan, None)
    assert scaling.location.tolist() == [0.0] and scaling.scale.tolist() == [600.0]


def test_no_scaling_without_privacy_or_when_off():
    assert plan_feature_scaling("auto", None, 2, PrivacyBudget(math.inf, 1e-5)).mode == "none"
    assert plan_feature_scaling(None, [(0, 1)] * 2, 2, PrivacyBudget(1.0, 1e-5)).mode == "none"


def test_a_fixed_noise_multiplier_refuses_private_scales():
    X, y = _raw(500, 0)
    with pytest.raises(ValueError, match="feature_bounds"):
        DPLogisticRegression(
            classes=[0, 1], feature_scaling="auto", noise_multiplier=5.0, epsilon=50.0
        ).fit(X, y)


@pytest.mark.parametrize(
    "params",
    [
        {"solver": "output-perturbation", "feature_norm_bound": 1.0, "alpha": 0.1},
        {"solver": "dp-frank-wolfe", "l1_radius": 1.0, "feature_inf_bound": 1.0},
    ],
)
def test_private_scales_are_refused_by_the_full_batch_solvers(params):
    # They take public feature_bounds only; the refusal names them.
    X, y = _raw(200, 0)
    est = DPLogisticRegression(classes=[0, 1], feature_scaling="auto", **params)
    with pytest.raises(ValueError, match="needs public feature_bounds"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    with pytest.raises(ValueError, match="needs public feature_bounds"):
        est.privacy_plan(200, 4)


@pytest.mark.parametrize(
    "n, epsilon",
    # The non-private limit, and a budget that releases the intercept only
    # (small_budget="auto"): refused like the private model fit.
    [(20, 1.0), (2000, np.inf), (2000, 1.0)],
)
def test_sparse_auto_scaling_without_bounds_is_refused_at_every_budget(n, epsilon):
    from sklearn_dpfair import DPLogisticRegression

    X = sp.random(n, 4, density=0.5, format="csr", random_state=0)
    y = np.random.default_rng(0).integers(0, 2, n)
    est = DPLogisticRegression(
        epsilon=epsilon, feature_scaling="auto", classes=[0, 1], random_state=0
    )
    with pytest.raises(ValueError, match="feature_bounds"):
        est.privacy_plan(n, 4, sparse=True)
    with pytest.raises(ValueError, match="feature_bounds"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


def test_dp_logistic_regression_refuses_sparse_auto_scaling_without_bounds():
    # Before, the fit planned no scaling and ran unscaled (as if
    # feature_scaling=None), where DPFERMIClassifier refused: one rule now,
    # decided from the layout before any value is read.
    from sklearn_dpfair import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = sp.random(200, 4, density=0.5, format="csr", random_state=0) * 50
    y = rng.integers(0, 2, 200)
    est = DPLogisticRegression(epsilon=1.0, feature_scaling="auto", random_state=0)
    with pytest.raises(ValueError, match="feature_bounds"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    bounded = DPLogisticRegression(
        epsilon=1.0, feature_scaling="auto", feature_bounds=[(0, 50)] * 4,
        random_state=0,
    ).fit(X, y)
    assert np.all(np.isfinite(bounded.coef_))


# -- public bounds on every fit path (silos, Dask, full-batch solvers) ------


def test_public_scaling_plan_needs_bounds_and_spends_nothing():
    with pytest.raises(ValueError, match="silos= needs public feature_bounds"):
        public_scaling_plan("auto", None, 2, where="silos=")
    assert public_scaling_plan(None, None, 2, where="silos=").mode == "none"
    plan = public_scaling_plan("auto", [(-500, 1500), (-2, 2)], 2, where="silos=")
    assert (plan.mode, plan.event, plan.center) == ("bounds", None, True)
    # A non-private limit that solves exactly maps nothing (but still refuses).
    kw = dict(where="solver='dp-newton'", private=False)
    assert public_scaling_plan("auto", [(0, 1)] * 2, 2, **kw).mode == "none"
    with pytest.raises(ValueError, match="feature_bounds"):
        public_scaling_plan("auto", None, 2, **kw)
    X = np.array([[500.0, 0.0], [1500.0, -2.0]])
    scaled, scaling = scaled_columns(X, plan)
    np.testing.assert_allclose(scaled, [[0.0, 0.0], [1.0, -1.0]])
    np.testing.assert_array_equal(scaling.location, [500.0, 0.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transform_stays_finite_beyond_the_bounds(dtype):
    # A record far outside the public bounds: (x - m) / s would overflow
    # (to inf in float64 past 1.8e308, in float32 past 3.4e38); the map
    # rounds it to the largest float, which the solvers' clips bound.
    big = np.finfo(dtype).max
    scaling = FeatureScaling(np.array([-1e308, 0.0]), np.array([1e-3, 1e-3]))
    X = np.array([[big, -big], [0.0, 1.0]], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = scaling.transform(X)
        out_sparse = scaling.transform(sp.csr_matrix(X))
    assert out.dtype == dtype and np.all(np.isfinite(out))
    assert out[0, 0] == big and out[0, 1] == -big
    assert np.all(np.isfinite(out_sparse.data)) and out_sparse.dtype == dtype


def test_first_layer_in_user_units_gives_the_same_hidden_units():
    rng = np.random.default_rng(0)
    scaling = FeatureScaling(np.array([500.0, 0.0]), np.array([1000.0, 1.0]))
    X = rng.normal(size=(20, 2)) * [1000.0, 1.0] + [500.0, 0.0]
    W = [rng.normal(size=(2, 3)), rng.normal(size=(3, 1))]
    b = [rng.normal(size=3), rng.normal(size=1)]
    raw_W, raw_b = first_layer_in_user_units(W, b, scaling)
    np.testing.assert_allclose(
        X @ raw_W[0] + raw_b[0], scaling.transform(X) @ W[0] + b[0], rtol=1e-9,
        atol=1e-9,
    )
    assert raw_W[1] is W[1] and raw_b[1] is b[1]


@pytest.mark.parametrize("standardized", [False, True])
def test_one_hot_columns_keep_their_scale(standardized):
    # Binary columns held by 98%, 90%, 74% and 55% of the rows, 0/1 or
    # standardized (the value most rows hold is then between grid points),
    # at epsilon = 0.5 on 30,000 rows (97 such columns). Points on the grid
    # drew medians up to 1e7 away and quartiles 1e-5 of the spread; a scale
    # 1e-3 of the column's multiplies its noise 1000 times. Here every
    # column is located inside its values and scaled within a factor 4 of
    # its standard deviation (or of 1, the floor of a column a quarter of
    # whose rows hold its median), at every seed.
    rng = np.random.default_rng(0)
    n, shares = 30_000, np.array([0.98, 0.9, 0.74, 0.55])
    X = (rng.uniform(size=(n, shares.size)) > shares).astype(float)
    if standardized:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    budget = PrivacyBudget(0.5, 1e-5)
    # The per-draw budget of a 97-column fit: rho split 97 ways, not 4.
    plan = plan_feature_scaling("auto", None, 97, budget, n_samples=n)
    plan = replace(plan, n_features=shares.size)
    assert plan.mode == "private"
    for seed in range(5):
        scaling = fit_feature_scaling(X, plan, np.random.default_rng(seed))
        # A bin's midpoint: within the grid's 5% of the values.
        slack = 0.05 * np.abs(X).max(axis=0)
        assert np.all(scaling.location >= X.min(axis=0) - slack)
        assert np.all(scaling.location <= X.max(axis=0) + slack)
        sd = X.std(axis=0)
        assert np.all(scaling.scale > 0.25 * np.minimum(sd, 1.0)), (seed, scaling.scale)
        assert np.all(scaling.scale < 4.0 * np.maximum(sd, 1.0)), (seed, scaling.scale)


def test_a_column_at_an_offset_keeps_its_spread():
    # A year near 2000 with a spread of 5: the first median is known to
    # within 47 (the grid's 5%), the second to within 1.1, so the quartiles
    # are read around the median and the scale is the spread's. Around the
    # first median alone they can share one of the coarse grid's bins (26%
    # wide near 40), and the scale would be the offset's.
    rng = np.random.default_rng(1)
    n = 20_000
    X = np.column_stack([2000.0 + 5.0 * rng.normal(size=n), rng.normal(size=n)])
    plan = plan_feature_scaling("auto", None, 2, PrivacyBudget(1.0, 1e-5), n_samples=n)
    for seed in range(10):
        scaling = fit_feature_scaling(X, plan, np.random.default_rng(seed))
        assert abs(scaling.location[0] - 2000.0) < 2.0
        assert 2.5 < scaling.scale[0] < 10.0, (seed, scaling.scale)
        assert 0.5 < scaling.scale[1] < 2.0


def test_columns_off_unit_scale_reads_the_upper_quartile_of_magnitudes():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30_000, 5))
    # Standardized columns, 0/1 indicators and a spread of 4 pass; an
    # offset of 6, a spread of 8 and a year do not.
    X = np.column_stack([
        Z[:, 0], (Z[:, 1] > 2).astype(float), 4.0 * Z[:, 2], 6.0 + Z[:, 3],
        8.0 * Z[:, 4], np.full(30_000, 2000.0),
    ])
    assert columns_off_unit_scale(X).tolist() == [3, 4, 5]
    assert columns_off_unit_scale(sp.csr_matrix(X)).tolist() == [3, 4, 5]
    assert columns_off_unit_scale(X.astype(np.float32)).tolist() == [3, 4, 5]
    # One record, however large, moves a count by one.
    X[0] = 1e300
    assert columns_off_unit_scale(X).tolist() == [3, 4, 5]
    # A sparse column is mostly zeros unless a quarter of its rows are not.
    counts = sp.csr_matrix(np.where(np.arange(100) < 30, 50.0, 0.0)[:, None])
    assert columns_off_unit_scale(counts).tolist() == [0]
    assert columns_off_unit_scale(counts[20:]).tolist() == []
    assert columns_off_unit_scale(np.zeros((0, 3))).size == 0
    assert UNIT_SCALE_LIMIT == 5.0


# The private fits that train on the columns as given under feature_scaling
# None (or an "auto" that cannot afford private scales).
_RAW_COLUMN_FITS = [
    lambda **kw: DPLogisticRegression(classes=[0, 1], **kw),
    lambda **kw: DPFERMIClassifier(classes=[0, 1], groups=[0, 1], **kw),
    lambda **kw: DPMLPClassifier(
        classes=[0, 1], hidden_layer_sizes=(4,), max_iter=2, **kw
    ),
]
_RAW_COLUMN_FIT_IDS = [
    "DPLogisticRegression", "DPFERMIClassifier", "DPMLPClassifier"
]


def _raw_fit_warnings(estimator, X, y, **fit_params):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y, **fit_params)
    flagged = "a quarter of the values"
    return [str(w.message) for w in caught if flagged in str(w.message)]


@pytest.mark.parametrize("make", _RAW_COLUMN_FITS, ids=_RAW_COLUMN_FIT_IDS)
def test_private_fits_on_raw_columns_warn_without_showing_values(make):
    X, y = _raw(3000, 0)
    groups = {"sensitive_features": np.arange(3000) % 2}
    fit_params = groups if "FERMI" in type(make()).__name__ else {}
    messages = _raw_fit_warnings(make(epsilon=1.0, random_state=0), X, y, **fit_params)
    assert len(messages) == 1
    message = messages[0]
    assert "positions 0, 1" in message and "feature_scaling='auto'" in message
    assert "outside the guarantee" in message
    # No value of the data, nor a statistic of it, appears in the text.
    assert not any(f"{v:g}" in message for v in (500.0, 1e5, 100.0, 1e4))
    # Named by the DataFrame's columns when it has them.
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["year", "income", "ratio", "unit"])
    named = _raw_fit_warnings(make(epsilon=1.0, random_state=0), frame, y, **fit_params)
    assert "'year', 'income'" in named[0]
    # Silent where the fit scales, releases nothing, or sees unit columns.
    for quiet in (
        make(epsilon=1.0, random_state=0, feature_scaling="auto"),
        make(epsilon=np.inf, random_state=0),
    ):
        assert _raw_fit_warnings(quiet, X, y, **fit_params) == []
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    unit = make(epsilon=1.0, random_state=0)
    assert _raw_fit_warnings(unit, Z, y, **fit_params) == []


@pytest.mark.parametrize("make", _RAW_COLUMN_FITS, ids=_RAW_COLUMN_FIT_IDS)
def test_auto_scaling_that_cannot_be_afforded_still_warns(make):
    # At n = 600 and epsilon = 0.5 the private quantiles would be noise:
    # "auto" scales nothing (a public rule), so raw columns are trained on as
    # given and the fit says so, naming the public remedy.
    X, y = _raw(600, 0)
    fit_params = (
        {"sensitive_features": np.arange(600) % 2}
        if "FERMI" in type(make()).__name__
        else {}
    )
    clf = make(epsilon=0.5, random_state=0, feature_scaling="auto")
    messages = _raw_fit_warnings(clf, X, y, **fit_params)
    assert len(messages) == 1
    assert "feature_scaling='auto' trains on the columns as given" in messages[0]
    assert "feature_bounds" in messages[0]
    assert "scaled by private" not in clf.privacy_record_.mechanism
    bounded = make(
        epsilon=0.5,
        random_state=0,
        feature_scaling="auto",
        feature_bounds=[(-1e3, 1e3), (0, 1e6), (-5, 5), (-5, 5)],
    )
    assert _raw_fit_warnings(bounded, X, y, **fit_params) == []


def test_no_warning_where_the_budget_buys_the_constant_only():
    # The intercept-only release does not read the columns.
    X, y = _raw(200, 0)
    clf = DPLogisticRegression(epsilon=0.05, classes=[0, 1], random_state=0)
    assert _raw_fit_warnings(clf, X, y) == []
    assert clf.intercept_only_


def _narrow(kind, n, rng):
    if kind == "years 2019-2022":
        return rng.integers(2019, 2023, n).astype(float)
    location = {"N(2000, 1)": 2000.0, "N(1e4, 1)": 1e4}[kind]
    return location + rng.normal(size=n)


@pytest.mark.parametrize("kind", ["years 2019-2022", "N(2000, 1)", "N(1e4, 1)"])
def test_a_spread_below_the_median_grid_keeps_its_order(kind):
    # A spread under 0.1% of the column's level is below what the second
    # median resolves, so a quartile lands next to the location. The scale
    # is floored at that resolution (a few units here), not at the level:
    # the years were scaled by 2020 and flattened to a constant.
    rng = np.random.default_rng(0)
    n = 20_000
    X = np.column_stack([_narrow(kind, n, rng), rng.normal(size=n)])
    plan = plan_feature_scaling("auto", None, 2, PrivacyBudget(1.0, 1e-5), n_samples=n)
    sd = X[:, 0].std()
    for seed in range(5):
        scaling = fit_feature_scaling(X, plan, np.random.default_rng(seed))
        assert abs(scaling.location[0] - np.median(X[:, 0])) < 10.0 * sd
        assert 0.5 * sd < scaling.scale[0] < 10.0 * sd, (seed, scaling.scale)
        assert 0.5 < scaling.scale[1] < 2.0


def test_a_year_column_keeps_its_signal_under_private_scales():
    # The years 2019 to 2022 carry most of the signal: scaled by their
    # spread the private fit matches the non-private one (0.94); scaled by
    # their level it stayed near the other column's accuracy (0.63).
    def data(n, seed):
        rng = np.random.default_rng(seed)
        year = rng.integers(0, 4, size=n)
        z = rng.normal(size=n)
        y = (1.5 * (year - 1.5) + z + 0.5 * rng.normal(size=n) > 0).astype(int)
        return np.column_stack([z, year + 2019.0]), y

    X, y = data(20_000, 0)
    X_test, y_test = data(5000, 1)
    exact = DPLogisticRegression(epsilon=math.inf, classes=[0, 1]).fit(X, y)
    private = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], feature_scaling="auto", random_state=0
    ).fit(X, y)
    assert private.score(X_test, y_test) > exact.score(X_test, y_test) - 0.02


def test_a_column_beyond_the_grid_warns_and_keeps_its_magnitude():
    # A Unix timestamp (1.7e9) is clipped to the grid's edge (1e8) before
    # the draws: the released median lies in the outermost bin, which the
    # warning reads (post-processing); the scale stays the edge's magnitude.
    rng = np.random.default_rng(0)
    n = 20_000
    X = np.column_stack([rng.normal(size=n), 1.7e9 + 3e7 * rng.normal(size=n)])
    plan = plan_feature_scaling("auto", None, 2, PrivacyBudget(3.0, 1e-5), n_samples=n)
    with pytest.warns(UserWarning, match=r"position 1 lies at the edge .*1e8"):
        scaling = fit_feature_scaling(X, plan, np.random.default_rng(0))
    assert scaling.scale[1] > 1e7
    # Columns inside the range: no warning.
    X_in, _ = _raw(20_000, 0)
    plan = plan_feature_scaling("auto", None, 4, PrivacyBudget(3.0, 1e-5), n_samples=n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_feature_scaling(X_in, plan, np.random.default_rng(0))


def test_sparse_bounds_away_from_zero_warn_from_the_bounds_alone():
    # Sparse X is divided, never centred: a declared range 490 to 510 keeps
    # its offset. The warning reads the public bounds only.
    budget = PrivacyBudget(1.0, 1e-5)
    bounds = [(490.0, 510.0), (-4.0, 4.0), (0.0, 10.0)]
    with pytest.warns(UserWarning, match="sparse column at position 0 lies away"):
        plan_feature_scaling("auto", bounds, 3, budget, sparse=True)
    with pytest.warns(UserWarning, match="sparse column at position 0 lies away"):
        public_scaling_plan("auto", bounds, 3, where="silos=", sparse=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Ranges that contain 0 or start at it, and dense X (centred).
        plan_feature_scaling("auto", bounds[1:] * 2, 4, budget, sparse=True)
        plan_feature_scaling("auto", bounds, 3, budget)


_INVALID_BOUNDS = [
    [(1.0, 0.0), (0.0, 1.0)],
    [(0.0, np.inf), (0.0, 1.0)],
    [(np.nan, 1.0), (0.0, 1.0)],
    "abc",
    [("a", "b"), (0.0, 1.0)],
    [(0.0, 1.0, 2.0), (0.0, 1.0, 2.0)],
]


@pytest.mark.parametrize("epsilon", [1.0, math.inf])
@pytest.mark.parametrize("bounds", _INVALID_BOUNDS + [[(0.0, 1.0)] * 3])
@pytest.mark.parametrize("make", ["logistic", "mlp", "semi-dp"])
def test_invalid_feature_bounds_are_refused_at_every_epsilon(make, bounds, epsilon):
    from sklearn_dpfair.linear_model import SemiDPLinearRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    fit_params = {}
    if make == "logistic":
        est = DPLogisticRegression(
            epsilon=epsilon, classes=[0, 1], feature_scaling="auto",
            feature_bounds=bounds, random_state=0,
        )
    elif make == "mlp":
        est = DPMLPClassifier(
            epsilon=epsilon, classes=[0, 1], feature_scaling="auto",
            feature_bounds=bounds, random_state=0, max_iter=1,
        )
    else:
        est = SemiDPLinearRegression(
            epsilon=epsilon, feature_bounds=bounds, random_state=0
        )
        y = y.astype(float)
        mask = np.zeros(200, dtype=bool)
        mask[:10] = True
        fit_params = {"public_mask": mask}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="feature_bounds"):
            est.fit(X, y, **fit_params)


def test_user_units_beyond_float32_are_kept_in_float64_without_warning():
    # A column declared in units of 1e-39: w / s is 1e39, past float32.
    # Narrowed, the model would be inf (with an overflow warning) and every
    # prediction NaN; kept in float64, it is finite and exact.
    scaling = FeatureScaling(np.array([1e-39, 0.0]), np.array([1e-39, 1.0]))
    coef = np.array([[2.0, 3.0]], dtype=np.float32)
    intercept = np.array([1.0], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raw, raw_intercept = scaling.coefficients_in_user_units(coef, intercept)
    assert raw.dtype == raw_intercept.dtype == np.float64
    np.testing.assert_allclose(raw, [[2e39, 3.0]])
    np.testing.assert_allclose(raw_intercept, [1.0 - 2.0])
    # Within range the model keeps the fit's dtype.
    small = FeatureScaling(np.zeros(2), np.array([10.0, 1.0]))
    assert small.coefficients_in_user_units(coef, intercept)[0].dtype == np.float32
    assert narrowed_if_finite(np.array([1e39]), np.float32).dtype == np.float64
    assert narrowed_if_finite(np.array([1.0]), np.float32).dtype == np.float32


def _tiny_unit_column(n=3000):
    X, y = make_classification(
        n, 3, n_informative=2, n_redundant=0, random_state=1
    )
    X[:, 0] *= 1e-40
    return X, y, [[-4e-40, 4e-40], [-5.0, 5.0], [-5.0, 5.0]]


@pytest.mark.parametrize("estimator", ["linear", "network"])
def test_float32_fit_on_a_column_in_tiny_units_predicts_finitely(estimator):
    # Column 0 is declared in units of 1e-40: in the user's units its
    # coefficient is about 1e39 or more, beyond float32. It is stored in float64
    # (never inf) and float32 input is promoted to predict.
    X, y, bounds = _tiny_unit_column()
    X32 = X.astype(np.float32)
    make = {"linear": DPLogisticRegression, "network": DPMLPClassifier}[estimator]
    kw = {} if estimator == "linear" else {"hidden_layer_sizes": (8,)}
    clf = make(
        classes=[0, 1],
        random_state=0,
        feature_scaling="auto",
        feature_bounds=bounds,
        **kw,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf.fit(X32, y)
        proba = clf.predict_proba(X32)
    first = clf.coef_ if estimator == "linear" else clf.coefs_[0]
    assert np.isfinite(first).all()
    assert np.isfinite(proba).all()
    assert clf.score(X32, y) > 0.8


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_exact_moments_leave_every_row_within_reach(weighted, layout):
    # sum_i w_i z_ij^2 = n for a column standardized by its exact moments
    # (weights of mean 1), so no row is capped: heavy tails, a row of 1e6
    # in a column of three values, and rows of tiny weight included.
    rng = np.random.default_rng(0)
    X = np.column_stack([
        rng.standard_t(1.5, size=400),
        np.r_[1e6, rng.integers(0, 3, size=399)],
        (rng.random(400) < 0.01) * 5.0,
    ])
    weights = rng.exponential(size=400) if weighted else None
    if weighted:
        weights[:5] = 1e-6
        weights /= weights.mean()
    if layout == "csr":
        X = sp.csr_matrix(X)
    scaling = exact_feature_scaling(X, weights, center=layout == "dense")
    Z = scaling.transform(X)
    assert reach_capped_weights(Z, weights) is weights


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_rows_a_robust_scale_leaves_far_out_count_as_rows_at_the_reach(layout):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    X[7, 1], X[9, 2] = 1e4, -1e300
    weights = np.ones(400)
    weights[:2] = 0.0
    weights /= weights.mean()
    X = sp.csr_matrix(X) if layout == "csr" else X
    scaling = exact_feature_scaling(X, weights, center=layout == "dense", robust=True)
    Z = scaling.transform(X)
    capped = reach_capped_weights(Z, weights)
    reach = np.abs(Z.toarray() if layout == "csr" else Z).max(axis=1)
    # Every row's term is at most that of a row at the reach sqrt(n / w) of
    # an exact standardization, w |z| <= sqrt(n w), and the two extreme rows'
    # are at it; the other rows, and the zero weights, are unchanged.
    at_reach = np.sqrt(400 * weights)
    assert np.all(capped * reach <= at_reach * (1 + 1e-12))
    np.testing.assert_allclose(capped[[7, 9]] * reach[[7, 9]], at_reach[[7, 9]])
    others = np.setdiff1d(np.arange(400), [7, 9])
    np.testing.assert_array_equal(capped[others], weights[others])
    assert np.isfinite(capped).all() and np.all(capped[[7, 9]] > 0)
