# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math
import warnings

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.pipeline import PrivatePipeline
from sklearn_dpfair.preprocessing import DPSimpleImputer, DPStandardScaler
from sklearn_dpfair.preprocessing._bounds import AUTO_RANGE
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._quantile import quantile_sensitivity
from sklearn_dpfair.privacy._record import WEIGHTS_CAVEAT

BOUNDS = (0.0, 100.0)


@pytest.mark.parametrize("with_std", [True, False])
def test_one_record_moves_the_released_vector_by_at_most_one(
    privatized_sums, neighbours, with_std
):
    # The stacked (counts, sums, squares) vector is released by a Gaussian
    # mechanism of sensitivity 1: the pre-noise vectors of neighbours differ
    # by at most 1 in l2 norm, whatever the added record holds.
    for Z in neighbours:
        scaler = DPStandardScaler(bounds=BOUNDS, with_std=with_std, random_state=0)
        scaler.fit(Z)
    before, after = privatized_sums
    assert before.shape == after.shape
    assert scaler.privacy_record_.clip_norm == 1.0
    assert np.linalg.norm(after - before) <= 1.0 + 1e-12


def test_the_sensitivity_bound_is_reached(privatized_sums, ordinary_data):
    # A record at a bound of every column moves the vector by exactly 1:
    # the declared sensitivity is tight, not slack.
    X = ordinary_data
    for Z in (X, np.vstack([X, [[100.0, 0.0, 100.0]]])):
        DPStandardScaler(bounds=BOUNDS, random_state=0).fit(Z)
    before, after = privatized_sums
    np.testing.assert_allclose(np.linalg.norm(after - before), 1.0, rtol=1e-12)


def test_auto_bounds_utilities_move_by_at_most_their_sensitivity(
    selection_scores, selection_sensitivities, neighbours
):
    # Each private quartile's utility (exponential mechanism) moves by at
    # most max(q, 1 - q) between add/remove neighbours.
    X = neighbours[0]
    for Z in neighbours:
        DPStandardScaler(bounds="auto", random_state=0).fit(Z)
    n = len(selection_scores) // 2
    assert n == 2 * X.shape[1]
    levels = [0.25, 0.75] * X.shape[1]
    for k in range(n):
        assert selection_sensitivities[k] == quantile_sensitivity(
            levels[k], "add_remove"
        )
        moved = np.max(np.abs(selection_scores[n + k] - selection_scores[k]))
        assert moved <= selection_sensitivities[k] + 1e-12


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_epsilon_recomputed_from_the_event_meets_the_target(
    epsilon, accountant, missing_data
):
    X = missing_data
    scaler = DPStandardScaler(bounds=BOUNDS, epsilon=epsilon, accountant=accountant)
    scaler.fit(X)
    recomputed = epsilon_of(scaler.dp_event_, scaler.delta_, accountant)
    assert recomputed == pytest.approx(scaler.epsilon_, rel=1e-9)
    assert scaler.epsilon_ <= epsilon * (1 + 1e-9)
    assert scaler.adjacency_ == "add_remove"


def test_auto_bounds_are_accounted_in_the_same_event(ordinary_data):
    scaler = DPStandardScaler(bounds="auto", epsilon=1.0).fit(ordinary_data)
    assert epsilon_of(scaler.dp_event_, scaler.delta_, "rdp") <= 1.0 * (1 + 1e-9)
    # Six quartiles (two per column) and one Gaussian release.
    quartiles, gaussian = scaler.dp_event_.events
    assert quartiles.count == 6
    assert gaussian.noise_multiplier > 0


def test_auto_bounds_need_the_rdp_accountant():
    with pytest.raises(ValueError, match="accountant"):
        DPStandardScaler(bounds="auto", accountant="pld").fit(np.ones((5, 2)))


@pytest.mark.parametrize(
    "bounds", [(1.0, 1.0), (0.0, np.inf), [(0, 1), (0, 1), (0, 1)], "wide"]
)
def test_bad_bounds_name_the_parameter(bounds):
    with pytest.raises(ValueError, match="bounds"):
        DPStandardScaler(bounds=bounds).fit(np.ones((5, 2)))


def test_releases_match_the_event(missing_data):
    releases = pytest.importorskip("sklearn_dpfair.privacy._releases")
    X = missing_data
    for bounds in (BOUNDS, "auto"):
        with releases.logged_releases() as log:
            scaler = DPStandardScaler(bounds=bounds).fit(X)
        releases.check_releases(log, scaler.dp_event_, what="test")
        assert sum(log.counts.values()) == (7 if bounds == "auto" else 1)


@pytest.mark.parametrize("bounds", [BOUNDS, "auto"])
def test_epsilon_inf_is_scikit_learn_on_data_within_the_bounds(bounds):
    rng = np.random.default_rng(1)
    X = rng.uniform(1.0, 99.0, size=(300, 3)) * np.array([1.0, 0.01, 1.0])
    X[rng.random(300) < 0.1, 0] = np.nan
    ours = DPStandardScaler(bounds=bounds, epsilon=np.inf).fit(X)
    ref = StandardScaler().fit(X)
    # Sums of 300 values: a few ulps of the data's scale.
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=1e-10)
    np.testing.assert_allclose(ours.scale_, ref.scale_, rtol=1e-10)
    np.testing.assert_allclose(
        ours.transform(X), ref.transform(X), rtol=1e-9, atol=1e-12
    )
    assert math.isinf(ours.epsilon_)


def test_epsilon_inf_is_scikit_learn_on_constant_and_raw_scale_columns():
    # A constant column off the bounds' centre keeps variance 0 and scale 1
    # (one-pass sums of squares would leave rounding: scale 7e-7), and
    # columns far from 0 keep their spread.
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [
            np.full(20, 5.0),
            9e5 + 3.0 * rng.normal(size=20),
            1.7e9 + rng.normal(size=20),
        ]
    )
    bounds = [(0.0, 100.0), (0.0, 1e6), (1.69e9, 1.71e9)]
    ours = DPStandardScaler(bounds=bounds, epsilon=np.inf).fit(X)
    ref = StandardScaler().fit(X)
    assert ours.var_[0] == 0.0 and ours.scale_[0] == 1.0
    np.testing.assert_allclose(ours.scale_, ref.scale_, rtol=1e-9)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-8)


def test_utility_rises_with_epsilon():
    rng = np.random.default_rng(2)
    X = rng.normal(30.0, 8.0, size=(2000, 2))
    truth_mean, truth_std = X.mean(axis=0), X.std(axis=0)
    errors = []
    for epsilon in (0.05, 0.5, 5.0):
        fits = [
            DPStandardScaler(bounds=BOUNDS, epsilon=epsilon, random_state=seed).fit(X)
            for seed in range(10)
        ]
        errors.append(
            np.mean(
                [
                    np.abs(f.mean_ - truth_mean).mean()
                    + np.abs(f.scale_ - truth_std).mean()
                    for f in fits
                ]
            )
        )
    assert errors[0] > errors[1] > errors[2]
    # Noise of about 0.1 at epsilon = 5 on a column of scale 8 (width 100).
    assert errors[2] < 0.5


def test_output_is_within_the_declared_bounds(ordinary_data):
    X = ordinary_data
    scaler = DPStandardScaler(bounds=BOUNDS, epsilon=0.5, random_state=3).fit(X)
    wild = np.array([[1e300, -1e300, 0.0], [-5.0, 500.0, 100.0], [50.0, 50.0, 50.0]])
    out = scaler.transform(wild)
    lower, upper = scaler.output_bounds_.T
    assert np.all(out >= lower - 1e-12) and np.all(out <= upper + 1e-12)
    assert np.all(np.linalg.norm(out, axis=1) <= scaler.output_norm_bound_ + 1e-12)
    # The bounds are reached at the input bounds (public, post-processed).
    np.testing.assert_allclose(
        scaler.transform(np.array([[0.0, 0.0, 0.0], [100.0, 100.0, 100.0]])),
        scaler.output_bounds_.T,
    )


def test_missing_values_are_kept(missing_data):
    X = missing_data
    out = DPStandardScaler(bounds=BOUNDS, random_state=0).fit(X).transform(X)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(X))


def test_a_noisy_near_constant_column_is_never_divided_by_noise():
    # The variance is floored at (width / 1000)^2 whatever the noise draws.
    X = np.full((50, 1), 42.0)
    for seed in range(20):
        scaler = DPStandardScaler(bounds=BOUNDS, epsilon=0.1, random_state=seed).fit(X)
        assert scaler.scale_[0] >= 0.1 - 1e-12
        assert np.isfinite(scaler.output_norm_bound_)


def test_a_variance_lost_in_noise_takes_the_noise_level_not_the_floor():
    # A count column that is almost always 0 (a juvenile-felony count) on its
    # declared range, at a small budget: its true variance is below the noise
    # of the released one. The absolute floor alone scaled it by about
    # width / 1000 in most seeds, so its rare non-zero values came out in the
    # hundreds; the noise-level floor keeps every transformed value moderate,
    # and the scale never below the public noise level of the variance.
    rng = np.random.default_rng(0)
    X = np.where(rng.random((3000, 1)) < 0.03, rng.integers(1, 6, (3000, 1)), 0.0)
    worst = []
    for seed in range(10):
        scaler = DPStandardScaler(bounds=(0.0, 30.0), epsilon=0.05, random_state=seed)
        out = scaler.fit(X).transform(X)
        worst.append(np.abs(out).max())
        assert scaler.var_[0] / 15.0**2 >= (2.0 * 2e-3) ** 2
    assert max(worst) < 30.0, worst


def test_the_noise_level_floor_leaves_a_measured_variance_alone():
    X = np.random.default_rng(1).normal(50.0, 10.0, size=(20000, 1))
    scaler = DPStandardScaler(bounds=BOUNDS, epsilon=1.0, random_state=0).fit(X)
    assert abs(scaler.scale_[0] - 10.0) < 0.5


def test_nothing_to_release_costs_nothing(privatized_sums, ordinary_data):
    scaler = DPStandardScaler(bounds=BOUNDS, with_mean=False, with_std=False).fit(
        ordinary_data
    )
    assert scaler.epsilon_ == 0.0 and not privatized_sums
    np.testing.assert_array_equal(scaler.scale_, 1.0)


def test_user_noise_overspend_is_impossible():
    # The plan is calibrated by the accountant: a tiny epsilon is met, never
    # exceeded (PrivacyBudgetError would signal a bug).
    try:
        scaler = DPStandardScaler(bounds=BOUNDS, epsilon=1e-3).fit(np.ones((10, 1)))
    except PrivacyBudgetError:  # pragma: no cover - would be a bug
        pytest.fail("calibrated plan overspent")
    assert scaler.epsilon_ <= 1e-3 * (1 + 1e-9)


def test_auto_bounds_are_robust_to_one_outlier():
    # One record at 1e9 moves each quartile's utility by at most 3/4: the
    # fences stay near the bulk (normal(50, 10): about [16, 84]).
    X = np.random.default_rng(4).normal(50.0, 10.0, size=(5000, 1))
    X[0] = 1e9
    for seed in range(5):
        scaler = DPStandardScaler(bounds="auto", random_state=seed).fit(X)
        lower, upper = scaler.bounds_[0]
        assert 0.0 < lower < 30.0 and 70.0 < upper < 120.0


def test_in_a_pipeline_with_a_private_classifier():
    from sklearn.pipeline import make_pipeline

    from sklearn_dpfair import DPLogisticRegression

    rng = np.random.default_rng(5)
    Z = rng.normal(size=(3000, 2))
    y = (Z[:, 0] - Z[:, 1] > 0).astype(int)
    X = Z * [100.0, 1e-3] + [500.0, 0.0]
    pipe = make_pipeline(
        DPStandardScaler(bounds=[(0, 1000), (-0.005, 0.005)], epsilon=0.2),
        DPLogisticRegression(epsilon=0.8, classes=[0, 1]),
    ).set_output(transform="pandas")
    assert pipe.fit(X, y).score(X, y) > 0.9


@pytest.mark.parametrize("transformer", [DPStandardScaler, DPSimpleImputer])
def test_a_column_of_nan_only_fits_without_a_numpy_warning(transformer):
    X = np.column_stack([np.arange(20.0), np.full(20, np.nan)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = transformer(bounds="auto", epsilon=np.inf).fit(X)
    assert np.isfinite(fitted.bounds_).all()


def test_the_widest_public_bounds_give_a_finite_scale():
    # A half-width of 1e300 squares to inf: the scale was inf and every
    # output 0. It is computed unsquared now (var_ may read inf).
    X = np.random.default_rng(0).normal(size=(2000, 2)) * 10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = DPStandardScaler(bounds=(-1e300, 1e300), random_state=0).fit(X)
    assert np.all(np.isfinite(scaler.scale_)) and scaler.output_norm_bound_ > 0
    assert np.any(scaler.transform(X) != 0)


@pytest.mark.parametrize("weight", [1e6, 1.0, 0.3, 0.0])
def test_a_weighted_record_moves_the_released_vector_by_at_most_one(
    privatized_sums, neighbours, weight
):
    # A record is its row and its weight: adding it, whatever both hold,
    # moves the stacked weighted counts, sums and squares by at most 1 (its
    # weight is capped at 1 in the counts), with the others' weights fixed.
    X, Z = neighbours
    others = np.linspace(0.1, 2.0, X.shape[0])
    DPStandardScaler(bounds=BOUNDS, random_state=0).fit(X, sample_weight=others)
    DPStandardScaler(bounds=BOUNDS, random_state=0).fit(
        Z, sample_weight=np.append(others, weight)
    )
    before, after = privatized_sums
    assert np.linalg.norm(after - before) <= 1.0 + 1e-12


def test_a_heavy_weight_counts_once_under_privacy(privatized_sums, ordinary_data):
    # Weight 1e6 on a record at the bounds moves the vector exactly as
    # weight 1 does: the released sums never scale with a weight above 1.
    X = ordinary_data
    Z = np.vstack([X, [[100.0, 0.0, 100.0]]])
    for weight in (1.0, 1e6):
        DPStandardScaler(bounds=BOUNDS, random_state=0).fit(
            Z, sample_weight=np.append(np.ones(len(X)), weight)
        )
    one, heavy = privatized_sums
    np.testing.assert_array_equal(one, heavy)


@pytest.mark.parametrize("bounds", [(-1e5, 1e5), "auto"])
def test_epsilon_inf_weights_are_scikit_learn_on_raw_columns(bounds):
    # Raw-scale columns (an offset of 500, a column in thousands, a missing
    # value), zero weights included: the non-private limit is scikit-learn's
    # weighted StandardScaler.
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(500.0, 3.0, 300), rng.exponential(2.0, 300) * 1e3])
    X[7, 1] = np.nan
    weights = rng.uniform(0.0, 3.0, 300)
    weights[:10] = 0.0
    X[:10, 0] = 1e4  # rows of weight 0 do not move the fit, nor its range
    ours = DPStandardScaler(bounds=bounds, epsilon=np.inf).fit(X, sample_weight=weights)
    reference = StandardScaler().fit(X, sample_weight=weights)
    np.testing.assert_allclose(ours.mean_, reference.mean_, rtol=1e-10)
    np.testing.assert_allclose(ours.scale_, reference.scale_, rtol=1e-10)
    np.testing.assert_allclose(
        ours.transform(X[10:]), reference.transform(X[10:]), rtol=1e-8, atol=1e-10
    )


def test_weights_routed_by_a_pipeline_reach_the_scaler_and_its_record():
    rng = np.random.default_rng(1)
    X = rng.normal(500.0, 10.0, size=(400, 2))
    weights = rng.uniform(0.0, 2.0, 400)
    pipe = PrivatePipeline([("scale", DPStandardScaler(bounds=(0.0, 1000.0)))])
    pipe.set_params(epsilon=np.inf).fit(X, scale__sample_weight=weights)
    scaler = pipe.pipeline_.named_steps["scale"]
    reference = StandardScaler().fit(X, sample_weight=weights)
    np.testing.assert_allclose(scaler.mean_, reference.mean_, rtol=1e-10)
    assert WEIGHTS_CAVEAT in scaler.privacy_caveats_
    unweighted = DPStandardScaler(bounds=(0.0, 1000.0), random_state=0).fit(X)
    assert WEIGHTS_CAVEAT not in unweighted.privacy_caveats_


def test_unit_weights_are_the_unweighted_fit_under_privacy(ordinary_data):
    X = ordinary_data
    plain = DPStandardScaler(bounds="auto", random_state=3).fit(X)
    ones = DPStandardScaler(bounds="auto", random_state=3).fit(
        X, sample_weight=np.ones(len(X))
    )
    np.testing.assert_array_equal(plain.mean_, ones.mean_)
    np.testing.assert_array_equal(plain.scale_, ones.scale_)
    np.testing.assert_array_equal(plain.bounds_, ones.bounds_)


def test_weights_shift_the_private_mean_towards_the_heavier_rows():
    # Half the rows at 20, half at 80; weights 1 and 0.25: the weighted mean
    # is 32, the unweighted one 50. Private at epsilon = 1 on 20,000 rows.
    X = np.repeat([[20.0], [80.0]], 10_000, axis=0)
    weights = np.repeat([1.0, 0.25], 10_000)
    scaler = DPStandardScaler(bounds=BOUNDS, random_state=0)
    assert abs(scaler.fit(X, sample_weight=weights).mean_[0] - 32.0) < 1.0


@pytest.mark.parametrize(
    "sample_weight, message",
    [
        ([1.0, 2.0], "sample_weight"),
        (-np.ones(60), "[Nn]egative"),
        (np.zeros(60), "[Ss]ample.weight"),
    ],
)
def test_bad_weights_are_refused_before_anything_is_set(
    ordinary_data, sample_weight, message
):
    scaler = DPStandardScaler(bounds=BOUNDS)
    with pytest.raises(ValueError, match=message):
        scaler.fit(ordinary_data, sample_weight=sample_weight)
    assert not hasattr(scaler, "mean_")


def test_auto_bounds_at_epsilon_inf_clip_nothing_beyond_the_private_grid():
    # Without privacy bounds="auto" is the observed range, as documented:
    # Unix timestamps near 1.65e9 were clipped to the private grid's 1e8
    # (mean_ 1e8, scale_ 1).
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [rng.uniform(1.6e9, 1.7e9, size=1000), -rng.uniform(1e12, 2e12, size=1000)]
    )
    ours = DPStandardScaler(bounds="auto", epsilon=np.inf).fit(X)
    ref = StandardScaler().fit(X)
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(ours.scale_, ref.scale_, rtol=1e-9)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-9)
    np.testing.assert_array_equal(ours.bounds_, np.column_stack([X.min(0), X.max(0)]))
    # Under privacy the fences stay on the public grid's range.
    private = DPStandardScaler(bounds="auto", random_state=0).fit(X)
    assert np.all(np.abs(private.bounds_) <= 1e8)


@pytest.mark.parametrize("bounds", [(-100.0, 100.0), "auto"])
@pytest.mark.parametrize("scale", [1e300, 1e308, 1e-310])
def test_epsilon_inf_weights_of_any_scale_give_the_same_statistics(bounds, scale):
    # Without privacy the weights count as given and only their ratios
    # matter: weights near the largest float (whose sums overflow) or
    # subnormal ones fit as weights near 1 do, as scikit-learn's.
    X = np.array([[1.0], [2.0], [3.0], [10.0]])
    w = np.array([1.0, 1.0, 1.0, 0.5])
    ref = StandardScaler().fit(X, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = DPStandardScaler(bounds, epsilon=np.inf).fit(X, sample_weight=w * scale)
    np.testing.assert_allclose(fit.mean_, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(fit.var_, ref.var_, rtol=1e-12)
    np.testing.assert_allclose(fit.scale_, ref.scale_, rtol=1e-12)


@pytest.mark.parametrize("bounds", [(0.0, 10.0), "auto"])
def test_epsilon_inf_rows_of_tiny_weight_beside_a_huge_one_are_seen(bounds):
    # Weights 1e-20 beside 1e308: rescaled by the largest weight they
    # underflowed to 0, and a column observed only in those rows was taken
    # as unseen (its mean the bounds' midpoint, 5). Which rows count is
    # decided by the weights as given; each column's weights are rescaled
    # on their own, so the column's mean is 6, as scikit-learn's.
    X = np.array([[1.0, np.nan], [3.0, 5.0], [2.0, 7.0]])
    w = np.array([1e308, 1e-20, 1e-20])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = DPStandardScaler(bounds, epsilon=np.inf).fit(X, sample_weight=w)
    np.testing.assert_allclose(fit.mean_, [1.0, 6.0], rtol=1e-12)
    np.testing.assert_allclose(fit.var_, [0.0, 1.0], rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(fit.scale_, [1.0, 1.0], rtol=1e-12)


def test_epsilon_inf_mean_is_exact_under_wide_bounds():
    # Bounds wide enough for a timestamp column (2e12) round a mean taken in
    # half-width units to about 1e12 * eps * sqrt(n): more than the whole
    # spread of a narrow column, whose transform was then centred 0.7 away
    # from 0. Without privacy the mean is the exact two-pass one.
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [1.65e12 + 1e3 * rng.normal(size=1000), 37.3 + 0.01 * rng.normal(size=1000)]
    )
    ours = DPStandardScaler(bounds=(0.0, 2e12), epsilon=np.inf).fit(X)
    ref = StandardScaler().fit(X)
    assert np.all(np.abs(ours.mean_ - ref.mean_) <= 1e-9 * ref.scale_)
    assert np.all(np.abs(ours.transform(X).mean(axis=0)) < 1e-6)


def test_epsilon_inf_mean_without_std_is_exact_too():
    rng = np.random.default_rng(0)
    X = 37.3 + 0.01 * rng.normal(size=(500, 1))
    ours = DPStandardScaler(bounds=(0.0, 2e12), epsilon=np.inf, with_std=False).fit(X)
    assert abs(ours.mean_[0] - X.mean()) <= 1e-9 * X.std()
    assert ours.var_ is None and ours.scale_[0] == 1.0


def test_epsilon_inf_spread_beyond_1e154_is_not_constant():
    # The squares of a spread of 1e200 overflow: the column read as
    # constant (scale 1, outputs of 1e200) with numpy warnings. In units of
    # a power of two its variance is finite; var_ reads inf (as the private
    # fit's does) and the scale is the column's standard deviation.
    X = 1e200 * np.random.default_rng(0).normal(size=(100, 1))
    std = 1e200 * np.std(X / 1e200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = DPStandardScaler(bounds=(-1e201, 1e201), epsilon=np.inf).fit(X)
        Xt = scaler.transform(X)
    assert np.isinf(scaler.var_[0])
    np.testing.assert_allclose(scaler.scale_, [std], rtol=1e-12)
    np.testing.assert_allclose(Xt.std(), 1.0, rtol=1e-12)
    assert np.all(np.isfinite(scaler.output_bounds_))


def test_epsilon_inf_spread_whose_square_underflows_is_constant():
    # A spread of 1e-170 squares below the smallest float: the column is
    # constant, as scikit-learn finds it (var_ 0, scale 1), not divided by
    # a scale whose square reads 0.
    X = 1e-170 * np.array([[1.0], [2.0], [3.0]])
    scaler = DPStandardScaler(bounds=(-1.0, 1.0), epsilon=np.inf).fit(X)
    ref = StandardScaler().fit(X)
    assert scaler.var_[0] == 0.0 == ref.var_[0]
    assert scaler.scale_[0] == 1.0 == ref.scale_[0]


def test_inverse_transform_after_a_dataframe_fit_does_not_warn():
    # Its input is transform's ndarray output: scikit-learn's inverse
    # transforms do not check feature names, nor does this one.
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) ** 2})
    scaler = DPStandardScaler(bounds=(0.0, 400.0), epsilon=np.inf).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = scaler.inverse_transform(scaler.transform(df))
    np.testing.assert_allclose(back, df.to_numpy(), atol=1e-12)
    with pytest.raises(ValueError, match="X has 3 features, but DPStandardScaler"):
        scaler.inverse_transform(np.zeros((2, 3)))


def test_bounds_wider_than_the_largest_float_standardize_a_record_near_them():
    # Declared bounds of (-1.7e308, 1.7e308) are finite, but a record near
    # the upper bound lies more than the largest float from a mean near the
    # lower one: clip(x) - mean_ overflowed to an infinite output (and an
    # infinite output bound), which then made a downstream private fit
    # raise or not depending on that one record. Standardized in halves,
    # the output is the finite quotient.
    bounds = (-1.7e308, 1.7e308)
    X = np.array([[1e308], [-1e308], [1.7e308], [-1.7e308], [0.0], [1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = DPStandardScaler(bounds=bounds, random_state=0).fit(X)
        Xt = scaler.transform(X)
        back = scaler.inverse_transform(Xt)
    mean, scale = scaler.mean_[0], scaler.scale_[0]
    assert abs(mean) > 1.7e308 - np.finfo(np.float64).max  # the overflow case
    expected = (X / 2 - mean / 2) / (scale / 2)
    np.testing.assert_allclose(Xt, expected, rtol=1e-15)
    assert np.isfinite(scaler.output_bounds_).all()
    np.testing.assert_allclose(
        scaler.output_bounds_[0], (np.array(bounds) / 2 - mean / 2) / (scale / 2)
    )
    assert np.isfinite(scaler.output_norm_bound_)
    assert np.all(Xt >= scaler.output_bounds_[:, 0])
    assert np.all(Xt <= scaler.output_bounds_[:, 1])
    # The inverse undoes it (in halves too).
    np.testing.assert_allclose(back, X, rtol=1e-14, atol=1e-14 * 1.7e308)


def test_ordinary_bounds_standardize_in_the_plain_form():
    # Halves are used only for bounds more than the largest float apart (a
    # public choice); other columns keep (clip(x) - mean_) / scale_ and
    # X * scale_ + mean_ exactly, even beside a wide column.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2)) * [10.0, 1e300]
    scaler = DPStandardScaler(
        bounds=[(-30.0, 30.0), (-1.7e308, 1.7e308)], random_state=0
    ).fit(X)
    clipped = np.clip(X[:, 0], -30.0, 30.0)
    plain = (clipped - scaler.mean_[0]) / scaler.scale_[0]
    assert np.array_equal(scaler.transform(X)[:, 0], plain)
    Z = rng.normal(size=(5, 2))
    inverse = Z[:, 0] * scaler.scale_[0] + scaler.mean_[0]
    assert np.array_equal(scaler.inverse_transform(Z)[:, 0], inverse)


def test_exact_outputs_beyond_the_largest_float_saturate():
    # Without privacy the scale is the data's (not floored by the width):
    # a spread of 0.1 within bounds of the largest float standardizes the
    # upper bound to 10 times the largest float. It saturates there, so
    # that the output bound is finite and still bounds every output. The
    # inverse of an input beyond the float range (a spread of 10) saturates
    # too, also in float32.
    largest = np.finfo(np.float64).max
    X = np.random.default_rng(0).normal(size=(100, 2)) * [0.1, 10.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = DPStandardScaler(bounds=(-largest, largest), epsilon=np.inf).fit(X)
        Xt = scaler.transform([[largest, 0.0], [-largest, 0.0]])
        back = scaler.inverse_transform([[0.0, 1e308], [0.0, -1e308]])
        big = np.array([[0.0, 1e38], [0.0, -1e38]], np.float32)
        back32 = scaler.inverse_transform(big)
    np.testing.assert_array_equal(scaler.output_bounds_[0], [-largest, largest])
    np.testing.assert_array_equal(Xt[:, 0], [largest, -largest])
    np.testing.assert_array_equal(back[:, 1], [largest, -largest])
    largest32 = np.finfo(np.float32).max
    assert back32.dtype == np.float32
    np.testing.assert_array_equal(back32[:, 1], [largest32, -largest32])


def test_float32_with_bounds_near_float32_max_stays_finite():
    # transform computes in float64: clip(x) - mean_ of a float32 record
    # near float32's largest value cannot overflow, and the float32 output
    # stays within the output bounds.
    top = float(np.finfo(np.float32).max)
    X = np.array([[top], [-top], [3e38], [0.0], [1.0], [-3e38]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = DPStandardScaler(bounds=(-top, top), random_state=0).fit(X)
        Xt = scaler.transform(X)
        back = scaler.inverse_transform(Xt)
    assert Xt.dtype == np.float32 and np.isfinite(Xt).all()
    assert np.all(Xt >= scaler.output_bounds_[:, 0])
    assert np.all(Xt <= scaler.output_bounds_[:, 1])
    assert back.dtype == np.float32 and np.isfinite(back).all()


def test_a_fit_that_releases_nothing_does_not_warn_about_delta():
    # Declared bounds without centring or scaling read nothing private (a
    # no-op event): a delta >= 1/n is then unused, and warns only when the
    # Gaussian sum of the moments is released, as for the other
    # transformers.
    X = np.random.default_rng(0).normal(size=(10, 2))
    params = {"bounds": (-3.0, 3.0), "delta": 0.5, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = DPStandardScaler(**params, with_mean=False, with_std=False).fit(X)
    assert scaler.epsilon_ == 0.0
    for with_mean, with_std in [(True, False), (False, True)]:
        with pytest.warns(UserWarning, match="not smaller than 1/n_samples"):
            DPStandardScaler(**params, with_mean=with_mean, with_std=with_std).fit(X)


def test_a_fence_past_the_largest_float_gives_the_grid_range_without_warning():
    # Quartiles widened by auto_fence=1e308 overflow (a RuntimeWarning from
    # the library): the fences are clipped to the grid's public range, as
    # any fence wider than it is.
    X = np.random.default_rng(0).normal(50.0, 10.0, size=(2000, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler = DPStandardScaler(bounds="auto", auto_fence=1e308, random_state=0)
        scaler.fit(X)
    np.testing.assert_array_equal(scaler.bounds_, [AUTO_RANGE] * 2)


def test_entries_summing_to_inf_minus_inf_raise_no_numpy_warning():
    # scikit-learn's finiteness check sums X first: rows of +1.7e308 and
    # -1.7e308 made numpy warn "invalid value encountered in reduce".
    X = np.random.default_rng(0).normal(size=(50, 2))
    X[0], X[1] = 1.7e308, -1.7e308
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        DPStandardScaler(bounds=[(-1e308, 1e308)] * 2, epsilon=1.0).fit(X)
