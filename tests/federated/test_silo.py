# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""SiloWorker: sensitivity, noise, its own accountant, its message budget."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.federated import (
    FederationConfig,
    SiloMessage,
    SiloWorker,
    silo_privacy,
)
from sklearn_dpfair.privacy import calibrate_noise_multiplier
from sklearn_dpfair.privacy._accounting import epsilon_of

CONFIG = FederationConfig(rounds=20, sampling_probability=0.1, learning_rate=1.0)


def _silo(X, y, *, epsilon, delta, config, noise_multiplier=None, **kwargs):
    """A silo whose privacy is resolved as the driver does it."""
    privacy = silo_privacy(
        len(X), epsilon, delta, config, noise_multiplier=noise_multiplier
    )
    return SiloWorker(X, y, config=config, privacy=privacy, **kwargs)


def _data(n=500, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] > 0).astype(float)


def test_silo_calibrates_with_its_own_accountant():
    X, y = _data()
    for eps in (1.0, 2.0):
        silo = _silo(
            X, y, loss=BinaryLogisticLoss(), epsilon=eps, delta=1e-5, config=CONFIG
        )
        rep = silo.report()
        assert rep.noise_multiplier == calibrate_noise_multiplier(
            eps, 1e-5, 0.1, CONFIG.rounds, "rdp"
        )
        rec = rep.privacy_record
        assert rec.epsilon <= eps
        assert rec.recompute_epsilon() == rec.epsilon
        assert epsilon_of(rec.dp_event, 1e-5, "rdp") == rec.epsilon
        assert rec.adjacency == "add_remove" and rec.steps == CONFIG.rounds


def test_local_steps_are_all_accounted():
    # K local steps per round are K noisy releases each: R*K compositions.
    X, y = _data()
    config = FederationConfig(
        rounds=20, sampling_probability=0.1, learning_rate=1.0, local_steps=3
    )
    silo = _silo(
        X, y, loss=BinaryLogisticLoss(), epsilon=1.0, delta=1e-5, config=config
    )
    assert silo.report().privacy_record.steps == 60
    assert silo.report().noise_multiplier == calibrate_noise_multiplier(
        1.0, 1e-5, 0.1, 60, "rdp"
    )


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)])
def test_sensitivity_add_remove_is_clip_norm(loss):
    """Pre-noise sums of neighbouring silos differ by at most C."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    y = rng.integers(0, loss.n_outputs + (loss.n_outputs == 1), 50).astype(float)
    outlier = np.array([[50.0, -80.0, 3.0, 1e3]])
    config = FederationConfig(
        rounds=5, sampling_probability=1.0, clip_norm=0.7, learning_rate=1.0
    )

    def clipped_sum(Xs, ys, model, r):
        # epsilon = inf with noise_multiplier = 0: no noise, clipping kept.
        silo = _silo(
            Xs,
            ys,
            loss=loss,
            epsilon=math.inf,
            delta=1e-3,
            config=config,
            noise_multiplier=0.0,
        )
        return silo.message(model, r).gradient * Xs.shape[0]  # q = 1

    for r in range(5):
        model = rng.normal(scale=3, size=(5, loss.n_outputs))
        # Give the outlier its least likely label, so its gradient is large.
        raw = np.append(outlier, 1.0) @ model
        label = float(raw[0] < 0) if loss.n_outputs == 1 else float(np.argmin(raw))
        a = clipped_sum(X, y, model, r)
        b = clipped_sum(np.vstack([X, outlier]), np.append(y, label), model, r)
        assert np.linalg.norm(b - a) <= 0.7 + 1e-9
        assert np.linalg.norm(b - a) > 0.5  # the outlier's gradient is clipped


@pytest.mark.parametrize("loss", [BinaryLogisticLoss(), SoftmaxLoss(3)])
@pytest.mark.parametrize(
    "record", [[1.7e308, 0.0, 0.0, 0.0], [-1.7e308, 1.7e308, 1.0, 0.0], [1e200] * 4]
)
def test_huge_record_sends_a_finite_message_within_the_clip_norm(loss, record):
    # The record's plain prediction overflows (or is inf - inf = nan) at this
    # model; its clipped contribution must still be finite and at most C,
    # and the silo must not warn (a warning would depend on its data).
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 4))
    y = rng.integers(0, loss.n_outputs + (loss.n_outputs == 1), 40).astype(float)
    config = FederationConfig(
        rounds=1, sampling_probability=1.0, clip_norm=0.7, learning_rate=1.0
    )
    model = np.full((5, loss.n_outputs), 4.0)
    model[:, -1] = -4.0  # opposite scores: +inf and -inf in one row

    def clipped_sum(Xs, ys):
        silo = _silo(
            Xs, ys, loss=loss, epsilon=math.inf, delta=1e-3, config=config,
            noise_multiplier=0.0,
        )
        return silo.message(model, 0).gradient * Xs.shape[0]  # q = 1

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = clipped_sum(X, y)
        b = clipped_sum(np.vstack([X, record]), np.append(y, 0.0))
    assert np.isfinite(b).all()
    assert np.linalg.norm(b - a) <= 0.7 + 1e-9


def test_noise_scale_matches_noise_multiplier():
    n, d = 400, 300
    X = np.zeros((n, d))
    y = np.zeros(n)
    config = FederationConfig(
        rounds=1,
        sampling_probability=1.0,
        clip_norm=2.0,
        learning_rate=1.0,
        fit_intercept=False,
    )
    silo = _silo(
        X,
        y,
        loss=BinaryLogisticLoss(),
        epsilon=math.inf,
        delta=1e-5,
        config=config,
        noise_multiplier=3.0,
        random_state=0,
    )
    g = silo.message(np.zeros((d + 1, 1)), 0).gradient
    # Zero rows: the coefficient block is pure noise of std sigma C / (q n).
    assert np.std(g[:-1]) == pytest.approx(3.0 * 2.0 / n, rel=0.12)
    assert g[-1, 0] == 0.0  # no intercept: its noisy gradient is discarded


def test_message_budget_is_enforced():
    X, y = _data()
    silo = _silo(
        X,
        y,
        loss=BinaryLogisticLoss(),
        epsilon=1.0,
        delta=1e-5,
        config=CONFIG,
        silo_id="h1",
        random_state=0,
    )
    model = np.zeros((4, 1))
    for r in range(CONFIG.rounds):
        msg = silo.message(model, r)
        assert isinstance(msg, SiloMessage) and msg.silo_id == "h1"
    assert silo.report().rounds_used == CONFIG.rounds
    with pytest.raises(PrivacyBudgetError, match="refuses"):
        silo.message(model, CONFIG.rounds)


def test_replayed_round_is_refused():
    X, y = _data()
    silo = _silo(
        X, y, loss=BinaryLogisticLoss(), epsilon=1.0, delta=1e-5, config=CONFIG
    )
    silo.message(np.zeros((4, 1)), 3)
    with pytest.raises(ValueError, match="not after the last round"):
        silo.message(np.ones((4, 1)), 3)


def test_forced_noise_is_checked_against_the_budget():
    X, y = _data()
    with pytest.raises(PrivacyBudgetError):
        _silo(
            X,
            y,
            loss=BinaryLogisticLoss(),
            epsilon=1.0,
            delta=1e-5,
            config=CONFIG,
            noise_multiplier=0.3,
        )


@pytest.mark.parametrize(
    "n, delta, match",
    [(50, 0.05, "too many for its silo_delta"), (5, 1e-5, "expected batch")],
)
def test_too_small_silo_is_refused(n, delta, match):
    X, y = _data(n=n)
    with pytest.raises(ValueError, match=match):
        _silo(
            X, y, loss=BinaryLogisticLoss(), epsilon=1.0, delta=delta, config=CONFIG
        )


def test_bad_model_and_data_are_refused():
    X, y = _data()
    silo = _silo(
        X, y, loss=BinaryLogisticLoss(), epsilon=1.0, delta=1e-5, config=CONFIG
    )
    with pytest.raises(ValueError, match=r"shape \(4, 1\); got shape \(3, 1\)\.$"):
        silo.message(np.zeros((3, 1)), 0)
    # A model of the right shape that is not finite is not blamed on its
    # shape: the server's step diverged.
    with pytest.raises(ValueError, match="model is not finite.*learning_rate"):
        silo.message(np.full((4, 1), np.inf), 0)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        _silo(
            X, y, loss=BinaryLogisticLoss(), epsilon=1.0, delta=1e-5, config=CONFIG
        )
    with pytest.raises(TypeError, match="FederationConfig"):
        SiloWorker(
            X,
            y,
            loss=BinaryLogisticLoss(),
            config={},
            privacy=silo_privacy(len(X), 1.0, 1e-5, CONFIG),
        )


@pytest.mark.parametrize(
    "n_rows, config",
    [
        (400, CONFIG),  # resolved for other rows
        (500, FederationConfig(rounds=40, sampling_probability=0.1)),  # more steps
        (500, FederationConfig(rounds=20, sampling_probability=0.2)),  # higher rate
    ],
)
def test_set_up_made_for_another_silo_is_refused(n_rows, config):
    # The guarantee holds for the rows, rate and steps it was accounted for.
    X, y = _data()
    privacy = silo_privacy(n_rows, 1.0, 1e-5, CONFIG)
    with pytest.raises(ValueError, match="privacy set-up was resolved for"):
        SiloWorker(X, y, loss=BinaryLogisticLoss(), config=config, privacy=privacy)
    with pytest.raises(TypeError, match="SiloPrivacy"):
        SiloWorker(X, y, loss=BinaryLogisticLoss(), config=CONFIG, privacy=1.0)


def test_local_sgd_message_is_fedavg_pseudo_gradient():
    """Without noise, K local steps at eta/K send the FedAvg displacement."""
    X, y = _data(n=200)
    loss = BinaryLogisticLoss()
    config = FederationConfig(
        rounds=1, sampling_probability=1.0, learning_rate=0.5, local_steps=4
    )
    silo = _silo(X, y, loss=loss, epsilon=math.inf, delta=1e-3, config=config)
    w0 = np.full((4, 1), 0.1)
    msg = silo.message(w0, 0)
    w = w0.copy()
    Xa = np.hstack([X, np.ones((200, 1))])
    for _ in range(4):
        w -= 0.5 / 4 * Xa.T @ loss.raw_gradient(y, Xa @ w) / 200
    np.testing.assert_allclose(w0 - 0.5 * msg.gradient, w, rtol=1e-12)


def test_integer_features_are_read_as_float64():
    # Integer X is numbers, as the check admits: the silo reads it as float64
    # (as the shuffled protocol's silo does), with the same messages.
    from sklearn_dpfair.federated import fit_federated

    X = np.random.default_rng(0).integers(-5, 5, size=(300, 2))
    y = (X[:, 0] > 0).astype(float)
    config = FederationConfig(rounds=5, sampling_probability=0.1)
    fits = [
        fit_federated(
            {"a": (features, y)},
            loss=BinaryLogisticLoss(),
            config=config,
            silo_epsilon=1.0,
            silo_delta=1e-4,
            random_state=0,
        )
        for features in (X, X.astype(np.float64))
    ]
    np.testing.assert_array_equal(fits[0].coef, fits[1].coef)


def test_column_alpha_is_the_linear_models_penalty():
    # A silo under config.column_alpha sends the loss' noisy gradient only
    # (the server's proximal step takes the penalty); a network's silo step
    # takes config.alpha and refuses it.
    X, y = _data(200)
    config = FederationConfig(
        rounds=2, sampling_probability=1.0, learning_rate=1.0,
        column_alpha=[1e3, 1e3, 1e3],
    )
    plain = FederationConfig(rounds=2, sampling_probability=1.0, learning_rate=1.0)
    w = np.full((4, 1), 0.5)
    sent = [
        _silo(X, y, epsilon=math.inf, delta=1e-5, config=c, loss=BinaryLogisticLoss())
        .message(w, 0)
        .gradient
        for c in (config, plain)
    ]
    np.testing.assert_allclose(sent[0], sent[1], rtol=1e-12)
    with pytest.raises(ValueError, match="column_alpha is the linear model's"):
        _silo(
            X, y, epsilon=math.inf, delta=1e-5, config=config,
            loss=BinaryLogisticLoss(), network=object(),
        )
