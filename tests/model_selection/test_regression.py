# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A private search over regressors: a bounded private error score, one record."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_dpfair import (
    DPLogisticRegression,
    HeavyTailDPRegressor,
    PrivateHyperparameterSearch,
    SemiDPLinearRegression,
    SemiLocalDPLinearRegression,
)
from sklearn_dpfair.model_selection._planning import plan_candidate
from sklearn_dpfair.model_selection._scoring import (
    REGRESSION_SCORINGS,
    noisy_score,
    score_counts,
    score_mechanism,
    score_sensitivity,
)
from sklearn_dpfair.model_selection._search import draw_split
from sklearn_dpfair.privacy._accounting import epsilon_of

N, D = 1500, 3


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    y = X @ [1.0, -2.0, 0.5] + 0.5 * rng.normal(size=N)
    public = np.arange(N) < 150
    return X, y, public


def _fit(search, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search.fit(X, y, **params)


# -- the score ---------------------------------------------------------------

ADVERSARIAL = [1e308, -1e308, np.inf, -np.inf, np.nan, 1e154, 0.0]


@pytest.mark.parametrize("scoring", REGRESSION_SCORINGS)
def test_error_sum_has_the_stated_sensitivity_whatever_the_row_holds(scoring):
    rng = np.random.default_rng(0)
    bound = 4.0
    kw = {"scoring": scoring, "score_bound": bound}
    for adjacency in ("add_remove", "replace_one"):
        sensitivity = score_sensitivity(scoring, adjacency, bound)
        assert sensitivity == bound
        for _ in range(200):
            m = int(rng.integers(1, 30))
            y = rng.normal(size=m) * 10.0 ** rng.integers(0, 6)
            pred = y + rng.standard_t(1, size=m)
            target = rng.choice(ADVERSARIAL)
            guess = rng.choice(ADVERSARIAL)
            with warnings.catch_warnings():
                # No warning may depend on what a record holds.
                warnings.simplefilter("error")
                base = score_counts(y, pred, **kw)
                added = score_counts(np.append(y, target), np.append(pred, guess), **kw)
                replaced = score_counts(
                    np.append(y[:-1], target), np.append(pred[:-1], guess), **kw
                )
            assert np.all(np.isfinite(added))
            # A noiseless sum of at most 30 terms in [0, b]: a relative
            # rounding slack of 1e-12 is ample.
            slack = 1e-12 * (m + 1) * bound
            if adjacency == "add_remove":
                assert abs(added[0] - base[0]) <= sensitivity + slack
            else:
                assert abs(replaced[0] - base[0]) <= sensitivity + slack


def test_a_huge_target_counts_the_bound_and_the_score_stays_in_range():
    y = np.array([0.0, 1.0, 1e308])
    pred = np.array([0.0, 1.0, -1e308])
    for scoring in REGRESSION_SCORINGS:
        counts = score_counts(y, pred, scoring=scoring, score_bound=9.0)
        assert counts.tolist() == [9.0]
        rng = np.random.default_rng(0)
        scores = [
            noisy_score(
                y, pred, scoring=scoring, score_bound=9.0, noise_multiplier=3.0, rng=rng
            )
            for _ in range(50)
        ]
        assert all(-9.0 <= s <= 0.0 for s in scores)
        assert len(set(scores)) > 10


def test_complex_targets_are_refused_without_a_complex_warning(data):
    # The search's check of the targets cast them to float64 first: numpy's
    # ComplexWarning, then the imaginary parts dropped before the candidates'
    # own validation refused them.
    X, y, _ = data
    search = PrivateHyperparameterSearch(
        SemiDPLinearRegression(), {"alpha": [0.0, 0.1]}, score_bound=10.0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="Complex data not supported"):
            search.fit(X, y + 1j)


def test_the_score_mechanism_names_a_score_bound_it_cannot_take():
    kw = {"scoring": "neg_mean_absolute_error"}
    mechanism = score_mechanism(noise_multiplier=2.0, score_bound=5.0, **kw)
    assert mechanism.noise_std == 10.0
    # The noise's scale overflows float64, or is subnormal (quantized draws).
    with pytest.raises(ValueError, match=r"^score_bound=1e\+308 is too large"):
        score_mechanism(noise_multiplier=2.0, score_bound=1e308, **kw)
    with pytest.raises(ValueError, match=r"^score_bound=.* is too small"):
        score_mechanism(noise_multiplier=2.0, score_bound=1e-320, **kw)
    # The noise fits, but the error sum of 600 rows could overflow: inf in
    # one dataset and finite in its neighbour, whatever the noise.
    score_mechanism(noise_multiplier=2.0, score_bound=1e306, **kw)
    with pytest.raises(ValueError, match="error sum, up to 600 times"):
        score_mechanism(noise_multiplier=2.0, score_bound=1e306, n_rows=600, **kw)


@pytest.mark.parametrize("bound", [1e308, 1e306, 1e-320])
def test_a_score_bound_the_score_cannot_take_is_refused_before_any_fit(
    data, monkeypatch, bound
):
    X, y, _ = data

    def fit(self, *args, **kwargs):
        raise AssertionError("a candidate was trained before the refusal")

    monkeypatch.setattr(SemiDPLinearRegression, "fit", fit)
    search = PrivateHyperparameterSearch(
        SemiDPLinearRegression(adjacency="add_remove", max_iter=3),
        {"clip_norm": [0.5, 1.0]}, epsilon=2.0, score_bound=bound, random_state=0,
    )
    with pytest.raises(ValueError, match=r"^score_bound=.* is too"):
        search.privacy_plan(N, D)
    with pytest.raises(ValueError, match=r"^score_bound=.* is too"):
        _fit(search, X, y)


def test_a_training_part_a_candidate_cannot_fit_is_refused_before_any_fit(
    monkeypatch,
):
    # HeavyTailDPRegressor fits 2 rows or more: its plan of fewer refuses,
    # so a split that leaves one training row is refused before any run
    # (the split is public randomness), not by the candidate's fit.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 2))
    y = X[:, 0]
    search = PrivateHyperparameterSearch(
        HeavyTailDPRegressor(), {"alpha": [0.0, 1e-3]}, epsilon=5.0,
        score_bound=1.0, validation_fraction=0.5,
    )
    with pytest.raises(ValueError, match="at least 2 samples"):
        search.privacy_plan(6, 2, n_train=1)
    # A seed whose split trains on one row.
    def n_train(seed):
        rng = search.set_params(random_state=seed)._generators()[0]
        return len(draw_split(6, [], 0.5, rng)[1])

    seed = next(s for s in range(100) if n_train(s) == 1)

    def fit(self, *args, **kwargs):
        raise AssertionError("a candidate was trained before the refusal")

    monkeypatch.setattr(HeavyTailDPRegressor, "fit", fit)
    with pytest.raises(ValueError, match="cannot plan HeavyTail.*at least 2"):
        _fit(search.set_params(random_state=seed), X, y)


# -- searches over regressors ------------------------------------------------

# (estimator, grid, uses the public rows)
REGRESSOR_SEARCHES = {
    "semi-dp": (
        SemiDPLinearRegression(adjacency="add_remove", max_iter=5),
        {"clip_norm": [0.5, 2.0]},
        True,
    ),
    "semi-local": (SemiLocalDPLinearRegression(), {"clip_norm": [1.0, 4.0]}, True),
    "heavy-tail": (
        HeavyTailDPRegressor(max_iter=40),
        {"loss": ["squared_error", "huber"]},
        False,
    ),
}


@pytest.mark.parametrize("name", list(REGRESSOR_SEARCHES))
def test_regressor_search_records_its_plan(data, name):
    X, y, public = data
    estimator, grid, semi = REGRESSOR_SEARCHES[name]
    search = PrivateHyperparameterSearch(
        estimator, grid, epsilon=2.0, score_bound=5.0, n_runs=2, random_state=0
    )
    n_public = int(public.sum()) if semi else 0
    _fit(search, X, y, **({"public_mask": public} if semi else {}))
    # At the training size the fit drew (before reading a row).
    counts = {"n_public": n_public, "n_train": search.n_train_}
    plan = search.privacy_plan(N, D, **counts)
    table = search.candidate_plans(N, D, **counts)
    assert plan.dp_event == search.dp_event_
    assert plan.epsilon == search.epsilon_ <= 2.0
    assert plan.adjacency == search.adjacency_
    assert epsilon_of(search.dp_event_, search.delta_, "rdp") == search.epsilon_
    assert search.best_params_ in list(_points(grid))
    assert not hasattr(search, "classes_")
    # The selected run's fit is the planned one, on the training split with
    # every public row in it.
    n_train = search.n_train_
    best = search.best_estimator_
    counts = {"n_public": n_public}
    planned = plan_candidate(best, n_train, D, counts, delta=search.delta)
    assert best.dp_event_ == planned.event(search.run_epsilon_, search.delta)
    # Each run composes the candidate's own event (a local randomizer's
    # message included, read by the RDP accountant under replace-one) and
    # the score's Gaussian.
    assert best.dp_event_ in search.dp_event_.event.events
    if semi:
        assert best.n_public_ == n_public
    # Negative mean error: in [-score_bound, 0]; the model predicts well.
    assert -5.0 <= search.best_score_ <= 0.0
    assert search.score(X, y) > 0.9  # R^2, the regressor's own score
    for key in ("epsilon", "delta", "adjacency", "mechanism", "run_epsilon"):
        np.testing.assert_array_equal(table[key], search.candidate_plans_[key])


def _points(grid):
    from sklearn.model_selection import ParameterGrid

    return ParameterGrid(grid)


def test_search_over_a_private_pipeline_ending_in_a_regressor(data):
    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPStandardScaler

    X, y, public = data
    X = X * [100.0, 1.0, 0.01] + [1000.0, 0.0, 0.0]
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=[(500.0, 1500.0), (-5.0, 5.0), (-0.05, 0.05)]),
        SemiDPLinearRegression(adjacency="add_remove", max_iter=5),
    )
    search = PrivateHyperparameterSearch(
        pipe,
        {"semidplinearregression__clip_norm": [0.5, 2.0]},
        epsilon=2.0,
        score_bound=5.0,
        n_runs=2,
        random_state=0,
    )
    plan = search.privacy_plan(N, D, n_public=int(public.sum()))
    _fit(search, X, y, public_mask=public)
    assert plan.dp_event == search.dp_event_
    assert search.epsilon_ <= 2.0
    assert search.best_estimator_.pipeline_[-1].n_public_ == int(public.sum())
    assert search.score(X, y) > 0.8


def test_search_under_replace_one_states_it(data):
    X, y, public = data
    search = PrivateHyperparameterSearch(
        SemiDPLinearRegression(max_iter=5),  # replace-one by default
        {"clip_norm": [0.5, 2.0]},
        epsilon=2.0,
        score_bound=5.0,
        n_runs=2,
        random_state=0,
    )
    _fit(search, X, y, public_mask=public)
    assert search.adjacency_ == "replace_one"
    assert search.best_estimator_.adjacency_ == "replace_one"
    assert search.privacy_record_.adjacency == "replace_one"


# -- refusals ------------------------------------------------------------------


@pytest.mark.parametrize(
    "estimator, grid, kwargs, match",
    [
        # The regression score's public bound is a parameter, never the data's.
        (
            SemiDPLinearRegression(adjacency="add_remove", max_iter=5),
            {"clip_norm": [1.0]},
            {},
            "score_bound is required",
        ),
        (
            HeavyTailDPRegressor(),
            {"loss": ["huber"]},
            {"scoring": "neg_mean_squared_error"},
            "score_bound is required",
        ),
        (
            SemiLocalDPLinearRegression(),
            {"clip_norm": [1.0]},
            {"scoring": "accuracy", "score_bound": 1.0},
            "scoring='accuracy' scores classifiers",
        ),
        (
            DPLogisticRegression(classes=[0, 1]),
            {"clip_norm": [1.0]},
            {"scoring": "neg_mean_absolute_error", "score_bound": 1.0},
            "scores regressors",
        ),
        # One selection states one neighbouring relation.
        (
            DPLogisticRegression(
                classes=[0, 1], feature_norm_bound=5.0, alpha=0.1, batch_size="full"
            ),
            {"solver": ["dp-sgd", "output-perturbation"]},
            {},
            "different neighbouring relations",
        ),
        (
            HeavyTailDPRegressor(rho=0.5),
            {"loss": ["huber"]},
            {"score_bound": 1.0},
            "leave rho=None",
        ),
    ],
)
def test_refusals_name_the_parameter(data, estimator, grid, kwargs, match):
    X, y, public = data
    search = PrivateHyperparameterSearch(estimator, grid, epsilon=1.0, **kwargs)
    classifier = "classes" in estimator.get_params()
    yy = (y > 0).astype(int) if classifier else y
    semi = "public_ridge" in estimator.get_params()  # takes public_mask
    with pytest.raises(ValueError, match=match):
        search.fit(X, yy, **({"public_mask": public} if semi else {}))
    # No regressor is asked for a label set.
    if "classes" not in estimator.get_params():
        with pytest.raises(ValueError) as err:
            clone(search).fit(X, y)
        assert "classes" not in str(err.value)


@pytest.mark.parametrize("in_pipeline", [False, True], ids=["estimator", "pipeline"])
def test_a_frame_of_sparse_columns_is_planned_as_the_sparse_matrix_it_fits(
    data, in_pipeline
):
    # scikit-learn's validation makes a DataFrame of SparseDtype columns
    # only a sparse matrix, on which HeavyTailDPRegressor skips its private
    # column scales: the search plans its candidates on that layout, as
    # they (and a private pipeline's steps) fit it.
    import scipy.sparse as sp

    from sklearn_dpfair.pipeline import make_private_pipeline

    pd = pytest.importorskip("pandas")
    X, y, _ = data
    csr = sp.csr_matrix(X)
    frame = pd.DataFrame.sparse.from_spmatrix(csr, columns=["a", "b", "c"])
    estimator = HeavyTailDPRegressor(max_iter=5)
    key = "alpha"
    if in_pipeline:
        estimator, key = make_private_pipeline(estimator), "heavytaildpregressor__alpha"

    def search():
        return PrivateHyperparameterSearch(
            estimator, {key: [0.1, 1.0]}, epsilon=2.0, score_bound=10.0,
            n_runs=1, random_state=0,
        )

    on_csr, on_frame = _fit(search(), csr, y), _fit(search(), frame, y)
    assert on_frame.dp_event_ == on_csr.dp_event_
    plan = search().privacy_plan(N, D, n_train=on_frame.n_train_, sparse=True)
    assert on_frame.dp_event_ == plan.dp_event
