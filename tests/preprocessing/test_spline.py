# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import numpy as np
import pytest
import sklearn
from sklearn.preprocessing import SplineTransformer

from sklearn_dpfair.pipeline import PrivatePipeline
from sklearn_dpfair.preprocessing import DPSplineTransformer
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._quantile import quantile_sensitivity
from sklearn_dpfair.privacy._record import WEIGHTS_CAVEAT

BOUNDS = (0.0, 100.0)


def test_knot_utilities_move_by_at_most_their_sensitivity(
    selection_scores, selection_sensitivities, neighbours
):
    for Z in neighbours:
        Z = np.nan_to_num(Z, nan=0.0)
        DPSplineTransformer(bounds=BOUNDS, n_knots=4, random_state=0).fit(Z)
    n = len(selection_scores) // 2
    levels = [1 / 3, 2 / 3] * 3
    assert n == 6
    for k in range(n):
        assert selection_sensitivities[k] == pytest.approx(
            quantile_sensitivity(levels[k], "add_remove")
        )
        moved = np.max(np.abs(selection_scores[n + k] - selection_scores[k]))
        assert moved <= selection_sensitivities[k] + 1e-12


def test_epsilon_recomputed_from_the_event_meets_the_target(ordinary_data):
    spl = DPSplineTransformer(bounds=BOUNDS, epsilon=0.3).fit(ordinary_data)
    assert epsilon_of(spl.dp_event_, spl.delta_, "rdp") == pytest.approx(
        spl.epsilon_, rel=1e-9
    )
    assert spl.epsilon_ <= 0.3 * (1 + 1e-9)


def test_epsilon_inf_is_scikit_learn_quantile_knots():
    X = np.random.default_rng(0).lognormal(3.0, 0.5, size=(500, 2))
    ours = DPSplineTransformer(bounds=BOUNDS, epsilon=np.inf).fit(X)
    ref = SplineTransformer(knots="quantile").fit(X)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-12)
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    assert math.isinf(ours.epsilon_)


def test_uniform_knots_cost_nothing_and_outputs_are_bounded(
    selection_scores, ordinary_data
):
    spl = DPSplineTransformer(bounds=BOUNDS, knots="uniform").fit(ordinary_data)
    assert spl.epsilon_ == 0.0 and not selection_scores
    out = spl.transform(np.array([[-1e300, 1e300, 50.0]]))
    assert np.all(out >= 0.0) and np.all(out <= 1.0)
    assert np.linalg.norm(out) <= spl.output_norm_bound_ + 1e-12


def test_coinciding_private_knots_are_moved_apart():
    # A constant column: every private quantile lands near the constant.
    X = np.full((2000, 1), 42.0)
    for seed in range(5):
        spl = DPSplineTransformer(bounds=BOUNDS, random_state=seed).fit(X)
        assert np.all(np.diff(spl.knots_[:, 0]) > 0)
        assert spl.knots_[0, 0] == 0.0 and spl.knots_[-1, 0] == 100.0


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_knots_apart_where_the_gap_is_below_the_float_spacing(epsilon):
    # A column near 1.7e9 with bounds 20 wide: a gap of width * 1e-9 is
    # below one float spacing there.
    X = np.full((2000, 1), 1.7e9)
    for seed in range(5):
        spl = DPSplineTransformer(
            bounds=(1.7e9 - 10, 1.7e9 + 10), n_knots=40, epsilon=epsilon,
            random_state=seed,
        ).fit(X)
        assert np.all(np.diff(spl.knots_[:, 0]) > 0)
        assert np.isfinite(spl.transform(X)).all()


def test_epsilon_inf_knots_of_a_narrow_column_in_wide_bounds_are_scikit_learn():
    # Distinct quantile knots are kept as they are: the gap that moves
    # coinciding knots apart is a fraction of the knots' own span, not of
    # the declared bounds' width (a billionth of 1e6 would respace every
    # knot of a column 1e-3 wide).
    X = 500.0 + np.random.default_rng(0).lognormal(size=(200, 1)) * 1e-4
    ours = DPSplineTransformer(bounds=(0.0, 1e6), epsilon=np.inf).fit(X)
    ref = SplineTransformer(knots="quantile").fit(X)
    np.testing.assert_array_equal(ours.knots_, _base_knots(ref))
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-12)


@pytest.mark.parametrize("n_knots", [3, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_epsilon_inf_column_a_few_float_spacings_wide_fits(n_knots, weighted):
    # Values one float spacing apart: too short a span for distinct knots
    # between them, so the column is treated as a constant one.
    X = np.array([[0.0], [0.3], [0.1 + 0.2], [0.3], [1.0]])
    weights = np.array([0.0, 1.0, 1.0, 1.0, 0.0]) if weighted else None
    if not weighted:
        X = X[1:-1]
    spl = DPSplineTransformer(bounds=(0.0, 1.0), n_knots=n_knots, epsilon=np.inf)
    spl.fit(X, sample_weight=weights)
    assert np.all(np.diff(spl.knots_[:, 0]) > 0)
    assert spl.knots_[0, 0] == 0.3
    out = spl.transform(X)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-12)


def _base_knots(spline):
    """scikit-learn's knots of each column, without the ones it adds beyond."""
    return np.column_stack(
        [b.t[spline.degree : len(b.t) - spline.degree] for b in spline.bsplines_]
    )


@pytest.mark.parametrize("weight", [1e300, 1e6, 1.0, 0.3, 0.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_weighted_record_moves_each_knot_utility_by_at_most_its_sensitivity(
    selection_scores, selection_sensitivities, neighbours, weight, dtype
):
    # A record is its row and its weight: adding it, whatever both hold,
    # moves every quantile draw's utilities by at most the draw's
    # sensitivity (its weight is capped at 1 in the counts).
    X, Z = (np.nan_to_num(D, nan=0.0) for D in neighbours)
    others = np.linspace(0.1, 2.0, X.shape[0])
    weight = min(weight, float(np.finfo(dtype).max))
    DPSplineTransformer(bounds=BOUNDS, n_knots=4, random_state=0).fit(
        X, sample_weight=others.astype(dtype)
    )
    DPSplineTransformer(bounds=BOUNDS, n_knots=4, random_state=0).fit(
        Z, sample_weight=np.append(others, weight).astype(dtype)
    )
    n = len(selection_scores) // 2
    assert n == 6
    for k in range(n):
        assert selection_sensitivities[n + k] == selection_sensitivities[k]
        moved = np.max(np.abs(selection_scores[n + k] - selection_scores[k]))
        assert moved <= selection_sensitivities[k] + 1e-12


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize("knots", ["quantile", "uniform"])
def test_unit_weights_are_the_unweighted_fit(ordinary_data, epsilon, knots):
    params = {"bounds": BOUNDS, "knots": knots, "epsilon": epsilon, "random_state": 3}
    plain = DPSplineTransformer(**params).fit(ordinary_data)
    ones = DPSplineTransformer(**params).fit(
        ordinary_data, sample_weight=np.ones(len(ordinary_data))
    )
    np.testing.assert_array_equal(plain.knots_, ones.knots_)
    assert plain.epsilon_ == ones.epsilon_


def test_epsilon_inf_weights_are_scikit_learn_quantile_knots():
    # scikit-learn's weighted knots are the weighted inverted CDF's; rows of
    # weight 0 (at the bounds here) move nothing.
    rng = np.random.default_rng(0)
    X = rng.lognormal(3.0, 0.5, size=(500, 2))
    weights = rng.uniform(0.0, 3.0, 500)
    weights[:10], X[:5], X[5:10] = 0.0, 0.0, 100.0
    for n_knots in (3, 4, 5, 7):
        ours = DPSplineTransformer(bounds=BOUNDS, n_knots=n_knots, epsilon=np.inf)
        ours.fit(X, sample_weight=weights)
        ref = SplineTransformer(n_knots=n_knots, knots="quantile")
        ref.fit(X, sample_weight=weights)
        np.testing.assert_array_equal(ours.knots_, _base_knots(ref))
        np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_epsilon_inf_integer_weights_are_scikit_learn_and_repeated_rows(seed):
    # Integer weights on a few distinct values: the cumulative weights land
    # on the levels, ties decided as scikit-learn decides them. Within the
    # weighted quantile, weights m k on X are weights m on X repeated k
    # times; scikit-learn's unweighted knots (and ours) interpolate
    # linearly, so unweighted repeated rows are not integer weights there.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 30))
    X = rng.permutation(np.arange(1.0, n + 1.0))[:, None]
    k = rng.integers(0, 4, n)
    k[:2] = (1, 2)
    n_knots = int(rng.integers(3, 8))
    ours = DPSplineTransformer(bounds=BOUNDS, n_knots=n_knots, epsilon=np.inf)
    ref = SplineTransformer(n_knots=n_knots, knots="quantile")
    theirs = _base_knots(ref.fit(X, sample_weight=k))
    if np.all(np.diff(theirs, axis=0) > 0):  # else we move coinciding knots apart
        np.testing.assert_array_equal(ours.fit(X, sample_weight=k).knots_, theirs)
    m = np.where(np.arange(n) % 2, 1.0, 3.0)
    a = DPSplineTransformer(bounds=BOUNDS, n_knots=n_knots, epsilon=np.inf)
    b = DPSplineTransformer(bounds=BOUNDS, n_knots=n_knots, epsilon=np.inf)
    a.fit(X, sample_weight=m * k)
    b.fit(np.repeat(X, k, axis=0), sample_weight=np.repeat(m, k))
    np.testing.assert_array_equal(a.knots_, b.knots_)


def test_epsilon_inf_rows_of_weight_zero_move_no_knot(ordinary_data):
    weights = np.linspace(0.5, 2.0, len(ordinary_data))
    junk = np.array([[0.0, 100.0, 1e300], [-1e300, 1e300, 50.0]])
    plain, padded = (
        DPSplineTransformer(bounds=BOUNDS, epsilon=np.inf).fit(X, sample_weight=w)
        for X, w in [
            (ordinary_data, weights),
            (np.vstack([junk, ordinary_data]), np.append([0.0, 0.0], weights)),
        ]
    )
    np.testing.assert_array_equal(plain.knots_, padded.knots_)


def test_weights_routed_by_a_pipeline_reach_the_spline_and_its_record():
    rng = np.random.default_rng(1)
    X = rng.lognormal(3.0, 0.5, size=(400, 2))
    weights = rng.uniform(0.0, 2.0, 400)
    ref = SplineTransformer(knots="quantile").fit(X, sample_weight=weights)
    pipe = PrivatePipeline([("spline", DPSplineTransformer(bounds=BOUNDS))])
    pipe.set_params(epsilon=np.inf).fit(X, spline__sample_weight=weights)
    with sklearn.config_context(enable_metadata_routing=True):
        step = DPSplineTransformer(bounds=BOUNDS).set_fit_request(sample_weight=True)
        routed = PrivatePipeline([("spline", step)]).set_params(epsilon=np.inf)
        routed.fit(X, sample_weight=weights)
    for fitted in (pipe, routed):
        spl = fitted.pipeline_.named_steps["spline"]
        np.testing.assert_array_equal(spl.knots_, _base_knots(ref))
        assert WEIGHTS_CAVEAT in spl.privacy_caveats_


@pytest.mark.parametrize("bounds", [(-1e-320, 1e-320), (0.0, 1e-300)])
@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_bounds_of_subnormal_scale_give_finite_features(bounds, epsilon):
    # Knots a subnormal apart overflow the B-splines' divisions unless
    # they are computed in rescaled units.
    lo, hi = bounds
    X = lo + (hi - lo) * np.random.default_rng(0).uniform(size=(300, 1))
    spl = DPSplineTransformer(bounds, epsilon=epsilon, random_state=0).fit(X)
    out = spl.transform(np.vstack([X, [[lo], [hi], [0.0], [5.0]]]))
    assert np.isfinite(out).all()
    assert ((out >= 0.0) & (out <= 1.0)).all()
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-9)


def test_epsilon_inf_tiny_bounds_are_the_rescaled_fit():
    X = np.random.default_rng(0).uniform(0.0, 1.0, size=(300, 1))
    scale = 2.0**-997
    tiny = DPSplineTransformer((0.0, scale), epsilon=np.inf).fit(X * scale)
    ordinary = DPSplineTransformer((0.0, 1.0), epsilon=np.inf).fit(X)
    np.testing.assert_allclose(
        tiny.transform(X * scale), ordinary.transform(X), rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("knots", ["quantile", "uniform"])
@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_bounds_too_narrow_for_the_knots_are_refused(knots, epsilon):
    # Bounds two float spacings apart cannot hold five distinct knots: a
    # public check, whatever the data.
    X = np.random.default_rng(0).normal(5, 2, size=(200, 1))
    spl = DPSplineTransformer(
        (1e8, 1e8 + 3e-8), knots=knots, epsilon=epsilon, random_state=0
    )
    with pytest.raises(ValueError, match="bounds are too narrow for 5 knots"):
        spl.fit(X)
    assert not hasattr(spl, "knots_")
    # Bounds that hold them fit, with strictly increasing knots.
    wide = spl.set_params(bounds=(1e8, 1e8 + 1e-6)).fit(1e8 + 1e-7 * X)
    assert (np.diff(wide.knots_[:, 0]) > 0).all()
