# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivateHyperparameterSearch: one accounted guarantee for the whole search."""

import warnings

import numpy as np
import pytest
import sklearn
from dp_accounting.dp_event import ComposedDpEvent, RepeatAndSelectDpEvent
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import get_tags

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    FERMIClassifier,
    HeavyTailDPRegressor,
    PrivateHyperparameterSearch,
    PrivatePipeline,
    privacy_report,
)
from sklearn_dpfair.model_selection._scoring import (
    noisy_score,
    score_counts,
    score_sensitivity,
)
from sklearn_dpfair.model_selection._search import draw_split
from sklearn_dpfair.privacy import PrivacyLedger
from sklearn_dpfair.privacy._accounting import epsilon_of

# Fitted attributes a search may expose; anything else would be a release
# the analysis does not cover (no per-run scores, no number of runs).
_RELEASED = {
    "best_estimator_",
    "best_params_",
    "best_score_",
    "run_epsilon_",
    "score_noise_multiplier_",
    "n_candidates_",
    "n_train_",  # public: the drawn split's sizes
    "n_validation_",
    "candidate_plans_",  # public: the candidates' plans at the per-run budget
    "classes_",
    "n_features_in_",
    "epsilon_",
    "delta_",
    "dp_event_",
    "noise_multiplier_",
    "adjacency_",
    "privacy_caveats_",
    "privacy_record_",
}


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=1200, n_features=5, random_state=0)


def _search(**kwargs):
    params = dict(epsilon=2.0, random_state=0)
    params.update(kwargs)
    estimator = params.pop(
        "estimator", DPLogisticRegression(classes=[0, 1], max_iter=2)
    )
    grid = params.pop("param_grid", {"clip_norm": [0.5, 2.0]})
    return PrivateHyperparameterSearch(estimator, grid, **params)


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return _search().fit(X, y)


def test_epsilon_recomputes_from_the_record(data, fitted):
    X, y = data
    search = fitted
    assert isinstance(search.dp_event_, RepeatAndSelectDpEvent)
    assert search.epsilon_ <= 2.0
    assert search.epsilon_ >= 0.99 * 2.0  # the calibration spends the budget
    assert search.privacy_record_.recompute_epsilon() == search.epsilon_
    assert epsilon_of(search.dp_event_, search.delta_, "rdp") == search.epsilon_
    assert search.adjacency_ == "add_remove"
    # Every run composes the candidate's training event and the score.
    run = search.dp_event_.event
    assert isinstance(run, ComposedDpEvent)
    assert run.events[0] == search.best_estimator_.dp_event_
    assert search.best_estimator_.epsilon_ <= search.run_epsilon_ * (1 + 1e-9)
    assert search.best_params_ in [{"clip_norm": 0.5}, {"clip_norm": 2.0}]
    assert search.predict(X).shape == (X.shape[0],)
    assert search.predict_proba(X).shape == (X.shape[0], 2)
    assert 0.5 < search.score(X, y) <= 1.0


def test_candidates_of_different_cost_compose_each_distinct_training_event(data):
    X, y = data
    # Full-batch candidates keep the accountant fast (no subsampling).
    search = _search(
        estimator=DPLogisticRegression(classes=[0, 1], batch_size="full"),
        param_grid={"max_iter": [1, 2], "clip_norm": [1.0, 2.0]},
    )
    search.fit(X, y)
    parts = search.dp_event_.event.events
    assert len(parts) == 3  # two distinct training events and the score
    assert search.best_estimator_.dp_event_ in parts[:2]
    assert search.epsilon_ <= 2.0


def test_ledger_records_the_whole_search_once(data):
    X, y = data
    ledger = PrivacyLedger()
    search = _search(accountant=ledger).fit(X, y)
    assert len(ledger) == 1
    assert ledger.total_epsilon() == pytest.approx(search.epsilon_)
    assert "PrivateHyperparameterSearch" in ledger.summary()
    # A ledger held by the estimator gets the same single entry.
    inner = PrivacyLedger()
    estimator = DPLogisticRegression(classes=[0, 1], max_iter=2, accountant=inner)
    _search(estimator=estimator).fit(X, y)
    assert len(inner) == 1


def test_privacy_report_covers_the_whole_search(data, fitted):
    X, y = data
    report = privacy_report(fitted, X, y, recompute_epsilon=True)
    assert "covers the whole search" in report.to_text()
    assert report.privacy["epsilon"] == fitted.epsilon_
    assert report.privacy["epsilon_recomputed"] == fitted.epsilon_


def test_no_noiseless_private_score_escapes(data, fitted):
    X, y = data
    # Neighbouring datasets: the second lacks the last row.
    neighbour = _search().fit(X[:-1], y[:-1])
    for search, n in ((fitted, len(y)), (neighbour, len(y) - 1)):
        released = {
            k for k in vars(search) if k.endswith("_") and not k.startswith("_")
        }
        assert released <= _RELEASED
        assert not hasattr(search, "cv_results_")
        # The released score is a noisy count ratio, never a noiseless one:
        # a noiseless accuracy on the m validation rows lies on k / m.
        m = search.n_validation_
        scaled = search.best_score_ * m
        assert abs(scaled - round(scaled)) > 1e-6
        assert search.score_noise_multiplier_ > 1.0


def test_score_counts_have_the_stated_sensitivity():
    # Neighbouring validation sets (one row added), whatever the row holds.
    rng = np.random.default_rng(0)
    largest = {"accuracy": 0.0, "accuracy-dp-gap": 0.0}
    for scoring in ("accuracy", "accuracy-dp-gap"):
        for _ in range(200):
            m = int(rng.integers(1, 30))
            y_true, y_pred = rng.integers(0, 2, m + 1), rng.integers(0, 2, m + 1)
            codes = rng.integers(-1, 3, m + 1)
            kw = dict(scoring=scoring, n_groups=3, positive_label=1)
            full = score_counts(y_true, y_pred, group_codes=codes, **kw)
            less = score_counts(y_true[:m], y_pred[:m], group_codes=codes[:m], **kw)
            assert np.linalg.norm(full - less) <= score_sensitivity(scoring) + 1e-12
            # Replace-one: the last row by another whatever it holds.
            other = score_counts(
                np.append(y_true[:m], 1 - y_true[m]),
                y_pred,
                group_codes=np.append(codes[:m], (codes[m] + 2) % 4 - 1),
                **kw,
            )
            change = np.linalg.norm(full - other)
            assert change <= score_sensitivity(scoring, "replace_one") + 1e-12
            largest[scoring] = max(largest[scoring], change)
    # The replace-one bound is reached (sqrt(3) would be too small).
    assert largest == {"accuracy": 1.0, "accuracy-dp-gap": pytest.approx(5**0.5)}


def test_noisy_score_is_noisy_and_post_processed():
    y = np.array([0, 1] * 50)
    rng = np.random.default_rng(0)
    scores = [
        noisy_score(y, y, scoring="accuracy", noise_multiplier=5.0, rng=rng)
        for _ in range(50)
    ]
    assert len(set(scores)) > 10  # noisy (some clipped to 1.0)
    assert all(0.0 <= s <= 1.0 for s in scores)


@pytest.mark.parametrize(
    "estimator, error",
    [
        (LogisticRegression(), TypeError),
        (FERMIClassifier(), TypeError),
        (DPLogisticRegression(classes=[0, 1], noise_multiplier=1.0), ValueError),
        (DPLogisticRegression(), ValueError),  # classes not declared
    ],
)
def test_non_private_or_unplannable_estimators_are_refused(data, estimator, error):
    X, y = data
    with pytest.raises(error):
        _search(estimator=estimator, param_grid={"alpha": [0.0, 0.1]}).fit(X, y)


@pytest.mark.parametrize("grid", [{}, [], [{}]])
def test_empty_grid_is_refused(data, grid):
    X, y = data
    with pytest.raises(ValueError, match="empty"):
        _search(param_grid=grid).fit(X, y)


def test_grid_may_not_set_the_budget(data):
    X, y = data
    with pytest.raises(ValueError, match="sets itself"):
        _search(param_grid={"epsilon": [1.0, 2.0]}).fit(X, y)


def test_epsilon_too_small_for_the_candidates(data):
    X, y = data
    with pytest.raises(ValueError, match="below the cost of the random selection"):
        _search(epsilon=1e-3).fit(X, y)
    # The candidates' own calibration fails at every usable per-run budget:
    # their private group marginals alone would spend more than the search.
    estimator = DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=1, marginal_noise_multiplier=2.0
    )
    with sklearn.config_context(enable_metadata_routing=True):
        estimator.set_fit_request(sensitive_features=True)
        search = _search(
            estimator=estimator, param_grid={"fairness_weight": [1.0]}, epsilon=1.0
        )
        with pytest.raises(ValueError, match="too small for this search"):
            search.fit(X, y, sensitive_features=(X[:, 0] > 0).astype(int))


def _full_batch_search(**kwargs):
    # Full-batch candidates calibrate in milliseconds.
    estimator = DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full")
    return _search(estimator=estimator, **kwargs)


def test_a_huge_budget_floors_the_scores_noise(data):
    # From epsilon ~2.5e280 the scores' multiplier 1 / sqrt(2 share rho) fell
    # below what dp-accounting's RDP reads (1e-140): the search failed on a
    # noise multiplier no parameter sets. It stops at the estimators' floor.
    X, y = data
    for epsilon in (1e281, 1e308):
        table = _full_batch_search(epsilon=epsilon).candidate_plans(1200, 5)
        assert table["score_noise_multiplier"].tolist() == [0.1, 0.1]
    search = _full_batch_search(epsilon=1e300).fit(X, y)
    assert search.score_noise_multiplier_ == 0.1
    assert search.epsilon_ <= 1e300
    # An ordinary budget's scores are noisier than the floor: unchanged.
    table = _full_batch_search().candidate_plans(1200, 5)
    assert table["score_noise_multiplier"][0] > 1.0


def test_score_budget_share_is_a_fraction_whose_extremes_are_named():
    for share in (1.5, 1e30):
        with pytest.raises(ValueError, match="'score_budget_share' parameter"):
            _full_batch_search(score_budget_share=share).privacy_plan(1200, 5)
    # A float32 share made 2 share rho float32, which underflowed to 0
    # (ZeroDivisionError).
    search = _full_batch_search(score_budget_share=np.float32(1e-45))
    assert search.privacy_plan(1200, 5).epsilon <= 2.0
    # A noise multiplier the accountant cannot square, named by its cause.
    with pytest.raises(ValueError, match="score_budget_share=1e-320"):
        _full_batch_search(score_budget_share=1e-320).privacy_plan(1200, 5)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        # numpy's logarithmic series refused 1 - gamma == 1 once drawn.
        (dict(n_runs=1e15), r"n_runs=1e\+15 with runs_distribution=0"),
        (dict(n_runs=1e30, runs_distribution="geometric"), r"n_runs=1e\+30"),
        (dict(runs_distribution=1e300), r"runs_distribution=1e\+300"),
    ],
)
def test_runs_that_cannot_be_drawn_as_accounted_are_refused(data, kwargs, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        _full_batch_search(**kwargs).privacy_plan(1200, 5)
    with pytest.raises(ValueError, match=match):
        _full_batch_search(**kwargs).fit(X, y)


def test_tiny_run_shapes_and_deltas_are_planned_and_fitted(data):
    # runs_distribution=1e-320 underflowed the mean's denominator (a
    # ZeroDivisionError once fitted); delta=1e-320 made log(1 / delta)
    # infinite in the scores' noise (a NaN multiplier).
    X, y = data
    for kwargs in (dict(runs_distribution=1e-320), dict(delta=1e-320)):
        assert _full_batch_search(**kwargs).privacy_plan(1200, 5).epsilon <= 2.0
    search = _full_batch_search(runs_distribution=1e-320, delta=1e-320, n_runs=2)
    search.fit(X, y)
    assert search.epsilon_ <= 2.0 and search.delta_ == 1e-320


def test_fermi_with_routed_sensitive_features(data):
    X, y = data
    sensitive = (X[:, 0] > 0).astype(int)
    estimator = DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, batch_size=256
    )
    with sklearn.config_context(enable_metadata_routing=True):
        estimator = estimator.set_fit_request(sensitive_features=True)
        search = _search(
            estimator=estimator,
            param_grid={"fairness_weight": [2.0, 4.0]},
            scoring="accuracy-dp-gap",
            epsilon=3.0,
        ).fit(X, y, sensitive_features=sensitive)
    assert search.best_params_["fairness_weight"] in (2.0, 4.0)
    assert list(search.best_estimator_.groups_) == [0, 1]
    assert search.epsilon_ <= 3.0
    # Both weights have the same cost: one training event and the score.
    assert len(search.dp_event_.event.events) == 2
    assert search.dp_event_.event.events[0] == search.best_estimator_.dp_event_


@pytest.mark.parametrize("declared", ["search", "final step", "both"])
def test_fair_private_pipeline_takes_the_groups_declared_anywhere(data, declared):
    # The group set may be declared in the search or on the pipeline's final
    # step; either way every run is planned with it (the fit must not count
    # the groups of the training split).
    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPStandardScaler

    X, y = data
    sensitive = np.where(X[:, 0] > 0, "F", "M")
    on_final = declared in ("final step", "both")
    fermi = DPFERMIClassifier(
        classes=[0, 1], groups=["F", "M"] if on_final else None, max_iter=2
    )
    pipe = make_private_pipeline(DPStandardScaler(bounds=(-5.0, 5.0)), fermi)
    search = _search(
        estimator=pipe,
        param_grid={"dpfermiclassifier__clip_norm": [0.5, 2.0]},
        groups=None if declared == "final step" else ["F", "M"],
        scoring="accuracy-dp-gap",
    )
    plan = search.privacy_plan(X.shape[0], X.shape[1], n_groups=2)
    search.fit(X, y, sensitive_features=sensitive)
    assert search.dp_event_ == plan.dp_event
    assert list(search.best_estimator_[-1].groups_) == ["F", "M"]


@pytest.mark.parametrize("routing", [False, True])
def test_fair_scoring_of_an_estimator_that_takes_no_groups(data, routing):
    # The search reads sensitive_features for its score itself; a classifier
    # whose fit does not take them is trained without them.
    X, y = data
    sensitive = (X[:, 0] > 0).astype(int)
    with sklearn.config_context(enable_metadata_routing=routing):
        search = _search(
            groups=[0, 1], scoring="accuracy-dp-gap", gap_penalty=1.0
        ).fit(X, y, sensitive_features=sensitive)
    plan = _search(groups=[0, 1], scoring="accuracy-dp-gap").privacy_plan(
        X.shape[0], X.shape[1], n_groups=2, n_train=search.n_train_
    )
    assert search.dp_event_ == plan.dp_event
    assert search.best_params_["clip_norm"] in (0.5, 2.0)
    # A FERMI classifier still receives them.
    with sklearn.config_context(enable_metadata_routing=routing):
        fermi = DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=1)
        if routing:
            fermi.set_fit_request(sensitive_features=True)
        fair = _search(
            estimator=fermi, param_grid={"fairness_weight": [1.0]},
            scoring="accuracy-dp-gap",
        ).fit(X, y, sensitive_features=sensitive)
    assert list(fair.best_estimator_.groups_) == [0, 1]


def test_fair_scoring_needs_sensitive_features(data):
    X, y = data
    estimator = DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=1)
    with pytest.raises(ValueError, match="sensitive_features"):
        _search(
            estimator=estimator,
            param_grid={"fairness_weight": [1.0]},
            scoring="accuracy-dp-gap",
        ).fit(X, y)


def test_in_a_pipeline_with_public_preprocessing(data):
    X, y = data
    pipe = Pipeline([("public", FunctionTransformer(np.tanh)), ("search", _search())])
    pipe.fit(X, y)
    assert pipe.predict(X).shape == (X.shape[0],)
    assert pipe[-1].epsilon_ <= 2.0
    report = privacy_report(pipe)
    assert report.privacy["epsilon"] == pipe[-1].epsilon_


def test_get_set_params_and_clone():
    search = _search()
    assert search.get_params()["estimator__max_iter"] == 2
    search.set_params(estimator__alpha=0.1, epsilon=1.0)
    assert search.estimator.alpha == 0.1
    twin = clone(search)
    assert twin.get_params()["estimator__alpha"] == 0.1
    assert twin.epsilon == 1.0


def test_fit_does_not_mutate_params(data):
    X, y = data
    search = _search()
    before = search.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    after = search.get_params()
    assert before.keys() == after.keys()
    assert search.estimator.epsilon == 1.0  # the default, untouched


def test_infinite_epsilon_and_pld_ledgers_are_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="'epsilon' parameter"):
        _search(epsilon=np.inf).fit(X, y)
    with pytest.raises(ValueError, match="RDP accountant"):
        _search(accountant=PrivacyLedger(kind="pld")).fit(X, y)


def test_pipeline_routes_sensitive_features_to_a_fair_search(data):
    X, y = data
    sensitive = (X[:, 0] > 0).astype(int)
    with sklearn.config_context(enable_metadata_routing=True):
        # The group set is declared in the search, not in the estimator.
        estimator = DPFERMIClassifier(classes=[0, 1], max_iter=2, batch_size=256)
        estimator.set_fit_request(sensitive_features=True)
        search = _search(
            estimator=estimator,
            param_grid={"fairness_weight": [2.0, 4.0]},
            scoring="accuracy-dp-gap",
            groups=[0, 1],
            epsilon=3.0,
        )
        pipe = Pipeline([("public", FunctionTransformer(np.tanh)), ("search", search)])
        with warnings.catch_warnings():
            warnings.simplefilter("error", category=UserWarning)
            pipe.fit(X, y, sensitive_features=sensitive)
    assert list(pipe[-1].best_estimator_.groups_) == [0, 1]
    assert pipe[-1].best_estimator_.privacy_caveats_ == []


def test_run_warnings_do_not_count_the_runs(data):
    X, y = data
    # delta >= 1/n_train makes every candidate fit warn; many runs, one warning.
    search = _search(
        estimator=DPLogisticRegression(classes=[0, 1], batch_size="full"),
        delta=0.01,
        n_runs=6.0,
        runs_distribution="geometric",
    )
    with pytest.warns(UserWarning) as record:
        search.fit(X, y)
    messages = [str(w.message) for w in record if "delta=" in str(w.message)]
    assert len(messages) == 1
    assert record[0].filename == __file__


def test_run_progress_lines_are_off(data, capsys):
    # Each run's lines would count the runs and show the noisy iterates of
    # the runs not selected; the guarantee releases the selected run only.
    X, y = data
    loud = DPLogisticRegression(classes=[0, 1], max_iter=2, verbose=1)
    for estimator, grid in (
        (loud, {"clip_norm": [0.5, 2.0]}),
        (PrivatePipeline([("clf", loud)]), {"clf__clip_norm": [0.5, 2.0]}),
    ):
        search = _search(estimator=estimator, param_grid=grid, n_runs=4.0)
        search.fit(X, y)
        assert capsys.readouterr().out == ""
    # The candidate itself is untouched.
    assert search.estimator.get_params()["clf__verbose"] == 1


def test_a_drift_between_plan_and_fit_releases_nothing(data, monkeypatch):
    from sklearn_dpfair.model_selection import _planning
    from sklearn_dpfair.privacy._accounting import gaussian_event

    X, y = data
    # A plan that disagrees with what the estimator records must stop the
    # search before anything is set on it.
    monkeypatch.setattr(
        _planning.CandidatePlan, "event", lambda self, t, delta: gaussian_event(5.0 / t)
    )
    search = _search(
        estimator=DPLogisticRegression(classes=[0, 1], batch_size="full")
    )
    with pytest.raises(RuntimeError, match="nothing is released"):
        search.fit(X, y)
    assert not hasattr(search, "best_estimator_")
    assert not hasattr(search, "best_score_")


def test_candidates_are_calibrated_with_the_rdp_accountant(data):
    X, y = data
    estimator = DPLogisticRegression(
        classes=[0, 1], batch_size="full", accountant="pld"
    )
    search = _search(estimator=estimator).fit(X, y)
    assert search.best_estimator_.privacy_record_.accountant == "rdp"
    assert search.estimator.accountant == "pld"  # the parameter is untouched


def test_an_added_record_changes_one_part_of_the_split_only():
    # Each private row is held out by its own draw: with the same generator,
    # appending a record leaves every other row in its part (a split of
    # fixed sizes would push a row across when the record joins a part).
    public = np.array([0, 3])
    for seed in range(20):
        val, train = draw_split(50, public, 0.2, np.random.default_rng(seed))
        val2, train2 = draw_split(51, public, 0.2, np.random.default_rng(seed))
        assert np.array_equal(val2[val2 < 50], val)
        assert np.array_equal(train2[train2 < 50], train)
        assert (50 in val2) != (50 in train2)
        assert set(public) <= set(train)
    # The fitted sizes are the drawn ones, public, and sum to n.
    X, y = np.random.default_rng(0).normal(size=(400, 3)), np.arange(400) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = _search().fit(X, y)
    assert search.n_train_ + search.n_validation_ == 400


def test_the_expected_split_counts_the_private_rows_only():
    # Public rows are all trained on: the expected held-out count is a share
    # of the private rows, and the plan without n_train is at that size.
    search = _search(validation_fraction=0.2)
    assert search._split_sizes(3000, 300) == (540, 2460)
    assert search._split_sizes(10, 6) == (1, 9)
    drawn = [
        len(draw_split(3000, np.arange(300), 0.2, np.random.default_rng(seed))[1])
        for seed in range(50)
    ]
    assert abs(np.mean(drawn) - 2460) < 10


def test_a_refit_drops_the_attributes_of_the_previous_fit(data, monkeypatch):
    # classes_ and feature_names_in_ are set by some fits only: a refit that
    # does not set them must not leave the previous fit's.
    pd = pytest.importorskip("pandas")
    X, y = data
    search = _search().fit(pd.DataFrame(X, columns=list("abcde")), y)
    assert list(search.feature_names_in_) == list("abcde")
    search.fit(X, y)
    assert not hasattr(search, "feature_names_in_")
    search.set_params(
        estimator=HeavyTailDPRegressor(max_iter=2),
        param_grid={"alpha": [0.0, 0.1]},
        score_bound=5.0,
    )
    search.fit(pd.DataFrame(X, columns=list("abcde")), X[:, 0])
    assert not hasattr(search, "classes_")
    # A refit that fails once the fit is done keeps the previous fit whole.
    before = dict(vars(search))

    def fail(self, record):
        raise RuntimeError("refit failed")

    monkeypatch.setattr(PrivateHyperparameterSearch, "_set_privacy_record", fail)
    with pytest.raises(RuntimeError, match="refit failed"):
        search.fit(X, X[:, 0])
    assert vars(search).keys() == before.keys()
    assert list(search.feature_names_in_) == list("abcde")
    assert search.best_estimator_ is before["best_estimator_"]


@pytest.mark.parametrize(
    "name, estimator, kwargs",
    [
        (
            "sensitive_features",
            DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2),
            {"param_grid": {"alpha": [0.0]}, "scoring": "accuracy-dp-gap"},
        ),
        ("sample_weight", DPLogisticRegression(classes=[0, 1], max_iter=2), {}),
        ("public_mask", DPLogisticRegression(classes=[0, 1], max_iter=2), {}),
        (
            "clf__sample_weight",
            PrivatePipeline([("clf", DPLogisticRegression(classes=[0, 1]))]),
            {"param_grid": {"clf__clip_norm": [0.5, 2.0]}},
        ),
    ],
)
def test_misaligned_fit_params_are_refused_before_the_split(
    data, name, estimator, kwargs
):
    # A value of another length would be passed on unsplit and fail on the
    # training part's size (or index past its end); the error names it
    # with both (public) lengths.
    X, y = data
    value = np.ones(5, dtype=bool) if name == "public_mask" else np.ones(5)
    search = _search(estimator=estimator, **kwargs)
    with pytest.raises(ValueError, match=f"^{name} has 5 rows but X has 1200;"):
        search.fit(X, y, **{name: value})
    assert not hasattr(search, "best_estimator_")


def test_a_refused_fit_param_leaves_the_previous_fit_whole(data, fitted):
    X, y = data
    search = clone(fitted).fit(X, y)
    before = dict(vars(search))
    with pytest.raises(ValueError, match="sample_weight has 1199 rows"):
        search.fit(X, y, sample_weight=np.ones(len(X) - 1))
    assert vars(search) == before


def test_tags_and_delegated_methods_follow_the_tuned_estimator(data):
    # fit requires y; a method is offered only where the model has it (the
    # selected one once fitted, else the estimator), as in GridSearchCV.
    assert get_tags(_search()).target_tags.required
    regressor = _search(
        estimator=HeavyTailDPRegressor(max_iter=2),
        param_grid={"alpha": [0.0, 0.1]},
        score_bound=5.0,
    )
    for method in ("predict_proba", "decision_function"):
        assert hasattr(_search(), method)
        assert not hasattr(regressor, method)
    X, _ = data
    regressor.fit(X, X[:, 0])
    assert not hasattr(regressor, "predict_proba")
    assert regressor.predict(X).shape == (X.shape[0],)


def test_only_the_selected_runs_warnings_are_shown(data, monkeypatch):
    # Which warnings occur at all tells which candidates ran, and so
    # something of the secret number of runs: only the released run's are
    # shown. One candidate warns (its delta is not below 1/n), one does not.
    from sklearn_dpfair.model_selection import _runs

    X, y = data
    search = _search(
        estimator=DPLogisticRegression(classes=[0, 1], max_iter=2),
        param_grid={"clip_norm": [0.5, 2.0]},
        n_runs=6.0,
    )
    real = _runs._one_run

    def one_run(candidate, *args, **kwargs):
        value, est, _ = real(candidate, *args, **kwargs)
        warned = [(UserWarning, f"clip {candidate.clip_norm}")]
        return value, est, warned

    monkeypatch.setattr(_runs, "_one_run", one_run)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        search.fit(X, y)
    shown = [str(w.message) for w in record if str(w.message).startswith("clip")]
    assert shown == [f"clip {search.best_params_['clip_norm']}"]


def test_pandas_string_arrays_are_split_with_the_rows(data):
    # A string column's .values is a pandas extension array, which
    # scikit-learn's safe_indexing does not take.
    pd = pytest.importorskip("pandas")
    X, y = data
    s = pd.Series(np.where(X[:, 0] > 0, "a", "b"), dtype="string").array
    search = _search(
        estimator=DPFERMIClassifier(classes=[0, 1], groups=["a", "b"], max_iter=2),
        param_grid={"fairness_weight": [0.0, 1.0]},
        scoring="accuracy-dp-gap",
    )
    search.fit(X, y, sensitive_features=s)
    assert search.best_params_["fairness_weight"] in (0.0, 1.0)
