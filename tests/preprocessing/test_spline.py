# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import numpy as np
import pytest
from sklearn.preprocessing import SplineTransformer

from sklearn_dpfair.preprocessing import DPSplineTransformer
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._quantile import quantile_sensitivity

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
