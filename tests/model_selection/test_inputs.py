# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivateHyperparameterSearch: the inputs it takes, and those it refuses."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from release_observer import Releases
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import DataConversionWarning

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    PrivateHyperparameterSearch,
    SemiDPLinearRegression,
)
from sklearn_dpfair.exceptions import PrivacyLeakWarning
from sklearn_dpfair.model_selection import _search as search_module
from sklearn_dpfair.model_selection._scoring import bounded_errors, score_counts
from sklearn_dpfair.pipeline import make_private_pipeline
from sklearn_dpfair.preprocessing import DPSimpleImputer, DPStandardScaler
from sklearn_dpfair.privacy import PrivacyLedger
from sklearn_dpfair.privacy._mechanism import observe_privatize

N = 600


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=N, n_features=3, n_informative=2,
                               n_redundant=0, random_state=0)
    sex = np.where(np.random.default_rng(0).random(N) < 0.5, "F", "M").astype(object)
    return X, y, sex


def _classifier_search(**kwargs):
    params = dict(epsilon=2.0, random_state=0, n_runs=2)
    params.update(kwargs)
    estimator = params.pop(
        "estimator", DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full")
    )
    grid = params.pop("param_grid", {"clip_norm": [0.5, 2.0]})
    return PrivateHyperparameterSearch(estimator, grid, **params)


def _fermi(**kwargs):
    return DPFERMIClassifier(
        classes=[0, 1], groups=["F", "M"], max_iter=2, batch_size="full", **kwargs
    )


# -- y of one value per row -------------------------------------------------


def test_a_column_vector_y_fits_as_its_ravel_with_one_warning(data):
    X, y, _ = data
    flat = _classifier_search().fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        column = _classifier_search().fit(X, y.reshape(-1, 1))
    shown = [w for w in caught if issubclass(w.category, DataConversionWarning)]
    assert len(shown) == 1
    assert shown[0].filename == __file__  # at the caller's line
    # The same fit: the score compares one label with one prediction per row
    # (a column y broadcast against the predictions would count m^2 pairs).
    assert column.best_score_ == flat.best_score_
    assert column.best_params_ == flat.best_params_
    np.testing.assert_array_equal(
        column.best_estimator_.coef_, flat.best_estimator_.coef_
    )
    with pytest.raises(ValueError, match="y must be 1-D"):
        _classifier_search().fit(X, np.c_[y, y])


def test_a_column_vector_regression_target_fits_as_its_ravel(data):
    X, _, _ = data
    y = X @ [1.0, 2.0, 3.0]
    public = np.arange(N) < 50

    def search():
        return PrivateHyperparameterSearch(
            SemiDPLinearRegression(adjacency="add_remove", max_iter=2),
            {"clip_norm": [1.0, 2.0]}, score_bound=5.0, epsilon=2.0,
            random_state=0, n_runs=2,
        )

    flat = search().fit(X, y, public_mask=public)
    with pytest.warns(DataConversionWarning):
        column = search().fit(X, y[:, None], public_mask=public)
    assert column.best_score_ == flat.best_score_


@pytest.mark.parametrize("scoring", ["accuracy", "neg_mean_absolute_error"])
def test_the_score_sums_refuse_rows_that_are_not_paired(scoring):
    # One record must add one term to each sum: a column y_true against 1-D
    # predictions would broadcast to every pair of rows.
    kw = {"scoring": scoring, "score_bound": 4.0}
    y, pred = np.ones(5), np.zeros(5)
    for y_true, y_pred in [(y[:, None], pred), (y, pred[:, None]), (y, pred[:4])]:
        with pytest.raises(ValueError, match="1-D arrays of the same length"):
            score_counts(y_true, y_pred, **kw)
    with pytest.raises(ValueError, match="1-D arrays of the same length"):
        bounded_errors(y[:, None], pred, scoring="neg_mean_absolute_error",
                       score_bound=4.0)
    with pytest.raises(ValueError, match="group_codes"):
        score_counts(y, pred, scoring="accuracy-dp-gap", group_codes=np.zeros(4, int),
                     n_groups=2, positive_label=1.0)


# -- seeds the search does not set -------------------------------------------


def _seeded_pipeline():
    return make_private_pipeline(
        DPStandardScaler(bounds=[(-5, 5)] * 3, random_state=0),
        DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full",
                             random_state=1),
    )


def test_a_nested_seed_in_an_unseeded_search_is_refused_before_any_fit(data):
    X, y, _ = data
    # Every run of a candidate would draw the same noise, recorded as a
    # private release (and composed as independent by a ledger).
    ledger = PrivacyLedger(kind="rdp")
    search = _classifier_search(
        estimator=_seeded_pipeline(), random_state=None, accountant=ledger,
        param_grid={"dplogisticregression__alpha": [0.0, 1e-3]},
    )
    with pytest.raises(ValueError, match="dplogisticregression__random_state"):
        search.fit(X, y)
    assert len(ledger) == 0
    with pytest.raises(ValueError, match="dplogisticregression__random_state"):
        search.privacy_plan(N, 3)
    # Set by the grid alike.
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=[(-5, 5)] * 3),
        DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full"),
    )
    search = _classifier_search(
        estimator=pipe, random_state=None,
        param_grid={"dplogisticregression__random_state": [None, 3]},
    )
    with pytest.raises(ValueError, match="dplogisticregression__random_state"):
        search.fit(X, y)


def test_a_seeded_search_over_seeded_steps_is_recorded_seeded(data):
    X, y, _ = data
    search = _classifier_search(
        estimator=_seeded_pipeline(),
        param_grid={"dplogisticregression__alpha": [0.0, 1e-3]},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.privacy_record_.seeded
    assert any("random_state set" in c for c in search.privacy_caveats_)
    # The search's seed seeds every run's steps.
    assert search.best_estimator_.random_state is not None


# -- values out of the declared domains ----------------------------------------

SEEDS = range(6)


def _raises_for_every_split(make_search, X, y, match, **fit_params):
    for seed in SEEDS:
        with pytest.raises(ValueError, match=match):
            make_search(seed).fit(X, y, **fit_params)


def test_an_undeclared_label_raises_whatever_the_split(data):
    # Validated on the training part only, it raised only where the row
    # fell there: the exception told where one record went.
    X, y, _ = data
    y = y.copy()
    y[7] = 5
    _raises_for_every_split(
        lambda s: _classifier_search(random_state=s, validation_fraction=0.5),
        X, y, "not in the declared classes",
    )


def test_an_undeclared_group_raises_whatever_the_split(data):
    X, y, sex = data
    sex = sex.copy()
    sex[7] = "X"
    # Read by the score only (validation part) ...
    _raises_for_every_split(
        lambda s: _classifier_search(
            random_state=s, validation_fraction=0.5, scoring="accuracy-dp-gap",
            groups=["F", "M"],
        ),
        X, y, "not in the declared groups", sensitive_features=sex,
    )
    # ... or by the candidates only (training part).
    _raises_for_every_split(
        lambda s: _classifier_search(
            estimator=_fermi(), param_grid={"fairness_weight": [1.0]},
            random_state=s, validation_fraction=0.5,
        ),
        X, y, "not in the declared groups", sensitive_features=sex,
    )
    sex[7] = None  # the candidates have no private treatment of it
    _raises_for_every_split(
        lambda s: _classifier_search(
            estimator=_fermi(), param_grid={"fairness_weight": [1.0]},
            random_state=s, validation_fraction=0.5,
        ),
        X, y, "missing values", sensitive_features=sex,
    )


def test_sets_a_grid_varies_are_checked_whatever_the_runs_drawn(data):
    # A candidate's own label or group set was checked by its fit alone, on
    # the training part, and only when its run was drawn: one record with a
    # label of one candidate's set only made the search raise or not.
    X, y, sex = data
    _raises_for_every_split(
        lambda s: _classifier_search(
            param_grid={"classes": [[0, 1], [0, 2]]}, random_state=s,
            validation_fraction=0.5,
        ),
        X, y, "not in the declared classes",
    )
    replaced = {"fairness_weight": [1.0], "groups": [["F", "M"], ["F", "X"]]}
    _raises_for_every_split(
        lambda s: _classifier_search(
            estimator=_fermi(), param_grid=replaced, random_state=s,
            validation_fraction=0.5,
        ),
        X, y, "not in the declared groups", sensitive_features=sex,
    )
    # Sets that hold every row pass.
    _classifier_search(param_grid={"classes": [[0, 1], [1, 0]]}).fit(X, y)


def test_a_grid_point_leaving_its_groups_none_gets_the_searchs(data):
    # The search's groups were set on the base estimator, then the grid
    # point's groups=None wiped them: the run read its group set from the
    # private training part, recorded another event than the one planned
    # and raised (a RuntimeError) or not as one record's group fell.
    X, y, _ = data
    sex = np.full(N, "F", dtype=object)  # one of the two declared groups
    search = _classifier_search(
        estimator=_fermi(), param_grid={"groups": [None]}, n_runs=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FERMI's: an empty group
        warnings.simplefilter("error", PrivacyLeakWarning)
        search.fit(X, y, sensitive_features=sex)
    assert search.best_params_ == {"groups": None}
    assert search.best_estimator_.groups_.tolist() == ["F", "M"]
    assert not any("inferred" in c for c in search.privacy_caveats_)
    plan = search.privacy_plan(N, 3, n_train=search.n_train_)
    assert plan.dp_event == search.dp_event_


def test_a_grid_point_leaving_its_classes_none_is_refused_before_any_row(data):
    # Its run read the label set from the private training part: whether it
    # raised depended on one record's label, and classes_ released the set.
    X, y, _ = data
    pipeline = make_private_pipeline(
        DPStandardScaler(bounds=(-5.0, 5.0)),
        DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full"),
    )
    for estimator, grid in (
        (None, {"classes": [None, [0, 1]]}),
        (pipeline, {"dplogisticregression__classes": [[0, 1], None]}),
    ):
        kwargs = {} if estimator is None else {"estimator": estimator}
        search = _classifier_search(param_grid=grid, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the candidate's warning neither
            with pytest.raises(ValueError, match="param_grid point .*classes"):
                search.privacy_plan(N, 3)
            for labels in (y, np.zeros_like(y)):  # whatever the labels hold
                with pytest.raises(ValueError, match="param_grid point"):
                    search.fit(X, labels)


def test_a_label_set_declared_by_every_grid_point_is_the_searchs(data):
    # The estimator's classes=None was refused although every point of the
    # grid declared the same set; the scores read it from the estimator.
    X, y, _ = data
    labels = np.array(["no", "yes"])[y]
    unset = DPLogisticRegression(max_iter=2, batch_size="full")
    pipeline = make_private_pipeline(DPStandardScaler(bounds=(-5.0, 5.0)), unset)
    declared = _classifier_search(
        estimator=DPLogisticRegression(
            classes=["no", "yes"], max_iter=2, batch_size="full"
        ),
        param_grid={"clip_norm": [0.5, 2.0]},
    )
    for estimator, grid in (
        (unset, {"classes": [["no", "yes"]], "clip_norm": [0.5, 2.0]}),
        (pipeline, [
            {"dplogisticregression__classes": [["no", "yes"]],
             "dplogisticregression__clip_norm": [c]}
            for c in (0.5, 2.0)
        ]),
    ):
        search = _classifier_search(estimator=estimator, param_grid=grid)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, labels)
            if estimator is unset:
                declared.fit(X, labels)
        assert search.classes_.tolist() == ["no", "yes"]
        plan = search.privacy_plan(N, 3, n_train=search.n_train_)
        assert plan.dp_event == search.dp_event_
        if estimator is unset:
            # The same runs, scores and selection as with the set declared
            # in the estimator.
            assert search.best_score_ == declared.best_score_
            assert search.best_params_["clip_norm"] == (
                declared.best_params_["clip_norm"]
            )


@pytest.mark.parametrize(
    "grid, match",
    [
        ({"alpha": [0.0, 1.0]}, "Declare the public label set"),
        ([{"classes": [[0, 1]]}, {"alpha": [1.0]}], "Declare the public label set"),
        ({"classes": [[0, 1], [0, 1, 2]]}, "declare different label sets"),
    ],
)
def test_a_label_set_the_grid_does_not_fix_is_refused_before_any_row(
    data, grid, match
):
    X, y, _ = data
    search = _classifier_search(
        estimator=DPLogisticRegression(max_iter=2, batch_size="full"),
        param_grid=grid,
    )
    with pytest.raises(ValueError, match=match):
        search.privacy_plan(N, 3)
    for labels in (y, np.zeros_like(y)):  # whatever the labels hold
        with pytest.raises(ValueError, match=match):
            search.fit(X, labels)


def test_the_gap_score_takes_the_candidates_one_binary_label_set(data):
    # The gap's positive label came from the base estimator's classes: a
    # grid declaring ["n", "y"] over a base declaring ["n", "yes"] was
    # scored with a gap of 0 whatever its predictions (best_score_ 0.9985
    # for a model whose gap is 1), and a grid of three classes was scored
    # as binary.
    X, y, sex = data
    labels = np.array(["n", "y"])[y]
    kw = dict(scoring="accuracy-dp-gap", groups=["F", "M"], n_runs=1)
    for base, grid in (
        (["n", "y"], {"classes": [["n", "y"], ["n", "z"]]}),
        (["n", "y"], {"classes": [["n", "y", "z"]]}),
    ):
        search = _classifier_search(
            estimator=DPLogisticRegression(classes=base, max_iter=2),
            param_grid=grid, **kw,
        )
        with pytest.raises(ValueError, match="every candidate must declare"):
            search.privacy_plan(N, 3)
        with pytest.raises(ValueError, match="every candidate must declare"):
            search.fit(X, labels, sensitive_features=sex)
    # One set, other than the base's: the candidates' is the one scored.
    gap_of_one = np.where(sex == "F", "y", "n")
    X_group = np.column_stack([np.where(sex == "F", 2.0, -2.0), X[:, :1]])
    scores = [
        _classifier_search(
            estimator=DPLogisticRegression(classes=base, max_iter=5),
            param_grid={"classes": [["n", "y"]]}, epsilon=50.0,
            score_budget_share=0.5, **kw,
        ).fit(X_group, gap_of_one, sensitive_features=sex).best_score_
        for base in (["n", "y"], ["n", "yes"])
    ]
    assert scores[0] < 0.2 and scores[1] < 0.2


def test_a_score_bound_for_a_classifier_is_refused(data):
    X, y, _ = data
    search = _classifier_search(score_bound=1e-3)
    with pytest.raises(ValueError, match="drop score_bound"):
        search.privacy_plan(N, 3)
    with pytest.raises(ValueError, match="drop score_bound"):
        search.fit(X, y)


@pytest.mark.parametrize(
    "pipeline, keyword", [(False, "public_mask"), (False, "foo"),
                          (True, "foo"), (True, "dpstandardscaler__foo")],
)
def test_a_keyword_a_candidate_does_not_take_is_refused_before_planning(
    data, monkeypatch, pipeline, keyword
):
    # It reached the candidates' fits unchecked, and failed in the runs only.
    X, y, _ = data
    estimator = DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full")
    if pipeline:
        scaler = DPStandardScaler(bounds=(-5.0, 5.0))
        estimator = make_private_pipeline(scaler, estimator)

    def planned(*args, **kwargs):
        raise AssertionError("planned before the keywords were checked")

    monkeypatch.setattr(
        search_module.PrivateHyperparameterSearch, "_selection_plan", planned
    )
    grid = {"dplogisticregression__clip_norm" if pipeline else "clip_norm": [1.0]}
    search = _classifier_search(estimator=estimator, param_grid=grid)
    unexpected = keyword.rpartition("__")[2]
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{unexpected}'"):
        search.fit(X, y, **{keyword: np.arange(N) < 50})


def test_a_negative_weight_raises_whatever_the_split(data):
    X, y, _ = data
    weights = np.ones(N)
    weights[7] = -1.0
    _raises_for_every_split(
        lambda s: _classifier_search(random_state=s, validation_fraction=0.5),
        X, y, "sample_weight", sample_weight=weights,
    )


def test_zero_weights_raise_whatever_the_split(data):
    # One record of positive weight among zeros: the candidates refused an
    # all-zero training part, so the search raised exactly when the split
    # drew that record into the validation part (about validation_fraction
    # of the seeds), and one more such record divided that chance by 2.
    X, y, _ = data
    weights = np.zeros(N)
    weights[7] = 1.0
    _raises_for_every_split(
        lambda s: _classifier_search(random_state=s, validation_fraction=0.5),
        X, y, "zero entries", sample_weight=weights,
    )
    weights[:] = 1.0
    weights[3] = 0.0
    _raises_for_every_split(
        lambda s: _classifier_search(random_state=s, validation_fraction=0.5),
        X, y, "zero entries", sample_weight=weights,
    )


def _scaled_pipeline():
    return make_private_pipeline(
        DPStandardScaler(bounds=[(-5, 5)] * 3),
        DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full"),
    )


def _pipeline_search(pipe, seed):
    return _classifier_search(
        estimator=pipe, param_grid={"dplogisticregression__clip_norm": [1.0]},
        random_state=seed, validation_fraction=0.5, n_runs=1,
    )


@pytest.mark.parametrize(
    "key", ["dplogisticregression__sample_weight", "dpstandardscaler__sample_weight"]
)
def test_a_pipeline_steps_weights_are_checked_whatever_the_split(data, key):
    # Without routing a pipeline takes step__sample_weight: each step
    # checked its own on the training part only, so that the fit raised or
    # not as the split drew the one bad record.
    X, y, _ = data
    weights = np.ones(N)
    weights[7] = -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The message names the keyword as passed.
        _raises_for_every_split(
            lambda s: _pipeline_search(_scaled_pipeline(), s),
            X, y, f"^{key}", **{key: weights},
        )
        weights[:] = 0.0
        weights[7] = 1.0
        _raises_for_every_split(
            lambda s: _pipeline_search(_scaled_pipeline(), s),
            X, y, "zero entries", **{key: weights},
        )


def test_a_pipeline_final_steps_groups_are_checked_whatever_the_split(data):
    X, y, sex = data
    sex = sex.copy()
    sex[7] = "X"
    pipe = make_private_pipeline(_fermi())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_for_every_split(
            lambda s: _classifier_search(
                estimator=pipe,
                param_grid={"dpfermiclassifier__fairness_weight": [1.0]},
                random_state=s, validation_fraction=0.5, n_runs=1,
            ),
            X, y, "not in the declared groups",
            dpfermiclassifier__sensitive_features=sex,
        )


def test_a_pipeline_final_steps_public_mask_is_the_plain_one(data):
    # A prefixed public_mask was not read by the search: its rows were
    # drawn into validation and the candidates planned with none public.
    X, _, _ = data
    y = X @ [1.0, 2.0, 3.0]
    public = np.arange(N) < 50

    def fit(key):
        pipe = make_private_pipeline(
            SemiDPLinearRegression(adjacency="add_remove", max_iter=2)
        )
        search = PrivateHyperparameterSearch(
            pipe, {"semidplinearregression__clip_norm": [1.0]}, score_bound=5.0,
            epsilon=2.0, random_state=0, n_runs=1,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return search.fit(X, y, **{key: public})

    plain, prefixed = fit("public_mask"), fit("semidplinearregression__public_mask")
    assert prefixed.n_train_ == plain.n_train_
    assert prefixed.n_validation_ == plain.n_validation_ <= N - 50
    assert prefixed.dp_event_ == plain.dp_event_


def test_a_pipeline_keyword_given_twice_is_refused(data):
    X, y, _ = data
    search = _pipeline_search(_scaled_pipeline(), 0)
    with pytest.raises(ValueError, match="both set the final step's sample_weight"):
        search.fit(X, y, sample_weight=np.ones(N),
                   dplogisticregression__sample_weight=np.ones(N))


def test_a_missing_nullable_label_is_an_undeclared_label(data):
    # pd.NA compared with a declared label raised pandas' "boolean value of
    # NA is ambiguous" TypeError instead of the undeclared-label error.
    pd = pytest.importorskip("pandas")
    X, y, _ = data
    labels = pd.Series(np.where(y == 1, "yes", "no"), dtype="string")
    labels[7] = pd.NA
    _raises_for_every_split(
        lambda s: _classifier_search(
            estimator=DPLogisticRegression(
                classes=["no", "yes"], max_iter=2, batch_size="full"
            ),
            param_grid={"clip_norm": [1.0]}, random_state=s, n_runs=1,
        ),
        X, labels, "not in the declared classes",
    )


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_a_target_that_is_not_finite_raises_whatever_the_split(data, bad):
    X, _, _ = data
    y = X @ [1.0, 2.0, 3.0]
    y[100] = bad  # a private row (the first 50 are public)

    def make_search(seed):
        return PrivateHyperparameterSearch(
            SemiDPLinearRegression(adjacency="add_remove", max_iter=2),
            {"clip_norm": [1.0]}, score_bound=5.0, epsilon=2.0, n_runs=1,
            random_state=seed, validation_fraction=0.5,
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_for_every_split(
            make_search, X, y, "Input y contains", public_mask=np.arange(N) < 50
        )


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_x_that_is_not_finite_is_refused_before_any_fit(
    data, bad, sparse, monkeypatch
):
    # A candidate's fit refused it where the split put the row in the
    # training part, its predictions where it put it in the validation
    # part, after runs had fitted: refused on every row before any run now.
    X, y, _ = data
    X = X.copy()
    X[7, 1] = bad
    if sparse:
        X = sp.csr_matrix(X)
    _refuse_to_fit(monkeypatch, DPLogisticRegression)
    _raises_for_every_split(
        lambda s: _classifier_search(random_state=s, validation_fraction=0.5),
        X, y, "Input X contains",
    )


def test_a_pipeline_that_imputes_takes_missing_values(data):
    # Its first step decides what X may hold: the search leaves NaN to it.
    X, y, _ = data
    X = X.copy()
    X[7, 1] = np.nan
    pipe = make_private_pipeline(
        DPSimpleImputer(bounds=(-5.0, 5.0)),
        DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full"),
    )
    search = _classifier_search(
        estimator=pipe, param_grid={"dplogisticregression__clip_norm": [1.0]}
    )
    assert search.fit(X, y).best_estimator_ is not None


# -- sensitive features: where they go, and in which container ------------------


@pytest.mark.parametrize("scoring", ["accuracy", "accuracy-dp-gap"])
def test_groups_are_planned_as_the_estimator_receives_them(data, scoring):
    X, y, sex = data
    with sklearn.config_context(enable_metadata_routing=True):
        for requested in (True, False):
            fermi = _fermi().set_fit_request(sensitive_features=requested)
            search = _classifier_search(
                estimator=fermi, param_grid={"fairness_weight": [1.0, 4.0]},
                scoring=scoring,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, y, sensitive_features=sex)
            seen = search.best_estimator_.groups_.tolist()
            assert seen == (["F", "M"] if requested else [None])
            # The plan's default is the fit's.
            plan = search.privacy_plan(N, 3, n_train=search.n_train_)
            assert plan.dp_event == search.dp_event_


def test_a_candidates_own_groups_are_planned_not_the_searchs(data):
    # The search's groups fill only a group set left None: a candidate that
    # declares its own is fitted with them, and was planned with the
    # search's count (refused as a disagreement with its declaration).
    X, y, sex = data
    search = _classifier_search(
        estimator=_fermi(), param_grid={"fairness_weight": [1.0]},
        groups=["F", "M", "O"], scoring="accuracy-dp-gap", n_runs=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y, sensitive_features=sex)
    assert search.best_estimator_.groups_.tolist() == ["F", "M"]
    plan = search.privacy_plan(N, 3, n_train=search.n_train_)
    assert plan.dp_event == search.dp_event_
    # A grid may declare sets of different sizes, and label sets alike.
    logistic = DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full")
    for estimator, grid, fit_params in (
        (_fermi(), {"groups": [["F", "M"], ["F", "M", "X"]]},
         {"sensitive_features": sex}),
        (logistic, {"classes": [[0, 1], [0, 1, 2]]}, {}),
    ):
        search = _classifier_search(estimator=estimator, param_grid=grid)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y, **fit_params)
        plan = search.privacy_plan(N, 3, n_train=search.n_train_)
        assert plan.dp_event == search.dp_event_


def test_sensitive_features_as_a_dict_of_columns(data):
    pd = pytest.importorskip("pandas")
    X, y, sex = data

    def fit(sensitive):
        search = _classifier_search(
            estimator=_fermi(), param_grid={"fairness_weight": [1.0, 4.0]},
            scoring="accuracy-dp-gap",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return search.fit(X, y, sensitive_features=sensitive)

    as_dict = fit({"sex": sex})
    as_frame = fit(pd.DataFrame({"sex": sex}))
    assert as_dict.best_score_ == as_frame.best_score_
    assert as_dict.best_estimator_.groups_.tolist() == ["F", "M"]
    with pytest.raises(ValueError, match="sensitive_features"):
        fit({"sex": sex, "other": sex[:10]})
    # Series of different indexes are read by position, as the estimators
    # read them (pandas aligned a dict of Series on their index labels,
    # pairing one row's sex with another row's second column).
    from sklearn_dpfair.model_selection._search import _sensitive_as_frame

    second = np.arange(N) % 2
    shuffled = pd.Series(np.asarray(sex), index=np.random.default_rng(0).permutation(N))
    frame = _sensitive_as_frame(
        {"sensitive_features": {"sex": shuffled, "b": pd.Series(second)}}
    )["sensitive_features"]
    np.testing.assert_array_equal(frame["sex"].to_numpy(), np.asarray(sex))
    np.testing.assert_array_equal(frame["b"].to_numpy(), second)


def _refuse_to_fit(monkeypatch, cls):
    """Make any fit of ``cls`` fail the test: a refusal must come before."""

    def fit(self, *args, **kwargs):
        raise AssertionError(f"{cls.__name__} was fitted before the refusal")

    monkeypatch.setattr(cls, "fit", fit)


@pytest.mark.parametrize("in_pipeline", [False, True])
def test_groups_routed_under_an_alias_need_a_declared_group_set(
    data, monkeypatch, in_pipeline
):
    # Routed under an alias, the groups reach every run's estimator, which
    # would read an undeclared group set from its private training part
    # (and the planned n_groups=1 would not be what it fits): refused as
    # when they are passed by name, before any candidate is trained.
    X, y, sex = data
    _refuse_to_fit(monkeypatch, DPFERMIClassifier)
    with sklearn.config_context(enable_metadata_routing=True):
        fermi = DPFERMIClassifier(classes=[0, 1], max_iter=2, batch_size="full")
        fermi.set_fit_request(sensitive_features="sf")
        estimator = (
            make_private_pipeline(DPStandardScaler(bounds=[(-5, 5)] * 3), fermi)
            if in_pipeline
            else fermi
        )
        prefix = "dpfermiclassifier__" if in_pipeline else ""
        search = _classifier_search(
            estimator=estimator, param_grid={f"{prefix}alpha": [0.0, 1e-3]}
        )
        with pytest.raises(ValueError, match="Declare the public group set"):
            search.fit(X, y, sf=sex)
        # And the plan counts the groups the estimator receives.
        assert search._estimator_takes_sensitive()


def test_groups_declared_by_every_grid_point_are_planned_and_fitted(data):
    # The search's and the estimator's groups None: the plan counted one
    # group for every candidate, and the fit refused the search.
    X, y, sex = data
    fermi = DPFERMIClassifier(classes=[0, 1], max_iter=2, batch_size="full")
    by_point = _classifier_search(
        estimator=fermi, param_grid={"groups": [["F", "M"]], "alpha": [0.0, 1e-3]}
    )
    by_estimator = _classifier_search(
        estimator=_fermi(), param_grid={"alpha": [0.0, 1e-3]}
    )
    plan = by_point.privacy_plan(N, 3)
    assert plan.dp_event == by_estimator.privacy_plan(N, 3).dp_event
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_point.fit(X, y, sensitive_features=sex)
    assert by_point.best_estimator_.groups_.tolist() == ["F", "M"]
    assert by_point.dp_event_ == plan.dp_event


def test_a_grid_point_left_without_groups_is_refused_by_plan_and_fit(data):
    X, y, sex = data
    fermi = DPFERMIClassifier(classes=[0, 1], max_iter=2, batch_size="full")
    search = _classifier_search(
        estimator=fermi, param_grid=[{"groups": [["F", "M"]]}, {"alpha": [1e-3]}]
    )
    with pytest.raises(ValueError, match="Declare the public group set"):
        search.privacy_plan(N, 3)
    observer = Releases()
    with observe_privatize(observer):
        with pytest.raises(ValueError, match="Declare the public group set"):
            search.fit(X, y, sensitive_features=sex)
    assert observer.seen == []


@pytest.mark.parametrize("scoring", ["accuracy", "accuracy-dp-gap"])
def test_groups_routed_under_an_alias_are_planned_and_scored(data, scoring):
    X, y, sex = data
    fitted = {}
    with sklearn.config_context(enable_metadata_routing=True):
        for key in ("sensitive_features", "sf"):
            fermi = _fermi().set_fit_request(sensitive_features=key)
            search = _classifier_search(
                estimator=fermi, param_grid={"fairness_weight": [1.0, 4.0]},
                scoring=scoring,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, y, **{key: sex})
            assert search.best_estimator_.groups_.tolist() == ["F", "M"]
            # The plan's default counts the groups the estimator receives.
            plan = search.privacy_plan(N, 3, n_train=search.n_train_)
            assert plan.dp_event == search.dp_event_
            fitted[key] = search
            if key == "sf":
                # A misaligned value is named as it was passed.
                with pytest.raises(ValueError, match="^sf has 599 rows"):
                    clone(search).fit(X, y, sf=sex[:-1])
    assert fitted["sf"].dp_event_ == fitted["sensitive_features"].dp_event_
    assert fitted["sf"].best_params_ == fitted["sensitive_features"].best_params_


@pytest.mark.parametrize("in_pipeline", [False, True])
def test_public_mask_and_weights_routed_under_an_alias_are_read_as_by_name(
    data, in_pipeline
):
    # A pipeline's routed parameters keep their callers' aliases: the search
    # looked public_mask up by its name only, so the public rows were drawn
    # into validation (128 validation rows, not 117) and the candidates
    # planned with none public.
    X, _, _ = data
    y = X @ [1.0, 2.0, 3.0]
    public = np.arange(N) < 50
    weights = np.linspace(0.5, 2.0, N)
    fitted = {}
    with sklearn.config_context(enable_metadata_routing=True):
        for mask_key, weight_key in (("public_mask", "sample_weight"), ("pm", "w")):
            reg = SemiDPLinearRegression(adjacency="add_remove", max_iter=2)
            reg.set_fit_request(public_mask=mask_key, sample_weight=weight_key)
            scaler = DPStandardScaler(bounds=[(-5, 5)] * 3)
            scaler.set_fit_request(sample_weight=weight_key)
            estimator = make_private_pipeline(scaler, reg) if in_pipeline else reg
            prefix = "semidplinearregression__" if in_pipeline else ""
            search = PrivateHyperparameterSearch(
                estimator, {f"{prefix}clip_norm": [0.5, 1.0]}, score_bound=5.0,
                epsilon=2.0, random_state=0,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, y, **{mask_key: public, weight_key: weights})
            fitted[mask_key] = search
    plain, aliased = fitted["public_mask"], fitted["pm"]
    assert aliased.n_validation_ == plain.n_validation_ <= N - 50
    assert aliased.n_train_ == plain.n_train_
    assert aliased.dp_event_ == plain.dp_event_
    assert aliased.best_params_ == plain.best_params_
    np.testing.assert_allclose(
        aliased.predict(X[:20]), plain.predict(X[:20]), rtol=1e-10
    )


@pytest.mark.parametrize(
    "mask, error",
    [(np.arange(N) % 2, TypeError), (np.ones(N - 1, dtype=bool), ValueError)],
    ids=["0/1 flags", "short"],
)
def test_a_bad_public_mask_gets_the_estimators_type_of_error(data, mask, error):
    # The estimators refuse a mask of 0/1 flags with a TypeError; the
    # search raised a ValueError.
    X, _, _ = data
    y = X @ [1.0, 2.0, 3.0]
    search = PrivateHyperparameterSearch(
        SemiDPLinearRegression(max_iter=2), {"clip_norm": [0.5, 1.0]},
        score_bound=5.0, random_state=0,
    )
    with pytest.raises(error, match="^public_mask "):
        search.fit(X, y, public_mask=mask)
    with pytest.raises(error, match="public_mask"):
        SemiDPLinearRegression(max_iter=2).fit(X, y, public_mask=mask)


@pytest.mark.parametrize("step", ["dpstandardscaler", "dplogisticregression"])
def test_weights_routed_under_an_alias_are_checked_whatever_the_split(data, step):
    # Routed to a pipeline's step under an alias, the weights were not
    # checked on every row: that step refused a bad one on its training part
    # only, so the fit raised or not as the split drew the one bad record.
    X, y, _ = data

    def search(seed):
        pipe = _scaled_pipeline()
        for name, estimator in pipe.steps:
            estimator.set_fit_request(sample_weight="w" if name == step else False)
        return _pipeline_search(pipe, seed)

    weights = np.ones(N)
    weights[7] = -1.0
    with sklearn.config_context(enable_metadata_routing=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # The message names the keyword as passed.
            _raises_for_every_split(search, X, y, "^w: Negative", w=weights)
            weights[7] = 0.0
            _raises_for_every_split(search, X, y, "^w has zero entries", w=weights)


# -- delegation ------------------------------------------------------------------


def test_predict_log_proba_is_delegated_to_the_selected_model(data):
    X, y, _ = data
    search = _classifier_search().fit(X, y)
    np.testing.assert_array_equal(
        search.predict_log_proba(X), search.best_estimator_.predict_log_proba(X)
    )
    regressor = PrivateHyperparameterSearch(
        SemiDPLinearRegression(), {"clip_norm": [1.0]}, score_bound=5.0
    )
    assert not hasattr(regressor, "predict_log_proba")


def test_a_one_dimensional_x_is_refused_as_scikit_learn_refuses_it():
    # The plan read np.shape(X)[1] before any candidate validated X: an
    # IndexError naming nothing.
    from sklearn_dpfair.linear_model import DPLogisticRegression
    from sklearn_dpfair.model_selection import PrivateHyperparameterSearch

    search = PrivateHyperparameterSearch(
        DPLogisticRegression(classes=[0, 1]), {"alpha": [0.0, 0.1]}, random_state=0
    )
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        search.fit(np.arange(100.0), np.tile([0, 1], 50))
    assert not hasattr(search, "best_params_")


# -- estimator objects in the grid ------------------------------------------


def test_grid_estimator_objects_are_cloned_not_written_to(data):
    # Shared by every candidate, a grid's estimator object got each
    # candidate's nested values (the last one winning for all) and the
    # search's groups written onto it.
    from sklearn.preprocessing import FunctionTransformer

    from sklearn_dpfair import PrivatePipeline

    X, y, sex = data
    clf = DPLogisticRegression(classes=[0, 1], max_iter=1, batch_size="full",
                               alpha=0.25)
    fermi = DPFERMIClassifier(classes=[0, 1], max_iter=1, batch_size="full")
    before = [clf.get_params(), fermi.get_params()]
    pipe = PrivatePipeline([("f", FunctionTransformer(np.tanh)), ("clf", clf)])
    for seed in range(3):
        search = _classifier_search(
            estimator=pipe, random_state=seed,
            param_grid=[{"clf": [clf], "clf__alpha": [0.0, 0.5]},
                        {"clf": [fermi]}],
            groups=["F", "M"],
        ).fit(X, y, sensitive_features=sex)
        # The selected model is its grid point's.
        model = search.best_estimator_[-1]
        assert isinstance(model, type(search.best_params_["clf"]))
        if "clf__alpha" in search.best_params_:
            assert model.alpha == search.best_params_["clf__alpha"]
        # The grid point is the user's, as scikit-learn's searches give it.
        assert search.best_params_["clf"] in (clf, fermi)
    assert [clf.get_params(), fermi.get_params()] == before
    assert not hasattr(clf, "coef_") and not hasattr(fermi, "coef_")


def test_every_grid_point_builds_its_own_candidate():
    clf = DPLogisticRegression(classes=[0, 1], alpha=0.25)
    pipe = make_private_pipeline(DPStandardScaler(bounds=(-5.0, 5.0)),
                                 DPLogisticRegression(classes=[0, 1]))
    built = [
        search_module._build_candidate(
            pipe, {"dplogisticregression": clf, "dplogisticregression__alpha": a}
        )
        for a in (0.0, 0.5)
    ]
    finals = [est.steps[-1][1] for est in built]
    assert [final.alpha for final in finals] == [0.0, 0.5]
    assert finals[0] is not clf and clf.alpha == 0.25


# -- metadata routing of every candidate --------------------------------------


@pytest.mark.parametrize("case", ["swapped_step", "unset_nested_step"])
def test_every_candidates_routing_is_checked_before_any_run(
    data, monkeypatch, case
):
    # A candidate whose routing refuses the fit parameters raised only in
    # the runs that drew it: whether the fit raised depended on the secret
    # draw of the runs.
    X, y, _ = data

    def drawn(*args, **kwargs):
        raise AssertionError("the split was drawn before the refusal")

    monkeypatch.setattr(search_module, "draw_split", drawn)
    weights = np.ones(N)
    with sklearn.config_context(enable_metadata_routing=True):
        base = DPLogisticRegression(classes=[0, 1], max_iter=2, batch_size="full")
        base.set_fit_request(sample_weight=True)
        scaler = DPStandardScaler(bounds=(-5.0, 5.0))
        if case == "swapped_step":
            scaler.set_fit_request(sample_weight=False)
            # Its sample_weight request left unset.
            other = DPLogisticRegression(classes=[0, 1], max_iter=2,
                                         batch_size="full")
            grid = {"dplogisticregression": [base, other]}
        else:
            grid = {"dplogisticregression__alpha": [0.0, 0.1]}
        pipe = make_private_pipeline(scaler, base)
        search = _classifier_search(estimator=pipe, param_grid=grid)
        with pytest.raises(ValueError, match="param_grid point"):
            search.fit(X, y, sample_weight=weights)


# -- parameters ---------------------------------------------------------------


@pytest.mark.parametrize(
    "param", ["n_runs", "runs_distribution", "score_budget_share",
              "score_bound", "gap_penalty"],
)
@pytest.mark.parametrize("value", [True, np.True_])
def test_bools_are_refused_as_numbers(data, param, value):
    X, y, _ = data
    search = _classifier_search(**{param: value})
    with pytest.raises(ValueError, match=f"'{param}' parameter"):
        search.fit(X, y)


def test_a_search_as_the_estimator_is_refused_by_name(data):
    X, y, _ = data
    inner = _classifier_search(random_state=None)
    search = _classifier_search(
        estimator=inner, param_grid={"validation_fraction": [0.2, 0.3]}
    )
    for call in (lambda: search.fit(X, y), lambda: search.candidate_plans(N, 3),
                 lambda: search.privacy_plan(N, 3)):
        with pytest.raises(ValueError, match="estimator is a PrivateHyper"):
            call()


@pytest.mark.parametrize("random_state", range(6))
def test_a_value_a_pipelines_step_refuses_is_refused_on_every_row(random_state):
    # A pipeline's steps decide for themselves which values they take, and a
    # candidate checked its training part only: where the split put the row
    # with a missing value in the validation part, the run that predicted on
    # it raised after its fit's releases (random_state=4: after 21), with
    # another message than where the row was in the training part. The
    # pipeline's own check now runs on every row before the split.
    X = np.random.default_rng(0).normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    X[5, 1] = np.nan
    ledger = PrivacyLedger()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(-5, 5)),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
    )
    search = PrivateHyperparameterSearch(
        pipe,
        {"dplogisticregression__alpha": [1e-4, 1e-2]},
        epsilon=2.0,
        delta=1e-5,
        accountant=ledger,
        random_state=random_state,
    )
    releases = Releases()
    with observe_privatize(releases):
        with pytest.raises(ValueError, match="NaN in column 1, which may reach"):
            search.fit(X, y)
    assert releases.seen == [] and ledger.entries == []
    # A grid point that puts an imputer first takes the row.
    imputing = PrivateHyperparameterSearch(
        make_private_pipeline(
            DPSimpleImputer(bounds=(-5, 5)),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=1.0,
        ),
        {"dplogisticregression__alpha": [1e-4, 1e-2]},
        epsilon=2.0,
        delta=1e-5,
        random_state=random_state,
    )
    imputing.fit(X, y)


def test_a_run_that_raises_charges_the_searchs_ledger(monkeypatch):
    # A run that fails after releasing (here in its score, after its fit)
    # leaves the search's ledger charged with the selection's plan.
    X = np.random.default_rng(0).normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    scored = []
    noisy_score = search_module.noisy_score

    def fails_the_second_time(*args, **kwargs):
        scored.append(1)
        if len(scored) == 1:
            raise RuntimeError("a run failed")
        return noisy_score(*args, **kwargs)

    monkeypatch.setattr(search_module, "noisy_score", fails_the_second_time)
    ledger = PrivacyLedger()
    search = PrivateHyperparameterSearch(
        DPLogisticRegression(classes=[0, 1]),
        {"alpha": [1e-4, 1e-2]},
        epsilon=2.0,
        delta=1e-5,
        accountant=ledger,
    )
    with pytest.raises(RuntimeError, match="a run failed") as raised:
        search.fit(X, y)
    assert any("planned event is recorded" in n for n in raised.value.__notes__)
    (entry,) = ledger.entries
    assert entry.source.startswith("PrivateHyperparameterSearch (raised after")
    assert entry.dp_event == search.privacy_plan(300, 3).dp_event
    assert not hasattr(search, "best_estimator_")
