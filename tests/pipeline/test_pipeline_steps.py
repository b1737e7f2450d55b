# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Step classification and output widths computed from public information."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    SplineTransformer,
    StandardScaler,
)

from sklearn_dpfair.pipeline._steps import walk_steps
from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPOneHotEncoder,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)

BOUNDS = (-5.0, 5.0)


def _numbers(n=400, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _categories(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, 3, n), rng.integers(0, 2, n)])


TRANSFORMERS = [
    (DPStandardScaler(bounds=BOUNDS), _numbers),
    (DPSimpleImputer(bounds=BOUNDS), _numbers),
    (DPQuantileTransformer(bounds=BOUNDS), _numbers),
    (DPKBinsDiscretizer(bounds=BOUNDS, n_bins=4), _numbers),
    (DPKBinsDiscretizer(bounds=BOUNDS, n_bins=4, encode="ordinal"), _numbers),
    (DPSplineTransformer(bounds=BOUNDS, n_knots=4, degree=2), _numbers),
    (DPSplineTransformer(bounds=BOUNDS, include_bias=False), _numbers),
    (DPOneHotEncoder(categories=[[0, 1, 2], [0, 1]]), _categories),
    (
        DPOneHotEncoder(categories=[[0, 1, 2], [0, 1]], handle_unknown="ignore"),
        _categories,
    ),
    (OneHotEncoder(categories=[[0, 1, 2], [0, 1]]), _categories),
    (OneHotEncoder(categories=[[0, 1, 2], [0, 1]], drop="first"), _categories),
    (OneHotEncoder(categories=[[0, 1, 2], [0, 1]], drop="if_binary"), _categories),
    (OneHotEncoder(categories=[[0, 1, 2], [0, 1]], drop=[2, 0]), _categories),
    (
        OneHotEncoder(categories=[[0], [0, 1]], drop="first"),
        lambda: _categories() * [0, 1],
    ),
    (OrdinalEncoder(categories=[[0, 1, 2], [0, 1]]), _categories),
    (SplineTransformer(knots=np.linspace(-5, 5, 4)[:, None].repeat(3, 1)), _numbers),
    (
        SplineTransformer(
            knots=np.linspace(-5, 5, 4)[:, None].repeat(3, 1),
            extrapolation="periodic",
            include_bias=False,
        ),
        _numbers,
    ),
    (FunctionTransformer(), _numbers),
]


@pytest.mark.parametrize(
    "transformer, data", TRANSFORMERS, ids=[type(t).__name__ for t, _ in TRANSFORMERS]
)
def test_public_width_is_the_fitted_width(transformer, data):
    X = data()
    _, width = walk_steps([("step", transformer)], X.shape[1], final=False)
    assert width == transformer.fit_transform(X).shape[1]


def test_discovered_categories_have_no_public_width():
    units, width = walk_steps([("enc", DPOneHotEncoder())], 2, final=False)
    assert width is None
    assert [u.path for u in units] == ["enc"]


def test_column_transformer_widths_and_paths():
    df = pd.DataFrame(
        {
            "a": np.arange(10.0),
            "b": np.arange(10.0),
            "c": ["x", "y"] * 5,
            "d": np.arange(10.0),
        }
    )
    schema = {"columns": list(df.columns), "frame": df.iloc[:0]}
    ct = ColumnTransformer(
        [
            ("num", DPStandardScaler(bounds=BOUNDS), ["a", "b"]),
            (
                "cat",
                OneHotEncoder(categories=[["x", "y"]]),
                make_column_selector(pattern="^c$"),
            ),
        ],
        remainder=Pipeline([("impute", DPSimpleImputer(bounds=BOUNDS))]),
    )
    units, width = walk_steps(
        [("columns", ct), ("model", FunctionTransformer())], 4, names=schema
    )
    assert [(u.path, u.n_features) for u in units] == [
        ("columns__num", 2),
        ("columns__remainder__impute", 1),
    ]
    assert width == 2 + 2 + 1 == ct.fit_transform(df).shape[1]
    # By position and by mask, without names.
    ct = ColumnTransformer(
        [("num", DPStandardScaler(bounds=BOUNDS), [True, False, True])],
        remainder="passthrough",
    )
    units, width = walk_steps([("columns", ct)], 3, final=False)
    assert units[0].n_features == 2 and width == 3
    # Names without a schema: unknown.
    ct = ColumnTransformer([("num", DPStandardScaler(bounds=BOUNDS), ["a"])])
    units, width = walk_steps([("columns", ct)], 3, final=False)
    assert units[0].n_features is None and width is None


@pytest.mark.parametrize(
    "block",
    [
        DPOneHotEncoder(categories=[["x", "y"]]),
        DPStandardScaler(bounds=BOUNDS),
        Pipeline([("skip", "passthrough"), ("scale", DPStandardScaler(bounds=BOUNDS))]),
        OneHotEncoder(categories=[["x", "y"]]),
        "passthrough",
    ],
    ids=lambda block: getattr(block, "__class__", type(block)).__name__,
)
@pytest.mark.parametrize("key", ["c", 2])
def test_a_scalar_key_is_refused_where_the_block_needs_two_dimensions(block, key):
    # scikit-learn hands the block a 1-d column, which every transformer a
    # private pipeline fits refuses: the plan refuses it too, instead of
    # approving a fit that fails.
    ct = ColumnTransformer([("one", block, key)])
    with pytest.raises(ValueError, match=r"Block 'columns__one' selects a column"):
        walk_steps([("columns", ct)], 3, final=False)
    # A list of one key is the same column, 2-d.
    ct = ColumnTransformer([("one", block, [key])])
    walk_steps([("columns", ct)], 3, final=False)


def test_a_scalar_key_is_planned_for_a_function_transformer_and_a_drop():
    # Its function may turn the 1-d column into a 2-d one.
    ct = ColumnTransformer(
        [
            ("frame", FunctionTransformer(lambda column: column.to_frame()), "a"),
            ("gone", "drop", "b"),
        ]
    )
    units, _ = walk_steps([("columns", ct)], 2, final=False)
    assert units == []


def test_nested_refusal_names_the_full_path():
    ct = ColumnTransformer(
        [("num", Pipeline([("scale", StandardScaler())]), [0])], remainder="drop"
    )
    with pytest.raises(
        ValueError, match=r"Step 'columns__num__scale' \(StandardScaler\)"
    ):
        walk_steps([("columns", ct)], 2)
