"""DPMLPClassifier.fit(X, y, silos=...) with silo_algorithm="spider".

ISRL-DP FedProx-SPIDER (Lowy's thesis, Alg. 4): anchor rounds of clipped
gradients, difference rounds of clipped per-record gradient changes.
"""

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.metrics import log_loss

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair.exceptions import PrivacyAccountingError
from sklearn_dpfair.federated import (
    FederationConfig,
    Server,
    SiloMessage,
    SiloWorker,
    fit_federated,
    silo_privacy,
)
from sklearn_dpfair.federated._spider import SpiderSchedule
from sklearn_dpfair.neural import DPMLPClassifier
from sklearn_dpfair.neural._federated import NetworkSiloModel
from sklearn_dpfair.neural._network import init_parameters
from sklearn_dpfair.neural._sgd import clipped_network_gradient
from sklearn_dpfair.neural._spider import (
    clipped_difference_sum,
    clipped_per_example_gradients,
)
from sklearn_dpfair.privacy._accounting import epsilon_of

ADVERSARIAL = [[50.0, -80.0, 3.0, 1e3], [1.7e308, -1.7e308, 0.0, 1.0], [1e200] * 4]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(y))
    X, y = X[perm] / 16.0, y[perm]
    return X[:1400], y[:1400] % 2, y[:1400] // 2, X[1400:], y[1400:] % 2


def _clf(**kw):
    return DPMLPClassifier(
        **{
            "hidden_layer_sizes": (16,),
            "classes": [0, 1],
            "random_state": 0,
            "max_iter": 3,
            "silo_algorithm": "spider",
            **kw,
        }
    )


def _network(loss, sizes=(4, 8, 5)):
    return NetworkSiloModel.initialized(
        [*sizes, loss.n_outputs], "tanh", loss, np.random.default_rng(2)
    )


# -- the per-record terms ------------------------------------------------------


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)])
def test_per_example_gradients_are_the_clipped_sum(loss):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)) * 3, rng.integers(0, 3, 30).astype(float)
    y = np.minimum(y, max(1, loss.n_outputs - 1))
    net = _network(loss)
    W, b = net.unflatten(net.initial_parameters * 4)
    G = clipped_per_example_gradients(
        X, y, loss, W, b, activation="tanh", clip_norm=0.3
    )
    gW, gb = clipped_network_gradient(
        X, y, loss, W, b, activation="tanh", clip_norm=0.3
    )
    flat = np.concatenate([np.ravel(a) for a in (*gW, *gb)])
    # Both are float64 sums of the same terms in different orders.
    np.testing.assert_allclose(G.sum(axis=0), flat, rtol=1e-12, atol=1e-14)
    assert np.linalg.norm(G, axis=1).max() <= 0.3 * (1 + 1e-12)
    # Each row is the record's own gradient direction (ghost norms agree).
    assert G.shape == (30, net.parameter_shape[0])


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)])
@pytest.mark.parametrize(
    "record, clip_norm", [([1.5e308] * 4, 1.0), ([1e200] * 4, 1e-300)]
)
def test_record_whose_factor_cannot_be_formed_is_clipped_not_dropped(
    loss, record, clip_norm
):
    # A relu network passes a huge input to its hidden layer: the ghost norm
    # overflows (or C / norm is below the smallest normal float), so the
    # factor cannot be formed. The record is clipped to C all the same, as
    # the central fit's clipped sum clips it, not given the term 0.
    weights, biases = init_parameters(
        [4, 8, 5, loss.n_outputs], "relu", np.random.default_rng(4)
    )
    X = np.array([record, [0.5, -1.0, 2.0, 0.1]])
    norms = []
    for label in range(max(2, loss.n_outputs)):
        y = np.array([float(label), 0.0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning may depend on a record
            G = clipped_per_example_gradients(
                X, y, loss, weights, biases, activation="relu", clip_norm=clip_norm
            )
            for i in range(X.shape[0]):
                gW, gb = clipped_network_gradient(
                    X[i : i + 1], y[i : i + 1], loss, weights, biases,
                    activation="relu", clip_norm=clip_norm,
                )
                flat = np.concatenate([np.ravel(a) for a in (*gW, *gb)])
                np.testing.assert_allclose(
                    G[i] / clip_norm, flat / clip_norm, rtol=1e-12, atol=1e-15
                )
        norms.append(np.linalg.norm(G[0] / clip_norm))
    # The huge record's term is C, but for a label the network already
    # gives probability 1 (a zero loss derivative: term 0).
    np.testing.assert_allclose(max(norms), 1.0, rtol=1e-12)
    assert all(n == 0 or abs(n - 1.0) <= 1e-12 for n in norms)


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)])
@pytest.mark.parametrize("record", ADVERSARIAL)
@pytest.mark.parametrize("difference_clip", [1e-9, 0.05, 2.0, math.inf])
def test_each_difference_is_within_its_clip(loss, record, difference_clip):
    """One record's term, whatever it holds, is finite and within c_r."""
    net = _network(loss)
    now = net.unflatten(net.initial_parameters * 3)
    before = net.unflatten(net.initial_parameters * -2)
    for label in range(max(2, loss.n_outputs)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning may depend on a record
            term = clipped_difference_sum(
                np.array([record]),
                np.array([float(min(label, loss.n_outputs))]),
                loss,
                now,
                before,
                activation="tanh",
                clip_norm=1.0,
                difference_clip=difference_clip,
            )
        assert np.isfinite(term).all()
        # c_r = inf still leaves the difference of two 1-clipped gradients.
        assert np.linalg.norm(term) <= min(difference_clip, 2.0) * (1 + 1e-12)


def test_difference_clip_is_the_public_bound():
    schedule = SpiderSchedule(period=3, smoothness=2.0)
    w, v = np.zeros(4), np.array([0.0, 0.3, 0.4, 0.0])  # ||w - v|| = 0.5
    assert schedule.difference_clip(w, v, 1.0) == pytest.approx(1.0)
    assert schedule.difference_clip(w, v * 10, 1.0) == 2.0  # capped at 2C
    assert schedule.difference_clip(w, w, 1.0) == 0.0
    assert schedule.difference_clip(w, v, math.inf) == math.inf
    assert SpiderSchedule(3, math.inf).difference_clip(w, v, 0.5) == 1.0


def _silo(X, y, loss, config, network, noise=0.0, seed=7, privacy_config=None):
    # epsilon = inf with noise_multiplier = 0: no noise, clipping kept.
    privacy = silo_privacy(
        len(X), math.inf, 1e-3, privacy_config or config, noise_multiplier=noise
    )
    return SiloWorker(
        X,
        y,
        loss=loss,
        config=config,
        privacy=privacy,
        network=network,
        random_state=seed,
    )


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)])
@pytest.mark.parametrize("record", ADVERSARIAL)
@pytest.mark.parametrize("smoothness", [0.5, math.inf])
def test_adversarial_record_moves_a_difference_round_by_at_most_c_r(
    loss, record, smoothness
):
    """Neighbouring silos' difference sums differ by at most c_r, finitely."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    k = max(2, loss.n_outputs)
    y = rng.integers(0, k, 50).astype(float)
    config = FederationConfig(
        rounds=4,
        sampling_probability=1.0,
        clip_norm=0.7,
        learning_rate=1.0,
        spider=SpiderSchedule(period=4, smoothness=smoothness),
    )
    net = _network(loss)
    models = [net.initial_parameters * (1 + 3 * r) for r in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sums = []
        for Xs, ys in ((X, y), (np.vstack([X, record]), np.append(y, k - 1.0))):
            silo = _silo(Xs, ys, loss, config, net)
            # q = 1: each message times n is the (difference) sum, alpha = 0.
            sums.append(
                [
                    silo.message(m, r).gradient * Xs.shape[0]
                    for r, m in enumerate(models)
                ]
            )
    moved = []
    for r in range(1, 4):
        c_r = config.spider.difference_clip(models[r], models[r - 1], 0.7)
        assert np.isfinite(sums[1][r]).all()
        moved.append(np.linalg.norm(sums[1][r] - sums[0][r]))
        assert moved[-1] <= c_r * (1 + 1e-9)
        assert c_r <= 1.4
    # The moderate outlier's change reaches its bound (clipping, not zeroing).
    if max(np.abs(record)) < 1e4:
        assert max(moved) > 0.1


def test_unmoved_model_gives_an_exact_zero_difference():
    loss = BinaryLogisticLoss()
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 4)), rng.integers(0, 2, 40).astype(float)
    config = FederationConfig(
        rounds=2,
        sampling_probability=0.5,
        learning_rate=1.0,
        spider=SpiderSchedule(2, 1.0),
    )
    net = _network(loss)
    silo = _silo(X, y, loss, config, net, noise=2.0)
    silo.message(net.initial_parameters, 0)
    # c_r = 0: every term is 0 and so is the noise std z2 c_r.
    diff = silo.message(net.initial_parameters, 1).gradient
    np.testing.assert_array_equal(diff, np.zeros_like(diff))


def test_silo_noise_of_a_difference_round_is_z2_c_r():
    loss = BinaryLogisticLoss()
    X, y = np.zeros((200, 30)), np.zeros(200)
    schedule = SpiderSchedule(period=4, smoothness=0.5)
    config = FederationConfig(
        rounds=2,
        sampling_probability=1.0,
        clip_norm=2.0,
        learning_rate=1.0,
        spider=schedule,
    )
    net = _network(loss, sizes=(30, 40))
    w0 = net.initial_parameters
    w1 = w0 + 0.01

    def difference(noise):
        silo = _silo(X, y, loss, config, net, noise=noise, seed=3)
        silo.message(w0, 0)
        return silo.message(w1, 1).gradient

    noise = (difference(3.0) - difference(0.0)) * 200
    c_r = 0.5 * np.linalg.norm(w1 - w0)
    # z2 = sqrt(4) * 3; 1,281 draws: the std is within 10% with overwhelming
    # probability (relative standard error 2%).
    assert np.std(noise) == pytest.approx(6.0 * c_r, rel=0.1)


def test_difference_round_needs_the_round_before():
    loss = BinaryLogisticLoss()
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 4)), rng.integers(0, 2, 40).astype(float)
    config = FederationConfig(
        rounds=3,
        sampling_probability=0.5,
        learning_rate=1.0,
        spider=SpiderSchedule(4, 1.0),
    )
    net = _network(loss)
    silo = _silo(X, y, loss, config, net)
    silo.message(net.initial_parameters, 0)
    with pytest.raises(ValueError, match="difference round"):
        silo.message(net.initial_parameters, 2)


# -- accounting ----------------------------------------------------------------


def test_release_check_catches_a_set_up_made_for_minibatch_sgd():
    """A silo whose record accounts MB-SGD must refuse SPIDER's releases."""
    loss = BinaryLogisticLoss()
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 4)), rng.integers(0, 2, 400).astype(float)
    kw = {"rounds": 4, "sampling_probability": 0.5, "learning_rate": 1.0}
    config = FederationConfig(**kw, spider=SpiderSchedule(4, 1.0))
    net = _network(loss)
    silo = SiloWorker(
        X,
        y,
        loss=loss,
        config=config,
        network=net,
        random_state=0,
        privacy=silo_privacy(400, 2.0, 1e-5, FederationConfig(**kw)),
    )
    silo.message(net.initial_parameters, 0)
    with pytest.raises(PrivacyAccountingError):
        silo.message(net.initial_parameters * 1.1, 1)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_event_composes_the_planned_rounds(digits, accountant):
    X, y, silos, _, _ = digits
    clf = _clf(spider_period=3, accountant=accountant, epsilon=2.0)
    plan = clf.privacy_plan(len(y), X.shape[1], n_silos=5)
    clf.fit(X, y, silos=silos)
    R, q = clf.t_, clf.privacy_record_.sampling_probability
    anchors = math.ceil(R / 3)
    z1 = clf.noise_multiplier_
    # Written out with dp-accounting directly: R rounds of two kinds.
    expected = dp_accounting.ComposedDpEvent(
        (
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(
                    q, dp_accounting.GaussianDpEvent(z1)
                ),
                anchors,
            ),
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(
                    q, dp_accounting.GaussianDpEvent(math.sqrt(3) * z1)
                ),
                R - anchors,
            ),
        )
    )
    assert clf.dp_event_ == expected
    assert clf.epsilon_ == epsilon_of(expected, clf.delta_, accountant)
    assert clf.epsilon_ <= 2.0
    assert plan.dp_event == clf.dp_event_ and plan.epsilon == clf.epsilon_
    plan.check_fitted(clf)
    for s in clf.silos_:
        assert clf.silo_rounds_[s] == R
        assert clf.silo_privacy_records_[s].dp_event == expected
    assert "FedProx-SPIDER" in clf.privacy_record_.mechanism
    # The budget calibrates z1: more noise than none, less than MB-SGD's
    # single multiplier would need for every round at z1.
    mb = _clf(silo_algorithm="mb-sgd", accountant=accountant, epsilon=2.0)
    mb.fit(X, y, silos=silos)
    assert z1 < mb.noise_multiplier_ < math.sqrt(3) * z1


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"spider_period": 7, "spider_smoothness": math.inf, "accountant": "pld"},
        {"epsilon": math.inf},
        {"noise_multiplier": 2.0, "epsilon": 50.0},
    ],
)
def test_plan_of_a_spider_fit_is_the_fitted_event(digits, kw):
    X, y, silos, _, _ = digits
    clf = _clf(max_iter=2, **kw)
    plan = clf.privacy_plan(len(y), X.shape[1], n_silos=5)
    clf.fit(X, y, silos=silos)
    assert plan.dp_event == clf.dp_event_
    assert plan.delta == clf.delta_ and plan.adjacency == clf.adjacency_
    assert plan.epsilon == clf.epsilon_ or math.isinf(clf.epsilon_)
    plan.check_fitted(clf)


def test_period_one_is_minibatch_sgd(digits):
    X, y, silos, _, _ = digits
    spider = _clf(spider_period=1, spider_smoothness=0.1).fit(X, y, silos=silos)
    mb = _clf(silo_algorithm="mb-sgd").fit(X, y, silos=silos)
    assert spider.dp_event_ == mb.dp_event_
    assert spider.noise_multiplier_ == mb.noise_multiplier_
    # The same batches, noise draws and steps: the same network.
    for a, b in zip(spider.coefs_ + spider.intercepts_, mb.coefs_ + mb.intercepts_):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_default_is_minibatch_sgd(digits):
    X, y, silos, _, _ = digits
    clf = DPMLPClassifier((16,), classes=[0, 1], random_state=0, max_iter=2)
    clf.fit(X, y, silos=silos)
    assert "minibatch SGD" in clf.privacy_record_.mechanism
    assert isinstance(clf.dp_event_, dp_accounting.SelfComposedDpEvent)


# -- the server and the protocol -------------------------------------------------


def test_server_keeps_the_path_integrated_estimate():
    config = FederationConfig(
        rounds=5,
        sampling_probability=0.1,
        learning_rate=0.5,
        spider=SpiderSchedule(3, 1.0),
    )
    server = Server(1, 1, config=config, weights={"a": 1.0, "b": 1.0})
    H = [np.full((2, 1), float(r + 1)) for r in range(5)]
    h, w = None, np.zeros((2, 1))
    for r in range(5):
        server.step([SiloMessage("a", r, H[r]), SiloMessage("b", r, H[r])])
        h = H[r] if r % 3 == 0 else h + H[r]  # Alg. 4, lines 8 and 12
        w = w - 0.5 * h
        np.testing.assert_allclose(server.model, w)
    with pytest.raises(ValueError, match="every silo"):
        Server(1, 1, config=config, weights={"a": 1.0, "b": 1.0}).step(
            [SiloMessage("a", 0, H[0])]
        )


def test_refused_combinations(digits):
    X, y, silos, _, _ = digits
    with pytest.raises(ValueError, match="secure_aggregation"):
        _clf(secure_aggregation=True).fit(X, y, silos=silos)
    with pytest.raises(ValueError, match="local_steps"):
        FederationConfig(
            rounds=2,
            sampling_probability=0.5,
            local_steps=2,
            spider=SpiderSchedule(2, 1.0),
        )
    with pytest.raises(ValueError, match="period"):
        SpiderSchedule(0, 1.0)
    with pytest.raises(ValueError, match="smoothness"):
        SpiderSchedule(2, 0.0)
    config = FederationConfig(
        rounds=2, sampling_probability=0.5, spider=SpiderSchedule(2, 1.0)
    )
    with pytest.raises(ValueError, match="network"):
        fit_federated(
            {0: (X[:500], y[:500].astype(float))},
            loss=BinaryLogisticLoss(),
            config=config,
            silo_epsilon=1.0,
            silo_delta=1e-5,
            random_state=0,
        )
    with pytest.raises(ValueError, match="spider_period"):
        _clf(spider_period=0).fit(X, y, silos=silos)


# -- utility -------------------------------------------------------------------


def test_infinite_epsilon_decreases_the_training_loss(digits):
    X, y, silos, X_test, y_test = digits
    short = _clf(epsilon=math.inf, max_iter=1).fit(X, y, silos=silos)
    clf = _clf(epsilon=math.inf, max_iter=10).fit(X, y, silos=silos)
    losses = [log_loss(y, m.predict_proba(X)) for m in (short, clf)]
    assert losses[1] < losses[0] < math.log(2)
    assert clf.score(X_test, y_test) > 0.85
    assert math.isinf(clf.epsilon_)


def test_spider_learns_under_privacy(digits):
    X, y, silos, X_test, y_test = digits
    clf = _clf(epsilon=8.0, max_iter=10).fit(X, y, silos=silos)
    assert clf.score(X_test, y_test) > 0.75
