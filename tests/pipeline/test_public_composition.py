# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a private pipeline reads of its composition, and from what.

Callable column selections run on the public schema, never on the rows;
weighted blocks and parts scale the bound the final step takes; seeds are
compared at any depth; budget shares take numpy numbers; a ``FeatureUnion``
composes its parts and ``PolynomialFeatures`` is free; the tags look into
nested blocks.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures
from sklearn.utils import get_tags

from sklearn_dpfair.linear_model import DPLogisticRegression
from sklearn_dpfair.pipeline import PrivatePipeline, make_private_pipeline
from sklearn_dpfair.pipeline._steps import walk_steps
from sklearn_dpfair.preprocessing import DPSimpleImputer, DPStandardScaler

N = 1500
BOUNDS = [(-4.0, 4.0), (-4.0, 4.0)]


def _frame(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    return X, (X["a"] + X["b"] > 0).astype(int).to_numpy()


def _fit(pipe, X, y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short fits' ConvergenceWarning
        return pipe.fit(X, y, **kwargs)


def _model(**params):
    return DPLogisticRegression(classes=[0, 1], max_iter=2, **params)


def _output_perturbation():
    return DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", alpha=0.01
    )


# -- callable column selections ----------------------------------------------


def test_a_callable_selection_sees_the_schema_not_the_rows():
    seen = []

    def select(frame):
        seen.append(len(frame))
        # A selection by the values: the rows would decide it.
        return [c for c in frame.columns if len(frame) == 0 or frame[c].max() > 3]

    X, y = _frame()
    ct = ColumnTransformer([("num", DPStandardScaler(bounds=BOUNDS), select)])
    pipe = PrivatePipeline([("columns", ct), ("model", _model())], random_state=0)
    _fit(pipe, X, y)
    assert seen and set(seen) == {0}
    assert pipe[0].transformers_[0][2] == ["a", "b"]
    assert pipe.dp_event_ == pipe.privacy_plan(N, 2, feature_names=X.iloc[:0]).dp_event
    # The step as given keeps its callable.
    assert pipe.steps[0][1].transformers[0][2] is select


def _first_column(frame):
    return list(frame.columns[:1])


def _by_values(frame):
    # The column of the largest value: no row, no largest value.
    return [frame.columns[int(np.argmax(frame.to_numpy().max(axis=0)))]]


@pytest.mark.parametrize(
    "make_steps, as_frame, match",
    [
        # No schema: scikit-learn would call it on the array's rows.
        (
            lambda: [
                ("columns", ColumnTransformer([("num", "passthrough", _first_column)]))
            ],
            False,
            "'columns__num' selects its columns with a callable",
        ),
        # A nested ColumnTransformer reads an earlier step's output.
        (
            lambda: [
                ("f", FunctionTransformer()),
                ("columns", ColumnTransformer([("num", "passthrough", _first_column)])),
            ],
            True,
            "'columns__num' selects its columns with a callable",
        ),
        # It fails on the empty frame.
        (
            lambda: [
                ("columns", ColumnTransformer([("num", "passthrough", _by_values)]))
            ],
            True,
            "'columns__num' selects its columns with a callable that fails",
        ),
    ],
)
def test_a_callable_selection_without_a_schema_is_refused(make_steps, as_frame, match):
    X, y = _frame()
    rows = X if as_frame else X.to_numpy()
    pipe = PrivatePipeline([*make_steps(), ("model", _model())], random_state=0)
    with pytest.raises(ValueError, match=match):
        _fit(pipe, rows, y)
    assert not hasattr(pipe, "pipeline_")


def test_a_column_selector_is_still_resolved_by_the_schema():
    X, y = _frame()
    ct = ColumnTransformer(
        [("num", DPStandardScaler(bounds=BOUNDS), make_column_selector("a|b"))]
    )
    pipe = PrivatePipeline([("columns", ct), ("model", _model())], random_state=0)
    _fit(pipe, X, y)
    assert pipe.dp_event_ == pipe.privacy_plan(N, 2, feature_names=["a", "b"]).dp_event


def _all_but_c(frame):
    return [c for c in frame.columns if c != "c"]


@pytest.mark.parametrize("skipped", ["passthrough", None])
@pytest.mark.parametrize("select", [_all_but_c, ["a", "b"]])
def test_a_leading_passthrough_keeps_the_schema(skipped, select):
    # The fit hands the DataFrame itself to the first step that is not
    # skipped: its selections are resolved by the input's schema.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({c: rng.normal(size=N) for c in "abc"})
    y = (X["a"] > 0).astype(int).to_numpy()
    ct = ColumnTransformer([("num", DPStandardScaler(bounds=(-4, 4)), select)])
    pipe = PrivatePipeline(
        [("skip", skipped), ("columns", ct), ("model", _model())], random_state=0
    )
    plan = pipe.privacy_plan(N, 3, feature_names=X.iloc[:0])
    assert dict(plan.steps[-1][1].public)["n_features"] == 2
    _fit(pipe, X, y)
    assert pipe.dp_event_ == plan.dp_event
    assert pipe[1].transformers_[0][2] == ["a", "b"]


class _Columns:
    """A container with column names only, neither pandas nor polars."""

    columns = ["a", "b", "c"]


def test_names_of_another_container_resolve_name_selections_only():
    by_name = ColumnTransformer(
        [("num", DPStandardScaler(bounds=(-4, 4)), make_column_selector("a|b"))]
    )
    pipe = PrivatePipeline([("columns", by_name), ("model", _model())])
    plan = pipe.privacy_plan(N, 3, feature_names=_Columns())
    assert plan == pipe.privacy_plan(N, 3, feature_names=["a", "b", "c"])
    assert dict(plan.steps[-1][1].public)["n_features"] == 2


def test_a_polars_frame_gives_its_schema():
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(0)
    data = {c: rng.normal(size=N) for c in "abc"}
    X, frame = pl.DataFrame(data), pd.DataFrame(data)
    y = (data["a"] > 0).astype(int)
    # A callable is called on a polars frame with no row, as scikit-learn
    # would call it on the polars rows.
    seen = []

    def select(df):
        seen.append((type(df), df.shape[0]))
        # By dtype too: a polars frame with no row keeps its dtypes.
        floats = [c for c, t in zip(df.columns, df.dtypes) if "float" in str(t).lower()]
        return [c for c in floats if c != "c"]

    for first in (
        DPStandardScaler(bounds=(-4, 4)),
        ColumnTransformer([("num", DPStandardScaler(bounds=(-4, 4)), select)]),
    ):
        pipe = PrivatePipeline([("first", first), ("model", _model())], random_state=0)
        plan = pipe.privacy_plan(N, 3, feature_names=X)
        _fit(pipe, X, y)
        assert pipe.dp_event_ == plan.dp_event
        called = isinstance(first, ColumnTransformer)
        assert set(seen) == ({(pl.DataFrame, 0)} if called else set())
        # The same plan as on the same columns in pandas.
        assert plan == pipe.privacy_plan(N, 3, feature_names=frame.iloc[:0])
        seen.clear()


# -- weights in the flowing bound --------------------------------------------


@pytest.mark.parametrize("weight", [10.0, -3.0, 0.5])
def test_block_weights_scale_the_flowing_bound(weight):
    X, y = _frame()
    X["a"] += 500
    ct = ColumnTransformer(
        [("num", DPStandardScaler(bounds=[(490, 510), (-4, 4)]), ["a", "b"])],
        transformer_weights={"num": weight},
    )
    pipe = PrivatePipeline(
        [("columns", ct), ("model", _output_perturbation())], random_state=0
    )
    _fit(pipe, X, y)
    scaler = pipe[0].named_transformers_["num"]
    bound = pipe[-1].feature_norm_bound
    assert bound == pytest.approx(abs(weight) * scaler.output_norm_bound_)
    rows = pipe[:-1].transform(X)
    assert np.linalg.norm(rows, axis=1).max() <= bound * (1 + 1e-9)


# -- seeds at any depth ------------------------------------------------------


def test_a_seed_repeated_in_a_nested_pipeline_is_refused():
    X, y = _frame()
    inner = PrivatePipeline([("s1", DPStandardScaler(bounds=BOUNDS, random_state=5))])
    outer = PrivatePipeline(
        [
            ("inner", inner),
            ("s2", DPStandardScaler(bounds=BOUNDS, random_state=5)),
            ("model", _model()),
        ]
    )
    with pytest.raises(ValueError, match="'inner' and 's2' have the same"):
        outer.privacy_plan(N, 2)
    with pytest.raises(ValueError, match="'inner' and 's2' have the same"):
        _fit(outer, X, y)
    assert not hasattr(outer, "pipeline_")
    # Different seeds run; so does an inner pipeline that seeds its steps.
    outer.set_params(s2__random_state=6)
    _fit(outer, X, y)
    outer.set_params(s2__random_state=5, inner__random_state=1)
    _fit(outer, X, y)


# -- numpy budget shares -----------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
def test_budget_shares_take_numpy_numbers(dtype):
    X, y = _frame()
    names = ["dpstandardscaler", "dplogisticregression"]

    def plan(shares):
        pipe = make_private_pipeline(
            DPStandardScaler(bounds=BOUNDS), _model(), budget_shares=shares
        )
        return pipe.privacy_plan(N, 2)

    given = plan(dict(zip(names, np.array([1, 4], dtype=dtype))))
    assert given.dp_event == plan(dict(zip(names, [1, 4]))).dp_event
    with pytest.raises(ValueError, match="positive finite number"):
        plan(dict(zip(names, [np.bool_(True), 4])))


# -- FeatureUnion and PolynomialFeatures ---------------------------------------


def test_polynomial_features_are_free_with_a_public_width():
    for degree, interaction_only, include_bias in [
        (2, False, True),
        (3, True, False),
        ((2, 3), False, True),
    ]:
        poly = PolynomialFeatures(
            degree, interaction_only=interaction_only, include_bias=include_bias
        )
        expected = poly.fit(np.zeros((1, 4))).n_output_features_
        units, width = walk_steps([("poly", poly)], 4, final=False)
        assert units == [] and width == expected
    X, y = _frame()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=BOUNDS), PolynomialFeatures(2), _model()
    )
    plan = pipe.privacy_plan(N, 2)
    _fit(pipe, X, y)
    assert pipe.dp_event_ == plan.dp_event
    assert pipe[-1].n_features_in_ == 6
    # No bound on its output: a final step that takes one upstream refuses.
    refused = make_private_pipeline(
        DPStandardScaler(bounds=BOUNDS), PolynomialFeatures(2), _output_perturbation()
    )
    with pytest.raises(ValueError, match="declares no output bound"):
        _fit(refused, X, y)


def test_a_feature_union_composes_its_parts():
    X, y = _frame()
    union = FeatureUnion(
        [
            ("scale", DPStandardScaler(bounds=BOUNDS)),
            (
                "poly",
                Pipeline(
                    [
                        ("s", DPStandardScaler(bounds=BOUNDS)),
                        ("p", PolynomialFeatures(2, include_bias=False)),
                    ]
                ),
            ),
            ("gone", "drop"),
        ],
        n_jobs=2,
    )
    pipe = PrivatePipeline([("union", union), ("model", _model())], random_state=0)
    units, width = walk_steps(pipe.steps[:1], 2, final=False)
    assert [u.path for u in units] == ["union__scale", "union__poly__s"]
    assert width == 2 + 5
    plan = pipe.privacy_plan(N, 2)
    _fit(pipe, X, y)
    assert pipe.dp_event_ == plan.dp_event
    assert list(pipe.step_budgets_) == ["union__scale", "union__poly__s", "model"]
    assert pipe[0].n_jobs == 1  # its parts run in the fit's process and thread
    assert pipe[-1].n_features_in_ == 7


def test_a_feature_union_bound_takes_its_weights():
    X, y = _frame()
    union = FeatureUnion(
        [
            ("one", DPStandardScaler(bounds=BOUNDS)),
            ("two", DPStandardScaler(bounds=BOUNDS)),
        ],
        transformer_weights={"two": 4.0},
    )
    pipe = PrivatePipeline(
        [("union", union), ("model", _output_perturbation())], random_state=0
    )
    _fit(pipe, X, y)
    one, two = pipe[0].named_transformers["one"], pipe[0].named_transformers["two"]
    assert pipe[-1].feature_norm_bound == pytest.approx(
        math.hypot(one.output_norm_bound_, 4 * two.output_norm_bound_)
    )
    rows = pipe[:-1].transform(X)
    assert np.linalg.norm(rows, axis=1).max() <= pipe[-1].feature_norm_bound


# -- tags --------------------------------------------------------------------


def test_allow_nan_sees_an_imputer_inside_blocks():
    imputer = DPSimpleImputer(bounds=[(17, 90)])
    numeric = Pipeline(
        [("impute", imputer), ("scale", DPStandardScaler(bounds=[(17, 90)]))]
    )
    nested = PrivatePipeline(
        [("columns", ColumnTransformer([("num", numeric, ["age"])])), ("m", _model())]
    )
    assert get_tags(nested).input_tags.allow_nan
    scaled = PrivatePipeline(
        [
            (
                "columns",
                ColumnTransformer(
                    [("num", DPStandardScaler(bounds=[(17, 90)]), ["age"])]
                ),
            ),
            ("m", _model()),
        ]
    )
    assert not get_tags(scaled).input_tags.allow_nan
