# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivatePipeline on sparse X: the final step is planned with the layout it receives.

The layout (dense or CSR) is public: the input container's, carried through
the steps by their public parameters (``sparse_output``; a ColumnTransformer
is fitted to stack densely). Estimators that skip their private column scaling on
sparse X record another event there, which the pipeline plans.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from sklearn_dpfair.linear_model import HeavyTailDPRegressor, SemiDPLinearRegression
from sklearn_dpfair.pipeline import make_private_pipeline
from sklearn_dpfair.pipeline._steps import walk_steps
from sklearn_dpfair.preprocessing import DPStandardScaler

N, D = 600, 3


def _regression(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D))
    y = X @ [1.0, -0.5, 0.25] + 0.1 * rng.normal(size=N)
    return X, y


def _fit(pipe, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence and public-rows notes
        return pipe.fit(X, y, **params)


def _semi_dp():
    return SemiDPLinearRegression(
        epsilon=8.0,
        adjacency="add_remove",
        batch_size=6000,
        max_iter=7,
        random_state=0,
    )


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_heavy_tail_pipeline_plan_is_the_fitted_event(sparse):
    X, y = _regression()
    pipe = make_private_pipeline(
        HeavyTailDPRegressor(random_state=0), epsilon=1.0, delta=1e-5
    )
    _fit(pipe, sp.csr_matrix(X) if sparse else X, y)
    plan = pipe.privacy_plan(N, D, sparse=sparse)
    assert pipe.dp_event_ == plan.dp_event
    assert pipe.epsilon_ <= 1.0
    # The two layouts are two plans: the dense fit spends on private scales.
    assert pipe.privacy_plan(N, D, sparse=not sparse).dp_event != pipe.dp_event_


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_semi_dp_pipeline_plan_is_the_fitted_event(sparse, dtype):
    X, y = _regression(1)
    X = X.astype(dtype)
    mask = np.zeros(N, dtype=bool)
    mask[:3] = True
    pipe = make_private_pipeline(_semi_dp(), epsilon=8.0, delta=1e-5)
    _fit(pipe, sp.csr_matrix(X) if sparse else X, y, public_mask=mask)
    plan = pipe.privacy_plan(N, D, sparse=sparse, n_public=3)
    assert pipe.dp_event_ == plan.dp_event
    assert pipe.privacy_plan(N, D, sparse=not sparse, n_public=3).dp_event != (
        pipe.dp_event_
    )


@pytest.mark.parametrize("sparse_output", [True, False])
def test_encoder_output_layout_plans_the_final_step(sparse_output):
    # Dense input, but a declared one-hot encoding hands the regressor a CSR
    # matrix when sparse_output=True (scikit-learn's default).
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(N, 2))
    y = (X == 1).sum(axis=1) + 0.1 * rng.normal(size=N)
    pipe = make_private_pipeline(
        OneHotEncoder(categories=[[0, 1, 2]] * 2, sparse_output=sparse_output),
        HeavyTailDPRegressor(random_state=0),
    )
    plan = pipe.privacy_plan(N, 2)
    _fit(pipe, X, y)
    assert pipe.dp_event_ == plan.dp_event
    final = pipe.pipeline_.steps[-1][1]
    assert final.dp_event_ == HeavyTailDPRegressor(epsilon=final.epsilon).privacy_plan(
        N, 6, sparse=sparse_output
    ).dp_event


def _stacked(**kwargs):
    return ColumnTransformer(
        [("onehot", OneHotEncoder(categories=[[0, 1, 2]]), [0])],
        remainder="passthrough",
        **kwargs,
    )


def _sparse_stack():
    return ColumnTransformer(
        [
            (
                "onehot",
                OneHotEncoder(categories=[[0, 1, 2, 3, 4]], handle_unknown="ignore"),
                [0],
            )
        ],
        remainder="passthrough",
    )


def test_stacked_layout_does_not_depend_on_the_rows():
    # scikit-learn stacks sparse blocks sparsely when the rows' density is
    # below sparse_threshold (0.3 by default), which the rows decide: here
    # 1/3 when every category is declared, 1/4 when half the rows hold an
    # undeclared one (encoded as zeros). The fit's clones stack densely,
    # whatever the rows, as planned.
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 5, N), rng.normal(size=N)])
    y = X[:, 1] + 0.1 * rng.normal(size=N)
    unknown = X.copy()
    unknown[: N // 2, 0] = 9
    for rows in (X, unknown):
        pipe = make_private_pipeline(
            _sparse_stack(), HeavyTailDPRegressor(random_state=0)
        )
        _fit(pipe, rows, y)
        assert pipe[0].sparse_output_ is False
        assert not sp.issparse(pipe[:-1].transform(rows[:3]))
        assert pipe.dp_event_ == pipe.privacy_plan(N, 2).dp_event
        # The regressor is planned, and fitted, on a dense input.
        dense = make_private_pipeline(
            ColumnTransformer(
                _sparse_stack().transformers,
                remainder="passthrough",
                sparse_threshold=0,
            ),
            HeavyTailDPRegressor(),
        )
        assert pipe.dp_event_ == dense.privacy_plan(N, 2).dp_event
    # The steps as given are not modified.
    assert pipe.steps[0][1].sparse_threshold == 0.3


def test_dense_only_step_on_sparse_layout_is_refused_by_the_plan():
    pipe = make_private_pipeline(
        OneHotEncoder(categories=[[0, 1, 2]]),
        DPStandardScaler(bounds=(0.0, 1.0)),
        HeavyTailDPRegressor(),
    )
    with pytest.raises(TypeError, match="'dpstandardscaler'.*receives a sparse"):
        pipe.privacy_plan(N, 1)


def test_walk_carries_the_layout():
    def layouts(steps, sparse):
        units, _ = walk_steps(steps, 2, sparse=sparse)
        return [u.sparse for u in units]

    final = HeavyTailDPRegressor()
    assert layouts([("reg", final)], True) == [True]
    assert layouts([("f", FunctionTransformer()), ("reg", final)], True) == [True]
    # A func is taken to keep the layout (checked before the final fit).
    assert layouts([("f", FunctionTransformer(np.abs)), ("reg", final)], True) == [
        True
    ]
    assert layouts(
        [("s", DPStandardScaler(bounds=(0.0, 1.0))), ("reg", final)], True
    ) == [True, False]
    # A ColumnTransformer is fitted to stack densely.
    assert layouts([("c", _stacked()), ("reg", final)], False) == [False]
    assert layouts([("c", _stacked(sparse_threshold=0)), ("reg", final)], True) == [
        False
    ]


def _densify(X):
    return X.toarray()


def test_function_transformer_keeps_the_layout_or_is_refused_before_the_final_fit():
    X, y = _regression(4)
    keeps = make_private_pipeline(
        FunctionTransformer(np.abs), HeavyTailDPRegressor(random_state=0)
    )
    _fit(keeps, sp.csr_matrix(X), y)
    assert keeps.dp_event_ == keeps.privacy_plan(N, D, sparse=True).dp_event
    # A func that densifies: the regressor, planned on sparse X (no private
    # scales, whatever the width), would spend on private scales; refused
    # before it reads a row.
    changes = make_private_pipeline(
        FunctionTransformer(_densify), HeavyTailDPRegressor(random_state=0)
    )
    with pytest.raises(ValueError, match="planned on a sparse input"):
        _fit(changes, sp.csr_matrix(X), y)
    assert not hasattr(changes, "dp_event_")
    # Where the final step's plan does not depend on the layout, it runs.
    free = make_private_pipeline(
        FunctionTransformer(_densify),
        HeavyTailDPRegressor(feature_bounds=None, random_state=0),
    )
    _fit(free, sp.csr_matrix(X), y)
    assert free.dp_event_ == free.privacy_plan(N, D, sparse=True).dp_event


@pytest.mark.parametrize(
    "before",
    [[], [("keep", "passthrough")], [("same", FunctionTransformer())]],
    ids=["alone", "passthrough", "identity"],
)
def test_frame_of_sparse_columns_fits_as_the_sparse_matrix_it_is(before):
    # scikit-learn's validation makes a DataFrame of SparseDtype columns
    # only a sparse matrix: the final step fits it as one, so the pipeline
    # plans it and checks its layout as one, whatever step (or none) hands
    # the frame on unchanged.
    pd = pytest.importorskip("pandas")
    X, y = _regression(5)
    X[np.abs(X) < 0.8] = 0.0
    csr = sp.csr_matrix(X)
    frame = pd.DataFrame.sparse.from_spmatrix(csr, columns=["a", "b", "c"])

    def pipe():
        return make_private_pipeline(
            *(step for _, step in before),
            HeavyTailDPRegressor(random_state=0),
            epsilon=1.0,
            delta=1e-5,
        )

    on_csr = _fit(pipe(), csr, y)
    on_frame = _fit(pipe(), frame, y)
    assert on_frame.dp_event_ == on_csr.dp_event_
    assert on_frame.epsilon_ == on_csr.epsilon_
    assert on_frame.dp_event_ == pipe().privacy_plan(N, D, sparse=True).dp_event
    # The dense plan (private column scales) is another event.
    assert on_frame.dp_event_ != pipe().privacy_plan(N, D).dp_event
