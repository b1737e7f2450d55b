# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A search's plan of each candidate is the event the candidate's fit records."""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.datasets import make_classification

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    HeavyTailDPRegressor,
    PrivateHyperparameterSearch,
    SemiDPLinearRegression,
)
from sklearn_dpfair.model_selection._planning import plan_candidate

N_SAMPLES = 600
CONSTRAINTS = ["demographic_parity", "equalized_odds", "equal_opportunity"]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=N_SAMPLES, n_features=5, random_state=0)
    return X, y, (X[:, 0] > 0).astype(int)


def _fermi(**params):
    return DPFERMIClassifier(classes=[0, 1], groups=[0, 1], **params)


# Every estimator configuration the search plans: (estimator, routes groups).
CONFIGURATIONS = {
    "dp-sgd full batch": (
        DPLogisticRegression(classes=[0, 1], batch_size="full", max_iter=2),
        False,
    ),
    "dp-sgd subsampled": (
        DPLogisticRegression(classes=[0, 1], batch_size=128, max_iter=1),
        False,
    ),
    "fermi no fairness term": (_fermi(fairness_weight=0.0, max_iter=1), True),
    "fermi weighted": (_fermi(fairness_weight=2.0, max_iter=2, batch_size=256), True),
    "fermi no groups": (_fermi(fairness_weight=2.0, max_iter=1), False),
    "fermi public marginals": (
        _fermi(
            fairness_weight=2.0, max_iter=1, group_marginals=np.array([0.5, 0.5])
        ),
        True,
    ),
    "fermi declared noise": (
        _fermi(
            max_iter=2,
            batch_size=10_000,
            disparity_bound=0.1,
            marginal_noise_multiplier=30.0,
            selection_noise_multiplier=25.0,
        ),
        True,
    ),
    # disparity_bound gives a fairness term even at fairness_weight=0.
    "fermi bound, weight 0": (
        _fermi(fairness_weight=0.0, max_iter=3, batch_size=10_000, disparity_bound=0.1),
        True,
    ),
    **{
        f"fermi bound {c} T={t}": (
            _fermi(constraint=c, max_iter=t, batch_size=10_000, disparity_bound=0.1),
            True,
        )
        for c in CONSTRAINTS
        for t in (1, 2, 3)
    },
    "fermi bound subsampled": (
        _fermi(max_iter=2, batch_size=200, disparity_bound=0.1), True
    ),
    # Any solver with an add/remove plan: Frank-Wolfe with public bounds.
    "frank-wolfe": (
        DPLogisticRegression(
            classes=[0, 1], solver="dp-frank-wolfe", l1_radius=2.0,
            feature_inf_bound=3.0, fw_steps=4,
        ),
        False,
    ),
}


def _search(estimator, routed, **kwargs):
    estimator = clone(estimator)
    if routed:
        estimator.set_fit_request(sensitive_features=True)
    return PrivateHyperparameterSearch(
        estimator, {"alpha": [0.0, 1e-3]}, epsilon=3.0, n_runs=2, random_state=0,
        **kwargs,
    )


def _fit(est, data, routed):
    X, y, groups = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **({"sensitive_features": groups} if routed else {}))


@pytest.mark.parametrize("name", list(CONFIGURATIONS))
def test_planned_event_is_the_fitted_event(data, name):
    estimator, routed = CONFIGURATIONS[name]
    # A private search over the configuration runs: each of its runs checks
    # the fitted dp_event_ against the plan (and raises on a difference).
    with sklearn.config_context(enable_metadata_routing=True):
        search = _search(estimator, routed)
        _fit(search, data, routed)
    n_train = search.n_train_
    n_groups = 2 if routed else 1
    t = search.run_epsilon_
    counts = {"n_groups": n_groups}
    planned = plan_candidate(
        search.best_estimator_, n_train, 5, counts, delta=1e-5
    ).event(t, 1e-5)
    assert search.best_estimator_.dp_event_ == planned
    assert search.epsilon_ <= 3.0
    # The same at another budget, fitted outside the search on all rows.
    est = clone(estimator).set_params(epsilon=1.3, delta=1e-5, accountant="rdp")
    with sklearn.config_context(enable_metadata_routing=True):
        _fit(est, data, routed)
    plan = plan_candidate(est, N_SAMPLES, 5, counts, delta=1e-5)
    assert est.dp_event_ == plan.event(1.3, 1e-5)


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_search_over_the_disparity_bound(data, constraint):
    X, y, groups = data
    estimator = _fermi(
        constraint=constraint, max_iter=2, batch_size=256, disparity_bound=0.1,
        small_budget="fit",  # the training event without the constant choice
    )
    with sklearn.config_context(enable_metadata_routing=True):
        estimator.set_fit_request(sensitive_features=True)
        search = PrivateHyperparameterSearch(
            estimator,
            {"disparity_bound": [0.05, 0.1]},
            epsilon=3.0,
            random_state=0,
            scoring="accuracy-dp-gap",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y, sensitive_features=groups)
    best = search.best_estimator_
    # Both bounds cost the same: one training event (with its selection
    # release) and the score.
    training, score = search.dp_event_.event.events
    assert training == best.dp_event_
    hist, sgda, selection = training.events
    assert selection.noise_multiplier == best.selection_noise_multiplier_ > 0
    assert sgda.count == best.t_
    assert search.epsilon_ <= 3.0


@pytest.mark.parametrize(
    "estimator, error, match",
    [
        (
            # The step count would be read from the data's feature bound.
            DPLogisticRegression(
                classes=[0, 1], solver="dp-frank-wolfe", l1_radius=1.0
            ),
            ValueError,
            "cannot plan DPLogisticRegression before reading the data",
        ),
        (
            DPLogisticRegression(classes=[0, 1], noise_multiplier=2.0),
            ValueError,
            "noise_multiplier=None",
        ),
        # A regressor's private score needs its public error bound.
        (SemiDPLinearRegression(), ValueError, "score_bound is required"),
        (HeavyTailDPRegressor(), ValueError, "score_bound is required"),
    ],
)
def test_configurations_it_cannot_plan_are_refused_before_the_data(
    estimator, error, match
):
    search = PrivateHyperparameterSearch(estimator, {"tol": [1e-4]}, epsilon=1.0)
    # Refused when planned, before any candidate is fitted.
    with pytest.raises(error, match=match):
        search.fit(np.zeros((40, 2)), np.arange(40) % 2)


def test_search_over_a_private_pipeline_on_raw_columns():
    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPStandardScaler

    X, y = make_classification(n_samples=3000, n_features=4, random_state=0)
    X = X * [1.0, 100.0, 1e4, 1e-3] + [500.0, 0.0, 1e5, 0.0]
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=[(490, 510), (-500, 500), (5e4, 1.5e5), (-0.01, 0.01)]),
        DPLogisticRegression(classes=[0, 1], max_iter=5),
    )
    search = PrivateHyperparameterSearch(
        pipe, {"dplogisticregression__alpha": [0.0, 1e-3]}, epsilon=2.0,
        n_runs=2, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.epsilon_ <= 2.0
    best = search.best_estimator_
    # The selected pipeline's fit is the planned one (checked by each run too).
    n_train = search.n_train_
    plan = plan_candidate(best, n_train, 4, {}, delta=1e-5)
    assert best.dp_event_ == plan.event(search.run_epsilon_, 1e-5)
    assert search.score(X, y) > 0.8


@pytest.mark.parametrize("routed", [False, True])
def test_search_over_a_pipeline_whose_fermi_step_gets_no_groups(data, routed):
    # A final DP-FERMI step that declares its groups but receives no
    # sensitive_features (none passed, or routed to the search's score
    # alone) fits one group: the search plans each run that way.
    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPStandardScaler

    X, y, groups = data
    scoring = {"scoring": "accuracy-dp-gap", "groups": [0, 1]} if routed else {}
    with sklearn.config_context(enable_metadata_routing=True):
        # Full batches: a subsampled step's nested calibrations through the
        # pipeline's budget split take dp-accounting's RDP seconds each.
        fermi = _fermi(max_iter=2, batch_size=10_000)
        if routed:
            fermi.set_fit_request(sensitive_features=False)
        pipe = make_private_pipeline(DPStandardScaler(bounds=[(-4, 4)] * 5), fermi)
        search = PrivateHyperparameterSearch(
            pipe, {"dpfermiclassifier__fairness_weight": [1.0, 4.0]}, epsilon=2.0,
            n_runs=2, random_state=0, **scoring,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y, **({"sensitive_features": groups} if routed else {}))
    assert search.epsilon_ <= 2.0
    best = search.best_estimator_
    plan = plan_candidate(best, search.n_train_, 5, {"n_groups": 1}, delta=1e-5)
    assert best.dp_event_ == plan.event(search.run_epsilon_, 1e-5)
    # The search's own plan counts the groups the final step sees.
    one = search.privacy_plan(N_SAMPLES, 5, n_groups=1)
    assert one.dp_event != search.privacy_plan(N_SAMPLES, 5, n_groups=2).dp_event


def test_search_over_a_private_pipeline_selecting_frame_columns():
    # Declared categories and bounds per selected column: their widths come
    # from the frame's names (by name) and dtypes (by dtype), which the
    # candidates are planned with; without them every block was planned at
    # one column and refused ("categories has 2 entries for 1 features").
    import pandas as pd
    from sklearn.compose import make_column_selector, make_column_transformer

    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPOneHotEncoder, DPStandardScaler

    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame(
        {
            "age": rng.normal(40, 12, n),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(["a", "b", "c"], n),
            "hours": rng.normal(40, 10, n),
        }
    )
    y = ((frame["age"] - 40) / 12 + (frame["job"] == "a") > 0.3).astype(int)
    pipe = make_private_pipeline(
        make_column_transformer(
            (DPOneHotEncoder(categories=[["F", "M"], ["a", "b", "c"]]), ["sex", "job"]),
            (
                DPStandardScaler(bounds=[(0, 100), (0, 100)]),
                make_column_selector(dtype_include=np.number),
            ),
        ),
        DPLogisticRegression(classes=[0, 1], max_iter=5),
    )
    search = PrivateHyperparameterSearch(
        pipe, {"dplogisticregression__alpha": [0.0, 1e-3]}, epsilon=2.0,
        n_runs=2, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(frame, y)
    drawn = {"feature_names": frame.iloc[:0], "n_train": search.n_train_}
    planned = search.privacy_plan(n, 4, **drawn)
    table = search.candidate_plans(n, 4, **drawn)
    assert planned.dp_event == search.dp_event_
    assert search.epsilon_ <= 2.0
    assert list(table["mechanism"]) == list(search.candidate_plans_["mechanism"])
    assert search.score(frame, y) > 0.7
    # The pipeline's own plan: a frame resolves the dtype selection; names
    # alone leave it unresolved (not guessed from object dtypes), but the
    # scaler's two declared bounds pairs fix its width (its fit refuses any
    # other).
    n_train = search.n_train_
    best = search.best_estimator_
    for names, width in ((frame.iloc[:0], 2), (list(frame.columns), 2)):
        plan = best.privacy_plan(n_train, 4, feature_names=names)
        assert plan.dp_event == best.dp_event_
        scaler = dict(plan.steps)["columntransformer__dpstandardscaler"]
        assert str(dict(scaler.public)["n_features"]).startswith(str(width))


def test_a_candidate_spending_delta_outside_its_event_is_refused():
    # A private category discovery's threshold spends delta outside the
    # pipeline's event; every run of the selection would spend it again,
    # unaccounted (the search's record said (1.99, 1e-5) while each run
    # spent 3.75e-7 more). Declared categories (here, discovered once on
    # their own budget) spend none.
    import pandas as pd

    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPOneHotEncoder

    rng = np.random.default_rng(1)
    n = 3000
    frame = pd.DataFrame({"job": rng.choice(["a", "b", "c"], n)})
    y = ((frame["job"] == "a") ^ (rng.random(n) < 0.2)).astype(int)

    def search(encoder):
        pipe = make_private_pipeline(
            encoder, DPLogisticRegression(classes=[0, 1], max_iter=5)
        )
        return PrivateHyperparameterSearch(
            pipe, {"dplogisticregression__alpha": [0.0, 1e-3]}, epsilon=2.0,
            n_runs=2, random_state=0,
        )

    with pytest.raises(ValueError, match="spends delta outside its privacy event"):
        search(DPOneHotEncoder()).fit(frame, y)
    with pytest.raises(ValueError, match="spends delta outside its privacy event"):
        search(DPOneHotEncoder()).privacy_plan(n, 1)
    found = DPOneHotEncoder(epsilon=0.5, random_state=0).fit(frame)
    declared = search(DPOneHotEncoder(categories=found.categories_))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        declared.fit(frame, y)
    assert declared.epsilon_ <= 2.0


def test_the_search_itself_has_a_plan(data):
    X, y, groups = data
    estimator = DPLogisticRegression(classes=[0, 1], max_iter=2)
    search = PrivateHyperparameterSearch(
        estimator, {"alpha": [0.0, 1e-3]}, epsilon=2.0, n_runs=2, random_state=0
    )
    before = search.privacy_plan(N_SAMPLES, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    # The fit drew its split before reading a row: its record is the plan
    # at the drawn training size, and the epsilon planned at the expected
    # size is the same target.
    plan = search.privacy_plan(N_SAMPLES, 5, n_train=search.n_train_)
    assert plan.dp_event == search.dp_event_
    assert plan.epsilon == search.epsilon_ <= 2.0
    assert before.epsilon == pytest.approx(search.epsilon_, rel=1e-3)
    assert search.n_train_ + search.n_validation_ == N_SAMPLES


def test_replace_one_candidates_give_a_replace_one_search(data):
    X, y, _ = data
    # Output perturbation is private under replace-one only: the selection
    # (Papernot and Steinke's theorem holds for any neighbouring relation)
    # is then stated under replace-one, its score's sensitivity with it.
    estimator = DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", feature_norm_bound=5.0
    )
    search = PrivateHyperparameterSearch(
        estimator, {"alpha": [0.1, 1.0]}, epsilon=2.0, n_runs=2, random_state=0
    )
    plan = search.privacy_plan(N_SAMPLES, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.adjacency_ == plan.adjacency == "replace_one"
    assert search.best_estimator_.adjacency_ == "replace_one"
    assert plan.dp_event == search.dp_event_
    assert search.epsilon_ <= 2.0


@pytest.mark.parametrize(
    "estimator, grid",
    [
        (
            DPLogisticRegression(
                classes=[0, 1], max_iter=2, batch_sampling="balls_and_bins",
                batch_size=100,
            ),
            {"clip_norm": [0.5, 2.0]},
        ),
        (
            DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size=100),
            {"batch_sampling": ["poisson", "balls_and_bins"]},
        ),
    ],
)
def test_balls_and_bins_candidates_are_refused_before_the_data(data, estimator, grid):
    # The selection is accounted with RDP (through RepeatAndSelectDpEvent),
    # which has no reading of a random allocation: the search used to fail
    # only when it accounted itself, with dp-accounting's message.
    X, y, _ = data
    search = PrivateHyperparameterSearch(estimator, grid, epsilon=2.0, random_state=0)
    with pytest.raises(ValueError, match="batch_sampling='balls_and_bins'.*'poisson'"):
        search.fit(X, y)
    with pytest.raises(ValueError, match="cannot read batch_sampling"):
        plan_candidate(
            clone(estimator).set_params(batch_sampling="balls_and_bins"),
            400, 5, {}, delta=1e-5,
        )
