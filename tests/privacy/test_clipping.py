# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import warnings

import numpy as np
import pytest

from sklearn_dpfair.privacy._clipping import clip_factors_from_norms

F32_MAX = float(np.finfo(np.float32).max)


@pytest.mark.parametrize("clip_norm", [1e39, 1e300, 1e-300, 1e-40])
def test_float32_norms_with_a_bound_outside_float32(clip_norm):
    # Rounded to float32 by the clip, such a bound became inf or 0: every
    # factor 0 (rows inside the ball dropped), and a divide-by-zero warning
    # only when some row's norm was 0.
    norms = np.array([0.0, 1e-45, 1.0, 1e30, F32_MAX, np.inf, np.nan], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        factors = clip_factors_from_norms(norms.copy(), clip_norm)
    assert factors.dtype == np.float32
    wide = norms.astype(np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        expected = np.where(np.isfinite(wide), np.minimum(1.0, clip_norm / wide), 0.0)
    expected[0] = 1.0
    expected[expected < np.finfo(np.float32).smallest_normal] = 0.0
    np.testing.assert_allclose(factors, expected, rtol=1e-6)
    with np.errstate(invalid="ignore"):
        terms = factors.astype(np.float64) * wide
    assert np.all(terms[np.isfinite(terms)] <= clip_norm)
