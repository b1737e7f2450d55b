"""Clipped per-example terms are finite and within the clip bound for any record."""

import numpy as np
import pytest

from sklearn_dpfair.privacy._clipping import (
    augmented_row_norms,
    clip_factors_from_norms,
    clipped_gradient_sum,
    clipped_rows,
    stable_row_norms,
)

HUGE_ROWS = np.array(
    [[1.7e308, 0.0], [1e200, -1e200], [1e-300, 0.0], [0.0, 0.0], [3.0, 4.0]]
)


def test_stable_row_norms_do_not_overflow_for_finite_norms():
    norms = stable_row_norms(HUGE_ROWS)
    assert np.all(np.isfinite(norms))
    np.testing.assert_allclose(norms[1], np.sqrt(2) * 1e200)
    assert norms[4] == 5.0


def test_augmented_row_norms_finite_for_huge_rows():
    norms = augmented_row_norms(HUGE_ROWS, 1.0)
    assert np.all(np.isfinite(norms))
    assert norms[3] == 1.0


def test_non_finite_norms_give_factor_zero():
    factors = clip_factors_from_norms(np.array([np.inf, np.nan, 1.0]), 1.0)
    np.testing.assert_array_equal(factors, [0.0, 0.0, 1.0])


@pytest.mark.parametrize("clip_norm", [0.5, 1.0, 30.0, np.inf])
def test_clipped_sum_finite_and_bounded_whatever_the_record(clip_norm):
    raw = np.array([[np.inf], [np.nan], [1e300], [-1e308], [0.5]])
    X = HUGE_ROWS
    weighted = clipped_rows(raw, augmented_row_norms(X, 1.0), clip_norm)
    assert np.all(np.isfinite(weighted))
    # The non-finite raw gradients contribute exactly nothing.
    assert weighted[0, 0] == 0.0 and weighted[1, 0] == 0.0
    coef, intercept = clipped_gradient_sum(
        X, raw, augmented_row_norms(X, 1.0), clip_norm, 1.0
    )
    assert np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))
    if np.isfinite(clip_norm):
        for i in range(X.shape[0]):
            c, b = clipped_gradient_sum(
                X[i : i + 1], raw[i : i + 1], augmented_row_norms(X[i : i + 1], 1.0),
                clip_norm, 1.0,
            )
            norm = np.sqrt(np.sum(c**2) + np.sum(b**2))
            assert norm <= clip_norm * (1 + 1e-12)
