# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivatePipeline: one budget, planned before the fit, released as planned."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    StandardScaler,
)

from sklearn_dpfair.linear_model import (
    DPFERMIClassifier,
    DPLogisticRegression,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
    SemiLocalDPLinearRegression,
)
from sklearn_dpfair.pipeline import PrivatePipeline, make_private_pipeline
from sklearn_dpfair.preprocessing import (
    DPOneHotEncoder,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPStandardScaler,
)
from sklearn_dpfair.privacy import PrivacyLedger, PrivacyPlan
from sklearn_dpfair.privacy._record import WEIGHTS_CAVEAT

N = 1200
CAT_COLUMNS = ["job", "sex"]
NUM_COLUMNS = ["age", "hours"]
NUM_BOUNDS = [(0.0, 120.0), (0.0, 120.0)]


def _raw_frame(seed=0, n=N):
    """Raw-scale table: strings, missing numbers and missing categories."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.normal(40, 12, n).round(),
            "hours": rng.normal(40, 10, n),
            "job": rng.choice(["clerk", "nurse", "driver"], n),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    df.loc[rng.random(n) < 0.1, "hours"] = np.nan
    df.loc[rng.random(n) < 0.05, "job"] = None
    logit = 0.1 * (df["age"] - 40) + (df["job"] == "nurse") - 0.5 * (df["sex"] == "M")
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int).to_numpy()
    return df, y


def _raw_array(seed=0, n=N):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0] + [500.0, 0.0, 0.0]
    y = (X[:, 0] - 500.0 + 0.05 * X[:, 1] > 0).astype(int)
    return X, y


ARRAY_BOUNDS = [(495.0, 505.0), (-40.0, 40.0), (-400.0, 400.0)]


def _column_pipeline(final, epsilon=1.0):
    columns = ColumnTransformer(
        [
            (
                "num",
                Pipeline(
                    [
                        ("impute", DPSimpleImputer(bounds=NUM_BOUNDS)),
                        ("scale", DPStandardScaler(bounds=NUM_BOUNDS)),
                    ]
                ),
                NUM_COLUMNS,
            ),
            ("cat", DPOneHotEncoder(), CAT_COLUMNS),
        ]
    )
    return PrivatePipeline([("columns", columns), ("model", final)], epsilon=epsilon)


def _fit(pipe, X, y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short fits' ConvergenceWarning
        return pipe.fit(X, y, **kwargs)


def _assert_planned(plan, pipe, epsilon, delta=1e-5):
    assert isinstance(plan, PrivacyPlan)
    assert plan.dp_event == pipe.dp_event_
    assert plan.adjacency == pipe.adjacency_
    assert plan.delta == pipe.delta_
    assert plan.epsilon == pipe.epsilon_
    assert pipe.epsilon_ <= epsilon
    assert plan.total_delta == pytest.approx(delta, rel=1e-12)
    assert [name for name, _ in plan.steps] == list(pipe.step_budgets_)
    for path, step_plan in plan.steps:
        assert step_plan.dp_event == pipe.step_budgets_[path]["plan"].dp_event
    # Recomputed from the recorded event by the accountant.
    assert pipe.privacy_record_.recompute_epsilon() == pipe.epsilon_


def test_scaler_and_logistic_plan_is_the_fitted_event():
    X, y = _raw_array()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPLogisticRegression(classes=[0, 1], max_iter=3),
        epsilon=1.0,
    )
    plan = pipe.privacy_plan(N, 3)
    _fit(pipe, X, y)
    _assert_planned(plan, pipe, 1.0)
    assert pipe.adjacency_ == "add_remove"
    # The composition is tighter than the sum: the steps' epsilons add up
    # to more than the total.
    assert pipe.budget_scale_ > 1.0
    assert sum(b["epsilon"] for b in pipe.step_budgets_.values()) > pipe.epsilon_
    # Default shares: 15% to the preprocessing, 85% to the model.
    shares = {p: b["share"] for p, b in pipe.step_budgets_.items()}
    assert shares == pytest.approx(
        {"dpstandardscaler": 0.15, "dplogisticregression": 0.85}
    )
    # The plan reads no row: other data, same event.
    X2, y2 = _raw_array(seed=1)
    _fit(pipe, X2 * 2.0, y2)
    _assert_planned(plan, pipe, 1.0)


def test_column_transformer_on_raw_frame_plan_is_the_fitted_event():
    df, y = _raw_frame()
    pipe = _column_pipeline(DPLogisticRegression(classes=[0, 1], max_iter=3))
    plan = pipe.privacy_plan(N, 4, feature_names=list(df.columns))
    _fit(pipe, df, y)
    _assert_planned(plan, pipe, 1.0)
    assert list(pipe.step_budgets_) == [
        "columns__num__impute",
        "columns__num__scale",
        "columns__cat",
        "model",
    ]
    # The category discovery's threshold delta is set apart from the event.
    encoder = pipe.pipeline_.named_steps["columns"].named_transformers_["cat"]
    assert pipe.additional_delta_ == encoder.threshold_delta_ > 0
    assert pipe.delta_ + pipe.additional_delta_ == pytest.approx(1e-5, rel=1e-12)
    # The texts state the whole guarantee's delta, not the event's alone
    # (they said delta = 9.63e-06 for a (epsilon, 1e-05)-DP fit).
    for record, outside in (
        (pipe.privacy_record_, pipe.additional_delta_),
        (encoder.privacy_record_, encoder.threshold_delta_),
    ):
        assert record.additional_delta == outside
        total = f"{record.delta + outside:.3g}"
        assert f"delta = {total};" in record.plain_language()
        assert f", {total})-differential privacy" in record.technical_text()
    assert pipe.predict(df).shape == (N,)
    assert pipe.predict_proba(df).shape == (N, 2)
    np.testing.assert_array_equal(pipe.classes_, [0, 1])
    np.testing.assert_array_equal(pipe.feature_names_in_, df.columns)


def test_fermi_with_sensitive_features_plan_is_the_fitted_event():
    X, y = _raw_array()
    groups = np.random.default_rng(3).choice(["a", "b"], N)
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPFERMIClassifier(classes=[0, 1], groups=["a", "b"], max_iter=2),
        epsilon=2.0,
    )
    plan = pipe.privacy_plan(N, 3)
    # Plain keyword: to the final estimator.
    _fit(pipe, X, y, sensitive_features=groups)
    _assert_planned(plan, pipe, 2.0)
    np.testing.assert_array_equal(pipe.pipeline_[-1].groups_, ["a", "b"])


def test_semi_dp_with_public_mask_converts_to_replace_one():
    X, _ = _raw_array()
    y = X @ [1.0, 0.1, 0.01] + np.random.default_rng(1).normal(size=N)
    mask = np.zeros(N, dtype=bool)
    mask[:100] = True
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS), SemiDPLinearRegression(), epsilon=1.0
    )
    plan = pipe.privacy_plan(N, 3, n_public=100)
    _fit(pipe, X, y, public_mask=mask)
    _assert_planned(plan, pipe, 1.0)
    # The semi-private fit is replace-one: the scaler's add/remove Gaussian
    # is stated under replace-one with half its noise multiplier.
    assert pipe.adjacency_ == "replace_one"
    scaler_plan = pipe.step_budgets_["dpstandardscaler"]["plan"]
    assert scaler_plan.adjacency == "add_remove"
    assert pipe.dp_event_.events[0].noise_multiplier == pytest.approx(
        scaler_plan.dp_event.noise_multiplier / 2, rel=1e-15
    )
    assert pipe.pipeline_[-1].n_public_ == 100
    assert "converted to replace-one" in pipe.privacy_summary()


def _scaler_then_output_perturbation(epsilon):
    # A replace-one final step after an add/remove one: the composition
    # converts the scaler's event by group privacy of two records.
    return make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPLogisticRegression(classes=[0, 1], solver="output-perturbation", alpha=0.01),
        epsilon=epsilon,
    )


def test_records_at_epsilon_inf_name_no_noise_and_no_conversion():
    X, y = _raw_array()
    pipe = _fit(_scaler_then_output_perturbation(math.inf), X, y)
    assert pipe.adjacency_ == "replace_one"
    scaler = pipe.pipeline_[0].privacy_record_.mechanism
    # The final estimator's own record names the mechanism its non-private
    # limit stands for; the pipeline's texts are checked without it.
    model = pipe.pipeline_[-1].privacy_record_.mechanism
    summary = pipe.privacy_summary()
    for text in (pipe.privacy_record_.mechanism, summary):
        own = text.replace(model, "")
        for word in ("Gaussian", "halved", "rho times", "planned releases"):
            assert word not in own
    assert scaler.startswith("DPStandardScaler: non-private limit")
    lines = summary.split("Budget per step:\n")[1].splitlines()
    assert lines[0].endswith(f" -- {scaler}")
    assert lines[1].endswith(f" -- {model}")


def test_records_at_finite_epsilon_name_each_step_and_the_conversion():
    X, y = _raw_array()
    pipe = _fit(_scaler_then_output_perturbation(1.0), X, y)
    budgets = pipe.step_budgets_
    texts = [
        f"{path} (epsilon {budgets[path]['epsilon']:.4g}, delta "
        f"{budgets[path]['delta']:.3g}: {part.privacy_record_.mechanism})"
        for path, part in zip(budgets, (pipe.pipeline_[0], pipe.pipeline_[-1]))
    ]
    assert pipe.privacy_record_.mechanism == (
        "Private pipeline, sequential composition of: " + "; ".join(texts) + "; "
        "the add/remove steps converted to replace-one by group privacy of two "
        "records (Gaussian noise multiplier halved, zCDP rho times 4)"
    )
    lines = pipe.privacy_summary().split("Budget per step:\n")[1].splitlines()
    for line, part in zip(lines, (pipe.pipeline_[0], pipe.pipeline_[-1])):
        assert line.endswith(f" -- {part.privacy_record_.mechanism}")


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_epsilon_is_within_the_target_and_close_to_it(epsilon):
    pipe = _column_pipeline(DPLogisticRegression(classes=[0, 1], max_iter=3), epsilon)
    plan = pipe.privacy_plan(5000, 4, feature_names=NUM_COLUMNS + CAT_COLUMNS)
    assert epsilon * 0.99 <= plan.epsilon <= epsilon


def test_budget_shares_by_step_and_by_block():
    pipe = _column_pipeline(DPLogisticRegression(classes=[0, 1], max_iter=3))
    pipe.set_params(budget_shares={"columns": 1.0, "model": 3.0})
    plan = pipe.privacy_plan(N, 4, feature_names=NUM_COLUMNS + CAT_COLUMNS)
    steps = dict(plan.steps)
    assert steps["model"].delta == pytest.approx(0.75e-5)
    assert steps["columns__cat"].total_delta == pytest.approx(0.25e-5 / 3)
    pipe.set_params(
        budget_shares={"columns__num": 1.0, "columns__cat": 1.0, "model": 2.0}
    )
    plan = pipe.privacy_plan(N, 4, feature_names=NUM_COLUMNS + CAT_COLUMNS)
    assert dict(plan.steps)["columns__num__scale"].delta == pytest.approx(0.125e-5)
    with pytest.raises(ValueError, match="gives no share.*columns__cat"):
        pipe.set_params(budget_shares={"columns__num": 1.0, "model": 1.0}).privacy_plan(
            N, 4, feature_names=NUM_COLUMNS + CAT_COLUMNS
        )
    with pytest.raises(ValueError, match="'scaler', which is not a private step"):
        pipe.set_params(budget_shares={"scaler": 1.0}).privacy_plan(
            N, 4, feature_names=NUM_COLUMNS + CAT_COLUMNS
        )


@pytest.mark.parametrize(
    "steps, match",
    [
        (
            [("scale", StandardScaler())],
            r"Step 'scale' \(StandardScaler\).*DPStandardScaler",
        ),
        ([("pca", PCA(2))], r"Step 'pca' \(PCA\) learns from the private rows"),
        ([("impute", SimpleImputer())], r"Step 'impute'.*DPSimpleImputer"),
        (
            [("columns", ColumnTransformer([("cat", OneHotEncoder(), [0])]))],
            r"Step 'columns__cat' \(OneHotEncoder\).*DPOneHotEncoder",
        ),
        (
            [
                (
                    "columns",
                    ColumnTransformer(
                        [
                            (
                                "cat",
                                OneHotEncoder(categories=[[0, 1]], min_frequency=5),
                                [0],
                            )
                        ]
                    ),
                )
            ],
            r"Step 'columns__cat'.*counting the private rows",
        ),
    ],
)
def test_steps_that_learn_without_a_plan_are_refused(steps, match):
    pipe = PrivatePipeline([*steps, ("model", DPLogisticRegression(classes=[0, 1]))])
    X, y = _raw_array()
    with pytest.raises(ValueError, match=match):
        pipe.privacy_plan(N, 3)
    with pytest.raises(ValueError, match=match):
        pipe.fit(X, y)
    assert not hasattr(pipe, "pipeline_")


def test_non_private_final_estimator_is_refused():
    pipe = make_private_pipeline(DPStandardScaler(bounds=(0, 1)), LogisticRegression())
    with pytest.raises(ValueError, match="logisticregression.*DPLogisticRegression"):
        pipe.privacy_plan(N, 3)


def test_estimator_without_a_plan_is_refused():
    # A fixed noise multiplier the step's share cannot afford: no plan.
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(0, 1)),
        DPLogisticRegression(classes=[0, 1], noise_multiplier=1.0),
    )
    with pytest.raises(ValueError, match="'dplogisticregression'.*no privacy plan"):
        pipe.privacy_plan(N, 3)
    # The heavy-tail solvers are planned, and compose.
    for solver in ("dp-sgd", "localized"):
        planned = make_private_pipeline(
            DPStandardScaler(bounds=(0, 1)), HeavyTailDPRegressor(solver=solver)
        ).privacy_plan(N, 3)
        assert planned.epsilon <= 1.0


def test_a_local_dp_estimator_is_refused_before_any_row_is_read():
    X, y = _raw_array()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS), SemiLocalDPLinearRegression()
    )
    with pytest.raises(ValueError, match="local-DP estimator with no delta"):
        pipe.privacy_plan(N, 3)
    with pytest.raises(ValueError, match="local-DP estimator with no delta"):
        pipe.fit(X, y.astype(float))
    assert not hasattr(pipe, "pipeline_")


def test_free_steps_cost_nothing():
    X, y = _raw_array()
    free = ColumnTransformer(
        [
            ("log", FunctionTransformer(np.abs), [1, 2]),
            ("sign", OneHotEncoder(categories=[[False, True]]), [0]),
        ]
    )
    pipe = PrivatePipeline(
        [
            (
                "sign",
                FunctionTransformer(
                    lambda Z: np.column_stack([Z[:, 0] > 500, Z[:, 1:]])
                ),
            ),
            ("free", free),
            ("model", DPLogisticRegression(classes=[0, 1], max_iter=2)),
        ]
    )
    plan = pipe.privacy_plan(N, 3)
    _fit(pipe, X, y)
    _assert_planned(plan, pipe, 1.0)
    assert list(pipe.step_budgets_) == ["model"]
    assert pipe.step_budgets_["model"]["share"] == 1.0


def test_width_known_only_after_a_private_discovery():
    # DP-SGD's event does not read the width: planned, then checked.
    df, y = _raw_frame()
    pipe = make_private_pipeline(
        DPOneHotEncoder(), DPLogisticRegression(classes=[0, 1], max_iter=2)
    )
    plan = pipe.privacy_plan(N, 2)
    _fit(pipe, df[CAT_COLUMNS], y)
    _assert_planned(plan, pipe, 1.0)
    # The model's plan was made at a probe width: it records none.
    public = dict(pipe.step_budgets_["dplogisticregression"]["plan"].public)
    assert public["n_features"] == "unknown before the fit"
    assert dict(pipe.step_budgets_["dponehotencoder"]["plan"].public)["n_features"] == 2
    # Frank-Wolfe's step count reads the number of vertices (2 d K).
    pipe = make_private_pipeline(
        DPOneHotEncoder(),
        DPLogisticRegression(
            classes=[0, 1],
            solver="dp-frank-wolfe",
            l1_radius=1.0,
            feature_inf_bound=1.0,
        ),
    )
    with pytest.raises(
        ValueError, match="'dplogisticregression'.*number of input columns.*fw_steps"
    ):
        pipe.privacy_plan(N, 2)


@pytest.mark.parametrize(
    "final, n_samples, epsilon, fix",
    [
        (
            DPLogisticRegression(classes=[0, 1], feature_scaling="auto"),
            N,
            1.0,
            {"feature_scaling": None},
        ),
        # n epsilon = 90 (30): DP-FERMI's (DPLogisticRegression's)
        # intercept-only rule affords the model's 2 parameters at width 1,
        # not 8 at width 7; DP-FERMI's "choose" reads no width.
        (DPFERMIClassifier(classes=[0, 1]), 300, 0.3, {"small_budget": "choose"}),
        (DPLogisticRegression(classes=[0, 1]), 100, 0.3, {"small_budget": "fit"}),
        # Private column scales: 3 releases a column (HeavyTail), private
        # quantiles of every column (SemiDP; its target's alone stay).
        (HeavyTailDPRegressor(), N, 4.0, {"feature_bounds": None}),
        (SemiDPLinearRegression(), N, 4.0, {"feature_scaling": None}),
    ],
)
def test_width_error_names_the_parameter_that_reads_it(
    final, n_samples, epsilon, fix
):
    pipe = make_private_pipeline(DPOneHotEncoder(), clone(final), epsilon=epsilon)
    ((param, value),) = fix.items()
    named = f"Its {param}={final.get_params()[param]!r}"
    with pytest.raises(ValueError, match=f"number of input columns.*{named}") as info:
        pipe.privacy_plan(n_samples, 2)
    assert f"set {param}={value!r}" in str(info.value)
    # Changing that parameter makes the plan width-free.
    pipe.steps[-1][1].set_params(**fix)
    pipe.privacy_plan(n_samples, 2)


def test_width_error_on_a_sparse_input_names_the_parameter_too():
    # The hint's probe of another value of the parameter must not turn into
    # the sparse layout's refusal of that value.
    X = sp.csr_matrix(np.abs(np.random.default_rng(0).normal(size=(30, 2))))
    pipe = make_private_pipeline(
        FunctionTransformer(np.sqrt, accept_sparse=True),
        DPLogisticRegression(classes=[0, 1], feature_bounds=[(0.0, 5.0)] * 2),
    )
    with pytest.raises(ValueError, match="number of input columns") as info:
        pipe.fit(X, np.arange(30) % 2)
    assert "set small_budget='fit'" in str(info.value)


def _repeat_columns(X, times):
    return np.repeat(np.asarray(X, dtype=float), times, axis=1)


@pytest.mark.parametrize(
    "final, fallback",
    [
        (DPLogisticRegression(classes=[0, 1], max_iter=2), "fit"),
        # DP-FERMI's plan at the probe width has the private choice too.
        (DPFERMIClassifier(classes=[0, 1], groups=["a", "b"], max_iter=2), "choose"),
    ],
)
def test_final_width_known_at_fit_runs_the_planned_model(final, fallback):
    # A function's output width is not public before the fit: the final step
    # is planned at a probe width, where n epsilon affords the model; on the
    # 900 columns it gets, small_budget='auto' would release the constant,
    # which the pipeline did not account. The planned fit runs, and says so.
    X, y = _raw_array()
    groups = np.where(np.arange(N) % 3 == 0, "a", "b")
    routed = {"sensitive_features": groups} if fallback == "choose" else {}
    final = clone(final)
    pipe = make_private_pipeline(
        FunctionTransformer(_repeat_columns, kw_args={"times": 300}), final
    )
    plan = pipe.privacy_plan(N, X.shape[1])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe.fit(X, y, **routed)
    (width,) = [w for w in record if "planned before" in str(w.message)]
    assert "900 columns" in str(width.message)
    assert f"small_budget={fallback!r}" in str(width.message)
    assert width.filename == __file__
    _assert_planned(plan, pipe, 1.0)
    assert not pipe[-1].intercept_only_ or fallback == "choose"
    assert pipe[-1].small_budget == fallback and final.small_budget == "auto"
    # Where the width leaves the plan as it was, nothing is said.
    pipe.set_params(functiontransformer__kw_args={"times": 2})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pipe.fit(X, y, **routed)
    assert not [w for w in record if "planned before" in str(w.message)]
    assert pipe[-1].small_budget == "auto"


def test_output_bound_flows_to_the_final_estimator():
    X, y = _raw_array(n=4000)
    final = DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", alpha=0.01
    )
    pipe = make_private_pipeline(
        DPQuantileTransformer(bounds=ARRAY_BOUNDS), final, epsilon=2.0
    )
    plan = pipe.privacy_plan(4000, 3)
    _fit(pipe, X, y)
    _assert_planned(plan, pipe, 2.0)
    transformer, fitted = pipe.pipeline_[0], pipe.pipeline_[-1]
    assert fitted.feature_norm_bound == transformer.output_norm_bound_
    assert final.feature_norm_bound is None  # the user's step is untouched
    assert pipe.adjacency_ == "replace_one"
    # Frank-Wolfe's plan reads its bound: it must be declared.
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPLogisticRegression(classes=[0, 1], solver="dp-frank-wolfe", l1_radius=1.0),
    )
    with pytest.raises(
        ValueError, match="feature_inf_bound=None.*Set feature_inf_bound"
    ):
        pipe.privacy_plan(4000, 3)


def test_a_block_that_outputs_no_column_bounds_nothing():
    # Every category is one row's: the encoder keeps none, and its block of
    # the ColumnTransformer adds nothing to the bound the final step reads.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=40), "c": [f"id{i}" for i in range(40)]})
    y = np.arange(40) % 2
    columns = ColumnTransformer(
        [
            ("num", DPStandardScaler(bounds=(-3.0, 3.0)), ["x"]),
            ("cat", DPOneHotEncoder(handle_unknown="ignore"), ["c"]),
        ]
    )
    pipe = make_private_pipeline(
        columns,
        DPLogisticRegression(
            classes=[0, 1], solver="output-perturbation", alpha=0.01,
            small_budget="fit",
        ),
        random_state=0,
    )
    _fit(pipe, X, y)
    encoder = pipe.pipeline_[0].named_transformers_["cat"]
    assert encoder.output_bounds_.shape == (0, 2)
    scaler = pipe.pipeline_[0].named_transformers_["num"]
    assert pipe.pipeline_[-1].feature_norm_bound == pytest.approx(
        math.hypot(scaler.output_norm_bound_, encoder.output_norm_bound_)
    )


def test_fit_does_not_mutate_the_steps():
    df, y = _raw_frame()
    pipe = _column_pipeline(DPLogisticRegression(classes=[0, 1], max_iter=2))
    before = {k: repr(v) for k, v in pipe.get_params(deep=True).items()}
    _fit(pipe, df, y)
    after = {k: repr(v) for k, v in pipe.get_params(deep=True).items()}
    assert before == after
    columns = pipe.named_steps["columns"]
    assert not hasattr(columns, "transformers_")
    assert not hasattr(pipe.named_steps["model"], "coef_")
    assert pipe.named_steps["model"].epsilon == 1.0
    assert pipe.pipeline_.named_steps["model"] is not pipe.named_steps["model"]


def test_step_params_are_addressed_like_a_pipeline():
    pipe = _column_pipeline(DPLogisticRegression(classes=[0, 1]))
    params = pipe.get_params()
    assert params["model__alpha"] == 0.0
    assert params["columns__cat__handle_unknown"] == "other"
    pipe.set_params(model__alpha=0.5, epsilon=2.0)
    assert pipe.named_steps["model"].alpha == 0.5 and pipe.epsilon == 2.0
    cloned = clone(pipe)
    assert cloned.get_params()["model__alpha"] == 0.5
    assert cloned.named_steps["model"] is not pipe.named_steps["model"]


def test_sample_weight_and_step_params_are_routed():
    X, y = _raw_array()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
    )
    _fit(pipe, X, y, sample_weight=np.ones(N))
    assert WEIGHTS_CAVEAT in pipe.pipeline_[-1].privacy_caveats_
    assert WEIGHTS_CAVEAT in pipe.privacy_caveats_
    _fit(pipe, X, y, dplogisticregression__sample_weight=np.ones(N))
    assert WEIGHTS_CAVEAT in pipe.privacy_caveats_


def test_metadata_routing():
    X, y = _raw_array()
    groups = np.random.default_rng(3).integers(0, 2, N)
    with sklearn.config_context(enable_metadata_routing=True):
        final = DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2)
        final.set_fit_request(sensitive_features=True, sample_weight=False)
        pipe = make_private_pipeline(DPStandardScaler(bounds=ARRAY_BOUNDS), final)
        plan = pipe.privacy_plan(N, 3)
        _fit(pipe, X, y, sensitive_features=groups)
        _assert_planned(plan, pipe, 1.0)
        assert pipe.pipeline_[-1].group_marginals_.shape == (2,)
        unrequested = make_private_pipeline(
            DPStandardScaler(bounds=ARRAY_BOUNDS),
            DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2),
        )
        with pytest.raises(Exception, match="sensitive_features"):
            _fit(unrequested, X, y, sensitive_features=groups)


def test_metadata_routing_without_fit_parameters():
    # scikit-learn's routing result for no parameters has no __contains__:
    # the fit must not test membership on it (it never returned).
    X, y = _raw_array()
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_private_pipeline(
            DPStandardScaler(bounds=ARRAY_BOUNDS),
            DPLogisticRegression(classes=[0, 1], max_iter=2),
        )
        plan = pipe.privacy_plan(N, 3)
        _fit(pipe, X, y)
        _assert_planned(plan, pipe, 1.0)


def test_declared_groups_without_sensitive_features_fit_one_group():
    # DP-FERMI fits one group when no sensitive features reach it, whatever
    # groups it declares: the pipeline plans that fit, as its plan at
    # n_groups=1 says.
    X, y = _raw_array()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2),
    )
    _fit(pipe, X, y)
    _assert_planned(pipe.privacy_plan(N, 3, n_groups=1), pipe, 1.0)


def test_undeclared_groups_are_counted_as_the_estimator_reads_them():
    X, y = _raw_array()
    groups = np.random.default_rng(3).integers(0, 3, N)
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPFERMIClassifier(classes=[0, 1], max_iter=2),
    )
    _fit(pipe, X, y, sensitive_features=groups)
    _assert_planned(pipe.privacy_plan(N, 3, n_groups=3), pipe, 1.0)
    assert "group set inferred from the private data" in pipe.privacy_caveats_


def test_ledger_records_the_pipeline_once():
    X, y = _raw_array()
    ledger = PrivacyLedger()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
        accountant=ledger,
    )
    _fit(pipe, X, y)
    assert len(ledger) == 1
    assert ledger.entries[0].dp_event == pipe.dp_event_
    assert ledger.total_epsilon() == pytest.approx(pipe.epsilon_)


def test_privacy_summary_shows_the_budget_per_step():
    df, y = _raw_frame()
    pipe = _fit(
        _column_pipeline(DPLogisticRegression(classes=[0, 1], max_iter=2)), df, y
    )
    summary = pipe.privacy_summary()
    assert "Budget per step:" in summary
    for path in pipe.step_budgets_:
        assert f"  {path}: share" in summary
    assert "further delta" in summary


def test_seeded_steps_make_a_seeded_record():
    X, y = _raw_array()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS, random_state=0),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
    )
    _fit(pipe, X, y)
    assert pipe.privacy_record_.seeded
    assert "dpstandardscaler=" in pipe.privacy_record_.seed


def _log_loss(model, X, y):
    p = np.clip(model.predict_proba(X)[:, 1], 1e-300, 1 - 1e-16)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def test_epsilon_inf_matches_the_non_private_pipeline_on_raw_data():
    df, y = _raw_frame(n=3000)
    private = _column_pipeline(DPLogisticRegression(classes=[0, 1]), epsilon=math.inf)
    # Bounds that clip nothing: the scaler and imputer are exact at inf.
    private.set_params(
        columns__num__impute__bounds=[(-1e3, 1e3)] * 2,
        columns__num__scale__bounds=[(-1e3, 1e3)] * 2,
    )
    _fit(private, df, y)
    assert math.isinf(private.epsilon_)
    reference = make_pipeline(
        ColumnTransformer(
            [
                ("num", make_pipeline(SimpleImputer(), StandardScaler()), NUM_COLUMNS),
                ("cat", OneHotEncoder(handle_unknown="ignore"), CAT_COLUMNS),
            ]
        ),
        LogisticRegression(C=np.inf, max_iter=1000),
    ).fit(df, y)
    ours, theirs = _log_loss(private, df, y), _log_loss(reference, df, y)
    # Unpenalized logistic regression on the same features (up to an
    # all-zero "other" column): the same minimum, to the solvers' tolerance.
    assert ours <= theirs * 1.01
    assert np.mean(private.predict(df) == reference.predict(df)) > 0.99


def test_pipeline_seed_seeds_every_step():
    X, y = _raw_array()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
        random_state=0,
    )
    first = _fit(pipe, X, y).decision_function(X)
    second = _fit(clone(pipe), X, y).decision_function(X)
    np.testing.assert_array_equal(first, second)
    assert pipe.privacy_record_.seeded
    assert pipe.named_steps["dpstandardscaler"].random_state is None


def test_the_fit_is_checked_against_the_composed_event(monkeypatch):
    # Were the scaler's releases handed on unconverted, the pipeline's fit
    # would run releases its replace-one event does not account.
    from sklearn_dpfair.exceptions import PrivacyAccountingError
    from sklearn_dpfair.pipeline import _pipeline

    X, _ = _raw_array()
    y = X[:, 0] - 500.0
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS), SemiDPLinearRegression()
    )
    monkeypatch.setattr(
        _pipeline, "replace_one_release", lambda kind, level: (kind, level)
    )
    with pytest.raises(
        PrivacyAccountingError, match="PrivatePipeline.fit ran releases"
    ):
        _fit(pipe, X, y)
    assert not hasattr(pipe, "pipeline_")


def test_utility_rises_with_epsilon():
    # Output perturbation after a private scaler, on raw-scale columns.
    X, y = _raw_array(n=4000)
    accuracy = {}
    for epsilon in (0.1, 8.0):
        scores = []
        for seed in range(3):
            pipe = make_private_pipeline(
                DPStandardScaler(bounds=ARRAY_BOUNDS),
                DPLogisticRegression(
                    classes=[0, 1], solver="output-perturbation", alpha=0.01
                ),
                epsilon=epsilon,
                # Even shares: the scaler's epsilon stays within what the
                # RDP orders certify at the smaller budget.
                budget_shares={"dpstandardscaler": 1, "dplogisticregression": 1},
                random_state=seed,
            )
            scores.append(_fit(pipe, X, y).score(X, y))
        accuracy[epsilon] = np.median(scores)
    assert accuracy[8.0] > 0.9
    assert accuracy[8.0] > accuracy[0.1] + 0.1


def test_column_transformer_blocks_run_in_this_process():
    # Blocks fitted by other processes would release outside the fit's
    # release log, and the fit's check would refuse the pipeline.
    X, y = _raw_array()
    columns = ColumnTransformer(
        [
            ("a", DPStandardScaler(bounds=ARRAY_BOUNDS[:1]), [0]),
            ("b", DPStandardScaler(bounds=ARRAY_BOUNDS[1:]), [1, 2]),
        ],
        n_jobs=2,
    )
    pipe = PrivatePipeline(
        [
            ("columns", columns),
            (
                "model",
                DPLogisticRegression(
                    classes=[0, 1], solver="output-perturbation", alpha=0.1
                ),
            ),
        ]
    )
    plan = pipe.privacy_plan(N, 3)
    _fit(pipe, X, y)
    _assert_planned(plan, pipe, 1.0)
    assert columns.n_jobs == 2
    # The output bound of a ColumnTransformer: the l2 norm of its blocks'.
    fitted = pipe.pipeline_.named_steps["columns"].named_transformers_
    assert pipe.pipeline_[-1].feature_norm_bound == pytest.approx(
        math.hypot(fitted["a"].output_norm_bound_, fitted["b"].output_norm_bound_)
    )


def test_indexing_returns_the_fitted_steps_as_a_pipeline_does():
    df, y = _raw_frame()
    pipe = _column_pipeline(DPLogisticRegression(classes=[0, 1]))
    pipe.set_params(random_state=0)
    with pytest.raises(NotFittedError, match="steps and named_steps"):
        pipe[-1]
    _fit(pipe, df, y)
    assert len(pipe) == 2
    assert pipe[-1] is pipe.pipeline_[-1] is pipe["model"]
    assert pipe[-1].coef_.shape[0] == 1
    # The given steps are untouched; a slice is the fitted preprocessing.
    assert not hasattr(pipe.named_steps["model"], "coef_")
    head = pipe[:-1]
    assert isinstance(head, Pipeline)
    assert head.steps[0][1] is pipe.pipeline_.steps[0][1]
    assert head.transform(df).shape == (len(df), pipe[-1].coef_.shape[1])


def test_set_output_reaches_the_fitted_steps():
    df, y = _raw_frame()
    pipe = _column_pipeline(DPLogisticRegression(classes=[0, 1]))
    pipe.set_params(random_state=0).set_output(transform="pandas")
    _fit(pipe, df, y)
    out = pipe[:-1].transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(pipe[:-1].get_feature_names_out())


# As scikit-learn's, a step fitted on arrays warns when given a frame.
@pytest.mark.filterwarnings("ignore:X has feature names")
def test_set_output_after_the_fit_reaches_the_fitted_steps():
    # As with a Pipeline, whose fitted steps are the steps as given.
    df, y = _raw_frame()
    pipe = _column_pipeline(DPLogisticRegression(classes=[0, 1]))
    _fit(pipe.set_params(random_state=0), df, y)
    assert isinstance(pipe[:-1].transform(df), np.ndarray)
    pipe.set_output(transform="pandas")
    assert isinstance(pipe[:-1].transform(df), pd.DataFrame)
    pipe.set_output(transform="default")
    assert isinstance(pipe[:-1].transform(df), np.ndarray)


def test_a_share_too_small_for_rdp_names_the_pipeline_accountant():
    # epsilon = 0.05: each of the encoder's blocks gets 0.0025, below what
    # RDP's orders certify; the error says what to pass to the pipeline.
    pipe = make_private_pipeline(
        ColumnTransformer([(c, DPOneHotEncoder(), [c]) for c in CAT_COLUMNS]),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=0.05,
    )
    with pytest.raises(ValueError, match="pass accountant='pld' to the pipeline"):
        pipe.privacy_plan(N, 2, feature_names=CAT_COLUMNS)
    pipe.set_params(accountant="pld")
    assert pipe.privacy_plan(N, 2, feature_names=CAT_COLUMNS).epsilon <= 0.05


def test_nullable_and_categorical_columns_are_not_cast_together():
    # pandas' nullable dtypes beside a categorical of strings cannot be cast
    # to one float array; each step reads its own columns.
    df, y = _raw_frame()
    frame = df.assign(
        age=df["age"].astype("Int64"),
        sex=df["sex"].astype("category"),
        female=(df["sex"] == "F").astype("boolean"),
    )
    frame.loc[::17, "female"] = pd.NA
    pipe = make_private_pipeline(
        ColumnTransformer(
            [
                ("sex", DPOneHotEncoder(categories=[["F", "M"]]), ["sex"]),
                (
                    "num",
                    make_pipeline(
                        DPSimpleImputer(bounds=[(0.0, 120.0), (0.0, 1.0)]),
                        DPStandardScaler(bounds=[(0.0, 120.0), (0.0, 1.0)]),
                    ),
                    ["age", "female"],
                ),
            ]
        ),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
        random_state=0,
    )
    plan = pipe.privacy_plan(N, frame.shape[1], feature_names=list(frame.columns))
    _fit(pipe, frame, y)
    _assert_planned(plan, pipe, 1.0)
    assert set(pipe.predict(frame)) <= {0, 1}
    with pytest.raises(ValueError, match="at least one row"):
        pipe.fit(frame.iloc[:0], y[:0])


def _sex_age_pipeline(encoder):
    return make_private_pipeline(
        ColumnTransformer(
            [
                ("sex", encoder, ["sex"]),
                ("age", DPStandardScaler(bounds=(0.0, 120.0)), ["age"]),
            ]
        ),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
        random_state=0,
    )


def test_a_free_encoder_refusing_a_category_names_no_value():
    # scikit-learn's encoder lists the undeclared values it finds; the
    # pipeline's fit redacts them and keeps no half-fitted state.
    df, y = _raw_frame()
    frame = df[["sex", "age"]].copy()
    frame.loc[7, "sex"] = "Alice Smith"
    pipe = _sex_age_pipeline(OneHotEncoder(categories=[["F", "M"]]))
    with pytest.raises(ValueError, match="Found unknown categories") as info:
        pipe.fit(frame, y)
    assert "Alice" not in str(info.value)
    assert not hasattr(pipe, "pipeline_") and not hasattr(pipe, "n_features_in_")


def test_a_function_transformer_checking_its_inverse_is_refused():
    # check_inverse applies func and inverse_func to private rows and warns
    # on a mismatch: a bit about the rows that no budget covers.
    X, y = _raw_array()
    checking = FunctionTransformer(np.abs, inverse_func=np.abs)
    pipe = make_private_pipeline(
        checking, DPLogisticRegression(classes=[0, 1], max_iter=2)
    )
    with pytest.raises(ValueError, match="check_inverse=False"):
        pipe.privacy_plan(N, 3)
    checking.set_params(check_inverse=False)
    pipe.fit(X, y)
    assert list(pipe.step_budgets_) == ["dplogisticregression"]


def test_declared_categories_are_recorded_as_spending_nothing():
    # An encoder with declared categories releases nothing; its budget line
    # and the record's mechanism must not show its unused epsilon and delta.
    df, y = _raw_frame()
    pipe = _sex_age_pipeline(DPOneHotEncoder(categories=[["F", "M"]]))
    _fit(pipe, df[["sex", "age"]], y)
    free = pipe.step_budgets_["columntransformer__sex"]
    assert (free["share"], free["epsilon"], free["delta"]) == (0.0, 0.0, 0.0)
    mechanism = pipe.privacy_record_.mechanism
    assert "columntransformer__sex (epsilon 0, delta 0:" in mechanism
    summary = pipe.privacy_summary()
    assert "columntransformer__sex: share 0, epsilon 0, delta 0 " in summary


def test_private_steps_seeded_alike_are_refused():
    # Their noise would be the same: the pipeline composes its steps as
    # independent releases.
    X, y = _raw_array()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS, random_state=0),
        DPLogisticRegression(classes=[0, 1], max_iter=2, random_state=0),
    )
    with pytest.raises(ValueError, match="same random_state"):
        pipe.privacy_plan(*X.shape)
    with pytest.raises(ValueError, match="same random_state"):
        pipe.fit(X, y)
    assert not hasattr(pipe, "pipeline_")
    # Different seeds, or the pipeline's own, are fine.
    pipe.set_params(dplogisticregression__random_state=1)
    _fit(pipe, X, y)
    make_private_pipeline(
        DPStandardScaler(bounds=ARRAY_BOUNDS, random_state=0),
        DPLogisticRegression(classes=[0, 1], max_iter=2, random_state=0),
        random_state=3,
    ).fit(X, y)


def test_a_pipeline_without_steps_has_the_base_tags():
    # As scikit-learn's Pipeline([]): its type is unknown until it has a
    # final step, and fit refuses it.
    from sklearn.base import is_classifier
    from sklearn.utils import get_tags

    empty = PrivatePipeline([])
    assert not is_classifier(empty)
    assert get_tags(empty).estimator_type is None
    with pytest.raises(ValueError, match="at least one"):
        empty.fit(np.zeros((3, 1)), [0, 1, 0])


def test_inverse_transform_where_every_step_has_one():
    # As scikit-learn's Pipeline: offered where every step (passthrough
    # aside) inverts, applied last step first.
    rng = np.random.default_rng(0)
    X = rng.uniform(-4.0, 4.0, size=(500, 2))
    bounds = [(-5.0, 5.0)] * 2
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=bounds), "passthrough", DPStandardScaler(bounds=bounds),
        epsilon=1.0, random_state=0,
    ).fit(X)
    np.testing.assert_allclose(pipe.inverse_transform(pipe.transform(X)), X)
    classifier = make_private_pipeline(
        DPStandardScaler(bounds=bounds), DPLogisticRegression(classes=[0, 1])
    )
    assert hasattr(pipe, "inverse_transform")
    assert not hasattr(classifier, "inverse_transform")
