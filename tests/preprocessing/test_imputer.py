# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import numpy as np
import pytest
from sklearn.impute import SimpleImputer

from sklearn_dpfair.preprocessing import DPSimpleImputer
from sklearn_dpfair.privacy._accounting import epsilon_of

BOUNDS = (0.0, 100.0)


def test_mean_one_record_moves_the_released_vector_by_at_most_one(
    privatized_sums, neighbours
):
    for Z in neighbours:
        DPSimpleImputer(bounds=BOUNDS, random_state=0).fit(Z)
    before, after = privatized_sums
    assert np.linalg.norm(after - before) <= 1.0 + 1e-12


def test_median_utilities_move_by_at_most_one_half(
    selection_scores, selection_sensitivities, neighbours
):
    for Z in neighbours:
        DPSimpleImputer(bounds=BOUNDS, strategy="median", random_state=0).fit(Z)
    n = len(selection_scores) // 2
    assert n == 3 and selection_sensitivities == [0.5] * 6
    for k in range(n):
        moved = np.max(np.abs(selection_scores[n + k] - selection_scores[k]))
        assert moved <= 0.5 + 1e-12


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_epsilon_recomputed_from_the_event_meets_the_target(strategy, missing_data):
    imp = DPSimpleImputer(bounds=BOUNDS, strategy=strategy, epsilon=0.5).fit(
        missing_data
    )
    assert epsilon_of(imp.dp_event_, imp.delta_, "rdp") == pytest.approx(
        imp.epsilon_, rel=1e-9
    )
    assert imp.epsilon_ <= 0.5 * (1 + 1e-9)


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_epsilon_inf_is_scikit_learn_on_data_within_the_bounds(strategy):
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 100.0, size=(301, 3))
    X[rng.random(301) < 0.2, 1] = np.nan
    ours = DPSimpleImputer(bounds=BOUNDS, strategy=strategy, epsilon=np.inf).fit(X)
    ref = SimpleImputer(strategy=strategy).fit(X)
    np.testing.assert_allclose(ours.statistics_, ref.statistics_, rtol=1e-12)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-12)
    assert math.isinf(ours.epsilon_)


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_utility_rises_with_epsilon(strategy):
    rng = np.random.default_rng(1)
    X = rng.normal(40.0, 10.0, size=(1000, 1))
    truth = np.median(X) if strategy == "median" else X.mean()
    errors = [
        np.mean(
            [
                abs(
                    DPSimpleImputer(
                        bounds=BOUNDS, strategy=strategy, epsilon=eps, random_state=s
                    )
                    .fit(X)
                    .statistics_[0]
                    - truth
                )
                for s in range(10)
            ]
        )
        for eps in (0.02, 0.2, 2.0)
    ]
    assert errors[0] > errors[1] > errors[2]


def test_output_is_clipped_and_filled(missing_data):
    imp = DPSimpleImputer(bounds=BOUNDS, random_state=0).fit(missing_data)
    out = imp.transform(np.array([[np.nan, 1e300, -5.0]]))
    assert not np.isnan(out).any()
    assert np.all(out >= 0.0) and np.all(out <= 100.0)
    np.testing.assert_array_equal(imp.output_bounds_, [BOUNDS] * 3)


def test_an_all_missing_column_is_kept():
    # scikit-learn drops it (a shape read from the data); the private
    # imputer keeps every column and fills it with a released value.
    X = np.column_stack([np.arange(10.0), np.full(10, np.nan)])
    out = DPSimpleImputer(bounds=BOUNDS, random_state=0).fit_transform(X)
    assert out.shape == X.shape and not np.isnan(out).any()



def _incomes(n=8000, seed=0, missing=0.3):
    # A raw column in its units (incomes near 40,000) with missing values.
    X = np.random.default_rng(seed).lognormal(10.6, 0.5, size=(n, 1))
    X[np.random.default_rng(seed + 1).random(n) < missing] = np.nan
    return X


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_auto_bounds_fill_a_raw_column(strategy):
    X = _incomes()
    observed = X[~np.isnan(X)]
    q25, q75 = np.quantile(observed, [0.25, 0.75])
    target = np.mean(observed) if strategy == "mean" else np.median(observed)
    for seed in range(5):
        imp = DPSimpleImputer(bounds="auto", strategy=strategy, random_state=seed)
        imp.fit(X)
        lower, upper = imp.bounds_[0]
        # Fences about 2 interquartile ranges beyond the quartiles: the
        # bulk, not the 1e8 range of the public grid.
        iqr = q75 - q25
        assert q25 - 4 * iqr < lower < q25 and q75 < upper < q75 + 4 * iqr
        assert abs(imp.statistics_[0] - target) < 0.03 * target
        assert imp.epsilon_ <= 1.0 * (1 + 1e-9)
        assert imp.privacy_plan(*X.shape).dp_event == imp.dp_event_
        assert "bounds from private quantiles" in imp.privacy_record_.mechanism


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_auto_bounds_at_epsilon_inf_are_scikit_learn(strategy):
    # The observed range: nothing is clipped, the exact statistic.
    X = _incomes(n=500)
    imp = DPSimpleImputer(bounds="auto", strategy=strategy, epsilon=math.inf).fit(X)
    reference = SimpleImputer(strategy=strategy).fit(X)
    np.testing.assert_allclose(imp.statistics_, reference.statistics_, rtol=1e-12)
    np.testing.assert_allclose(imp.transform(X), reference.transform(X), rtol=1e-12)


def test_auto_bounds_utilities_move_by_at_most_their_sensitivity(
    selection_scores, selection_sensitivities, neighbours
):
    # Two quartiles a column for the bounds, then the median to fill with,
    # each utility moving by at most max(q, 1 - q) between add/remove
    # neighbours.
    X = neighbours[0]
    for Z in neighbours:
        DPSimpleImputer(bounds="auto", strategy="median", random_state=0).fit(Z)
    n = len(selection_scores) // 2
    d = X.shape[1]
    assert n == 3 * d
    levels = [0.25, 0.75] * d + [0.5] * d
    for k in range(n):
        assert selection_sensitivities[k] == max(levels[k], 1 - levels[k])
        moved = np.max(np.abs(selection_scores[n + k] - selection_scores[k]))
        assert moved <= selection_sensitivities[k] + 1e-12


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_auto_bounds_at_epsilon_inf_clip_nothing_beyond_the_private_grid(strategy):
    # Unix timestamps near 1.65e9: the observed range, not the private
    # grid's 1e8 (the fill value was 1.001e8).
    X = np.random.default_rng(0).uniform(1.6e9, 1.7e9, size=(1000, 1))
    X[::3] = np.nan
    imp = DPSimpleImputer(bounds="auto", strategy=strategy, epsilon=math.inf).fit(X)
    reference = SimpleImputer(strategy=strategy).fit(X)
    np.testing.assert_allclose(imp.statistics_, reference.statistics_, rtol=1e-12)
    np.testing.assert_allclose(imp.transform(X), reference.transform(X), rtol=1e-12)


def test_auto_bounds_at_epsilon_inf_of_a_constant_extreme_column_are_finite():
    # The public margin around a constant column must not overflow.
    largest = np.finfo(np.float64).max
    X = np.array([[largest, -largest, 0.0]] * 5)
    imp = DPSimpleImputer(bounds="auto", epsilon=math.inf).fit(X)
    assert np.isfinite(imp.bounds_).all()
    assert np.all(imp.bounds_[:, 0] < imp.bounds_[:, 1])
    np.testing.assert_allclose(imp.statistics_, X[0], rtol=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, math.inf])
def test_the_fill_value_is_within_the_output_bounds_over_random_bounds(epsilon):
    # centre + half * mean rounds: a mean at a bound landed ulps beyond it
    # (7 of 300 random bounds at epsilon=0.5, 2 at epsilon=inf), outside
    # the output_bounds_ a downstream clip is taken from.
    rng = np.random.default_rng(0)
    for seed in range(300):
        lower, upper = np.sort(rng.uniform(-10, 10, 2))
        X = np.full((5 if math.isfinite(epsilon) else 50, 1), upper)
        X[0] = np.nan
        imp = DPSimpleImputer(
            bounds=(lower, upper), epsilon=epsilon, delta=1e-3, random_state=seed
        ).fit(X)
        filled = imp.transform(np.array([[np.nan]]))[0, 0]
        low, high = imp.output_bounds_[0]
        assert low <= filled <= high, (lower, upper, filled)
