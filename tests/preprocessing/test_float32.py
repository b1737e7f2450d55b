# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""float32 input gives float32 output, computed (and released) in float64."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.utils import get_tags

from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPOneHotEncoder,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)
from sklearn_dpfair.preprocessing._base import as_input_float

_BOUNDS = [(-4.0, 4.0)] * 2


def _data():
    X = np.random.default_rng(0).normal(size=(300, 2))
    X[::7, 0] = np.nan
    return X


@pytest.mark.parametrize(
    "transformer",
    [
        DPStandardScaler(bounds=_BOUNDS),
        DPSimpleImputer(bounds=_BOUNDS),
        DPSimpleImputer(bounds=_BOUNDS, strategy="median"),
        DPQuantileTransformer(bounds=_BOUNDS),
        DPQuantileTransformer(bounds=_BOUNDS, output_distribution="normal"),
        DPKBinsDiscretizer(bounds=_BOUNDS, encode="ordinal"),
        DPKBinsDiscretizer(bounds=_BOUNDS),
        DPSplineTransformer(bounds=_BOUNDS),
    ],
    ids=lambda t: type(t).__name__,
)
def test_float32_in_float32_out_as_scikit_learn(transformer):
    X = _data()
    if not get_tags(transformer).input_tags.allow_nan:
        X = np.nan_to_num(X)
    X32 = X.astype(np.float32)
    assert "float32" in get_tags(transformer).transformer_tags.preserves_dtype
    fitted = clone(transformer).set_params(random_state=0).fit(X32)
    # The fit reads the float32 values in float64: the release is the one
    # of the same values given as float64.
    wide = clone(fitted).fit(X32.astype(np.float64))
    for name in ("mean_", "scale_", "statistics_", "quantiles_", "knots_"):
        if hasattr(fitted, name):
            assert getattr(fitted, name).dtype == np.float64
            assert_allclose(getattr(fitted, name), getattr(wide, name), rtol=1e-12)
    out = fitted.transform(X32)
    assert out.dtype == np.float32
    assert_allclose(out, wide.transform(X32.astype(np.float64)), rtol=1e-6, atol=1e-6)
    assert fitted.transform(X).dtype == np.float64
    # Within the declared bound, as the float64 output is.
    lower, upper = fitted.output_bounds_[:, 0], fitted.output_bounds_[:, 1]
    assert np.all((np.isnan(out)) | ((out >= lower) & (out <= upper)))
    if hasattr(fitted, "inverse_transform") and (
        not isinstance(fitted, DPKBinsDiscretizer) or fitted.encode == "ordinal"
    ):
        assert fitted.inverse_transform(out).dtype == np.float32
        assert fitted.inverse_transform(out.astype(np.float64)).dtype == np.float64


def test_rounding_to_float32_stays_within_the_declared_bounds():
    # Bounds float32 cannot hold: 0.1 rounds up to float32(0.1) > 0.1.
    X = np.array([[0.1], [np.nan], [-5.0], [0.05]], dtype=np.float32)
    imp = DPSimpleImputer(bounds=(-0.1, 0.1), epsilon=np.inf).fit(X)
    out = imp.transform(X)
    assert out.dtype == np.float32
    # Compared in float64 (a Python float beside float32 is float32).
    assert out.astype(np.float64).max() <= 0.1
    assert out.astype(np.float64).min() >= -0.1
    # A fill value beyond float32's range is its largest float, not inf.
    huge = DPSimpleImputer(bounds=(0.0, 1e300), epsilon=np.inf).fit(
        np.full((3, 1), np.nan, dtype=np.float32)
    )
    filled = huge.transform(np.array([[np.nan]], dtype=np.float32))
    assert filled[0, 0] == np.finfo(np.float32).max


@pytest.mark.parametrize(
    "transformer",
    [
        DPQuantileTransformer(bounds=(-1e300, 1e300), n_quantiles=5),
        DPKBinsDiscretizer(
            bounds=(-1e300, 1e300), n_bins=3, encode="ordinal", strategy="uniform"
        ),
        DPStandardScaler(bounds=(-1e300, 1e300)),
    ],
    ids=lambda t: type(t).__name__,
)
def test_float32_inverse_beyond_float32_range_saturates(transformer):
    # Quantiles or bin centres at +-1e300 (public bounds that wide) are
    # beyond float32's range: the float32 inverse saturates at its largest
    # finite value, as the scaler's does, rather than returning +-inf.
    X = np.random.default_rng(0).normal(size=(60, 1)).astype(np.float32)
    fitted = clone(transformer).set_params(random_state=0).fit(X)
    if isinstance(fitted, DPStandardScaler):
        Z = np.array([[-1e300], [1e300]]) / fitted.scale_
    elif isinstance(fitted, DPKBinsDiscretizer):
        Z = np.array([[0.0], [2.0]])
    else:
        Z = np.array([[0.0], [1.0]])
    wide = fitted.inverse_transform(Z)
    out = fitted.inverse_transform(Z.astype(np.float32))
    assert out.dtype == np.float32
    largest = np.finfo(np.float32).max
    assert wide[0, 0] < -largest and wide[1, 0] > largest
    assert out[0, 0] == -largest and out[1, 0] == largest
    # NaN is kept (the quantile transformer and the scaler take it).
    if not isinstance(fitted, DPKBinsDiscretizer):
        nan = fitted.inverse_transform(np.array([[np.nan]], dtype=np.float32))
        assert np.isnan(nan[0, 0])


def test_bounds_holding_no_float32_keep_float64():
    # float32 is 64 apart near 1e9: (1e9 + 1, 1e9 + 2) holds none of it.
    out = as_input_float(
        np.array([[1e9 + 1.5]]), np.dtype(np.float32), [[1e9 + 1, 1e9 + 2]]
    )
    assert out.dtype == np.float64 and out[0, 0] == 1e9 + 1.5
    assert as_input_float(np.ones((1, 1)), np.dtype(np.float16)).dtype == np.float64


def test_the_encoder_declares_float64_output():
    # As scikit-learn's OneHotEncoder at its default dtype.
    enc = DPOneHotEncoder(categories=[[0.0, 1.0]])
    assert get_tags(enc).transformer_tags.preserves_dtype == ["float64"]
    X = np.array([[0.0], [1.0]], dtype=np.float32)
    assert enc.fit(X).transform(X).dtype == np.float64
