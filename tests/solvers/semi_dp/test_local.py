# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-LDP-SGD (thesis Algorithm 13): what each private record sends."""

import math
import warnings
from unittest import mock

import numpy as np
import pytest

from sklearn_dpfair import SemiLocalDPLinearRegression
from sklearn_dpfair._solvers.semi_dp import _local
from sklearn_dpfair._solvers.semi_dp._local import (
    LocalParams,
    fit_semi_local,
    local_setup,
    unit_direction,
)
from sklearn_dpfair._solvers.semi_dp._privunit import PrivUnit
from sklearn_dpfair.exceptions import PrivacyAccountingError

MAX = np.finfo(np.float64).max
# Values where float code breaks: overflow of the value or of its square,
# underflow, subnormals.
EXTREMES = (MAX, -MAX, 1e308, -1.7e308, 1e200, 1.4e154, 1e-300, 5e-324, 0.0)
HUGE_TARGETS = (MAX, -MAX, 1e308, -1e200, 1.4e154, 0.0)


def _run(X, y, mask, params, **kwargs):
    # The set-up is made from the public counts before the fit reads a row.
    n_public = int(np.count_nonzero(mask))
    setup = local_setup(
        params, X.shape[0] - n_public, n_public, X.shape[1],
        weighted=kwargs.get("sample_weight") is not None,
    )
    return fit_semi_local(X, y, mask, setup, **kwargs)


@pytest.mark.parametrize("value", EXTREMES)
@pytest.mark.parametrize("scale", [MAX, -MAX, 1e300, 1.0, 1e-300, 0.0, math.inf, math.nan])
def test_unit_direction_is_a_unit_vector_or_none_whatever_the_record(value, scale):
    x = np.array([value, 1.0, -value])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        u, r = unit_direction(x, scale, 2.0)
    assert 0.0 <= r <= 1.0
    if u is not None:
        assert np.isfinite(u).all()
        assert np.linalg.norm(u) == pytest.approx(1.0, rel=1e-12)


def test_unit_direction_ratio_is_the_clipped_norm():
    u, r = unit_direction(np.array([3.0, 4.0]), 0.1, 1.0)
    assert r == pytest.approx(0.5)
    np.testing.assert_allclose(u, [0.6, 0.8])


def _data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ np.arange(1.0, d + 1) + 0.3 * rng.standard_normal(n)
    mask = np.arange(n) < n // 4
    return X, y, mask


class _Spy:
    """Records every input PrivUnit randomizes and every message it sends."""

    def __init__(self):
        self.inputs, self.messages = [], []
        self.original = PrivUnit.randomize

    def __call__(self, unit, v, rng):
        out = self.original(unit, v, rng)
        self.inputs.append(np.array(v))
        self.messages.append((unit, out))
        return out


def _spied_fit(X, y, mask, **kw):
    spy = _Spy()
    params = LocalParams(epsilon=2.0, clip_norm=1.5, **kw)
    with mock.patch.object(PrivUnit, "randomize", autospec=True, side_effect=spy):
        fit = _run(X, y, mask, params, rng=np.random.default_rng(0))
    return fit, spy


@pytest.mark.parametrize("feature", EXTREMES)
@pytest.mark.parametrize("target", HUGE_TARGETS)
def test_adversarial_record_sends_one_unit_input_and_a_message_of_fixed_norm(
    feature, target
):
    # Replace one private record by an adversarial one: every private
    # record's randomizer still sees a unit vector (its sensitivity is the
    # sphere, which PrivUnit's epsilon covers) and sends a message of norm
    # exactly C / m; the release is finite and the record unchanged.
    X, y, mask = _data()
    X2, y2 = X.copy(), y.copy()
    X2[-1] = [feature, -feature, feature]
    y2[-1] = target
    records = []
    for Xw, yw in ((X, y), (X2, y2)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fit, spy = _spied_fit(Xw, yw, mask)
        assert len(spy.inputs) == int((~mask).sum())
        for v in spy.inputs:
            assert np.linalg.norm(v) == pytest.approx(1.0, rel=1e-12)
        for unit, out in spy.messages:
            assert np.isfinite(out).all()
            assert np.linalg.norm(1.5 * out) == pytest.approx(fit.message_norm, rel=1e-9)
        assert np.isfinite(fit.coef).all() and math.isfinite(fit.intercept)
        records.append(fit.record)
    assert records[0] == records[1]


def test_each_private_record_speaks_once_and_public_rows_never():
    X, y, mask = _data(n=40)
    calls = []
    original = PrivUnit.randomize

    def counting(unit, v, rng):
        calls.append(np.array(v))
        return original(unit, v, rng)

    X_marked = X.copy()
    with mock.patch.object(PrivUnit, "randomize", autospec=True, side_effect=counting):
        _run(
            X_marked, y, mask, LocalParams(epsilon=1.0), rng=np.random.default_rng(0)
        )
    assert len(calls) == int((~mask).sum())


def test_release_check_catches_a_record_that_speaks_twice():
    # A bug that lets a private record send a second message releases more
    # than its record accounts: the run-time check refuses the fit.
    X, y, mask = _data(n=40)
    original = PrivUnit.randomize

    def twice(unit, v, rng):
        original(unit, v, rng)
        return original(unit, v, rng)

    est = SemiLocalDPLinearRegression(epsilon=1.0, random_state=0)
    with mock.patch.object(PrivUnit, "randomize", autospec=True, side_effect=twice):
        with pytest.raises(PrivacyAccountingError, match="ran releases"):
            est.fit(X, y, public_mask=mask)
    assert not hasattr(est, "coef_")


def test_messages_are_unbiased_for_the_clipped_gradient():
    # The sign trick: E[C * PrivUnit(s g / ||g||) / m] = clip_C(g), for a
    # gradient inside and outside the clip ball.
    unit = PrivUnit.calibrated(4.0, 3)
    rng = np.random.default_rng(5)
    for g, clip in ((np.array([0.3, -0.4, 0.0]), 1.0), (np.array([3.0, 0.0, 4.0]), 1.0)):
        u, r = unit_direction(g, 1.0, clip)
        n = 20_000
        sent = np.empty((n, 3))
        for k in range(n):
            sign = 1.0 if rng.random() < (1 + r) / 2 else -1.0
            sent[k] = clip * unit.randomize(sign * u, rng)
        target = g * min(1.0, clip / np.linalg.norm(g))
        se = sent.std(axis=0) / math.sqrt(n)
        assert np.all(np.abs(sent.mean(axis=0) - target) <= 5 * se)


def test_step_size_is_the_thesis_choice():
    # eta = D / sqrt(n_priv (C/m)^2 + n_pub C^2) (proof of Proposition 30).
    X, y, mask = _data(n=80)
    params = LocalParams(epsilon=2.0, clip_norm=1.5, radius=0.7)
    fit = _run(X, y, mask, params, rng=np.random.default_rng(0))
    n_pub, n_priv = int(mask.sum()), int((~mask).sum())
    expected = 0.7 / math.sqrt(n_priv * fit.message_norm**2 + n_pub * 1.5**2)
    assert fit.learning_rate == pytest.approx(expected, rel=1e-12)
    assert fit.message_norm == pytest.approx(1.5 / PrivUnit.calibrated(2.0, 4).m)


@pytest.mark.parametrize("mode", ["clip", "rescale", "raw"])
def test_public_gradient_modes_run_and_stay_finite(mode):
    X, y, mask = _data(n=80)
    X = X.copy()
    X[0] = [1e200, -1e200, 1e200]  # a public row whose raw gradient overflows
    fit = _run(
        X, y, mask, LocalParams(epsilon=2.0, public_gradient=mode),
        rng=np.random.default_rng(0),
    )
    assert np.isfinite(fit.coef).all()


@pytest.mark.parametrize("learning_rate", [1e150, 1e250])
def test_a_raw_public_step_never_carries_the_coefficients_out_of_float64(
    learning_rate,
):
    # A given step size times a raw public gradient is bounded by nothing:
    # w - eta * g overflowed with a RuntimeWarning (an overflow that
    # depends on the rows) and the average of the iterates saturated at
    # +-1.8e308. Such a step is now skipped, silently, as a non-finite
    # gradient is.
    X, y, mask = _data(n=80)
    params = LocalParams(
        epsilon=2.0, public_gradient="raw", learning_rate=learning_rate
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = _run(X, y, mask, params, rng=np.random.default_rng(0))
    assert np.all(np.abs(fit.coef) <= MAX / (2 * 80))
    assert np.isfinite(fit.intercept)


def test_public_radius_estimate_shrinks_with_public_rows():
    X, y, _ = _data(n=400)
    radii = []
    for n_pub in (20, 100, 400):
        mask = np.arange(400) < n_pub
        params = LocalParams(epsilon=1.0)
        Xa = _local._augment(X, True)
        radii.append(_local._public_start(Xa[mask], y[mask], params, 4, True)[2])
    assert radii[0] > radii[1] > radii[2] > 0


@pytest.mark.parametrize("weight", [1e300, MAX, 0.0])
def test_huge_weight_on_a_private_record_raises_no_warning(weight):
    # A weighted residual beyond float64 is inf: mapped to a unit vector
    # without numpy's overflow warning, which would depend on the record.
    X, y, mask = _data(n=40)
    y = y.copy()
    y[-1] = 1e307  # a finite residual whose weighted value overflows
    weights = np.ones(40)
    weights[-1] = weight
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = _run(
            X, y, mask, LocalParams(epsilon=2.0), rng=np.random.default_rng(0),
            sample_weight=weights,
        )
    assert np.isfinite(fit.coef).all()


def test_public_ridge_auto_is_chosen_on_public_rows_only():
    # GCV on the public rows: a well-determined public fit keeps a small
    # ridge; a fixed value is used as given; private rows never change it.
    X, y, _ = _data(n=2000, d=5)
    mask = np.arange(2000) < 1500
    Xa = _local._augment(X, True)
    auto = _local._public_start(Xa[mask], y[mask], LocalParams(epsilon=1.0), 6, True)
    assert auto[1] in _local.PUBLIC_RIDGE_GRID and auto[1] <= 1e-3
    fixed = _local._public_start(
        Xa[mask], y[mask], LocalParams(epsilon=1.0, public_ridge=0.5), 6, True
    )
    assert fixed[1] == 0.5
    y2 = y.copy()
    y2[~mask] = 1e6
    fits = [
        _run(X, t, mask, LocalParams(epsilon=1.0), rng=np.random.default_rng(0))
        for t in (y, y2)
    ]
    assert fits[0].public_ridge == fits[1].public_ridge
    np.testing.assert_array_equal(fits[0].warm_start, fits[1].warm_start)


@pytest.mark.parametrize(
    "change", ["one more private row", "one more public row", "a column", "weights"]
)
def test_fit_refuses_data_of_other_counts_than_planned(change):
    X, y, _ = _data(n=60)
    mask = np.zeros(60, dtype=bool)
    mask[:10] = True
    setup = local_setup(LocalParams(epsilon=1.0), 50, 10, X.shape[1])
    weights = None
    if change == "one more private row":
        X, y, mask = X[:-1], y[:-1], mask[:-1]
    elif change == "one more public row":
        mask = mask.copy()
        mask[10] = True
    elif change == "a column":
        X = np.hstack([X, X[:, :1]])
    else:
        weights = np.ones(60)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(PrivacyAccountingError, match="planned for"):
        fit_semi_local(X, y, mask, setup, rng=rng, sample_weight=weights)
    assert rng.bit_generator.state == state


def test_estimator_plan_is_the_fit_set_up():
    X, y, _ = _data(n=60)
    mask = np.zeros(60, dtype=bool)
    mask[:10] = True
    est = SemiLocalDPLinearRegression(epsilon=1.0, random_state=0)
    with mock.patch.object(
        _local, "PrivUnit", wraps=PrivUnit
    ) as spy:
        est.fit(X, y, public_mask=mask)
    # One randomizer a fit (the event's epsilon is calibrated in dimension
    # 1): the set-up's randomizer is the one that runs.
    width = X.shape[1] + 1
    calls = [c for c in spy.calibrated.call_args_list if c.args[1] == width]
    assert len(calls) == 1
    plan = est.privacy_plan(60, X.shape[1], n_public=10)
    assert plan.dp_event == est.dp_event_
    assert est.privacy_record_.mechanism == plan.mechanism


def test_local_params_compute_in_python_floats():
    # A numpy float32 public_ridge kept the public ridge in float32, where
    # 3e38 times the Gram matrix's mean diagonal is inf.
    params = LocalParams(
        epsilon=np.float32(2.0), clip_norm=np.float32(0.5), learning_rate="auto",
        radius=np.float32(0.25), public_ridge=np.float32(3e38),
    )
    for name in ("epsilon", "clip_norm", "radius", "public_ridge"):
        assert type(getattr(params, name)) is float
    assert params.public_ridge == float(np.float32(3e38))
    assert params.learning_rate == "auto"
    with pytest.raises(ValueError, match=r"^radius is beyond the largest float"):
        LocalParams(epsilon=1.0, radius=10**400)
