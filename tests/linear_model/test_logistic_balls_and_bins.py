# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression(batch_sampling="balls_and_bins"): record, plan, refusals, audit."""

import math
import sys

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.audit import (
    audit_gradient_canary,
    audit_scores,
    canary_allocation_log_likelihood_ratio,
)
from sklearn_dpfair.privacy import GaussianMechanism
from sklearn_dpfair.privacy._random_allocation import (
    RandomAllocationDpEvent,
    random_allocation_event,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int)
    return X, y


def _clf(**kw):
    # 400 rows in batches of 40: 10 steps per epoch, 3 epochs.
    params = dict(
        epsilon=1.0, classes=[0, 1], batch_size=40, max_iter=3,
        batch_sampling="balls_and_bins",
    )
    return DPLogisticRegression(**{**params, **kw})


def test_record_is_the_random_allocation_and_the_plan(data):
    pytest.importorskip("PLD_accounting")
    X, y = data
    clf = _clf(random_state=0).fit(X, y)
    event = clf.dp_event_
    assert isinstance(event, RandomAllocationDpEvent)
    assert (event.steps_per_epoch, event.epochs) == (10, 3)
    record = clf.privacy_record_
    assert record.accountant == "pld" and record.sampling_probability is None
    assert record.steps == 30 and record.adjacency == "add_remove"
    assert clf.epsilon_ <= 1.0 and record.recompute_epsilon() == clf.epsilon_
    assert event.noise_multiplier == record.noise_multiplier
    assert clf.privacy_plan(400, 3).dp_event == event
    # A user noise is accounted as given.
    fixed = _clf(noise_multiplier=3.0, epsilon=10.0, random_state=0).fit(X, y)
    assert fixed.dp_event_ == random_allocation_event(3.0, 10, 3)


def test_missing_package_is_a_clear_import_error(data, monkeypatch):
    monkeypatch.setitem(sys.modules, "PLD_accounting", None)
    X, y = data
    with pytest.raises(ImportError, match="pip install pld-accounting"):
        _clf(epsilon=0.7).fit(X, y)


@pytest.mark.parametrize(
    "kw, fit_kw",
    [
        (dict(solver="dp-newton", feature_norm_bound=5.0), {}),
        ({}, dict(silos=np.arange(400) % 2)),
        # epsilon = 8: on 400 rows the private quartiles resolve a spread.
        (dict(feature_scaling="auto", epsilon=8.0), {}),
    ],
)
def test_refused_where_batches_are_not_balls_and_bins(data, kw, fit_kw):
    X, y = data
    with pytest.raises(ValueError, match="batch_sampling|feature scales"):
        _clf(**kw).fit(X, y, **fit_kw)


def test_infinite_epsilon_is_lbfgs(data):
    X, y = data
    clf = _clf(epsilon=math.inf).fit(X, y)
    ref = LogisticRegression(C=1e12, max_iter=1000).fit(X, y)
    assert np.mean(clf.predict(X) == ref.predict(X)) >= 0.99
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-3, atol=1e-3)


def test_allocation_llr_flags_halved_noise_and_not_the_declared_noise():
    # One canary's trace under balls-and-bins: t = 10 steps per epoch, 3
    # epochs, declared sigma = 1.5; the canary in one uniform step per epoch.
    pytest.importorskip("PLD_accounting")
    t, epochs, sigma, n = 10, 3, 1.5, 4000
    claim = random_allocation_event(sigma, t, epochs)
    for true_sigma, flagged in ((sigma, False), (sigma / 2, True)):
        rng = np.random.default_rng(0)

        def traces(inside):
            b = np.zeros((t * epochs, n))
            if inside:
                slot = rng.integers(t, size=(epochs, n))
                for e in range(epochs):
                    b[e * t + slot[e], np.arange(n)] = 1.0
            return b + true_sigma * rng.normal(size=b.shape)

        s0 = canary_allocation_log_likelihood_ratio(traces(False), sigma, t)
        s1 = canary_allocation_log_likelihood_ratio(traces(True), sigma, t)
        result = audit_scores(s0, s1, delta=1e-5, dp_event=claim)
        assert result.conclusive
        assert result.violation is flagged, str(result)


def test_gradient_canary_audit_flags_halved_noise(monkeypatch, data):
    pytest.importorskip("PLD_accounting")
    X, y = data
    clf = _clf(epsilon=2.0)
    honest = audit_gradient_canary(clf, X, y, n_runs=20, n_canaries=200)
    assert honest.conclusive and not honest.violation
    monkeypatch.setattr(
        GaussianMechanism,
        "noise_std",
        property(lambda self: 0.5 * self.noise_multiplier * self.clip_norm),
    )
    broken = audit_gradient_canary(clf, X, y, n_runs=20, n_canaries=200)
    assert broken.violation, str(broken)


def test_refused_on_a_dask_collection(data):
    # The Dask workers draw Poisson batches: refused before any client is needed.
    da = pytest.importorskip("dask.array")
    X, y = data
    with pytest.raises(ValueError, match="batch_sampling"):
        _clf().fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))


def test_one_batch_per_epoch_is_the_self_composed_gaussian(monkeypatch):
    # 300 rows and the "auto" batch (at least 256 rows): one step per epoch,
    # every record in every step; its calibration once crashed on the
    # allocation accountant, which does not read that event. dp-accounting
    # reads it, so the optional package is not needed.
    import dp_accounting

    monkeypatch.setitem(sys.modules, "PLD_accounting", None)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(
        epsilon=2.0, classes=[0, 1], batch_sampling="balls_and_bins",
        small_budget="fit", random_state=0,
    ).fit(X, y)
    event = clf.dp_event_
    assert isinstance(event, dp_accounting.SelfComposedDpEvent)
    assert event.count == clf.t_
    assert clf.epsilon_ <= 2.0 and clf.privacy_record_.recompute_epsilon() == clf.epsilon_
    assert clf.privacy_plan(300, 4).dp_event == event
    assert "self-composed Gaussian" in clf.privacy_record_.mechanism
