# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPMLPClassifier.fit(X, y, silos=...): ISRL-DP training of a network."""

import math
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_digits
from sklearn.model_selection import KFold, cross_validate

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair.federated import FederationConfig, SiloWorker, silo_privacy
from sklearn_dpfair.neural import DPMLPClassifier
from sklearn_dpfair.neural._federated import NetworkSiloModel
from sklearn_dpfair.privacy._accounting import epsilon_of


@pytest.fixture(scope="module")
def digits():
    # Heterogeneous silos as in Lowy's thesis's MNIST experiment: each silo
    # holds two digits.
    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(y))
    X, y = X[perm] / 16.0, y[perm]
    return X[:1400], y[:1400], y[:1400] % 5, X[1400:], y[1400:]


def _clf(**kw):
    return DPMLPClassifier(
        **{
            "hidden_layer_sizes": (32,),
            "classes": list(range(10)),
            "random_state": 0,
            "max_iter": 10,
            **kw,
        }
    )


def test_fitted_silo_attributes_and_record(digits):
    X, y, silos, _, _ = digits
    budgets = {0: 0.5, 1: 1.0, 2: 2.0, 3: 2.0, 4: 4.0}
    clf = _clf(silo_epsilon=budgets).fit(X, y, silos=silos)
    assert clf.silos_ == [0, 1, 2, 3, 4]
    for s in clf.silos_:
        assert clf.silo_epsilon_[s] <= budgets[s]
        rec = clf.silo_privacy_records_[s]
        assert rec.recompute_epsilon() == clf.silo_epsilon_[s]
        assert clf.silo_rounds_[s] == clf.t_
    sig = clf.silo_noise_multiplier_
    assert sig[0] > sig[1] > sig[2] > sig[4]
    # The weakest silo bounds every record, and its event is recorded.
    assert clf.epsilon_ == epsilon_of(clf.dp_event_, clf.delta_, "rdp")
    assert clf.epsilon_ == pytest.approx(clf.silo_epsilon_[4])
    assert clf.noise_multiplier_ == sig[4]
    assert "ISRL-DP" in clf.privacy_summary()
    assert any("silo membership" in c for c in clf.privacy_caveats_)
    assert [W.shape for W in clf.coefs_] == [(64, 32), (32, 10)]
    assert [b.shape for b in clf.intercepts_] == [(32,), (10,)]
    assert clf.predict_proba(X).shape == (len(y), 10)


def test_central_fit_has_no_silo_attributes(digits):
    X, y, _, _, _ = digits
    clf = _clf(max_iter=1).fit(X, y)
    assert clf.silos_ is None and clf.central_epsilon_ is None


def test_plan_of_a_federated_fit_is_the_fitted_event(digits):
    X, y, silos, _, _ = digits
    for kw in ({}, {"silo_epsilon": 2.0, "accountant": "pld"}, {"epsilon": math.inf}):
        clf = _clf(max_iter=2, **kw)
        plan = clf.privacy_plan(len(y), X.shape[1], n_silos=5)
        clf.fit(X, y, silos=silos)
        assert plan.dp_event == clf.dp_event_
        assert plan.delta == clf.delta_ and plan.adjacency == clf.adjacency_
        assert plan.epsilon == clf.epsilon_ or math.isinf(clf.epsilon_)
        plan.check_fitted(clf)


def test_plan_refuses_per_silo_budgets():
    with pytest.raises(ValueError, match="one silo_epsilon"):
        _clf(silo_epsilon={0: 1.0}).privacy_plan(1000, 4, n_silos=2)


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)])
@pytest.mark.parametrize(
    "record", [[50.0, -80.0, 3.0, 1e3], [1.7e308, -1.7e308, 0.0, 1.0], [1e200] * 4]
)
def test_adversarial_record_in_one_silo_moves_its_sum_by_at_most_the_clip(loss, record):
    """Pre-noise sums of neighbouring silos differ by at most C, finitely."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    k = max(2, loss.n_outputs)
    y = rng.integers(0, k, 50).astype(float)
    config = FederationConfig(
        rounds=3, sampling_probability=1.0, clip_norm=0.7, learning_rate=1.0
    )
    network = NetworkSiloModel.initialized(
        [4, 8, 5, loss.n_outputs], "tanh", loss, np.random.default_rng(2)
    )

    def clipped_sum(Xs, ys, model, r):
        # epsilon = inf with noise_multiplier = 0: no noise, clipping kept.
        privacy = silo_privacy(len(Xs), math.inf, 1e-3, config, noise_multiplier=0.0)
        silo = SiloWorker(
            Xs, ys, loss=loss, config=config, privacy=privacy, network=network
        )
        # q = 1: the message is the clipped sum over n rows, plus alpha W = 0.
        return silo.message(model, r).gradient * Xs.shape[0]

    moved = []
    for r in range(3):
        model = network.initial_parameters * (1 + 3 * r)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning may depend on a record
            a = clipped_sum(X, y, model, r)
            b = clipped_sum(np.vstack([X, record]), np.append(y, k - 1.0), model, r)
        assert np.isfinite(b).all()
        moved.append(np.linalg.norm(b - a))
        assert moved[-1] <= 0.7 * (1 + 1e-9)
    # The moderate outlier's gradient is clipped to the bound, not below it.
    if np.isfinite(record).all() and max(np.abs(record)) < 1e4:
        assert max(moved) > 0.5


def test_silo_noise_is_one_release_of_the_stacked_sum():
    # A silo's message minus its noiseless twin is N(0, (sigma C / (q n))^2)
    # in every coordinate of every layer, weights and biases alike.
    rng = np.random.default_rng(0)
    X, y = np.zeros((200, 30)), np.zeros(200)
    config = FederationConfig(
        rounds=1, sampling_probability=1.0, clip_norm=2.0, learning_rate=1.0
    )
    network = NetworkSiloModel.initialized(
        [30, 40, 1], "relu", BinaryLogisticLoss(), rng
    )

    def message(noise):
        privacy = silo_privacy(200, math.inf, 1e-3, config, noise_multiplier=noise)
        return (
            SiloWorker(
                X,
                y,
                loss=BinaryLogisticLoss(),
                config=config,
                privacy=privacy,
                network=network,
                random_state=7,
            )
            .message(network.initial_parameters, 0)
            .gradient
        )

    noise = (message(3.0) - message(0.0)) * 200
    # 1,281 draws: their std is within 10% of sigma C = 6 with overwhelming
    # probability (relative standard error 2%).
    assert noise.shape == network.parameter_shape
    assert np.std(noise) == pytest.approx(6.0, rel=0.1)


def test_infinite_epsilon_is_close_to_the_central_fit(digits):
    X, y, silos, X_test, y_test = digits
    fed = _clf(epsilon=math.inf, max_iter=20).fit(X, y, silos=silos)
    central = _clf(epsilon=math.inf, max_iter=20).fit(X, y)
    assert fed.score(X_test, y_test) > 0.94
    assert fed.score(X_test, y_test) >= central.score(X_test, y_test) - 0.03
    assert math.isinf(fed.epsilon_)


def test_utility_rises_with_epsilon(digits):
    X, y, silos, X_test, y_test = digits
    scores = [
        np.mean(
            [
                _clf(epsilon=eps, random_state=seed)
                .fit(X, y, silos=silos)
                .score(X_test, y_test)
                for seed in range(2)
            ]
        )
        for eps in (0.3, 8.0)
    ]
    assert scores[1] > scores[0] + 0.1


def test_seed_reproduces_and_unseeded_fits_differ(digits):
    X, y, silos, _, _ = digits
    a = _clf(max_iter=2).fit(X, y, silos=silos)
    b = _clf(max_iter=2).fit(X, y, silos=silos)
    np.testing.assert_array_equal(a.coefs_[0], b.coefs_[0])
    assert a.privacy_record_.seed is not None
    c = _clf(max_iter=2, random_state=None).fit(X, y, silos=silos)
    d = _clf(max_iter=2, random_state=None).fit(X, y, silos=silos)
    assert not np.array_equal(c.coefs_[0], d.coefs_[0])
    assert c.privacy_record_.seed is None


def test_float32_input_gives_a_float32_network(digits):
    # As a central fit: the weights are in X's precision, and the network is
    # the float64 fit's up to float32 rounding of the inputs.
    X, y, silos, _, _ = digits
    net32 = _clf(max_iter=2).fit(X.astype(np.float32), y, silos=silos)
    net64 = _clf(max_iter=2).fit(X, y, silos=silos)
    assert {W.dtype for W in net32.coefs_ + net32.intercepts_} == {np.dtype(np.float32)}
    for W32, W64 in zip(net32.coefs_, net64.coefs_):
        np.testing.assert_allclose(W32, W64, rtol=1e-3, atol=1e-4)


def test_secure_aggregation_is_reported_as_conditional(digits):
    X, y, silos, _, _ = digits
    clf = _clf(max_iter=2, secure_aggregation=True).fit(X, y, silos=silos)
    assert clf.central_epsilon_ < clf.epsilon_
    assert "CONDITIONAL" in clf.central_privacy_record_.mechanism


def test_silos_are_routable_metadata(digits):
    X, y, silos, _, _ = digits
    with sklearn.config_context(enable_metadata_routing=True):
        clf = _clf(epsilon=8.0).set_fit_request(silos=True)
        result = cross_validate(
            clf,
            X,
            y,
            cv=KFold(2, shuffle=True, random_state=0),
            params={"silos": silos},
            return_estimator=True,
        )
    # Every fold's fit was federated over the five silos, and learned.
    assert all(est.silos_ == [0, 1, 2, 3, 4] for est in result["estimator"])
    assert result["test_score"].mean() > 0.5


def test_network_silo_model_pickles():
    # Dask execution ships it to the workers.
    net = NetworkSiloModel.initialized(
        [3, 4, 1], "relu", BinaryLogisticLoss(), np.random.default_rng(0)
    )
    again = pickle.loads(pickle.dumps(net))
    np.testing.assert_array_equal(again.initial_parameters, net.initial_parameters)


@pytest.mark.parametrize(
    "params, fit_kw, match",
    [
        ({"device": "cuda"}, {}, "silos run on the CPU"),
        ({}, {"sample_weight": True}, "sample_weight cannot be combined"),
        ({"silo_epsilon": {0: 1.0}}, {}, "without an entry for silos"),
    ],
)
def test_bad_federated_input_is_refused(digits, params, fit_kw, match):
    X, y, silos, _, _ = digits
    if fit_kw.get("sample_weight"):
        fit_kw = {"sample_weight": np.ones(len(y))}
    with pytest.raises(ValueError, match=match):
        _clf(**params).fit(X, y, silos=silos, **fit_kw)


def test_dask_execution_needs_silos(digits):
    X, y, _, _, _ = digits
    with pytest.raises(ValueError, match="pass silos="):
        _clf(execution="dask").fit(X, y)


def test_verbose_prints_released_quantities_per_epoch(digits, capsys):
    X, y, _, _, _ = digits
    _clf(max_iter=3, verbose=1).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3
    assert all(
        line.startswith("[DPMLPClassifier] epoch ") and "released-gradient norm" in line
        for line in lines
    )
    _clf(max_iter=3).fit(X, y)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("silo_algorithm", ["mb-sgd", "spider"])
def test_dask_execution_gives_the_local_network(digits, silo_algorithm):
    # The network's silo step (and SPIDER's per-silo state, the previous
    # broadcast model) travels to the workers with its silo; a seed gives the
    # same messages, hence the same network, as in-process silos.
    distributed = pytest.importorskip("distributed")
    X, y, silos, _, _ = digits
    kw = {"max_iter": 2, "silo_algorithm": silo_algorithm}
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster),
    ):
        remote = _clf(**kw, execution="dask").fit(X, y, silos=silos)
    local = _clf(**kw).fit(X, y, silos=silos)
    for a, b in zip(
        remote.coefs_ + remote.intercepts_, local.coefs_ + local.intercepts_
    ):
        # Same code, data, batches and noise; only a BLAS reduction order on
        # another thread could differ, far below this tolerance.
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert remote.dp_event_ == local.dp_event_


def test_a_non_private_federation_halves_an_auto_step_that_diverges():
    # Every silo at epsilon = inf: nothing is released, and the rounds at
    # step 1.0 diverged to a model scoring 0 on wine (two identity layers
    # of 32); they are rerun at half the step, and a given step that
    # diverges is refused, naming it.
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    silos = np.arange(len(y)) % 2
    kw = dict(
        hidden_layer_sizes=(32, 32), activation="identity", epsilon=math.inf,
        classes=[0, 1, 2], random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf = DPMLPClassifier(**kw).fit(X, y, silos=silos)
    assert clf.score(X, y) > 0.95
    assert all(np.abs(W).max() < 100 for W in clf.coefs_)
    given = DPMLPClassifier(learning_rate=1.0, **kw)
    with pytest.raises(ValueError, match=r"learning_rate=1\.0 diverges"):
        given.fit(X, y, silos=silos)
    assert not hasattr(given, "coefs_")
