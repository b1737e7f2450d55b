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


@pytest.mark.parametrize(
    "estimator, options",
    [
        (DPLogisticRegression, {"noise_multiplier": 100.0}),
        (DPLogisticRegression, {"noise_multiplier": 100.0, "secure_aggregation": True}),
        (DPLogisticRegression, {"shuffle": True, "silo_epsilon": 1.0}),
        (
            DPMLPClassifier,
            {"noise_multiplier": 100.0, "hidden_layer_sizes": (4,), "alpha": 0.0},
        ),
    ],
)
def test_rounds_that_diverge_charge_the_ledger_their_planned_event(estimator, options):
    # The server refuses a step that leaves the float range after the silos
    # sent the messages of every earlier round (to the untrusted server), and
    # the fit raises: the ledger recorded nothing, so a refit at a smaller
    # step was composed without them. The planned event (the rounds that ran
    # are a prefix of it) is charged, and the estimator is left unfitted.
    from sklearn_dpfair.exceptions import DivergedModelError

    X, y, silos = _data(n=400)
    kind = "pld" if options.get("shuffle") else "rdp"
    ledger = PrivacyLedger(kind=kind)
    params = dict(classes=[0, 1], accountant=ledger, random_state=0, **options)
    clf = estimator(learning_rate=1e308, **params)
    with pytest.raises(DivergedModelError, match="diverged") as raised:
        clf.fit(X, y, silos=silos)
    assert any("planned event is recorded" in n for n in raised.value.__notes__)
    assert not hasattr(clf, "coef_") and not hasattr(clf, "coefs_")
    (entry,) = ledger.entries
    assert "raised after releasing" in entry.source
    # What the same fit at a step that converges records: the same event.
    fitted = estimator(learning_rate=1e-3, **{**params, "accountant": "rdp"})
    fitted.fit(X, y, silos=silos)
    assert entry.dp_event == fitted.dp_event_
    assert entry.delta == fitted.delta_ and entry.adjacency == fitted.adjacency_
    assert entry.epsilon == pytest.approx(fitted.epsilon_)
    assert entry.seed == fitted.privacy_record_.seed


def test_a_step_refused_before_the_rounds_charges_nothing():
    # A step refused by validation (learning_rate * alpha >= 2) is refused
    # before any silo sends a message: nothing is charged.
    X, y, silos = _data(n=400)
    ledger = PrivacyLedger()
    clf = DPMLPClassifier(
        classes=[0, 1], hidden_layer_sizes=(4,), learning_rate=1e308, accountant=ledger
    )
    with pytest.raises(ValueError, match="learning_rate"):
        clf.fit(X, y, silos=silos)
    assert ledger.entries == []


@pytest.mark.parametrize(
    "estimator",
    [
        DPLogisticRegression(shuffle=True, noise_multiplier=5.0),
        DPLogisticRegression(shuffle=True, secure_aggregation=True),
        DPLogisticRegression(shuffle=True, server_weights="size"),
        DPLogisticRegression(execution="dask"),
        DPMLPClassifier(hidden_layer_sizes=(4,), execution="dask"),
    ],
    ids=["shuffle-noise", "shuffle-secure", "shuffle-weights", "dask", "mlp-dask"],
)
def test_options_refused_before_the_rounds_charge_nothing(estimator):
    # Options the driver refuses (shuffle with an option it cannot take, Dask
    # without a running client) were refused once the fit had marked its
    # releases unchecked: the ledger was charged the planned event, with a
    # note that the fit "raised after some of its releases". The plan now
    # refuses them before any row is read.
    pytest.importorskip("distributed")
    X, y, silos = _data(n=4000)
    shuffled = getattr(estimator, "shuffle", False)
    ledger = PrivacyLedger(kind="pld" if shuffled else "rdp")
    clf = estimator.set_params(classes=[0, 1], delta=1e-6, accountant=ledger)
    with pytest.raises(ValueError, match="shuffle=True cannot|needs a running dask"):
        clf.fit(X, y, silos=silos)
    assert ledger.entries == []


@pytest.mark.parametrize("estimator", [DPLogisticRegression, DPMLPClassifier])
def test_a_schedule_of_too_many_rounds_is_refused_by_the_plan(estimator):
    # 1,001 epochs of batches of 2 over 2,000 rows: 1,001,000 rounds. The
    # central fit refuses more than 10**6 steps; the federated plan of
    # DPLogisticRegression did not, and its fit ran for hours.
    X, y, silos = _data(n=2000)
    clf = estimator(classes=[0, 1], batch_size=2, max_iter=1001, delta=1e-6)
    with pytest.raises(ValueError, match="at most 1000000 steps"):
        clf.privacy_plan(2000, 3, n_silos=2)
    with pytest.raises(ValueError, match="at most 1000000 steps"):
        clf.fit(X, y, silos=np.arange(2000) % 2)
