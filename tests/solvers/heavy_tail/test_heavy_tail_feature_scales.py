# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private per-column location and scale of "dp-sgd" on raw columns.

Neighbouring datasets (one record added: huge, constant-breaking,
one-of-a-kind values) move each release by at most its sensitivity; the
recorded event is the planned one and holds one zCDP event per release;
utility on scikit-learn's raw diabetes data rises with epsilon and beats
the constant predictor at epsilon = 1.
"""

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from release_observer import capture_mechanism_inputs
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from sklearn_dpfair import HeavyTailDPRegressor
from sklearn_dpfair._solvers.heavy_tail._dpsgd import (
    FEATURE_SCALE_NAMES,
    features_scalable,
    private_feature_scales,
    standardized,
)
from sklearn_dpfair.privacy import PrivacyBudget
from sklearn_dpfair.privacy._accounting import epsilon_of


def _raw_diabetes():
    X, y = load_diabetes(return_X_y=True, scaled=False)
    # The split of benchmarks/bench_raw.py.
    return train_test_split(X, y, test_size=0.3, random_state=0)


_RHOS = {"range": 30.0, "location": 30.0, "scale": 30.0}


@pytest.mark.parametrize(
    "extra",
    [
        [1.7e308, -1.7e308, 0.0],  # huge
        [5.0, 5.0, 5.0],  # breaks the constant column's tie
        [-123456.789, 3.3e-7, 42.0],  # one of a kind
    ],
    ids=["huge", "constant", "one-of-a-kind"],
)
def test_per_column_releases_move_by_their_sensitivity(extra, monkeypatch):
    # Add/remove one record: each column's histogram counts move by at most
    # 1 in l2 (one record, one bin: the Gaussian mechanism's sensitivity
    # 1), each exponential-mechanism utility by at most 1/2 (a median under
    # add/remove). Same seed and a large budget, so that both worlds release
    # the same grids and the inputs can be compared entry by entry.
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [rng.normal(500.0, 100.0, 400), np.full(400, 5.0), rng.normal(0, 1e-3, 400)]
    )
    X[:, 1][:150] = 7.0  # a column tied at its median for most rows
    seen = capture_mechanism_inputs(monkeypatch)
    base = private_feature_scales(X, _RHOS, True, None, np.random.default_rng(1))
    before = list(seen)
    seen.clear()
    neighbour = np.vstack([X, extra])
    other = private_feature_scales(
        neighbour, _RHOS, True, None, np.random.default_rng(1)
    )
    assert np.all(np.isfinite(base)) and np.all(np.isfinite(other))
    assert np.all(other[1] > 0)
    assert len(seen) == len(before) == 3 * X.shape[1]
    for (kind, a, bound), (_, b, _) in zip(before, seen):
        assert a.shape == b.shape
        assert np.all(np.isfinite(a)) and np.all(np.isfinite(b))
        if kind == "gaussian":
            assert bound == 1.0
            assert np.linalg.norm(a - b) <= 1.0
        else:
            assert bound == 0.5
            assert np.max(np.abs(a - b)) <= 0.5 + 1e-12


def test_a_huge_value_is_standardized_to_a_finite_one():
    # A scale below 1 would send 1.7e308 to inf (and its products to NaN).
    X = np.array([[1.7e308, 0.0], [1.0, 2.0]])
    Z = standardized(X, np.array([-1.0, 0.0]), np.array([1e-3, 2.0]))
    assert np.all(np.isfinite(Z))
    assert Z[1, 1] == 1.0


def test_the_recorded_event_is_the_plan_and_composes_each_release():
    (X, _, y, _) = _raw_diabetes()
    reg = HeavyTailDPRegressor(epsilon=1.0, random_state=0).fit(X, y)
    assert reg.dp_event_ == reg._privacy_plan_event(*X.shape)
    assert epsilon_of(reg.dp_event_, reg.delta_, "rdp") == reg.epsilon_
    assert reg.privacy_record_.recompute_epsilon() == reg.epsilon_
    assert reg.epsilon_ <= 1.0
    d = X.shape[1]
    zcdp = [
        e for e in reg.dp_event_.events[0].events
        if isinstance(e, dp_accounting.ZCDpEvent)
    ]
    # One release for each other entry (the target's range, location and
    # scale, the row norms; no intercept step at this epsilon * n) and three
    # a column.
    others = [k for k in reg.rho_spent_ if k not in FEATURE_SCALE_NAMES]
    assert len(others) == 4
    assert len(zcdp) == len(others) + 3 * d
    for name in FEATURE_SCALE_NAMES:
        assert reg.rho_spent_[name] > 0
    assert sum(e.rho for e in zcdp) == pytest.approx(sum(reg.rho_spent_.values()))
    # The released scales are recorded in the user's units.
    assert reg.feature_location_.shape == reg.feature_scale_.shape == (d,)
    assert np.all(reg.feature_scale_ > 0)


def test_declared_bounds_spend_nothing():
    (X, _, y, _) = _raw_diabetes()
    lower, upper = X.min(axis=0) - 1.0, X.max(axis=0) + 1.0
    reg = HeavyTailDPRegressor(
        epsilon=1.0, feature_bounds=np.column_stack([lower, upper]), random_state=0
    ).fit(X, y)
    assert not set(FEATURE_SCALE_NAMES) & set(reg.rho_spent_)
    np.testing.assert_allclose(reg.feature_location_, (lower + upper) / 2)
    np.testing.assert_allclose(reg.feature_scale_, (upper - lower) / 2)
    assert reg.dp_event_ == reg._privacy_plan_event(*X.shape)
    as_given = HeavyTailDPRegressor(epsilon=1.0, feature_bounds=None).fit(X, y)
    assert not set(FEATURE_SCALE_NAMES) & set(as_given.rho_spent_)
    np.testing.assert_array_equal(as_given.feature_scale_, np.ones(X.shape[1]))


def test_feature_bounds_are_validated():
    (X, _, y, _) = _raw_diabetes()
    with pytest.raises(ValueError, match="feature_bounds"):
        HeavyTailDPRegressor(feature_bounds=[(0.0, 1.0)] * 3).fit(X, y)


def test_the_widest_finite_bounds_scale_dense_and_sparse_x_alike():
    # (upper - lower) / 2 overflowed for (-1e308, 1e308): a dense X got an
    # infinite scale (its column zeroed), a sparse one 1e308.
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    y = X @ np.array([1.0, 2.0]) + 5.0 + rng.normal(size=1000)
    bounds = [(-1e308, 1e308), (-3.0, 3.0)]
    scales = []
    for data in (X, sp.csr_matrix(X)):
        reg = HeavyTailDPRegressor(
            epsilon=1.0, feature_bounds=bounds, random_state=0, max_iter=20
        ).fit(data, y)
        assert np.all(np.isfinite(reg.coef_)) and math.isfinite(reg.intercept_)
        scales.append(reg.feature_scale_)
    np.testing.assert_array_equal(scales[0], [1e308, 3.0])
    np.testing.assert_array_equal(scales[1], [1e308, 3.0])


@pytest.mark.parametrize("sparse", [False, True])
def test_bounds_too_narrow_for_the_dtype_are_refused_before_the_data(sparse):
    # A half-width below the dtype's smallest normal number sent every
    # standardized value past the largest float; refused from the parameter
    # alone, before any row is read, as SemiDPLinearRegression refuses it.
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = X[:, 0] + rng.normal(size=200)

    def layout(data):
        return sp.csr_matrix(data) if sparse else data

    narrow = HeavyTailDPRegressor(
        epsilon=1.0, feature_bounds=[(0.0, 1e-320), (-3.0, 3.0)], random_state=0
    )
    with pytest.raises(ValueError, match="feature_bounds.*position 0"):
        narrow.fit(layout(X), y)
    assert not hasattr(narrow, "coef_")
    with pytest.raises(ValueError, match="feature_bounds.*position 0"):
        narrow.privacy_plan(*X.shape)
    # The steps standardize in float64 whatever X's dtype: 1e-40, a normal
    # float64 but not a normal float32, is taken for float32 X too.
    bounds = [(0.0, 1e-40), (-3.0, 3.0)]
    for dtype in (np.float64, np.float32):
        reg = HeavyTailDPRegressor(
            epsilon=1.0, feature_bounds=bounds, random_state=0, max_iter=5
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reg.fit(layout(X.astype(dtype)), y)
        assert np.all(np.isfinite(reg.coef_))


def test_the_scales_are_planned_from_public_counts_only():
    # A small epsilon * n: the column histograms could not show the data,
    # so no per-column release is planned (the columns are used as given).
    assert features_scalable(309, 10, 0.1, PrivacyBudget(1.0, 1e-5), _names())
    assert not features_scalable(309, 10, 0.1, PrivacyBudget(0.5, 1e-5), _names())
    assert not features_scalable(309, 40, 0.1, PrivacyBudget(1.0, 1e-5), _names())
    (X, _, y, _) = _raw_diabetes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = HeavyTailDPRegressor(epsilon=0.5, random_state=0).fit(X, y)
    assert not set(FEATURE_SCALE_NAMES) & set(small.rho_spent_)


def _names():
    return [
        "target_range", "target_location", "target_scale", "row_norm_histogram",
        *FEATURE_SCALE_NAMES,
    ]


def _median_test_mse(epsilon, seeds=range(7)):
    X, Xt, y, yt = _raw_diabetes()
    errors = []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reg = HeavyTailDPRegressor(epsilon=epsilon, random_state=seed).fit(X, y)
        errors.append(np.mean((yt - reg.predict(Xt)) ** 2))
    return float(np.median(errors)), float(np.mean((yt - y.mean()) ** 2))


def test_raw_diabetes_at_epsilon_one_beats_the_constant_predictor():
    # Median of 7 fits (seeds 0..6) on the columns in their units; before
    # the per-column scales it was the constant predictor's (1.06x), the
    # steps' public size set by rows whose norm the serum columns dominate.
    median, constant = _median_test_mse(1.0)
    assert median <= 0.95 * constant


def test_raw_diabetes_utility_rises_with_epsilon():
    # Medians of 15 fits: with 5, epsilon 3 and 10 are within the seeds'
    # spread of each other (3,187 and 3,207 after the row-norm bins beyond
    # 1e8 drew more noise; 3,333 and 3,179 with 15).
    medians = [_median_test_mse(eps, seeds=range(15))[0] for eps in (1.0, 3.0, 10.0)]
    assert medians[0] > medians[1] > medians[2]
    # Near the least-squares error (3,097) at epsilon = 10.
    assert medians[2] < 1.1 * 3097


def test_mostly_zero_column_is_left_unscaled(monkeypatch):
    # A column zero for the bulk of its rows: its histogram shows only the
    # bin around 0, and a scale read from it would make the other rows huge.
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(10.0, 2.0, 3000), np.zeros(3000)])
    X[:60, 1] = 1.0
    location, scale = private_feature_scales(
        X, {"range": 1.0, "location": 1.0, "scale": 1.0}, True, None,
        np.random.default_rng(0),
    )
    assert (location[1], scale[1]) == (0.0, 1.0)
    assert 8.0 < location[0] < 12.0 and 1.0 < scale[0] < 4.0
    assert not math.isnan(scale[0])


def test_a_thin_far_tail_does_not_stretch_a_column_scale():
    # 0.5% of the rows scaled by 100: a large sample shows their decade bins
    # above the noise. Read as part of the range, they made the scale grid's
    # step (a 121st of the range) 16 and the scales 12-49, not ~1.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100_000, 3))
    X[rng.random(100_000) < 0.005] *= 100.0
    rhos = {"range": 0.3, "location": 0.06, "scale": 0.06}
    for seed in range(3):
        location, scale = private_feature_scales(
            X, rhos, True, None, np.random.default_rng(seed)
        )
        assert np.all(np.abs(location) < 0.5)
        assert np.all((scale > 0.7) & (scale < 1.4)), scale


def test_a_year_column_gets_a_scale_near_its_spread():
    # Years 1990..2019: the range histogram's decade bin is 1,000..10,000,
    # far wider than the spread (sd 8.7, MAD 7.5). On grid points from a
    # 121st of that width every candidate lay above all the deviations and
    # the draw was uniform up to the width (scales of about 11,000: the
    # year's coefficient lost, R^2 0.03); the bins keep the lowest one.
    rng = np.random.default_rng(0)
    years = rng.integers(1990, 2020, 5000).astype(float)
    X = np.column_stack([years, rng.normal(size=5000)])
    rhos = {"range": 1.0, "location": 1.0, "scale": 1.0}
    for seed in range(3):
        location, scale = private_feature_scales(
            X, rhos, True, None, np.random.default_rng(seed)
        )
        assert abs(location[0] - 2004.5) < 30.0
        assert 5.0 < scale[0] < 100.0, scale
        assert 0.7 < scale[1] < 1.4, scale
    y = 5.0 * (years - 2000.0) + X[:, 1] + 5.0 * rng.normal(size=5000)
    reg = HeavyTailDPRegressor(epsilon=1.0, random_state=0).fit(X[:4000], y[:4000])
    assert reg.score(X[4000:], y[4000:]) > 0.9


def _centred_least_squares_mse(X, y):
    # The non-private reference, solved on centred columns (a raw 1.7e9
    # column makes the uncentred normal equations ill-conditioned).
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    coef = np.linalg.lstsq(Xc, yc, rcond=None)[0]
    return float(np.mean((Xc @ coef - yc) ** 2))


def test_a_timestamp_column_gets_a_positive_scale_and_a_good_fit():
    # Unix timestamps in seconds lie beyond the 1e8 of the shared decade
    # grid: read as the outer bin's finite edge, their range had width 0,
    # hence a scale of 0 and an infinite coefficient.
    rng = np.random.default_rng(0)
    n = 5000
    ts = 1.7e9 + rng.uniform(0, 3e7, n)
    x2 = rng.normal(size=n)
    X = np.c_[ts, x2]
    y = 1e-7 * (ts - 1.7e9) + 2 * x2 + rng.normal(size=n)
    reference = _centred_least_squares_mse(X, y)
    for seed in range(3):
        est = HeavyTailDPRegressor(epsilon=1.0, random_state=seed).fit(X, y)
        assert np.all(est.feature_scale_ > 0)
        assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
        mse = float(np.mean((est.predict(X) - y) ** 2))
        assert mse < 1.2 * reference < np.var(y)
        assert 1.7e9 <= est.feature_location_[0] <= 1.73e9


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_target_near_1e9_gets_a_finite_fit(sign):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 1))
    y = sign * 1e9 + 1e7 * x[:, 0] + 1e6 * rng.normal(size=2000)
    est = HeavyTailDPRegressor(epsilon=1.0, random_state=0).fit(x, y)
    assert np.isfinite(est.coef_).all() and np.isfinite(est.intercept_)
    np.testing.assert_allclose(est.coef_, [1e7], rtol=0.1)
    np.testing.assert_allclose(est.intercept_, sign * 1e9, rtol=1e-3)


def test_the_intercept_only_model_of_a_target_near_1e9_is_near_it():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 1))
    y = 1e9 + 1e7 * x[:, 0]
    with warnings.catch_warnings():
        # The fit warns that it released the intercept-only model.
        warnings.simplefilter("ignore")
        est = HeavyTailDPRegressor(epsilon=1.0, random_state=0).fit(x, y)
    assert est.coef_[0] == 0.0
    np.testing.assert_allclose(est.intercept_, 1e9, rtol=0.05)


@pytest.mark.parametrize("first, last", [(0, 0), (-1, -1), (0, -1)])
def test_an_outer_bin_is_read_with_a_positive_width(first, last):
    from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
        WIDE_DECADE_EDGES,
        histogram_mode_run,
        histogram_target_range,
    )

    counts = np.zeros(WIDE_DECADE_EDGES.size - 1)
    counts[[first, last]] = 100.0
    for read in (histogram_mode_run, histogram_target_range):
        low, high = read(counts, 10.0, WIDE_DECADE_EDGES)
        assert np.isfinite(low) and np.isfinite(high) and low < high
