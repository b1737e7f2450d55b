# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.preprocessing import KBinsDiscretizer

from sklearn_dpfair.pipeline import PrivatePipeline
from sklearn_dpfair.preprocessing import DPKBinsDiscretizer
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._quantile import quantile_sensitivity
from sklearn_dpfair.privacy._record import WEIGHTS_CAVEAT

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


def _edges(kb):
    return np.vstack(list(kb.bin_edges_))


@pytest.mark.parametrize("weight", [1e300, 1e6, 1.0, 0.3, 0.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_weighted_record_moves_each_edge_utility_by_at_most_its_sensitivity(
    selection_scores, selection_sensitivities, neighbours, weight, dtype
):
    # A record is its row and its weight: adding it, whatever both hold,
    # moves every quantile draw's utilities by at most the draw's
    # sensitivity (its weight is capped at 1 in the counts), the others'
    # weights fixed.
    X, Z = _finite(neighbours)
    others = np.linspace(0.1, 2.0, X.shape[0])
    weight = min(weight, float(np.finfo(dtype).max))
    DPKBinsDiscretizer(bounds=BOUNDS, n_bins=4, random_state=0).fit(
        X, sample_weight=others.astype(dtype)
    )
    DPKBinsDiscretizer(bounds=BOUNDS, n_bins=4, random_state=0).fit(
        Z, sample_weight=np.append(others, weight).astype(dtype)
    )
    n = len(selection_scores) // 2
    assert n == 9
    for k in range(n):
        assert selection_sensitivities[n + k] == selection_sensitivities[k]
        moved = np.max(np.abs(selection_scores[n + k] - selection_scores[k]))
        assert moved <= selection_sensitivities[k] + 1e-12


def test_a_heavy_weight_counts_once_under_privacy(selection_scores, ordinary_data):
    Z = np.vstack([ordinary_data, [[100.0, 0.0, 100.0]]])
    for weight in (1.0, 1e300):
        DPKBinsDiscretizer(bounds=BOUNDS, random_state=0).fit(
            Z, sample_weight=np.append(np.ones(len(ordinary_data)), weight)
        )
    n = len(selection_scores) // 2
    for k in range(n):
        np.testing.assert_array_equal(selection_scores[k], selection_scores[n + k])


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
def test_unit_weights_are_the_unweighted_fit(ordinary_data, epsilon, strategy):
    params = {
        "bounds": BOUNDS, "strategy": strategy, "epsilon": epsilon, "random_state": 3
    }
    plain = DPKBinsDiscretizer(**params).fit(ordinary_data)
    ones = DPKBinsDiscretizer(**params).fit(
        ordinary_data, sample_weight=np.ones(len(ordinary_data))
    )
    np.testing.assert_array_equal(_edges(plain), _edges(ones))
    assert plain.epsilon_ == ones.epsilon_


def test_epsilon_inf_weights_are_scikit_learn_default_quantile_method():
    # scikit-learn's default quantile_method ("averaged_inverted_cdf") is
    # the weighted quantile of the non-private limit; rows of weight 0 (at
    # the bounds here) move nothing.
    rng = np.random.default_rng(0)
    X = rng.lognormal(3.0, 0.5, size=(500, 2))
    weights = rng.uniform(0.0, 3.0, 500)
    weights[:10], X[:5], X[5:10] = 0.0, 0.0, 100.0
    for n_bins in (2, 3, 5, 7):
        ours = DPKBinsDiscretizer(bounds=BOUNDS, n_bins=n_bins, epsilon=np.inf)
        ours.fit(X, sample_weight=weights)
        ref = KBinsDiscretizer(n_bins=n_bins, encode="onehot-dense")
        ref.fit(X, sample_weight=weights)
        for mine, theirs in zip(ours.bin_edges_, ref.bin_edges_):
            np.testing.assert_array_equal(mine, theirs)
        np.testing.assert_array_equal(ours.transform(X), ref.transform(X))
        assert math.isinf(ours.epsilon_)


@pytest.mark.parametrize("seed", range(20))
def test_epsilon_inf_integer_weights_are_repeated_rows(seed):
    # Integer weights on a few distinct values: the cumulative weights land
    # on the levels, where the two halves of a tie are averaged. A weight k
    # is k repeated rows, as in scikit-learn (whose weighted and unweighted
    # default methods agree), and weights of 0 are no rows.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 30))
    X = rng.permutation(np.arange(1.0, n + 1.0))[:, None]
    k = rng.integers(0, 4, n)
    k[:2] = (1, 2)
    n_bins = int(rng.integers(2, 8))
    ours = DPKBinsDiscretizer(bounds=BOUNDS, n_bins=n_bins, epsilon=np.inf)
    edges = ours.fit(X, sample_weight=k).bin_edges_[0]
    repeated = np.repeat(X, k, axis=0)
    # Before scikit-learn 1.7 (no quantile_method) its weighted edges did not
    # average ties, and its unweighted ones interpolated.
    if "quantile_method" in KBinsDiscretizer().get_params():
        ref = KBinsDiscretizer(
            n_bins=n_bins,
            strategy="quantile",
            quantile_method="averaged_inverted_cdf",
            subsample=None,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # bins it drops
            for fitted in (ref.fit(X, sample_weight=k), ref.fit(repeated)):
                theirs = fitted.bin_edges_[0]
                if theirs.size == n_bins + 1:  # else it dropped a bin, we keep it
                    np.testing.assert_array_equal(edges, theirs)
    # Within our weighted quantile (the unweighted one interpolates): weights
    # m k on X are weights m on X repeated k times.
    m = np.where(np.arange(n) % 2, 1.0, 3.0)
    a = DPKBinsDiscretizer(bounds=BOUNDS, n_bins=n_bins, epsilon=np.inf)
    b = DPKBinsDiscretizer(bounds=BOUNDS, n_bins=n_bins, epsilon=np.inf)
    a.fit(X, sample_weight=m * k)
    b.fit(repeated, sample_weight=np.repeat(m, k))
    np.testing.assert_array_equal(_edges(a), _edges(b))


def test_epsilon_inf_rows_of_weight_zero_move_no_edge(ordinary_data):
    weights = np.linspace(0.5, 2.0, len(ordinary_data))
    junk = np.array([[0.0, 100.0, 1e300], [-1e300, 1e300, 50.0]])
    fitted = [
        DPKBinsDiscretizer(bounds=BOUNDS, epsilon=np.inf).fit(X, sample_weight=w)
        for X, w in [
            (ordinary_data, weights),
            (np.vstack([junk, ordinary_data]), np.append([0.0, 0.0], weights)),
        ]
    ]
    np.testing.assert_array_equal(_edges(fitted[0]), _edges(fitted[1]))


def test_weights_shift_the_private_edges_towards_the_heavier_rows():
    # Half the rows near 20, half near 80; weights 1 and 0.25: the weighted
    # median is near 20 (80% of the weight), the unweighted one 50.
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(20, 2, 10_000), rng.normal(80, 2, 10_000)])
    weights = np.repeat([1.0, 0.25], 10_000)
    kb = DPKBinsDiscretizer(bounds=BOUNDS, n_bins=2, random_state=0)
    assert kb.fit(X[:, None], sample_weight=weights).bin_edges_[0][1] < 30.0


def test_weights_routed_by_a_pipeline_reach_the_discretizer_and_its_record():
    rng = np.random.default_rng(1)
    X = rng.lognormal(3.0, 0.5, size=(400, 2))
    weights = rng.uniform(0.0, 2.0, 400)
    ref = KBinsDiscretizer(strategy="quantile").fit(X, sample_weight=weights)
    pipe = PrivatePipeline([("bins", DPKBinsDiscretizer(bounds=BOUNDS))])
    pipe.set_params(epsilon=np.inf).fit(X, bins__sample_weight=weights)
    with sklearn.config_context(enable_metadata_routing=True):
        step = DPKBinsDiscretizer(bounds=BOUNDS).set_fit_request(sample_weight=True)
        routed = PrivatePipeline([("bins", step)]).set_params(epsilon=np.inf)
        routed.fit(X, sample_weight=weights)
    for fitted in (pipe, routed):
        kb = fitted.pipeline_.named_steps["bins"]
        np.testing.assert_array_equal(_edges(kb), np.vstack(list(ref.bin_edges_)))
        assert WEIGHTS_CAVEAT in kb.privacy_caveats_
    unweighted = DPKBinsDiscretizer(bounds=BOUNDS, random_state=0).fit(X)
    assert WEIGHTS_CAVEAT not in unweighted.privacy_caveats_
