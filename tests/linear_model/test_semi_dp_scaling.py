"""SemiDPLinearRegression on raw columns: public-row, declared and private scales."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes

from sklearn_dpfair import SemiDPLinearRegression, SemiLocalDPLinearRegression
from sklearn_dpfair._solvers._feature_scaling import ScalingPlan
from sklearn_dpfair._solvers.semi_dp._scaling import (
    MIN_PUBLIC_SCALE_ROWS,
    PUBLIC_ROWS_MODE,
    fit_semidp_scaling,
    scaled_rows,
)

# Columns with offsets 500 and 1e5 and scales 1e-3 to 1e4 (years, prices,
# lab values): the regime where an unscaled clip saturates on one column.
SCALES = np.array([1e-3, 1e-1, 1.0, 1e2, 1e4, 1e3])
OFFSETS = np.array([0.0, 500.0, 0.0, 1e5, 0.0, 500.0])
BETA = np.array([1.0, -2.0, 0.5, 0.0, 1.5, -1.0])


def _raw(n, seed):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, BETA.size))
    y = Z @ BETA + 0.5 * rng.standard_normal(n) + 100.0
    return Z * SCALES + OFFSETS, y


def _ols_mse(X, y, X_test, y_test):
    # Least squares in standardized columns (the same model; a direct
    # solve on the raw columns is ill-conditioned at these scales).
    m, s = X.mean(0), X.std(0)
    A = np.column_stack([(X - m) / s, np.ones(len(y))])
    w = np.linalg.lstsq(A, y, rcond=None)[0]
    pred = np.column_stack([(X_test - m) / s, np.ones(len(y_test))]) @ w
    return np.mean((pred - y_test) ** 2)


def _mse(est, X, y):
    return float(np.mean((est.predict(X) - y) ** 2))


def test_raw_columns_fit_near_least_squares_with_or_without_public_row_scales():
    # Unscaled, the 1e5-offset column saturates every clip, so the tuning
    # leans on the public gradient (alpha_ near 0.01) and the fit stays near
    # the public warm start, a ridge in the public rows' centred columns
    # (solved in the uncentred Gram, where the offset columns' directions
    # were lost, it gave a test MSE of 0.36-0.41 for a noise variance of
    # 0.25); with the public rows' scales it is within 2%.
    X, y = _raw(20_000, 0)
    X_test, y_test = _raw(20_000, 1)
    public = np.arange(len(y)) < 1000
    scaled = SemiDPLinearRegression(epsilon=1.0, random_state=0)
    scaled.fit(X, y, public_mask=public)
    raw = SemiDPLinearRegression(epsilon=1.0, feature_scaling=None, random_state=0)
    raw.fit(X, y, public_mask=public)
    ols = _ols_mse(X, y, X_test, y_test)
    assert _mse(scaled, X_test, y_test) <= 1.02 * ols
    assert _mse(raw, X_test, y_test) <= 1.05 * ols
    # Coefficients are in the user's units.
    np.testing.assert_allclose(scaled.coef_ * SCALES, BETA, atol=0.05)
    # Public scales cost nothing: the event is the unscaled fit's.
    assert scaled.dp_event_ == raw.dp_event_
    assert "public rows' mean and standard deviation" in scaled.privacy_record_.mechanism


def test_epsilon_inf_matches_ols_on_raw_columns():
    X, y = _raw(5000, 0)
    X_test, y_test = _raw(5000, 1)
    public = np.arange(len(y)) < 500
    est = SemiDPLinearRegression(epsilon=math.inf).fit(X, y, public_mask=public)
    assert _mse(est, X_test, y_test) <= 1.01 * _ols_mse(X, y, X_test, y_test)


def test_raw_diabetes_at_epsilon_one_beats_unscaled():
    X, y = load_diabetes(return_X_y=True, scaled=False)
    public = np.random.default_rng(0).random(len(y)) < 0.2
    scaled, raw = [], []
    for seed in range(5):
        for out, scaling in ((scaled, "auto"), (raw, None)):
            est = SemiDPLinearRegression(
                epsilon=1.0, feature_scaling=scaling, random_state=seed
            ).fit(X, y, public_mask=public)
            out.append(_mse(est, X, y))
    assert np.median(scaled) < np.median(raw)


def test_feature_bounds_are_used_and_cost_nothing():
    X, y = _raw(4000, 0)
    public = np.arange(len(y)) < 200
    bounds = np.column_stack([OFFSETS - 4 * SCALES, OFFSETS + 4 * SCALES])
    est = SemiDPLinearRegression(feature_bounds=bounds, random_state=0)
    est.fit(X, y, public_mask=public)
    assert "feature_bounds" in est.privacy_record_.mechanism
    plain = SemiDPLinearRegression(feature_scaling=None, random_state=0)
    plain.fit(X, y, public_mask=public)
    assert est.dp_event_ == plain.dp_event_
    assert est.epsilon_ <= 1.0


@pytest.mark.parametrize("adjacency", ["replace_one", "add_remove"])
def test_few_public_rows_spend_budget_on_private_scales(adjacency):
    # Enough rows for the private quartiles to resolve a spread
    # (quantiles_resolvable); the next test has too few.
    X, y = _raw(12000, 0)
    public = np.arange(len(y)) < MIN_PUBLIC_SCALE_ROWS - 1
    est = SemiDPLinearRegression(max_iter=10, adjacency=adjacency, random_state=0)
    with pytest.warns(UserWarning, match="public rows for 7 parameters"):
        est.fit(X, y, public_mask=public)
    record = est.privacy_record_
    assert "private quantiles" in record.mechanism
    assert record.accountant == "rdp"
    # Within the budget, composed with the steps in one event.
    assert est.epsilon_ <= 1.0 + 1e-9
    assert type(est.dp_event_).__name__ == "ComposedDpEvent"
    plan = est.privacy_plan(len(y), X.shape[1], n_public=int(public.sum()))
    assert plan.dp_event == est.dp_event_
    # Whatever the private scales, the model predicts finitely.
    X_test, _ = _raw(4000, 1)
    assert np.all(np.isfinite(est.predict(X_test)))


def test_too_few_rows_for_private_quantiles_scale_nothing():
    # A public rule of n and the per-draw budget: on 500 rows the quartiles
    # would be noise (a tiny scale multiplies the coefficients' noise), so
    # no budget goes to them and the plan says so before the data are read.
    X, y = _raw(500, 0)
    est = SemiDPLinearRegression(max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert "private quantiles" not in est.privacy_record_.mechanism
    assert est.privacy_plan(500, X.shape[1]).dp_event == est.dp_event_


def test_raw_columns_left_unscaled_by_the_rule_are_named():
    # The rule above trains on the columns as given: raw columns (about
    # 50 +- 10) are named in a warning, as DPLogisticRegression names them.
    rng = np.random.default_rng(0)
    X = rng.normal(50.0, 10.0, size=(1500, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + rng.normal(size=1500)
    public = np.arange(1500) < 3
    with pytest.warns(UserWarning, match="trains on the columns as given: at this"):
        SemiDPLinearRegression(max_iter=3, random_state=0).fit(
            X, y, public_mask=public
        )
    # Columns near unit scale are not named.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SemiDPLinearRegression(max_iter=3, random_state=0).fit(
            (X - 50.0) / 10.0, y, public_mask=public
        )
    assert not any("trains on the columns" in str(w.message) for w in caught)


# Without the target among them, the columns' draws had add/remove's
# sensitivity (1/2 for a median) under the default replace-one relation.
@pytest.mark.parametrize("target_scaling", ["auto", None])
def test_private_scale_draws_use_the_fits_adjacency(monkeypatch, target_scaling):
    from sklearn_dpfair.preprocessing import _quantiles

    seen = []
    real = _quantiles.private_quantile

    def spy(*args, adjacency, **kwargs):
        seen.append(adjacency)
        return real(*args, adjacency=adjacency, **kwargs)

    monkeypatch.setattr(_quantiles, "private_quantile", spy)
    X, y = _raw(12000, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SemiDPLinearRegression(
            max_iter=3, target_scaling=target_scaling, random_state=0
        ).fit(X, y)
    assert seen and set(seen) == {"replace_one"}


def test_sparse_columns_are_scaled_by_declared_bounds_only():
    sp = pytest.importorskip("scipy.sparse")
    X, y = _raw(3000, 0)
    X = X - OFFSETS  # sparse columns are not centred
    public = np.arange(len(y)) < 300
    Xs = sp.csr_matrix(X)
    bounds = np.column_stack([-4 * SCALES, 4 * SCALES])
    default = SemiDPLinearRegression(random_state=0).fit(Xs, y, public_mask=public)
    assert "scaled" not in default.privacy_record_.mechanism
    bounded = SemiDPLinearRegression(random_state=0, feature_bounds=bounds)
    bounded.fit(Xs, y, public_mask=public)
    assert "feature_bounds" in bounded.privacy_record_.mechanism
    X_test, y_test = _raw(3000, 1)
    X_test = X_test - OFFSETS
    assert _mse(bounded, X_test, y_test) < _mse(default, X_test, y_test)
    assert default.dp_event_ == bounded.dp_event_


def test_semi_local_scales_raw_columns_by_public_rows():
    # Unscaled, the raw columns make the local fit diverge (test MSE ~1e9 at
    # epsilon = 1); with the public rows' scales it is within 2% of least
    # squares, at no privacy cost (the record is the unscaled fit's).
    from sklearn_dpfair import SemiLocalDPLinearRegression

    X, y = _raw(20_000, 0)
    X_test, y_test = _raw(20_000, 1)
    public = np.arange(len(y)) < 1000
    scaled = SemiLocalDPLinearRegression(random_state=0).fit(X, y, public_mask=public)
    raw = SemiLocalDPLinearRegression(random_state=0, feature_scaling=None)
    raw.fit(X, y, public_mask=public)
    ols = _ols_mse(X, y, X_test, y_test)
    assert _mse(scaled, X_test, y_test) <= 1.02 * ols
    assert _mse(raw, X_test, y_test) > 10 * ols
    assert scaled.dp_event_ == raw.dp_event_
    assert scaled.epsilon_ == raw.epsilon_
    # Too few public rows and no bounds: no scaling (no curator for private
    # quantiles under local DP), the columns used as given.
    few = np.arange(len(y)) < 3
    a = SemiLocalDPLinearRegression(random_state=0).fit(X, y, public_mask=few)
    b = SemiLocalDPLinearRegression(random_state=0, feature_scaling=None)
    b.fit(X, y, public_mask=few)
    np.testing.assert_array_equal(a.coef_, b.coef_)


# A target far from 0 in its own units (an age), standardized columns.
def _age_target(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    signal = X @ np.array([1.0, -0.5, 0.3]) + 0.5 * rng.standard_normal(n)
    return X, 40.0 + 12.0 * signal


def _ols_rmse_ratio(est, X, y):
    ols = _ols_mse(X, y, X, y)
    return math.sqrt(_mse(est, X, y) / ols)


def test_without_public_rows_the_target_is_scaled_with_the_columns():
    # Nothing anchors an all-private fit: it starts from zero with gradients
    # clipped at 1, and an age-like target (40 +- 12) stayed out of reach
    # (RMSE 5.9-6.1x least squares' at 3 seeds). Its private location and
    # scale are drawn as one more column of the private scales.
    X, y = _age_target(5000, 0)
    none = np.zeros(len(y), dtype=bool)
    est = SemiDPLinearRegression(random_state=0).fit(X, y, public_mask=none)
    assert _ols_rmse_ratio(est, X, y) < 1.05
    record = est.privacy_record_
    assert "the target's location and scale among them" in record.mechanism
    # Four draws a column, the target's included: all planned, all run.
    assert f"{4 * (X.shape[1] + 1)} private quantiles" in record.mechanism
    plan = est.privacy_plan(len(y), X.shape[1], n_public=0)
    assert plan.dp_event == est.dp_event_
    assert est.epsilon_ <= 1.0 + 1e-9


def test_the_target_draws_are_the_planned_ones(monkeypatch):
    from sklearn_dpfair.preprocessing import _quantiles

    calls = []
    real = _quantiles.private_quantile

    def spy(*args, **kwargs):
        calls.append(kwargs["adjacency"])
        return real(*args, **kwargs)

    monkeypatch.setattr(_quantiles, "private_quantile", spy)
    X, y = _age_target(5000, 1)
    for bounds, columns in ((None, X.shape[1] + 1), ([(-4, 4)] * 3, 1)):
        calls.clear()
        est = SemiDPLinearRegression(
            feature_bounds=bounds, max_iter=5, adjacency="add_remove", random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, public_mask=np.zeros(len(y), dtype=bool))
        assert len(calls) == 4 * columns
        assert set(calls) == {"add_remove"}
        assert f"{4 * columns} private quantiles" in est.privacy_record_.mechanism
        assert est.privacy_plan(len(y), 3).dp_event == est.dp_event_


def test_beside_declared_bounds_the_target_alone_is_scaled_privately():
    # Bounds map the columns for free; the target's scales then spend the
    # scaling share alone (RMSE 5.4x least squares' before, with bounds at
    # +-4 sd; the bounds' own looseness costs the rest).
    X, y = _age_target(5000, 2)
    none = np.zeros(len(y), dtype=bool)
    bounds = [(-4.0, 4.0)] * 3
    est = SemiDPLinearRegression(feature_bounds=bounds, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, public_mask=none)
    mechanism = est.privacy_record_.mechanism
    assert "feature_bounds" in mechanism
    assert "the target scaled by private robust statistics: 4 private" in mechanism
    assert _ols_rmse_ratio(est, X, y) < 2.0
    # With enough public rows the bounds cost nothing, as before.
    public = np.arange(len(y)) < MIN_PUBLIC_SCALE_ROWS
    anchored = SemiDPLinearRegression(feature_bounds=bounds, random_state=0)
    anchored.fit(X, y, public_mask=public)
    assert "private quantiles" not in anchored.privacy_record_.mechanism


def test_a_scaled_target_without_intercept_is_not_centred():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5000, 2))
    y = 50.0 * X[:, 0] + rng.standard_normal(5000)
    est = SemiDPLinearRegression(fit_intercept=False, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, public_mask=np.zeros(5000, dtype=bool))
    assert est.intercept_ == 0.0
    assert "the target's location and scale" in est.privacy_record_.mechanism
    np.testing.assert_allclose(est.coef_, [50.0, 0.0], atol=2.0)


def test_sparse_columns_without_bounds_still_get_a_scaled_target():
    sp = pytest.importorskip("scipy.sparse")
    X, y = _age_target(5000, 4)
    est = SemiDPLinearRegression(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(sp.csr_matrix(X), y, public_mask=np.zeros(len(y), dtype=bool))
    assert "the target scaled by private" in est.privacy_record_.mechanism
    assert _ols_rmse_ratio(est, X, y) < 1.1


def test_unscaled_columns_still_get_a_scaled_target():
    # Columns scaled upstream (feature_scaling=None, as a private pipeline
    # needs after a category discovery): the target alone takes the share.
    X, y = _age_target(5000, 5)
    none = np.zeros(len(y), dtype=bool)
    fits = {}
    for target_scaling in ("auto", None):
        est = SemiDPLinearRegression(
            feature_scaling=None, target_scaling=target_scaling, random_state=0
        )
        fits[target_scaling] = est.fit(X, y, public_mask=none)
        plans = [est.privacy_plan(len(y), d, n_public=0) for d in (1, 7)]
        assert plans[0].dp_event == plans[1].dp_event == est.dp_event_
    mechanism = fits["auto"].privacy_record_.mechanism
    assert "the target scaled by private robust statistics: 4 private" in mechanism
    assert _ols_rmse_ratio(fits["auto"], X, y) < 1.1
    # Without it the fit stays near 0, as before.
    assert "private quantiles" not in fits[None].privacy_record_.mechanism
    assert _ols_rmse_ratio(fits[None], X, y) > 3.0
    # Private column scales without the target's: d columns' draws.
    est = SemiDPLinearRegression(target_scaling=None, random_state=0)
    mechanism = est.fit(X, y, public_mask=none).privacy_record_.mechanism
    assert f"{4 * X.shape[1]} private quantiles" in mechanism
    assert "target" not in mechanism


def test_a_target_the_budget_cannot_scale_is_named_in_a_warning():
    # 300 rows at epsilon = 1: the target's draws cannot resolve a spread
    # (a public rule), so it is used as given, and the fit says so; a rule
    # of the counts and the budget, not of any private value.
    from sklearn_dpfair.linear_model._semi_dp import TARGET_LEFT_AS_GIVEN

    X, y = _age_target(300, 6)
    none = np.zeros(len(y), dtype=bool)
    message = TARGET_LEFT_AS_GIVEN.format(n_public=0, n=300, epsilon=1.0)
    with pytest.warns(UserWarning, match="target_scaling='auto'") as record:
        est = SemiDPLinearRegression(random_state=0).fit(X, y, public_mask=none)
    assert message in [str(w.message) for w in record]
    assert "target" not in est.privacy_record_.mechanism
    # Declared as given, or afforded (5,000 rows), or anchored: no warning.
    for params, n, n_public in (
        ({"target_scaling": None}, 300, 0),
        ({}, 5000, 0),
        ({}, 300, MIN_PUBLIC_SCALE_ROWS),
    ):
        X, y = _age_target(n, 6)
        mask = np.arange(n) < n_public
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            SemiDPLinearRegression(random_state=0, **params).fit(X, y, public_mask=mask)
        assert not any("target_scaling" in str(w.message) for w in caught)


@pytest.mark.parametrize(
    "cls", [SemiDPLinearRegression, SemiLocalDPLinearRegression]
)
def test_a_column_constant_on_the_public_rows_fits_whatever_its_value(cls):
    # 0.1 is not a binary fraction: its public spread was rounding (1e-17)
    # and its scaled column noise times 1e16. Shifting the column by the
    # constant changes nothing else in the fit.
    rng = np.random.default_rng(0)
    n = 2000
    x = rng.normal(size=n)
    public = np.arange(n) < 50
    step = rng.choice([0.0, 0.1], n) * ~public
    y = 2 * x + 1 + 0.1 * rng.normal(size=n)
    fits = []
    for value in (0.0, 0.1, 0.3):
        X = np.column_stack([x, value + step])
        est = cls(epsilon=1.0, random_state=0).fit(X, y, public_mask=public)
        fits.append(est.coef_)
        assert _mse(est, X, y) < 0.5 * y.var()
    np.testing.assert_allclose(fits[1], fits[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fits[2], fits[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cls", [SemiDPLinearRegression, SemiLocalDPLinearRegression])
def test_bounds_without_scaling_warn_that_they_are_ignored(cls):
    X, y = _raw(3000, 0)
    est = cls(
        feature_scaling=None, feature_bounds=[(-1e6, 1e6)] * X.shape[1],
        random_state=0,
    )
    with pytest.warns(UserWarning, match="feature_bounds is ignored") as record:
        est.fit(X, y, public_mask=np.arange(len(y)) < 50)
    ignored = [w for w in record if "feature_bounds is ignored" in str(w.message)]
    assert len(ignored) == 1 and ignored[0].filename == __file__


@pytest.mark.parametrize(
    "dtype, sparse, bounds",
    [
        # A half-width of 1e-46 is 0 in float32: a record at the midpoint
        # was 0 / 0 (NaN in the noisy sum), the others +-inf.
        (np.float32, False, (0.0, 1e-46)),
        # A midpoint beyond float32: inf - inf.
        (np.float32, False, (1e39, 3e39)),
        # A subnormal largest magnitude: its inverse is inf in float64, and
        # an explicitly stored zero times inf was NaN.
        (np.float64, True, (0.0, 1e-320)),
    ],
    ids=["float32-half-width", "float32-midpoint", "float64-sparse-subnormal"],
)
def test_bounds_whose_map_is_not_finite_in_the_dtype_of_x_are_refused(
    dtype, sparse, bounds
):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    X[:, 1] = 0.5
    X[-1, 1] = 0.0
    y = X[:, 0] + rng.standard_normal(60)
    if sparse:
        X = sp.csr_matrix(X)
        X.data[X.indices == 1] = 0.0  # explicitly stored zeros
    X = X.astype(dtype)
    est = SemiDPLinearRegression(
        epsilon=1.0, max_iter=2, random_state=0, target_scaling=None,
        feature_bounds=[(-3.0, 3.0), bounds],
    )
    with warnings.catch_warnings():
        # Refused before any row is read: no numpy warning either.
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="feature_bounds.*position 1"):
            est.fit(X, y, public_mask=np.zeros(60, dtype=bool))
    assert not hasattr(est, "coef_")
    if dtype == np.float64:
        # The plan (which knows no dtype: float64) refuses it too.
        with pytest.raises(ValueError, match="feature_bounds.*position 1"):
            est.privacy_plan(60, 2, sparse=sparse)
    else:
        # Representable in float64: the plan and a float64 fit accept it.
        est.privacy_plan(60, 2)
        est.fit(X.astype(np.float64), y, public_mask=np.zeros(60, dtype=bool))
        assert np.all(np.isfinite(est.coef_))


def test_a_float32_public_column_of_subnormal_spread_keeps_unit_scale():
    # Its public spread (5e-46) is 0 in float32: the column was divided by
    # 0, with numpy's warning, and the fit refused as if its second moments
    # had overflowed. It keeps unit scale instead, as a column constant on
    # the public rows does.
    rng = np.random.default_rng(0)
    n, n_public = 400, 20
    X = rng.standard_normal((n, 2))
    X[:n_public, 1] = 0.0
    X[:3, 1] = float(np.float32(1.4e-45))
    X[n_public:, 1] = 0.5
    y = 2.0 * X[:, 0] + rng.standard_normal(n)
    mask = np.arange(n) < n_public
    X32 = X.astype(np.float32)
    scales, _ = fit_semidp_scaling(
        X32, y, mask, ScalingPlan(PUBLIC_ROWS_MODE, 2), rng=None
    )
    assert scales.scale[1] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert np.all(np.isfinite(scaled_rows(X32, scales)))
        try:
            SemiDPLinearRegression(epsilon=1.0, random_state=0).fit(
                X32, y, public_mask=mask
            )
        except ValueError as error:
            # The public rows' coefficient on that column (3e44 in float64)
            # is beyond float32: said as such.
            assert "second moments" not in str(error)
            assert "float32" in str(error)
