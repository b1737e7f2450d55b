# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private transformers given torch tensors under scikit-learn's array API dispatch.

The transformers compute on the host: torch input is read as a numpy copy,
with or without dispatch, and their output is numpy. (Under dispatch,
``validate_data`` asked torch for numpy's float64 and raised TypeError.)
"""

import numpy as np
import pytest
import sklearn

from sklearn_dpfair import DPLogisticRegression, make_private_pipeline
from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

# One torch thread per test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("single_torch_thread")

_BOUNDS = (-5.0, 5.0)
_TRANSFORMERS = {
    "scaler": lambda: DPStandardScaler(_BOUNDS, random_state=0),
    "scaler-auto": lambda: DPStandardScaler("auto", random_state=0),
    "quantile": lambda: DPQuantileTransformer(_BOUNDS, random_state=0),
    "kbins": lambda: DPKBinsDiscretizer(_BOUNDS, random_state=0),
    "imputer": lambda: DPSimpleImputer(_BOUNDS, random_state=0),
    "spline": lambda: DPSplineTransformer(_BOUNDS, random_state=0),
}


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("name", sorted(_TRANSFORMERS))
def test_transformer_reads_torch_under_dispatch(dispatch, name):
    X, _ = _data()
    with sklearn.config_context(array_api_dispatch=False):
        ref = _TRANSFORMERS[name]().fit(X)
    transformer = _TRANSFORMERS[name]().fit(torch.from_numpy(X))
    out = transformer.transform(torch.from_numpy(X))
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, ref.transform(X), rtol=0, atol=1e-12)
    assert transformer.epsilon_ == ref.epsilon_


def test_transformer_reads_input_that_requires_grad(dispatch):
    X, _ = _data()
    with sklearn.config_context(array_api_dispatch=False):
        expected = DPStandardScaler(_BOUNDS, random_state=0).fit_transform(X)
    out = DPStandardScaler(_BOUNDS, random_state=0).fit_transform(
        torch.from_numpy(X).requires_grad_()
    )
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)


def test_private_pipeline_fits_torch_under_dispatch(dispatch):
    X, y = _data()

    def pipeline():
        return make_private_pipeline(
            DPStandardScaler(_BOUNDS),
            DPLogisticRegression(classes=[0, 1], max_iter=2),
            epsilon=2.0,
            random_state=0,
        )

    with sklearn.config_context(array_api_dispatch=False):
        ref = pipeline().fit(X, y)
    fitted = pipeline().fit(torch.from_numpy(X), torch.from_numpy(y))
    # The scaler hands numpy rows on: the final step fits on the host.
    coef = fitted[-1].coef_
    np.testing.assert_allclose(np.asarray(coef), ref[-1].coef_, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(fitted.predict(torch.from_numpy(X)), ref.predict(X))


def test_encoder_and_discretizer_inverse_read_torch_under_dispatch(dispatch):
    # The encoder read a tensor as objects (every value went to "other"),
    # and the discretizer's inverse_transform asked torch for numpy's dtype.
    from sklearn_dpfair.preprocessing import DPOneHotEncoder

    codes = np.array([[0.0], [1.0], [2.0], [1.0]])
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPOneHotEncoder(categories=[[0.0, 1.0, 2.0]]).fit(codes)
    encoder = DPOneHotEncoder(categories=[[0.0, 1.0, 2.0]]).fit(torch.from_numpy(codes))
    out = encoder.transform(torch.from_numpy(codes))
    np.testing.assert_array_equal(out, ref.transform(codes))
    assert out.sum() == 4
    decoded = encoder.inverse_transform(torch.from_numpy(out))
    np.testing.assert_array_equal(decoded, codes)
    X, _ = _data()
    kbins = DPKBinsDiscretizer(_BOUNDS, random_state=0, encode="ordinal").fit(X)
    bins = kbins.transform(X)
    np.testing.assert_allclose(
        kbins.inverse_transform(torch.from_numpy(bins)), kbins.inverse_transform(bins)
    )
