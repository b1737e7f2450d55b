# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""execution="dask": same code path and same coefficients as in-process silos.

One LocalCluster with two worker processes serves the whole module.
"""

import pickle
import time

import numpy as np
import pytest

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._loss import BinaryLogisticLoss
from sklearn_dpfair.federated import (
    FederationConfig,
    SiloMessage,
    fit_federated,
    silo_privacy,
)

distributed = pytest.importorskip("distributed")

CANARY = 98765.4321


def _keys_on_workers(client, keep, timeout=10.0):
    """Keys each worker holds, once the scheduler has dropped the others.

    Releases are asynchronous (the scattered rows are dropped once the actors
    hold them); poll until every held key satisfies ``keep`` or time is up.
    """
    deadline = time.monotonic() + timeout
    while True:
        held = {a: list(k) for a, k in client.has_what().items()}
        if all(keep(k) for keys in held.values() for k in keys):
            return held
        if time.monotonic() > deadline:
            return held
        time.sleep(0.05)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1,
        # Any free port: None still binds the default 8787, and warns
        # where another cluster holds it.
        dashboard_address=":0",
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    sizes = [400, 700, 900]
    X = np.vstack([rng.normal(size=(n, 4)) + 0.2 * j for j, n in enumerate(sizes)])
    y = (X[:, 0] - X[:, 1] > 0.2).astype(int)
    X[5] = [CANARY, -CANARY, CANARY / 7, 1.0]  # a recognisable raw row
    return X, y, np.repeat(["a", "b", "c"], sizes)


def test_same_seed_same_coefficients_as_local(client, data):
    X, y, silos = data
    # q = 256 / 2000 and 40 rounds; two budgets, so each worker calibrates
    # twice at most (calibration, ~1 s, dominates these small fits).
    kw = dict(
        classes=[0, 1],
        random_state=7,
        max_iter=5,
        silo_epsilon={"a": 0.5, "b": 1.0, "c": 1.0},
    )
    local = DPLogisticRegression(**kw).fit(X, y, silos=silos)
    dask = DPLogisticRegression(execution="dask", **kw).fit(X, y, silos=silos)
    np.testing.assert_array_equal(local.coef_, dask.coef_)
    np.testing.assert_array_equal(local.intercept_, dask.intercept_)
    assert local.silo_epsilon_ == dask.silo_epsilon_
    assert local.silo_noise_multiplier_ == dask.silo_noise_multiplier_
    assert dask.silo_rounds_ == local.silo_rounds_
    assert dask.epsilon_ == local.epsilon_


def test_no_raw_row_leaves_a_worker(client, data):
    X, y, silos = data
    parts = {s: (X[silos == s], y[silos == s].astype(float)) for s in ("a", "b", "c")}
    # 20 rounds x 2 local steps at q = 0.128: the calibration cached above.
    config = FederationConfig(rounds=20, sampling_probability=0.128, local_steps=2)
    fit = fit_federated(
        parts,
        loss=BinaryLogisticLoss(),
        config=config,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        execution="dask",
        client=client,
        random_state=0,
        record_transcript=True,
    )
    assert fit.execution == "dask"
    # The server received one (d + 1) x 1 noisy message per silo and round...
    assert len(fit.transcript) == 3 * 20
    assert all(
        type(m) is SiloMessage and m.gradient.shape == (5, 1) for m in fit.transcript
    )
    # ...and nothing it received carries the canary row's values.
    received = pickle.dumps((fit.transcript, fit.silo_reports))
    for value in X[5]:
        if value != 1.0:
            assert np.float64(value).tobytes() not in received
    # Every silo's rows were released from the workers after the fit.
    held = _keys_on_workers(client, keep=lambda key: False)
    assert all(not keys for keys in held.values())


def test_silos_are_spread_over_the_workers(client, data):
    from sklearn_dpfair.federated._execution import DaskExecution

    X, y, silos = data
    config = FederationConfig(rounds=2, sampling_probability=0.2, learning_rate=1.0)
    kwargs = {
        s: dict(
            X=X[silos == s],
            y=y[silos == s].astype(float),
            loss=BinaryLogisticLoss(),
            config=config,
            privacy=silo_privacy(int((silos == s).sum()), 1.0, 1e-5, config),
            silo_id=s,
            random_state=0,
        )
        for s in ("a", "b", "c")
    }
    runner = DaskExecution(kwargs, client)
    try:
        held = _keys_on_workers(client, keep=lambda key: "SiloHost" in key)
        # Only one host actor per worker remains (the scattered rows now live
        # inside its silos); the silos are placed round robin.
        assert sorted(len(keys) for keys in held.values()) == [1, 1]
        assert runner.placement["a"] == runner.placement["c"] != runner.placement["b"]
        msgs = runner.messages(np.zeros((5, 1)), 0)
        assert [m.silo_id for m in msgs] == ["a", "b", "c"]
    finally:
        runner.close()


def test_worker_side_refusal_reaches_the_caller(client, data):
    # Only the worker sees the rows: its refusal of a non-finite row must
    # reach the caller (budgets are refused on the driver, before Dask).
    X, y, silos = data
    X_a = X[silos == "a"].copy()
    X_a[3, 1] = np.nan
    parts = {
        "a": (X_a, y[silos == "a"].astype(float)),
        "b": (X[silos == "b"], y[silos == "b"].astype(float)),
    }
    config = FederationConfig(rounds=5, sampling_probability=0.2, learning_rate=1.0)
    with pytest.raises(ValueError, match="finite numbers"):
        fit_federated(
            parts,
            loss=BinaryLogisticLoss(),
            config=config,
            silo_epsilon=1.0,
            silo_delta=1e-5,
            execution="dask",
            client=client,
        )
    # The failed start leaves no silo's rows (nor any silo host) on a worker.
    assert _keys_on_workers(client, keep=lambda key: False) == {
        address: [] for address in client.scheduler_info()["workers"]
    }


def test_dask_needs_a_client(data, monkeypatch):
    X, y, silos = data
    monkeypatch.setattr(
        distributed, "get_client", lambda: (_ for _ in ()).throw(ValueError("none"))
    )
    with pytest.raises(ValueError, match="running dask.distributed Client") as err:
        DPLogisticRegression(classes=[0, 1], execution="dask", max_iter=5).fit(
            X, y, silos=silos
        )
    # The estimator takes no client= parameter: the message must not ask for one.
    assert "or pass client=" not in str(err.value)
    assert "current default client" in str(err.value)
