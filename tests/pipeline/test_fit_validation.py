# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivatePipeline refuses what a step's fit would refuse before the first step runs.

A step checks its own ``y`` and metadata when its fit runs: the final step's
refusal would otherwise come after the earlier steps' private releases,
spent for a fit that fails. Each refusal here is made before the first
step reads a row, with the message the final step gives.
"""

import numpy as np
import pytest
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import DataConversionWarning
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures

from sklearn_dpfair.linear_model import (
    DPFERMIClassifier,
    DPLogisticRegression,
    SemiDPLinearRegression,
)
from sklearn_dpfair.pipeline import PrivatePipeline, make_private_pipeline
from sklearn_dpfair.preprocessing import DPStandardScaler

N = 200


@pytest.fixture
def scaler_never_fits(monkeypatch):
    """Make the preprocessing step's fit fail the test: nothing may be released."""

    def fit(self, *args, **kwargs):
        raise AssertionError("the scaler read the rows before the refusal")

    monkeypatch.setattr(DPStandardScaler, "fit", fit)


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 2))
    return X, (X[:, 0] > 0).astype(int)


def _classifier():
    return make_private_pipeline(
        DPStandardScaler(bounds=(-3, 3)), DPLogisticRegression(classes=[0, 1])
    )


def _fair():
    return make_private_pipeline(
        DPStandardScaler(bounds=(-3, 3)),
        DPFERMIClassifier(classes=[0, 1], groups=[0, 1]),
    )


def _regressor():
    return make_private_pipeline(
        DPStandardScaler(bounds=(-3, 3)), SemiDPLinearRegression(adjacency="add_remove")
    )


def _with(values, index, value, dtype=None):
    values = np.array(values, dtype=dtype)
    values[index] = value
    return values


def _cases():
    X, y = _data()
    ones = np.ones(N)
    groups = np.arange(N) % 2
    mask = np.arange(N) < 20
    target = X[:, 0].copy()
    return {
        "short y": (_classifier, y[:-1], {}, "inconsistent numbers of samples"),
        "2-d y": (_classifier, np.c_[y, y], {}, "y should be a 1d array"),
        "no y": (_classifier, None, {}, "requires y to be passed"),
        "undeclared label": (_classifier, _with(y, 0, 7), {}, "declared classes"),
        "label among strings": (
            _classifier,
            _with(y, 0, "a", object),
            {},
            "declared classes",
        ),
        "nan label": (_classifier, _with(y, 0, np.nan, float), {}, "y contains NaN"),
        "short weight": (
            _classifier,
            y,
            {"sample_weight": ones[:-1]},
            r"sample_weight.shape == \(199,\)",
        ),
        "negative weight": (
            _classifier,
            y,
            {"sample_weight": _with(ones, 0, -1.0)},
            "Negative values",
        ),
        "nan weight": (
            _classifier,
            y,
            {"sample_weight": _with(ones, 0, np.nan)},
            "sample_weight contains NaN",
        ),
        "inf weight": (
            _classifier,
            y,
            {"sample_weight": _with(ones, 0, np.inf)},
            "sample_weight contains infinity",
        ),
        "step weight": (
            _classifier,
            y,
            {"dpstandardscaler__sample_weight": _with(ones, 0, -1.0)},
            "dpstandardscaler__sample_weight: Negative values",
        ),
        "misspelled keyword": (
            _classifier,
            y,
            {"sample_wieght": ones},
            "unexpected keyword argument 'sample_wieght'",
        ),
        "short groups": (
            _fair,
            y,
            {"sensitive_features": groups[:-1]},
            "sensitive_features has 199 rows but X has 200",
        ),
        "undeclared group": (
            _fair,
            y,
            {"sensitive_features": _with(groups, 0, 5)},
            "not in the declared groups",
        ),
        "missing group": (
            _fair,
            y,
            {"sensitive_features": _with(groups, 0, np.nan, float)},
            "sensitive_features has missing values",
        ),
        "inf target": (
            _regressor,
            _with(target, 0, np.inf),
            {"public_mask": mask},
            "y contains infinity",
        ),
        "string target": (
            _regressor,
            _with(target, 0, "a", object),
            {"public_mask": mask},
            "y must hold numbers for a regressor",
        ),
    }


@pytest.mark.parametrize("case", list(_cases()))
def test_a_fit_the_final_step_would_refuse_is_refused_before_any_step_runs(
    scaler_never_fits, case
):
    make, y, params, match = _cases()[case]
    X, _ = _data()
    error = TypeError if "keyword" in case else ValueError
    with pytest.raises(error, match=match):
        make().fit(X, y, **params)


def test_metadata_routing_checks_the_routed_values_too(scaler_never_fits):
    X, y = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        final = DPFERMIClassifier(classes=[0, 1], groups=[0, 1])
        final.set_fit_request(sensitive_features="sex", sample_weight="w")
        pipe = make_private_pipeline(DPStandardScaler(bounds=(-3, 3)), final)
        with pytest.raises(ValueError, match="not in the declared groups"):
            pipe.fit(X, y, sex=_with(np.arange(N) % 2, 0, 5), w=np.ones(N))
        with pytest.raises(ValueError, match="Negative values"):
            pipe.fit(X, y, sex=np.arange(N) % 2, w=_with(np.ones(N), 0, -1.0))


def test_valid_metadata_still_fits():
    # A column-vector y is the final step's to ravel, with its warning.
    X, y = _data()
    pipe = _fair().set_params(dpfermiclassifier__max_iter=2)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        pipe.fit(
            X, y.reshape(-1, 1), sensitive_features=np.arange(N) % 2,
            sample_weight=np.ones(N),
        )
    assert pipe.epsilon_ <= 1.0


# -- a final step that takes its feature bound from the step before it ------


def _output_perturbation():
    return DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", alpha=1.0
    )


def _scaler():
    return DPStandardScaler(bounds=(-3, 3))


@pytest.mark.parametrize(
    "before",
    [
        [("scale", _scaler()), ("tanh", FunctionTransformer(np.tanh))],
        [("scale", _scaler()), ("poly", PolynomialFeatures(2))],
        [("keep", "passthrough")],
        [("inner", Pipeline([("scale", _scaler()), ("tanh", FunctionTransformer())]))],
        [
            (
                "inner",
                PrivatePipeline(
                    [("scale", _scaler()), ("tanh", FunctionTransformer())]
                ),
            )
        ],
        [
            (
                "columns",
                ColumnTransformer(
                    [("scale", _scaler(), [0]), ("raw", "passthrough", [1])]
                ),
            )
        ],
    ],
    ids=["function", "polynomial", "passthrough", "pipeline", "private", "columns"],
)
def test_a_step_that_cannot_declare_the_final_bound_is_refused_by_the_plan(
    scaler_never_fits, before
):
    # The fit would set the bound from the step before the final one only
    # after the preprocessing's releases, and fail there whatever the rows.
    X, y = _data()
    pipe = PrivatePipeline([*before, ("model", _output_perturbation())])
    with pytest.raises(ValueError, match="declares no output bound"):
        pipe.privacy_plan(N, 2)
    with pytest.raises(ValueError, match="declares no output bound"):
        pipe.fit(X, y)


@pytest.mark.parametrize("nested", [Pipeline, PrivatePipeline])
def test_the_bound_flows_out_of_a_nested_pipeline(nested):
    # A pipeline declares its last step's bound (a passthrough skipped; a
    # private pipeline ends in an estimator).
    X, y = _data()
    steps = [("scale", _scaler())]
    if nested is Pipeline:
        steps.append(("keep", "passthrough"))
    pipe = PrivatePipeline(
        [("inner", nested(steps)), ("model", _output_perturbation())],
        random_state=0,
    )
    plan = pipe.privacy_plan(N, 2)
    pipe.fit(X, y)
    assert pipe.dp_event_ == plan.dp_event
    scaler = pipe.pipeline_[0]
    if nested is PrivatePipeline:
        scaler = scaler.pipeline_
    assert pipe.pipeline_[-1].feature_norm_bound == scaler[0].output_norm_bound_
