"""Clipped per-example terms are finite and within the clip bound for any record."""

import numpy as np
import pytest

from sklearn_dpfair._solvers._linear import augmented_row_norms, clipped_gradient_sum
from sklearn_dpfair.privacy._clipping import (
    clip_factors_from_norms,
    clip_rows_to_norm,
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


@pytest.mark.parametrize("bound", [0.5, 3.0, 1e300])
def test_rows_are_projected_onto_the_ball_whatever_they_hold(bound):
    # A row whose squared norm overflows is projected like any other row (not
    # zeroed by an inf norm); ordinary rows keep the plain formula exactly.
    X = np.vstack([HUGE_ROWS, [[1.7e308, 1.7e308], [-1e200, 1e200]]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        clipped = clip_rows_to_norm(X, bound)
    assert np.isfinite(clipped).all()
    assert np.all(stable_row_norms(clipped) <= bound * (1 + 1e-12))
    norms = np.linalg.norm(X[2:5], axis=1)
    with np.errstate(over="ignore"):
        factor = np.minimum(1.0, bound / np.maximum(norms, 1e-300))
    plain = X[2:5] * factor[:, None]
    np.testing.assert_array_equal(clipped[2:5], plain)
    for i in (0, 1, 5, 6):  # same direction, on the sphere when outside it
        direction = X[i] / np.max(np.abs(X[i]))
        direction /= np.linalg.norm(direction)
        expected = min(bound, stable_row_norms(X[i : i + 1])[0]) * direction
        np.testing.assert_allclose(clipped[i], expected, rtol=1e-12)


def test_float32_record_whose_norm_overflows_float32_is_still_clipped():
    # ||r|| ||x|| = 6e38 overflows float32 but not float64: the record gets
    # its clipped contribution (norm C), not the fallback 0.
    raw = np.array([[2.0], [0.5]], dtype=np.float32)
    X = np.array([[3e38, 0.0], [0.6, 0.8]], dtype=np.float32)
    norms = augmented_row_norms(X)
    coef, _ = clipped_gradient_sum(X[:1], raw[:1], norms[:1], 1.0, 0.0)
    np.testing.assert_allclose(coef.ravel(), [1.0, 0.0], rtol=1e-6)
    weighted = clipped_rows(raw, norms, 1.0)
    assert weighted[1, 0] == 0.5  # inside the ball: unchanged
