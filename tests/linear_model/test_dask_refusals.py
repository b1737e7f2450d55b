# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Estimators without a distributed fit refuse Dask input (never gather it)."""

import numpy as np
import pytest

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    DPMLPClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
)
from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPOneHotEncoder,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)

da = pytest.importorskip("dask.array")


@pytest.fixture
def arrays(monkeypatch):
    # Any conversion to numpy on the driver would fail the test: the
    # refusal must come before it.
    def refuse(self, *args, **kwargs):
        raise AssertionError("a Dask collection was converted to numpy")

    monkeypatch.setattr(da.Array, "__array__", refuse)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X @ np.array([1.0, -1.0, 0.5])
    return X, y


@pytest.mark.parametrize(
    "estimator, extra",
    [
        (HeavyTailDPRegressor(), {}),
        (SemiDPLinearRegression(), {"public_mask": np.arange(200) < 50}),
        (DPMLPClassifier(classes=[0, 1], max_iter=1), {}),
    ],
)
@pytest.mark.parametrize("which", ["X", "y", "sample_weight"])
def test_dask_input_raises_type_error(arrays, estimator, extra, which):
    X, y = arrays
    if isinstance(estimator, DPMLPClassifier):
        y = (y > 0).astype(int)
    inputs = {"X": X, "y": y, "sample_weight": np.ones(200)}
    inputs[which] = da.from_array(inputs[which], chunks=50)
    name = type(estimator).__name__
    with pytest.raises(TypeError, match=f"{name} does not accept Dask.*{which}") as e:
        estimator.fit(**inputs, **extra)
    assert "DPLogisticRegression" in str(e.value)
    assert "DPFERMIClassifier" in str(e.value)


def test_dask_public_mask_raises_type_error(arrays):
    X, y = arrays
    mask = da.from_array(np.arange(200) < 50, chunks=50)
    with pytest.raises(TypeError, match="public_mask"):
        SemiDPLinearRegression().fit(X, y, public_mask=mask)


@pytest.mark.parametrize(
    "transformer",
    [
        DPStandardScaler(bounds=(-5.0, 5.0)),
        DPSimpleImputer(bounds=(-5.0, 5.0)),
        DPQuantileTransformer(bounds=(-5.0, 5.0)),
        DPKBinsDiscretizer(bounds=(-5.0, 5.0)),
        DPSplineTransformer(bounds=(-5.0, 5.0)),
        DPOneHotEncoder(),
    ],
    ids=lambda t: type(t).__name__,
)
def test_private_transformers_refuse_dask_input(arrays, transformer):
    X, _ = arrays
    name = type(transformer).__name__
    with pytest.raises(TypeError, match=f"{name} does not accept Dask"):
        transformer.fit(da.from_array(X, chunks=50))


@pytest.mark.parametrize("which", ["X", "y", "sample_weight"])
@pytest.mark.parametrize("meta", ["PrivatePipeline", "PrivateHyperparameterSearch"])
def test_meta_estimators_refuse_dask_input(arrays, meta, which):
    # They fit their steps (runs) in this process: the pipeline read X's
    # shape through numpy, the search converted y and the validation part.
    from sklearn_dpfair import DPLogisticRegression
    from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
    from sklearn_dpfair.pipeline import make_private_pipeline

    X, y = arrays
    inputs = {"X": X, "y": (y > 0).astype(int), "sample_weight": np.ones(200)}
    inputs[which] = da.from_array(inputs[which], chunks=50)
    clf = DPLogisticRegression(classes=[0, 1], max_iter=1)
    if meta == "PrivatePipeline":
        estimator = make_private_pipeline(DPStandardScaler(bounds=(-5.0, 5.0)), clf)
    else:
        estimator = PrivateHyperparameterSearch(clf, {"clip_norm": [0.5, 1.0]})
    with pytest.raises(TypeError, match=f"{meta} does not accept Dask.*{which}"):
        estimator.fit(**inputs)


@pytest.mark.parametrize(
    "estimator, which",
    [
        (DPLogisticRegression(classes=[0, 1], max_iter=1), "y"),
        (DPLogisticRegression(classes=[0, 1], max_iter=1), "sample_weight"),
        (
            DPLogisticRegression(
                classes=[0, 1], solver="output-perturbation", alpha=1.0,
                feature_norm_bound=5.0,
            ),
            "y",
        ),
        (DPFERMIClassifier(classes=[0, 1], groups=["a", "b"], max_iter=1), "y"),
        (
            DPFERMIClassifier(classes=[0, 1], groups=["a", "b"], max_iter=1),
            "sample_weight",
        ),
        (
            DPFERMIClassifier(classes=[0, 1], groups=["a", "b"], max_iter=1),
            "sensitive_features",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_dask_inputs_beside_an_in_memory_X_are_refused(arrays, estimator, which):
    # The distributed fits run on the workers only when X is a Dask
    # collection: beside an in-memory X, a Dask y or sample_weight was
    # gathered, and a Dask sensitive_features read "X must be a Dask array".
    X, y = arrays
    inputs = {"y": (y > 0).astype(int), "sample_weight": np.ones(200)}
    if isinstance(estimator, DPFERMIClassifier):
        inputs["sensitive_features"] = np.where(X[:, 2] > 0, "a", "b").astype(object)
    inputs[which] = da.from_array(inputs[which], chunks=50)
    name = type(estimator).__name__
    with pytest.raises(TypeError, match=f"{name} fits Dask .* X is one: {which} is"):
        estimator.fit(X, **inputs)


@pytest.mark.parametrize(
    "transformer",
    [
        DPStandardScaler(bounds=(-5.0, 5.0)),
        DPKBinsDiscretizer(bounds=(-5.0, 5.0)),
        DPSplineTransformer(bounds=(-5.0, 5.0)),
    ],
    ids=lambda t: type(t).__name__,
)
def test_private_transformers_refuse_a_dask_sample_weight(arrays, transformer):
    X, _ = arrays
    name = type(transformer).__name__
    weights = da.from_array(np.ones(200), chunks=50)
    with pytest.raises(TypeError, match=f"{name} does not accept Dask.*sample_weight"):
        transformer.fit(X, sample_weight=weights)


def test_a_dask_silos_beside_an_in_memory_X_is_refused(arrays):
    # The federated fits take their silos in memory: a Dask silos= was
    # gathered onto the driver.
    X, y = arrays
    silos = da.from_array(np.arange(200) % 4, chunks=50)
    with pytest.raises(TypeError, match="DPLogisticRegression fits Dask .* silos is"):
        DPLogisticRegression(classes=[0, 1], max_iter=1).fit(
            X, (y > 0).astype(int), silos=silos
        )


@pytest.mark.parametrize("which", ["y_true", "y_pred", "sensitive_features"])
def test_private_metric_frame_refuses_dask_input(arrays, which):
    # Its confusion counts are formed in this process: a Dask input was
    # gathered onto the driver.
    from sklearn_dpfair.metrics import PrivateMetricFrame

    X, y = arrays
    inputs = {
        "y_true": (y > 0).astype(int),
        "y_pred": (X[:, 0] > 0).astype(int),
        "sensitive_features": (X[:, 2] > 0).astype(int),
    }
    inputs[which] = da.from_array(inputs[which], chunks=50)
    frame = PrivateMetricFrame(groups=[0, 1])
    with pytest.raises(
        TypeError, match=f"PrivateMetricFrame does not accept Dask.*{which}"
    ):
        frame.fit(**inputs)
    assert not hasattr(frame, "privacy_record_")
