# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A federated fit makes its plan before any silo sends a message.

The plan (``plan_fit_silos``) is the record the fit will set, from public
inputs only (silo ids and sizes, budgets, schedule); a ledger that cannot
record its event refuses before the first round, as a central fit's does.
"""

import math

import numpy as np
import pytest

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.federated import _shuffle, _silo
from sklearn_dpfair.federated._fit import plan_fit_silos
from sklearn_dpfair.neural import DPMLPClassifier
from sklearn_dpfair.privacy import PrivacyLedger


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y, np.arange(n) % 3


def _random_allocation_ledger(adjacency):
    """A PLD ledger holding a balls-and-bins event, which it reads alone."""
    # Random allocation is accounted by the optional pld-accounting package.
    pytest.importorskip("PLD_accounting")
    X, y, _ = _data()
    fitted = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], max_iter=2, batch_sampling="balls_and_bins"
    ).fit(X, y)
    ledger = PrivacyLedger(kind="pld")
    ledger.record(fitted.dp_event_, delta=1e-5, adjacency=adjacency)
    return ledger


def _count_messages(monkeypatch, worker):
    """Count the messages ``worker`` instances send."""
    sent = []
    message = worker.message

    def counted(self, *args, **kwargs):
        sent.append(self.silo_id)
        return message(self, *args, **kwargs)

    monkeypatch.setattr(worker, "message", counted)
    return sent


@pytest.mark.parametrize(
    "estimator, worker, adjacency",
    [
        (DPLogisticRegression(max_iter=2), _silo.SiloWorker, "add_remove"),
        (DPMLPClassifier(max_iter=2), _silo.SiloWorker, "add_remove"),
        (
            DPLogisticRegression(max_iter=2, shuffle=True),
            _shuffle.ShuffledSilo,
            "replace_one",
        ),
    ],
    ids=["logistic", "mlp", "shuffle"],
)
def test_a_ledger_that_cannot_record_refuses_before_any_silo_message(
    monkeypatch, estimator, worker, adjacency
):
    X, y, silos = _data()
    ledger = _random_allocation_ledger(adjacency)
    sent = _count_messages(monkeypatch, worker)
    est = estimator.set_params(epsilon=1.0, classes=[0, 1], accountant=ledger)
    with pytest.raises(ValueError, match="random-allocation"):
        est.fit(X, y, silos=silos)
    assert sent == []
    assert len(ledger) == 1
    assert not hasattr(est, "privacy_record_")


@pytest.mark.parametrize(
    "params",
    [
        {"silo_epsilon": {0: 0.5, 1: 2.0, 2: 1.0, "absent": 9.0}},
        {"silo_epsilon": {0: math.inf, 1: 1.0, 2: 1.0}},
        {"secure_aggregation": True, "server_weights": "size"},
        # A negligible weight: that silo's records are covered by the
        # others' noise (it once overflowed the accountant after the rounds).
        {"secure_aggregation": True, "server_weights": {0: 1e-300, 1: 1, 2: 1}},
        {"shuffle": True},
    ],
    ids=[
        "per-silo",
        "one-non-private",
        "secure-aggregation",
        "secure-aggregation-tiny-weight",
        "shuffle",
    ],
)
def test_the_plan_is_the_fitted_record(params):
    X, y, _ = _data(n=900)
    silos = np.repeat([0, 1, 2], [200, 300, 400])
    est = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], max_iter=2, random_state=0, **params
    )
    plan = plan_fit_silos(
        len(y),
        est._dp_sgd_params(),
        est._dp_sgd_budget(()),
        est._silo_options(),
        silos=silos,
    )
    est.fit(X, y, silos=silos)
    record = est.privacy_record_
    assert plan.record.dp_event == record.dp_event
    assert plan.record.adjacency == record.adjacency
    assert plan.record.delta == record.delta
    assert plan.record.epsilon == record.epsilon or (
        math.isinf(plan.record.epsilon) and math.isinf(record.epsilon)
    )
    assert plan.private
    central = est.central_privacy_record_
    if central is None:
        assert plan.central_record is None
    else:
        assert math.isfinite(central.epsilon) and central.epsilon <= 1.0
        assert plan.central_record.dp_event == central.dp_event
        assert plan.central_record.epsilon == central.epsilon


def test_a_central_record_that_cannot_be_made_is_refused_before_any_message(
    monkeypatch,
):
    # Silo 0's negligible weight gives it the capped aggregate multiplier,
    # whose noise std times clip_norm=1e300 overflows: the fit's central
    # record cannot be written, and its plan says so before round 0.
    X, y, silos = _data()
    sent = _count_messages(monkeypatch, _silo.SiloWorker)
    est = DPLogisticRegression(
        epsilon=1.0,
        classes=[0, 1],
        max_iter=2,
        clip_norm=1e300,
        secure_aggregation=True,
        server_weights={0: 1e-300, 1: 1.0, 2: 1.0},
    )
    with pytest.raises(ValueError, match="clip_norm is too large"):
        est.fit(X, y, silos=silos)
    assert sent == []
    assert not hasattr(est, "privacy_record_")
