# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""SemiLocalDPLinearRegression: its record, its plan, its limits and its utility."""

import dataclasses
import math
import warnings

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld
from sklearn.linear_model import LinearRegression

from sklearn_dpfair import SemiDPLinearRegression, SemiLocalDPLinearRegression
from sklearn_dpfair.privacy import epsilon_of


def _gaussian(n=3000, d=5, n_public=300, seed=0):
    # The thesis's Gaussian setting (Appendix A.4.1), smaller: x ~ N(0, I),
    # w* ~ N(0, I), y ~ N(<w*, x>, 0.5^2).
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    X = rng.standard_normal((n, d))
    y = X @ w + 0.5 * rng.standard_normal(n)
    return X, y, np.arange(n) < n_public, w


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_infinite_epsilon_is_least_squares_on_raw_columns(fit_intercept, weighted):
    rng = np.random.default_rng(1)
    # Columns on different scales and offsets: raw units, no scaling (the
    # design's condition number stays ~1e4, so that the two least-squares
    # solvers' rank cut-offs agree).
    X = rng.standard_normal((200, 3)) * [1e-2, 1.0, 1e2] + [0.5, -2.0, 10.0]
    y = X @ [1e2, 2.0, 1e-2] + 7.0 + rng.standard_normal(200)
    weights = rng.uniform(0.5, 2.0, 200) if weighted else None
    mask = np.arange(200) < 20
    ours = SemiLocalDPLinearRegression(epsilon=np.inf, fit_intercept=fit_intercept)
    ours.fit(X, y, weights, public_mask=mask)
    ref = LinearRegression(fit_intercept=fit_intercept).fit(X, y, weights)
    # Both solve the same (centred) least squares by SVD; different LAPACK
    # paths agree to ~cond * 1e-16.
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-7)
    assert ours.intercept_ == pytest.approx(ref.intercept_, rel=1e-7, abs=1e-7)
    assert math.isinf(ours.epsilon_)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_infinite_epsilon_keeps_a_small_unit_column_beside_a_large_one(
    fit_intercept, weighted
):
    # Columns in units of 1e6 and 1e-6: on raw columns lstsq's default
    # cutoff (eps * n of the largest singular value) dropped the small one
    # from n of a few thousand rows on (an MSE of 3.9 where least squares
    # has 0.0097).
    rng = np.random.default_rng(0)
    n = 5000
    Z = rng.standard_normal((n, 3))
    y = Z @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(n) + 3.0 * fit_intercept
    units = np.array([1e6, 1e-6, 1.0])
    X = Z * units + [0.0, 1e-5, 0.0]
    weights = rng.uniform(0.5, 2.0, n) if weighted else None
    est = SemiLocalDPLinearRegression(epsilon=np.inf, fit_intercept=fit_intercept)
    est.fit(X, y, weights, public_mask=np.arange(n) < 50)
    # The reference: least squares on the unit-scale columns Z, as
    # LinearRegression solves it (well conditioned), mapped to X's units.
    ref = LinearRegression(fit_intercept=fit_intercept).fit(
        X / units, y, weights
    )
    np.testing.assert_allclose(est.coef_ * units, ref.coef_, rtol=1e-7)
    assert est.intercept_ == pytest.approx(ref.intercept_, rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_a_target_of_numeric_strings_is_parsed_as_the_numbers(epsilon):
    X, y, mask, _ = _gaussian(n=200)
    y = np.round(y, 6)
    params = {"epsilon": epsilon, "random_state": 0}
    ref = SemiLocalDPLinearRegression(**params).fit(X, y, public_mask=mask)
    est = SemiLocalDPLinearRegression(**params).fit(
        X, y.astype(str), public_mask=mask
    )
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12)
    bad = y.astype(str).astype(object)
    bad[3] = "Alice"
    with pytest.raises(ValueError, match="Input y") as info:
        SemiLocalDPLinearRegression(**params).fit(X, bad, public_mask=mask)
    assert "Alice" not in str(info.value)
    bad = y.astype(str)
    bad[3] = "n/a"
    with pytest.raises(ValueError, match="Input y") as info:
        SemiLocalDPLinearRegression(**params).fit(X, bad, public_mask=mask)
    assert "n/a" not in str(info.value)


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize("value", ["nan", "1e400", "-inf"])
def test_a_string_target_that_parses_to_no_finite_number_is_refused(value, epsilon):
    # validate_data checks an object y for NaN before casting it (the
    # string "nan" is no NaN there) and leaves a unicode one as is: such a
    # target fitted NaN coefficients (epsilon=inf) or a model of the other
    # rows. It is refused like a float NaN, naming y, showing no value.
    X, y, mask, _ = _gaussian(n=200)
    params = {"epsilon": epsilon, "random_state": 0}
    for bad in (y.astype(str).astype(object), y.astype(str)):
        bad = bad.copy()
        bad[3] = value
        message = "Input y contains NaN or infinity"
        with pytest.raises(ValueError, match=message) as info:
            SemiLocalDPLinearRegression(**params).fit(X, bad, public_mask=mask)
        assert value not in str(info.value)


def test_epsilon_is_recomputed_from_the_recorded_event():
    X, y, mask, _ = _gaussian(n=500)
    for eps in (0.3, 1.0, 3.3, 20.0):
        est = SemiLocalDPLinearRegression(epsilon=eps, random_state=0).fit(
            X, y, public_mask=mask
        )
        assert isinstance(est.dp_event_, dp_accounting.RandomizedResponseDpEvent)
        assert est.delta_ == 0.0 and est.adjacency_ == "replace_one"
        assert est.privacy_record_.recompute_epsilon() == est.epsilon_
        # Independently: dp-accounting's PLD under replace-one.
        acc = pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
        acc.compose(est.dp_event_)
        assert acc.get_epsilon(0.0) == pytest.approx(est.epsilon_, abs=1e-12)
        assert eps - 2e-4 <= est.epsilon_ <= eps * (1 + 1e-9)


@pytest.mark.parametrize(
    "params, n_public",
    [
        ({}, 300),
        ({"epsilon": 0.2}, 0),
        ({"epsilon": 8.0, "fit_intercept": False}, 30),
        ({"epsilon": np.inf}, 300),
        ({"epsilon": 2.0}, 500),  # every row public: nothing private
    ],
)
def test_planned_event_is_the_fitted_event(params, n_public):
    X, y, mask, _ = _gaussian(n=500, n_public=n_public)
    est = SemiLocalDPLinearRegression(random_state=0, **params)
    plan = est.privacy_plan(500, 5, n_public=n_public)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # no public_mask
        est.fit(X, y, public_mask=mask if n_public else None)
    assert plan.dp_event == est.dp_event_
    assert plan.epsilon == est.epsilon_ and plan.delta == est.delta_ == 0.0
    assert plan.adjacency == est.adjacency_
    plan.check_fitted(est)
    # The whole planned record is the fitted one, but for the seed.
    planned = est._planned_record(500, 5, n_public=n_public)
    assert planned == dataclasses.replace(est.privacy_record_, seed=None)


def test_plan_refuses_impossible_counts():
    with pytest.raises(ValueError, match="n_public"):
        SemiLocalDPLinearRegression().privacy_plan(10, 3, n_public=11)
    with pytest.raises(TypeError, match="n_groups"):
        SemiLocalDPLinearRegression().privacy_plan(10, 3, n_groups=2)


def test_record_states_the_local_model():
    X, y, mask, _ = _gaussian(n=300)
    est = SemiLocalDPLinearRegression(epsilon=1.0, random_state=0)
    est.fit(X, y, public_mask=mask)
    summary = est.privacy_summary()
    assert "local model" in summary and "server" in summary
    assert "Definition 24" in summary
    assert "rows marked public" in summary


def test_utility_rises_with_epsilon():
    X, y, mask, w = _gaussian(n=4000, n_public=120)
    errors = []
    for eps in (0.5, 4.0, 64.0):
        errs = [
            np.sum(
                (
                    SemiLocalDPLinearRegression(epsilon=eps, clip_norm=3.0, random_state=s)
                    .fit(X, y, public_mask=mask)
                    .coef_
                    - w
                )
                ** 2
            )
            for s in range(4)
        ]
        errors.append(np.mean(errs))
    assert errors[0] > errors[1] > errors[2]


def test_private_rows_improve_on_the_public_start():
    # n_pub / n = 3 %: the private messages move the public start towards
    # the minimizer (averaged over seeds).
    X, y, mask, w = _gaussian(n=4000, n_public=120)
    start, final = [], []
    for s in range(4):
        est = SemiLocalDPLinearRegression(epsilon=8.0, clip_norm=3.0, random_state=s)
        est.fit(X, y, public_mask=mask)
        start.append(np.sum((est.coef_public_ - w) ** 2))
        final.append(np.sum((est.coef_ - w) ** 2))
    assert np.mean(final) < np.mean(start)


def test_weights_of_one_fit_as_no_weights_and_carry_the_caveat():
    X, y, mask, _ = _gaussian(n=300)
    plain = SemiLocalDPLinearRegression(random_state=0).fit(X, y, public_mask=mask)
    ones = SemiLocalDPLinearRegression(random_state=0).fit(
        X, y, np.ones(300), public_mask=mask
    )
    # Same draws, residuals multiplied by exactly 1.0.
    np.testing.assert_allclose(ones.coef_, plain.coef_, rtol=1e-12)
    assert any("sample_weight is public" in c for c in ones.privacy_caveats_)
    assert ones.dp_event_ == plain.dp_event_


@pytest.mark.parametrize("heavy", [0.0, 1e6])
def test_one_records_weight_changes_no_other_records_message(heavy, monkeypatch):
    # Neighbours: the last record at weight 1 or at `heavy`. A local
    # randomizer may read its own record only; a normalizer such as mean(w)
    # would change every other row's clipped residual. Every randomizer
    # input must agree up to the changed record's own turn.
    from sklearn_dpfair._solvers.semi_dp import _local

    X, y, mask, _ = _gaussian(n=300)
    real = _local.unit_direction
    runs = []
    for last in (1.0, heavy):
        calls = []

        def spy(x, residual, clip, calls=calls):
            calls.append((x.copy(), residual))
            return real(x, residual, clip)

        monkeypatch.setattr(_local, "unit_direction", spy)
        w = np.ones(300)
        w[-1] = last
        # Columns as given, so that the spy sees the rows themselves.
        SemiLocalDPLinearRegression(feature_scaling=None, random_state=0).fit(
            X, y, w, public_mask=mask
        )
        runs.append(calls)
    first = next(
        k for k, (a, b) in enumerate(zip(*runs)) if a[1] != b[1]
    )
    np.testing.assert_array_equal(runs[0][first][0][:-1], X[-1])


def test_no_public_mask_warns_and_is_pure_local_dp():
    X, y, _, _ = _gaussian(n=300)
    with pytest.warns(UserWarning, match="public_mask was not given"):
        est = SemiLocalDPLinearRegression(random_state=0).fit(X, y)
    assert est.n_public_ == 0 and est.n_private_ == 300
    assert est.radius_ == 1.0
    assert not est.privacy_caveats_


def test_no_public_mask_at_epsilon_inf_does_not_warn():
    # The warning describes local DP from zero; at epsilon=inf the fit is
    # least squares on every row, whatever the mask.
    X, y, _, _ = _gaussian(n=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = SemiLocalDPLinearRegression(epsilon=np.inf).fit(X, y)
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-7)


def test_budget_above_the_float_range_is_refused_clearly():
    X, y, mask, _ = _gaussian(n=100)
    with pytest.raises(ValueError, match="epsilon=1000"):
        SemiLocalDPLinearRegression(epsilon=1000.0).fit(X, y, public_mask=mask)


def test_budget_below_the_accountants_resolution_is_refused_clearly():
    # dp-accounting's PLD certifies a local message at 1e-4 at best.
    X, y, mask, _ = _gaussian(n=100)
    est = SemiLocalDPLinearRegression(epsilon=5e-5)
    with pytest.raises(ValueError, match="epsilon=5e-05 is below 0.0001"):
        est.fit(X, y, public_mask=mask)
    with pytest.raises(ValueError, match="epsilon=5e-05 is below 0.0001"):
        est.privacy_plan(100, X.shape[1], n_public=int(mask.sum()))
    assert not hasattr(est, "coef_")
    fitted = SemiLocalDPLinearRegression(epsilon=1e-4).fit(X, y, public_mask=mask)
    assert fitted.epsilon_ <= 1e-4 * (1 + 1e-9)


def test_public_mask_is_validated():
    X, y, _, _ = _gaussian(n=100)
    with pytest.raises(TypeError, match="public_mask must be a boolean"):
        SemiLocalDPLinearRegression().fit(X, y, public_mask=np.ones(100))


def test_two_local_fits_compose_under_replace_one():
    # Two pure 1-DP messages per record compose to at most 2 (the PLD of two
    # binary randomized responses at delta = 1e-6 is just below it).
    X, y, mask, _ = _gaussian(n=300, n_public=30)
    events = [
        SemiLocalDPLinearRegression(epsilon=1.0).fit(X, y, public_mask=mask).dp_event_
        for _ in range(2)
    ]
    total = epsilon_of(dp_accounting.ComposedDpEvent(tuple(events)), 1e-6, "pld")
    assert 1.9 < total <= 2.0 + 1e-9


def test_central_semi_dp_and_local_share_the_public_mask_convention():
    X, y, mask, _ = _gaussian(n=400)
    local = SemiLocalDPLinearRegression(random_state=0).fit(X, y, public_mask=mask)
    central = SemiDPLinearRegression(random_state=0).fit(X, y, public_mask=mask)
    assert local.n_public_ == central.n_public_ == 300


@pytest.mark.parametrize(
    "params, name",
    [
        # (C/m)^2 underflows to 0: the automatic step divided by 0.
        ({"clip_norm": 1e-200}, "clip_norm"),
        ({"clip_norm": 1e-200, "public_gradient": "rescale"}, "clip_norm"),
        # Steps whose sum over the pass overflows the coefficients.
        ({"learning_rate": 1e308}, "learning_rate"),
        ({"radius": 1e308}, "radius"),
    ],
)
def test_out_of_range_step_parameters_are_refused_by_plan_and_fit(params, name):
    X, y, mask, _ = _gaussian(n=300, d=3, n_public=50)
    est = SemiLocalDPLinearRegression(epsilon=1.0, random_state=0, **params)
    with pytest.raises(ValueError, match=name):
        est.privacy_plan(300, 3, n_public=50)
    with warnings.catch_warnings():
        # Refused before the pass: no RuntimeWarning from inside it.
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=name):
            est.fit(X, y, public_mask=mask)


@pytest.mark.parametrize(
    "bounds",
    [[[0.0, 1.0], [0.0, 1.0]], [[1.0, 0.0]] * 3],
    ids=["2-pairs", "lower>upper"],
)
@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_malformed_feature_bounds_are_refused_by_plan_and_every_fit(bounds, epsilon):
    # As SemiDPLinearRegression: the plan and the non-private limit refuse
    # what the private fit's column scaling refuses.
    X, y, mask, _ = _gaussian(n=300, d=3, n_public=50)
    est = SemiLocalDPLinearRegression(epsilon=epsilon, feature_bounds=bounds)
    with pytest.raises(ValueError, match="feature_bounds"):
        est.privacy_plan(300, 3, n_public=50)
    with pytest.raises(ValueError, match="feature_bounds"):
        est.fit(X, y, public_mask=mask)


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_ignored_feature_bounds_warn_once(epsilon):
    X, y, mask, _ = _gaussian(n=300, d=3, n_public=50)
    est = SemiLocalDPLinearRegression(
        epsilon=epsilon, feature_scaling=None, feature_bounds=[[-5.0, 5.0]] * 3,
        random_state=0,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, public_mask=mask)
    assert sum("feature_bounds is ignored" in str(w.message) for w in caught) == 1


@pytest.mark.parametrize("ridge", [np.float32(3e38), np.float32(0.3)])
def test_a_float32_public_ridge_fits_as_the_equal_float(ridge):
    # float32 arithmetic made the ridge of 3e38 inf (numpy's "SVD did not
    # converge" after the rows were read) and rounded that of 0.3.
    X, y, mask, _ = _gaussian(n=400, d=3, n_public=40)
    fits = [
        SemiLocalDPLinearRegression(public_ridge=value, random_state=0).fit(
            X, y, public_mask=mask
        )
        for value in (ridge, float(ridge))
    ]
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, rtol=1e-12, atol=1e-300)
    assert fits[0].public_ridge_ == fits[1].public_ridge_ == float(ridge)


@pytest.mark.parametrize(
    "name", ["epsilon", "clip_norm", "learning_rate", "radius", "public_ridge"]
)
def test_an_int_beyond_float64_is_refused_naming_the_parameter(name):
    # 10**400 is a valid Real for the constraints but has no float: numpy's
    # OverflowError came out of the plan and the fit. (epsilon is refused by
    # its parameter constraint, which every private estimator shares.)
    X, y, mask, _ = _gaussian(n=100, d=2, n_public=10)
    est = SemiLocalDPLinearRegression(**{name: 10**400})
    match = rf"^{name} is beyond the largest float|^The '{name}' parameter"
    with pytest.raises(ValueError, match=match):
        est.privacy_plan(100, 2, n_public=10)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, public_mask=mask)
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("target", [1.7e308, -np.finfo(np.float64).max])
def test_a_public_target_near_float64s_limit_fits_without_a_warning(target):
    # The public start is then near 1e306; the average of the iterates was
    # a sum of the n iterates, which overflowed (a warning that depends on
    # the rows) and saturated the coefficients at +-1.8e308.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=400)
    y[0] = target
    public = np.arange(400) < 100
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = SemiLocalDPLinearRegression(epsilon=1.0, random_state=0)
        reg.fit(X, y, public_mask=public)
        pred = reg.predict(X)
    assert np.all(np.abs(reg.coef_) < 1e307) and np.isfinite(pred).all()
    assert np.sign(reg.intercept_) == np.sign(target)
