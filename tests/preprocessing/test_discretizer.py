# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import numpy as np
import pytest
from sklearn.preprocessing import KBinsDiscretizer

from sklearn_dpfair.preprocessing import DPKBinsDiscretizer
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._quantile import quantile_sensitivity

BOUNDS = (0.0, 100.0)


def _finite(neighbours):
    # The discretizer refuses NaN (as scikit-learn's): missing values as 0.
    return [np.nan_to_num(Z, nan=0.0) for Z in neighbours]


def test_edge_utilities_move_by_at_most_their_sensitivity(
    selection_scores, selection_sensitivities, neighbours
):
    for Z in _finite(neighbours):
        DPKBinsDiscretizer(bounds=BOUNDS, n_bins=4, random_state=0).fit(Z)
    n = len(selection_scores) // 2
    levels = [0.25, 0.5, 0.75] * 3
    assert n == 9
    for k in range(n):
        assert selection_sensitivities[k] == quantile_sensitivity(
            levels[k], "add_remove"
        )
        moved = np.max(np.abs(selection_scores[n + k] - selection_scores[k]))
        assert moved <= selection_sensitivities[k] + 1e-12


def test_epsilon_recomputed_from_the_event_meets_the_target(ordinary_data):
    kb = DPKBinsDiscretizer(bounds=BOUNDS, epsilon=0.3).fit(ordinary_data)
    assert epsilon_of(kb.dp_event_, kb.delta_, "rdp") == pytest.approx(
        kb.epsilon_, rel=1e-9
    )
    assert kb.epsilon_ <= 0.3 * (1 + 1e-9)


def test_uniform_bins_cost_nothing(selection_scores, ordinary_data):
    kb = DPKBinsDiscretizer(bounds=BOUNDS, strategy="uniform").fit(ordinary_data)
    assert kb.epsilon_ == 0.0 and not selection_scores
    np.testing.assert_allclose(kb.bin_edges_[0], np.linspace(0, 100, 6))


def _fitted_pair(encode):
    """Ours at epsilon=inf and scikit-learn's, on lognormal data within BOUNDS."""
    X = np.random.default_rng(0).lognormal(3.0, 0.5, size=(500, 2))
    ours = DPKBinsDiscretizer(bounds=BOUNDS, encode=encode, epsilon=np.inf).fit(X)
    # quantile_method came in scikit-learn 1.7; before it, "linear" was the
    # only method.
    linear = (
        {"quantile_method": "linear"}
        if "quantile_method" in KBinsDiscretizer().get_params()
        else {}
    )
    return X, ours, KBinsDiscretizer(encode=encode, **linear).fit(X)


@pytest.mark.parametrize("encode", ["onehot-dense", "ordinal"])
def test_epsilon_inf_is_scikit_learn_on_data_within_the_bounds(encode):
    X, ours, ref = _fitted_pair(encode)
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    assert math.isinf(ours.epsilon_)


def test_loose_bounds_give_bins_of_equal_counts_and_utility_rises():
    income = np.random.default_rng(1).lognormal(10.8, 0.8, size=(5000, 1))
    spread = []
    for eps in (0.01, 0.1, 1.0):
        worst = []
        for seed in range(5):
            kb = DPKBinsDiscretizer(
                bounds=(0, 1e7),
                n_bins=4,
                encode="ordinal",
                epsilon=eps,
                random_state=seed,
            ).fit(income)
            counts = np.bincount(kb.transform(income)[:, 0].astype(int), minlength=4)
            worst.append(np.abs(counts / 5000 - 0.25).max())
        spread.append(np.mean(worst))
    assert spread[0] > spread[1] > spread[2]
    assert spread[2] < 0.03


def test_output_is_within_the_declared_bounds(ordinary_data):
    kb = DPKBinsDiscretizer(bounds=BOUNDS, encode="ordinal", random_state=0)
    out = kb.fit(ordinary_data).transform(np.array([[-1e300, 1e300, 50.0]]))
    assert np.all(out >= kb.output_bounds_[:, 0]) and np.all(
        out <= kb.output_bounds_[:, 1]
    )


@pytest.mark.parametrize("encode", ["onehot-dense", "ordinal"])
def test_inverse_transform_is_scikit_learn_at_epsilon_inf(encode):
    X, ours, ref = _fitted_pair(encode)
    Y = ref.transform(X)
    np.testing.assert_allclose(
        ours.inverse_transform(Y), ref.inverse_transform(Y), rtol=1e-12
    )
    # Post-processing of the released edges: bin centres, at any epsilon.
    private = DPKBinsDiscretizer(bounds=BOUNDS, encode=encode, random_state=0).fit(X)
    back = private.inverse_transform(private.transform(X))
    assert np.all(back >= 0.0) and np.all(back <= 100.0)
    if encode == "onehot-dense":
        with pytest.raises(ValueError, match="all zeros"):
            private.inverse_transform(np.zeros((1, 10)))
