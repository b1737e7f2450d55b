# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Compositions at the edges of what a private pipeline plans.

A nested final pipeline, public counts of the final estimator's metadata
(groups of several columns, silos), nested parallel or cached composites,
empty column selections, a declared width after a function, and free
encoders that would warn about a private row: each is planned as it is
fitted, or refused before a row is read.
"""

import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    SplineTransformer,
)

from sklearn_dpfair.fairness import encode_sensitive_features
from sklearn_dpfair.linear_model import (
    DPFERMIClassifier,
    DPLogisticRegression,
    SemiDPLinearRegression,
)
from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
from sklearn_dpfair.pipeline import PrivatePipeline, make_private_pipeline
from sklearn_dpfair.pipeline._steps import composite_paths, walk_steps
from sklearn_dpfair.preprocessing import (
    DPOneHotEncoder,
    DPSimpleImputer,
    DPStandardScaler,
)
from sklearn_dpfair.privacy._releases import logged_releases

N = 1000
BOUNDS = (-4.0, 4.0)


def _numbers(n=N, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] > 0).astype(int)


def _fit(pipe, X, y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short fits' ConvergenceWarning
        return pipe.fit(X, y, **kwargs)


def _assert_planned(plan, pipe):
    assert plan.dp_event == pipe.dp_event_
    assert plan.epsilon == pipe.epsilon_ <= pipe.epsilon
    assert [name for name, _ in plan.steps] == list(pipe.step_budgets_)
    shares = [b["share"] for b in pipe.step_budgets_.values()]
    # A step spending its own silo_epsilon has no share of epsilon.
    if None not in shares:
        assert sum(shares) == pytest.approx(1)


def _model(**params):
    return DPLogisticRegression(classes=[0, 1], max_iter=2, **params)


class _Unread:
    """Rows that fail when read, even for their shape."""

    shape = (N, 3)

    def __array__(self, *args, **kwargs):
        raise AssertionError("a row was read")


# -- a Pipeline as the last step -------------------------------------------


@pytest.mark.parametrize(
    "steps",
    [
        # The final step re-planned on the width a function outputs.
        [
            ("widen", FunctionTransformer(lambda X: np.tile(X, 20))),
            ("model", Pipeline([("clf", _model())])),
        ],
        # The output bound handed to output perturbation.
        [
            ("scale", DPStandardScaler(bounds=BOUNDS)),
            (
                "model",
                Pipeline([("clf", _model(solver="output-perturbation", alpha=1.0))]),
            ),
        ],
        [
            (
                "model",
                Pipeline(
                    [("scale", DPStandardScaler(bounds=BOUNDS)), ("clf", _model())]
                ),
            )
        ],
    ],
)
def test_pipeline_as_last_step_is_refused_before_a_row_is_read(steps):
    # Re-planning, the flowing bound and the public counts act on the final
    # estimator itself: hidden in a nested pipeline they did not apply.
    pipe = PrivatePipeline(steps, random_state=0)
    with pytest.raises(ValueError, match=r"last step 'model' is a Pipeline.*Flatten"):
        pipe.privacy_plan(N, 3)
    with pytest.raises(ValueError, match=r"Flatten it: PrivatePipeline"):
        pipe.fit(_Unread(), np.zeros(N))
    # Flattened, it plans and fits as planned.
    inner = steps[-1][1]
    flat = PrivatePipeline([*steps[:-1], *inner.steps], random_state=0)
    X, y = _numbers()
    plan = flat.privacy_plan(N, 3)
    _fit(flat, X, y)
    assert plan.dp_event == flat.dp_event_


@pytest.mark.parametrize(
    "inner, metadata",
    [
        # Its groups, counted by its own fit from the sensitive features.
        (
            [
                ("scale", DPStandardScaler(bounds=BOUNDS)),
                ("clf", DPFERMIClassifier(classes=[0, 1], max_iter=2)),
            ],
            {"sensitive_features": np.arange(N) % 3},
        ),
        # Its public rows, counted by its own fit from the mask.
        (
            [("clf", SemiDPLinearRegression())],
            {"public_mask": np.arange(N) < 300},
        ),
        # The bound it would take from the outer step before it.
        ([("clf", _model(solver="output-perturbation", alpha=1.0))], {}),
    ],
)
def test_private_pipeline_as_last_step_is_refused_before_a_release(inner, metadata):
    pipe = PrivatePipeline(
        [("scale", DPStandardScaler(bounds=BOUNDS)), ("model", PrivatePipeline(inner))],
        random_state=0,
    )
    match = r"last step 'model' is a PrivatePipeline.*Flatten it: PrivatePipeline"
    with pytest.raises(ValueError, match=match):
        pipe.privacy_plan(N, 3)
    with logged_releases() as log, pytest.raises(ValueError, match=match):
        pipe.fit(_Unread(), np.zeros(N), **metadata)
    assert not log.counts
    assert not hasattr(pipe, "pipeline_")


def test_a_search_as_last_step_is_refused_before_a_release():
    # Its event depends on the training size its own fit draws.
    search = PrivateHyperparameterSearch(_model(), {"alpha": [0.0, 0.01]}, n_runs=2)
    pipe = PrivatePipeline(
        [("scale", DPStandardScaler(bounds=BOUNDS)), ("search", search)],
        random_state=0,
    )
    match = r"last step 'search' \(PrivateHyperparameterSearch\).*n_train"
    with pytest.raises(ValueError, match=match):
        pipe.privacy_plan(N, 3)
    with logged_releases() as log, pytest.raises(
        ValueError, match=r"PrivateHyperparameterSearch\(PrivatePipeline"
    ):
        pipe.fit(_Unread(), np.zeros(N))
    assert not log.counts
    assert not hasattr(pipe, "pipeline_")


# -- public counts of the final estimator ------------------------------------


@pytest.mark.parametrize(
    "make_groups",
    [
        # Intersectional groups of two string columns.
        lambda rng: pd.DataFrame(
            {"sex": rng.choice(["F", "M"], N), "race": rng.choice(["w", "b"], N)}
        ),
        # One column of strings, as a DataFrame.
        lambda rng: pd.DataFrame({"sex": rng.choice(["F", "M"], N)}),
        # Mixed types in an object array of two columns.
        lambda rng: np.column_stack(
            [rng.choice(["F", "M"], N), rng.integers(0, 3, N)]
        ).astype(object),
    ],
)
def test_undeclared_groups_are_counted_as_the_estimator_encodes_them(make_groups):
    X, y = _numbers()
    groups = make_groups(np.random.default_rng(1))
    pipe = PrivatePipeline(
        [
            ("scale", DPStandardScaler(bounds=BOUNDS)),
            ("model", DPFERMIClassifier(classes=[0, 1], max_iter=2)),
        ],
        random_state=0,
    )
    _fit(pipe, X, y, sensitive_features=groups)
    n_groups = encode_sensitive_features(groups).n_groups
    assert len(pipe[-1].groups_) == n_groups
    plan = pipe.privacy_plan(N, 3, n_groups=n_groups)
    _assert_planned(plan, pipe)


def test_silos_are_counted_as_the_federated_fit_splits_them():
    # With its own silo budget the federated fit's event is not the central
    # one the plan would make without the number of silos.
    X, y = _numbers()
    silos = np.repeat(["A", "B", "C"], [400, 350, 250])
    model = DPLogisticRegression(
        classes=[0, 1], max_iter=2, silo_epsilon=1.0, silo_delta=1e-6
    )
    pipe = PrivatePipeline(
        [("scale", DPStandardScaler(bounds=BOUNDS)), ("model", model)],
        epsilon=2.0,
        random_state=0,
    )
    _fit(pipe, X, y, silos=silos)
    assert pipe[-1].silos_ == ["A", "B", "C"]
    plan = pipe.privacy_plan(N, 3, n_silos=3)
    _assert_planned(plan, pipe)
    # A missing silo id is refused by the count, before any step releases.
    with logged_releases() as log, pytest.raises(ValueError, match="missing ids"):
        pipe.fit(X, y, silos=[None] * N)
    assert not log.counts


def test_silo_epsilon_is_recorded_as_the_budget_the_step_spends():
    # The federated fit spends silo_epsilon, not the step's share of the
    # pipeline's epsilon: its budget said 5.4 ("share 0.85") for a model
    # that spent 0.5, and its epsilon parameter was set to that 5.4.
    X, y = _numbers()
    silos = np.repeat(["A", "B", "C"], [400, 350, 250])
    pipe = PrivatePipeline(
        [
            ("scale", DPStandardScaler(bounds=BOUNDS)),
            ("model", _model(epsilon=0.7, silo_epsilon=0.5)),
        ],
        epsilon=1.0,
        random_state=0,
    )
    _fit(pipe, X, y, silos=silos)
    budget = pipe.step_budgets_["model"]
    assert budget["share"] is None
    assert budget["epsilon"] == budget["plan"].epsilon == pipe[-1].epsilon_
    assert budget["epsilon"] == pytest.approx(0.5, rel=1e-3)
    # The step keeps its own epsilon, which the federated fit does not read;
    # its silo_delta is its share of delta.
    assert pipe[-1].epsilon == 0.7
    assert budget["delta"] == pipe[-1].delta == pytest.approx(0.85e-5)
    # The preprocessing keeps its share, scaled to the rest of the budget.
    assert pipe.step_budgets_["scale"]["share"] == pytest.approx(0.15)
    line = next(
        line
        for line in pipe.privacy_summary().splitlines()
        if line.strip().startswith("model:")
    )
    assert "its own silo_epsilon, epsilon 0.5," in line
    assert "share" not in line


def test_a_silo_epsilon_above_the_pipelines_is_refused_naming_it():
    # The step spends its own silo budget whatever its share, so no split
    # can hold one above the whole budget: the refusal names the parameter,
    # before anything is released.
    X, y = _numbers()
    silos = np.repeat(["A", "B", "C"], [400, 350, 250])
    pipe = PrivatePipeline(
        [
            ("scale", DPStandardScaler(bounds=BOUNDS)),
            ("model", _model(silo_epsilon=2.0)),
        ],
        epsilon=1.0,
        delta=1e-5,
        random_state=0,
    )
    with logged_releases() as log, pytest.raises(ValueError, match="silo_epsilon=2"):
        pipe.fit(X, y, silos=silos)
    assert not log.counts
    with pytest.raises(ValueError, match="above its epsilon=1 before any other"):
        pipe.privacy_plan(N, 3, n_silos=3)
    # Its own event alone is what counts, at the pipeline's delta: a silo
    # budget above epsilon at a much smaller silo_delta can still fit.
    pipe.set_params(model__silo_epsilon=1.02, model__silo_delta=1e-12)
    plan = pipe.privacy_plan(N, 3, n_silos=3)
    assert plan.epsilon <= 1.0
    # Without silo_delta the step's delta is its share of the pipeline's:
    # read at the whole delta its noise would be smaller, and a feasible
    # split refused.
    pipe.set_params(model__silo_epsilon=1.005, model__silo_delta=None)
    assert pipe.privacy_plan(N, 3, n_silos=3).epsilon <= 1.0


def test_silo_delta_is_recorded_and_the_steps_own_budget_has_no_effect():
    X, y = _numbers()
    silos = np.repeat(["A", "B", "C"], [400, 350, 250])
    model = _model(epsilon=0.7, delta=1e-5, silo_epsilon=0.5, silo_delta=1e-6)
    pipe = PrivatePipeline([("model", model)], epsilon=1.0, random_state=0)
    _fit(pipe, X, y, silos=silos)
    budget = pipe.step_budgets_["model"]
    assert budget["delta"] == budget["plan"].delta == pytest.approx(1e-6)
    assert budget["epsilon"] == budget["plan"].epsilon == pipe[-1].epsilon_
    assert (pipe[-1].epsilon, pipe[-1].delta) == (0.7, 1e-5)
    # Whatever the step's own epsilon and delta, the plan is the same: a
    # share set as either would have had no effect.
    other = clone(pipe).set_params(model__epsilon=3.0, model__delta=1e-4)
    assert other.privacy_plan(N, 3, n_silos=3).dp_event == pipe.dp_event_


@pytest.mark.parametrize(
    "mask, error, match",
    [
        # Strings read as all public by a count of nonzero entries.
        (
            np.where(np.arange(N) < 100, "True", "False"),
            TypeError,
            "public_mask must be a boolean array",
        ),
        # Missing values, which a count refused with pandas' own error.
        (
            pd.array(np.where(np.arange(N) < 100, True, None), dtype="boolean"),
            TypeError,
            "public_mask must be a boolean array",
        ),
        (np.arange(N - 1) < 100, ValueError, "public_mask has shape"),
    ],
)
def test_public_mask_is_validated_as_the_final_step_validates_it(mask, error, match):
    X, _ = _numbers()
    y = X @ [1.0, 0.5, 0.0]
    pipe = PrivatePipeline(
        [
            ("scale", DPStandardScaler(bounds=BOUNDS)),
            ("model", SemiDPLinearRegression(feature_scaling=None)),
        ],
        random_state=0,
    )
    with pytest.raises(error, match=match):
        SemiDPLinearRegression(feature_scaling=None).fit(X, y, public_mask=mask)
    # Refused before any step releases, as the estimator itself refuses it.
    with logged_releases() as log, pytest.raises(error, match=match):
        pipe.fit(X, y, public_mask=mask)
    assert not log.counts
    assert not hasattr(pipe, "pipeline_")


# -- nested parallel and cached composites -----------------------------------


def _frame(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "age": rng.uniform(17, 90, n),
            "hours": rng.uniform(1, 99, n),
            "work": rng.choice(["Private", "Self", "Gov"], n),
        }
    )
    return X, (X.age.to_numpy() > 40).astype(int)


def test_nested_column_transformers_run_in_this_process():
    # Blocks fitted in other processes would release outside the fit's
    # release log: at any depth, in a block or a remainder.
    X, y = _frame()
    inner = ColumnTransformer(
        [
            ("a", DPStandardScaler(bounds=(17, 90)), ["age"]),
            ("h", DPStandardScaler(bounds=(1, 99)), ["hours"]),
        ],
        n_jobs=2,
    )
    rest = ColumnTransformer(
        [("w", DPOneHotEncoder(), [0])], remainder="drop", n_jobs=2
    )
    columns = ColumnTransformer(
        [("num", inner, ["age", "hours"])], remainder=rest, n_jobs=2
    )
    pipe = PrivatePipeline([("columns", columns), ("model", _model())], random_state=0)
    plan = pipe.privacy_plan(N, 3, feature_names=X.iloc[:0])
    _fit(pipe, X, y)
    _assert_planned(plan, pipe)
    assert list(pipe.step_budgets_) == [
        "columns__num__a",
        "columns__num__h",
        "columns__remainder__w",
        "model",
    ]
    # The steps given are untouched.
    assert inner.n_jobs == rest.n_jobs == columns.n_jobs == 2


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_blocks_run_in_this_thread_under_a_joblib_parallel_config(backend):
    # n_jobs=None would take the n_jobs of an enclosing parallel_config:
    # blocks fitted in joblib's workers release outside the fit's release
    # log (a context variable), and the fit's check refuses the pipeline.
    X, y = _frame()
    columns = ColumnTransformer(
        [
            ("a", DPStandardScaler(bounds=(17, 90)), ["age"]),
            ("h", DPStandardScaler(bounds=(1, 99)), ["hours"]),
        ]
    )
    union = FeatureUnion(
        [
            ("s", DPStandardScaler(bounds=BOUNDS)),
            ("t", DPStandardScaler(bounds=BOUNDS)),
        ]
    )
    pipe = PrivatePipeline(
        [("columns", columns), ("union", union), ("model", _model())],
        random_state=0,
    )
    plan = pipe.privacy_plan(N, 3, feature_names=X.iloc[:0])
    with joblib.parallel_config(backend=backend, n_jobs=2):
        _fit(pipe, X, y)
    _assert_planned(plan, pipe)
    assert pipe[0].n_jobs == pipe[1].n_jobs == 1
    assert columns.n_jobs is None and union.n_jobs is None


def test_composite_paths_reach_every_block_and_remainder():
    deep = Pipeline([("impute", DPSimpleImputer(bounds=BOUNDS))])
    ct = ColumnTransformer(
        [("num", ColumnTransformer([("p", deep, [0])]), [0, 1])],
        remainder=Pipeline([("c", ColumnTransformer([("s", "passthrough", [0])]))]),
    )
    cts, pipes, unions = composite_paths(
        Pipeline([("columns", ct), ("model", _model())])
    )
    assert cts == ["columns", "columns__num", "columns__remainder__c"]
    assert pipes == ["columns__num__p", "columns__remainder"]
    assert unions == []
    union = FeatureUnion([("a", deep), ("b", ColumnTransformer([("s", "drop", [0])]))])
    assert composite_paths(Pipeline([("u", union), ("model", _model())])) == (
        ["u__b"],
        ["u__a"],
        ["u"],
    )


def test_nested_pipeline_memory_is_not_used(tmp_path):
    # A step loaded from the cache of an earlier fit releases nothing in
    # this one, which its record would still account.
    X, y = _numbers()
    pre = Pipeline(
        [
            ("impute", DPSimpleImputer(bounds=BOUNDS)),
            ("scale", DPStandardScaler(bounds=BOUNDS)),
        ],
        memory=str(tmp_path),
    )
    pipe = PrivatePipeline([("pre", pre), ("model", _model())])
    plan = pipe.privacy_plan(N, 3)
    for _ in range(2):
        _fit(pipe, X, y)
        _assert_planned(plan, pipe)
    assert pipe.pipeline_[0].memory is None
    assert pre.memory == str(tmp_path)
    assert not any(tmp_path.iterdir())


# -- empty column selections -----------------------------------------------


@pytest.mark.parametrize(
    "columns, kept",
    [
        # A dtype selector that matches no column of the schema.
        (
            ColumnTransformer(
                [
                    (
                        "num",
                        DPSimpleImputer(bounds=(-5, 5)),
                        make_column_selector(dtype_include=np.number),
                    ),
                    (
                        "cat",
                        DPOneHotEncoder(),
                        make_column_selector(dtype_include=object),
                    ),
                ]
            ),
            ["columns__num"],
        ),
        # An empty list and an all-False mask.
        (
            ColumnTransformer(
                [
                    ("num", DPStandardScaler(bounds=BOUNDS), ["a", "b"]),
                    ("none", DPStandardScaler(bounds=BOUNDS), []),
                    ("mask", DPOneHotEncoder(), [False, False]),
                ]
            ),
            ["columns__num"],
        ),
        # A private remainder with no column left.
        (
            ColumnTransformer(
                [("num", DPStandardScaler(bounds=BOUNDS), ["a", "b"])],
                remainder=DPStandardScaler(bounds=(0, 1)),
            ),
            ["columns__num"],
        ),
    ],
)
def test_empty_selection_is_skipped_as_scikit_learn_skips_it(columns, kept):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.normal(size=N)})
    y = (X.a > 0).astype(int).to_numpy()
    pipe = PrivatePipeline([("columns", columns), ("model", _model())], random_state=0)
    plan = pipe.privacy_plan(N, 2, feature_names=X.iloc[:0])
    _fit(pipe, X, y)
    _assert_planned(plan, pipe)
    assert list(pipe.step_budgets_) == [*kept, "model"]
    assert pipe[:-1].transform(X.iloc[:3]).shape == (3, 2)


def test_empty_block_declares_no_bound_of_its_own():
    # Output perturbation takes the bound of the blocks that run.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.normal(size=N)})
    y = (X.a > 0).astype(int).to_numpy()
    columns = ColumnTransformer(
        [
            ("num", DPStandardScaler(bounds=BOUNDS), ["a", "b"]),
            ("cat", DPOneHotEncoder(), make_column_selector(dtype_include=object)),
        ]
    )
    pipe = PrivatePipeline(
        [
            ("columns", columns),
            ("model", _model(solver="output-perturbation", alpha=1.0)),
        ],
        random_state=0,
    )
    plan = pipe.privacy_plan(N, 2, feature_names=X.iloc[:0])
    _fit(pipe, X, y)
    _assert_planned(plan, pipe)
    scaler = pipe.pipeline_[0].named_transformers_["num"]
    assert pipe[-1].feature_norm_bound == pytest.approx(scaler.output_norm_bound_)


# -- a declared width after a function ------------------------------------


def test_declared_categories_fix_the_width_after_a_function():
    # A function's output width is unknown before the fit, but an encoder
    # with declared categories takes one column per list: its plan is made
    # there, not at a probe width its categories contradict.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 3, N), "b": rng.integers(0, 2, N)})
    y = (X.a.to_numpy() > 0).astype(int)
    pipe = PrivatePipeline(
        [
            ("text", FunctionTransformer(lambda X: X.astype(str))),
            ("encode", DPOneHotEncoder(categories=[["0", "1", "2"], ["0", "1"]])),
            ("model", _model()),
        ],
        random_state=0,
    )
    plan = pipe.privacy_plan(N, 2)
    steps = dict(plan.steps)
    assert dict(steps["encode"].public)["n_features"] == 2
    _fit(pipe, X, y)
    _assert_planned(plan, pipe)
    # The encoder's output width is public: the final step is planned at it.
    width = pipe[:-1].transform(X).shape[1]
    assert dict(steps["model"].public)["n_features"] == width


def test_bounds_per_column_fix_the_width_after_a_function():
    # So do bounds of one pair per column: the step's plan and fit refuse
    # any other width, so a probe width would refuse a valid pipeline.
    X, y = _numbers()
    pipe = PrivatePipeline(
        [
            ("first_two", FunctionTransformer(lambda X: X[:, :2])),
            ("scale", DPStandardScaler(bounds=[(-4.0, 4.0), (-5.0, 5.0)])),
            ("model", _model()),
        ],
        random_state=0,
    )
    plan = pipe.privacy_plan(N, 3)
    steps = dict(plan.steps)
    assert dict(steps["scale"].public)["n_features"] == 2
    assert dict(steps["model"].public)["n_features"] == 2
    _fit(pipe, X, y)
    _assert_planned(plan, pipe)


# -- a step's own budget ------------------------------------------------


def _with_own_epsilon(epsilon):
    encoded = DPOneHotEncoder(epsilon=epsilon)
    declared = DPOneHotEncoder(categories=[["Gov", "Private", "Self"]], epsilon=epsilon)
    columns = ColumnTransformer(
        [
            ("num", DPStandardScaler(bounds=(17, 90)), ["age"]),
            ("cat", encoded, ["work"]),
            ("known", declared, ["work"]),
        ]
    )
    return PrivatePipeline([("columns", columns), ("model", _model())], random_state=0)


def test_a_steps_own_epsilon_does_not_decide_its_share():
    # The pipeline replaces a private step's own epsilon and delta by its
    # share: too small to calibrate, they must not refuse the step, nor
    # make a free one (declared categories) take a share.
    X, y = _frame()
    fits = [_fit(_with_own_epsilon(epsilon), X, y) for epsilon in (1.0, 1e-3)]
    reference, small = fits
    assert small.dp_event_ == reference.dp_event_
    assert small.epsilon_ == reference.epsilon_
    budgets = [
        {
            path: (b["share"], b["epsilon"], b["delta"])
            for path, b in f.step_budgets_.items()
        }
        for f in fits
    ]
    assert budgets[0] == budgets[1]
    assert budgets[1]["columns__known"] == (0.0, 0.0, 0.0)
    assert budgets[1]["columns__cat"][1] > 1e-3
    assert small.privacy_plan(N, 3, feature_names=X.iloc[:0]).dp_event == (
        small.dp_event_
    )


# -- free encoders that would warn about a private row ----------------------


@pytest.mark.parametrize(
    "encoder, fix",
    [
        (OneHotEncoder(categories=[["a", "b"]], handle_unknown="warn"), "'ignore'"),
        (
            OneHotEncoder(
                categories=[["a", "b"]], handle_unknown="ignore", drop="first"
            ),
            "drop=None",
        ),
        (
            OneHotEncoder(
                categories=[["a", "b"]],
                handle_unknown="infrequent_if_exist",
                drop="first",
            ),
            "drop=None",
        ),
    ],
)
def test_one_hot_encoder_that_warns_on_unknown_is_refused(encoder, fix):
    pipe = PrivatePipeline([("enc", encoder), ("model", _model())], random_state=0)
    with pytest.raises(ValueError, match=rf"Step 'enc' \(OneHotEncoder\) warns.*{fix}"):
        pipe.privacy_plan(N, 1)
    X = pd.DataFrame({"c": ["a", "b", "c"] * (N // 3)})
    with pytest.raises(ValueError, match="warns during the fit"):
        pipe.fit(X, np.arange(len(X)) % 2)


def test_one_hot_encoder_ignoring_unknowns_is_free_and_silent():
    X = pd.DataFrame({"c": ["a"] * 500 + ["b"] * 499 + ["SECRET"]})
    y = np.r_[np.zeros(500), np.ones(500)].astype(int)
    encoder = OneHotEncoder(categories=[["a", "b"]], handle_unknown="ignore")
    units, width = walk_steps([("enc", encoder)], 1, final=False)
    assert units == [] and width == 2
    pipe = PrivatePipeline([("enc", encoder), ("model", _model())], random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X, y)
    assert not [w for w in caught if "unknown categories" in str(w.message)]


def test_spline_extrapolation_error_is_an_input_check_that_shows_no_value():
    # Documented as an input check outside the guarantee, as an encoder's
    # handle_unknown="error": it stops the fit and shows no value.
    X, y = _numbers(d=1)
    X[17, 0] = 123.456
    knots = np.linspace(-5, 5, 5)[:, None]
    pipe = PrivatePipeline(
        [
            ("spline", SplineTransformer(knots=knots, extrapolation="error")),
            ("model", _model()),
        ],
        random_state=0,
    )
    with pytest.raises(ValueError, match="beyond the limits of the knots") as exc:
        _fit(pipe, X, y)
    assert "123" not in str(exc.value)


@pytest.mark.parametrize(
    "final",
    [
        DPLogisticRegression(
            classes=[0, 1],
            solver="dp-frank-wolfe",
            l1_radius=10.0,
            feature_inf_bound=5.0,
        ),
        DPFERMIClassifier(classes=[0, 1], groups=[0, 1]),
    ],
    ids=["frank-wolfe", "dpfermi"],
)
def test_epsilon_inf_pipeline_is_not_refused_by_rules_of_a_finite_budget(final):
    # At epsilon=inf every part's event is non-private whatever its input
    # width: the width check probed at epsilon 1 refused what fits alone
    # (Frank-Wolfe's step count, DP-FERMI's small-budget rule at n = 50).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    s = (X[:, 1] > 0).astype(int)
    ct = ColumnTransformer(
        [
            ("num", DPStandardScaler(bounds=(-5.0, 5.0)), [0, 1]),
            ("cat", DPOneHotEncoder(), [2]),
        ]
    )
    pipe = make_private_pipeline(ct, final, epsilon=np.inf)
    kwargs = {"sensitive_features": s} if isinstance(final, DPFERMIClassifier) else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y, **kwargs)
    assert pipe.epsilon_ == np.inf
    # The record describes what ran: the final step's non-private limit.
    assert "non-private limit" in pipe.privacy_record_.mechanism


@pytest.mark.parametrize(
    "names",
    [["a", "b", "c", "d", "e", "f"], pd.DataFrame(columns=["a", "b"])],
    ids=["six names", "two-column frame"],
)
def test_a_plan_refuses_feature_names_of_another_width(names):
    # A plan for 3 columns was made with the names of 6 (or 2), resolving
    # the selections by a schema the fit would not see.
    columns = ColumnTransformer(
        [("num", DPStandardScaler(bounds=(0.0, 100.0)), ["a", "b"])]
    )
    pipe = PrivatePipeline([("columns", columns), ("model", _model())])
    with pytest.raises(ValueError, match="feature_names has .* n_features is 3"):
        pipe.privacy_plan(N, 3, feature_names=names)
    pipe.privacy_plan(N, 3, feature_names=["a", "b", "c"])
