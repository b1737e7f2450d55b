"""DPFERMIClassifier's column scaling on raw-scale columns (feature_scaling=)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair.linear_model import DPFERMIClassifier

N = 15_000
# Raw columns: scales 1e-3 to 1e4, offsets 500 and 1e5 (a year, a price).
SCALES = np.array([1e-3, 100.0, 1e4, 1.0])
OFFSETS = np.array([0.0, 500.0, 1e5, 0.0])
# Public ranges that contain the columns (about +-5 standard deviations).
BOUNDS = np.column_stack([OFFSETS - 5 * SCALES, OFFSETS + 5 * SCALES])


def _raw(seed, n=N):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, SCALES.size))
    groups = rng.integers(0, 2, n)
    logit = Z @ np.array([1.5, -1.0, 0.8, 0.0]) + 0.5 * groups
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    return Z * SCALES + OFFSETS, y, groups


def _fit(seed, X, y, groups, **params):
    params = {
        "epsilon": 1.0,
        "classes": [0, 1],
        "groups": [0, 1],
        "random_state": seed,
        **params,
    }
    return DPFERMIClassifier(**params).fit(X, y, sensitive_features=groups)


@pytest.mark.parametrize("fairness_weight", [0.0, 8.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scaling_rescues_raw_columns(seed, fairness_weight):
    # Measured (epsilon = 1, seeds 0-2): 0.535-0.541 unscaled (the 1e5
    # column saturates every clipped gradient), 0.774-0.781 with private
    # scales or public bounds.
    X, y, groups = _raw(seed)
    X_test, y_test, _ = _raw(seed + 100)
    plain = _fit(seed, X, y, groups, fairness_weight=fairness_weight)
    scaled = _fit(
        seed, X, y, groups, fairness_weight=fairness_weight, feature_scaling="auto"
    )
    bounded = _fit(
        seed,
        X,
        y,
        groups,
        fairness_weight=fairness_weight,
        feature_scaling="auto",
        feature_bounds=BOUNDS,
    )
    base = plain.score(X_test, y_test)
    assert base < 0.6
    for est in (scaled, bounded):
        assert est.score(X_test, y_test) > base + 0.15
        assert est.score(X_test, y_test) > 0.75


def test_public_bounds_spend_nothing():
    X, y, groups = _raw(0, n=3000)
    plain = _fit(0, X, y, groups)
    bounded = _fit(0, X, y, groups, feature_scaling="auto", feature_bounds=BOUNDS)
    # The same releases: public bounds add no event and take no share.
    assert bounded.dp_event_ == plain.dp_event_
    assert bounded.epsilon_ == plain.epsilon_
    assert bounded.noise_multiplier_ == plain.noise_multiplier_
    assert "declared feature_bounds (public, no budget)" in (
        bounded.privacy_record_.mechanism
    )


def test_private_scales_are_accounted_in_the_same_event():
    X, y, groups = _raw(0, n=3000)
    plain = _fit(0, X, y, groups, accountant="pld")
    scaled = _fit(0, X, y, groups, feature_scaling="auto", accountant="pld")
    events = scaled.dp_event_.events
    # The quantiles first (zCDP events, read by the RDP accountant), then
    # the histogram and the steps, all inside the one budget.
    assert len(events) == len(plain.dp_event_.events) + 1
    assert events[1] == plain.dp_event_.events[0]  # the same histogram
    assert type(events[0]).__name__ in ("ZCDpEvent", "SelfComposedDpEvent")
    assert scaled.accountant_ == "rdp"
    assert scaled.epsilon_ <= 1.0 + 1e-6
    # The steps get what the quantiles leave: more noise than without.
    assert scaled.noise_multiplier_ > plain.noise_multiplier_
    assert "private quantiles" in scaled.privacy_record_.mechanism
    plan = scaled.privacy_plan(X.shape[0], X.shape[1], n_groups=2)
    assert plan.dp_event == scaled.dp_event_
    assert "private quantiles" in plan.mechanism


def test_coefficients_are_in_user_units():
    X, y, groups = _raw(0, n=3000)
    est = _fit(0, X, y, groups, feature_scaling="auto", feature_bounds=BOUNDS)
    # The model of the scaled columns, read back in raw units: the decision
    # function on the raw X is that of a model of sensible size on X / s.
    scaled_coef = est.coef_ * SCALES
    assert np.all(np.abs(scaled_coef) < 10.0)
    assert np.abs(scaled_coef[0, 0]) > 0.3  # the informative unit-1e-3 column


def test_non_private_limit_is_unchanged():
    X, y, groups = _raw(0, n=2000)
    plain = _fit(0, X, y, groups, epsilon=math.inf)
    scaled = _fit(0, X, y, groups, epsilon=math.inf, feature_scaling="auto")
    np.testing.assert_allclose(scaled.coef_, plain.coef_, rtol=1e-12, atol=0)
    assert scaled.dp_event_ == plain.dp_event_


def test_sparse_needs_bounds():
    X, y, groups = _raw(0, n=2000)
    with pytest.raises(ValueError, match="feature_bounds"):
        _fit(0, sp.csr_matrix(X), y, groups, feature_scaling="auto")
    # With public bounds the sparse columns are scaled (not centred).
    est = _fit(
        0, sp.csr_matrix(X), y, groups, feature_scaling="auto", feature_bounds=BOUNDS
    )
    assert "feature_bounds" in est.privacy_record_.mechanism


def test_fixed_noise_needs_bounds():
    X, y, groups = _raw(0, n=2000)
    with pytest.raises(ValueError, match="feature_bounds"):
        _fit(0, X, y, groups, feature_scaling="auto", noise_multiplier=2.0)


def test_dask_input_is_refused():
    da = pytest.importorskip("dask.array")
    X, y, groups = _raw(0, n=200)
    with pytest.raises(ValueError, match="feature_scaling"):
        _fit(
            0,
            da.from_array(X, chunks=100),
            da.from_array(y, chunks=100),
            groups,
            feature_scaling="auto",
        )
