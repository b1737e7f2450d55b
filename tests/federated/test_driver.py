# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""fit_federated and the baselines: the driver, its records and transcript."""

import math
import pickle
from dataclasses import replace

import numpy as np
import pytest

from sklearn_dpfair._solvers._schedules import auto_learning_rate
from sklearn_dpfair.federated import (
    FederationConfig,
    SiloMessage,
    fit_each_silo_alone,
    fit_federated,
    silo_privacy,
)
from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.federated._driver import _resolve_auto_learning_rate
from sklearn_dpfair.privacy import calibrate_noise_multiplier
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._random import noise_seed

from federated_data import CONFIG, LOSS, make_silos


def test_records_per_silo_and_record_level_guarantee():
    data = make_silos()
    budgets = {"s0": 0.5, "s1": 1.0, "s2": 2.0}
    deltas = {"s0": 1e-6, "s1": 1e-5, "s2": 1e-5}
    fit = fit_federated(
        data,
        loss=LOSS,
        config=CONFIG,
        silo_epsilon=budgets,
        silo_delta=deltas,
        random_state=0,
    )
    for sid, rep in fit.silo_reports.items():
        rec = rep.privacy_record
        assert rec.epsilon <= budgets[sid]
        assert rec.recompute_epsilon() == fit.silo_epsilon[sid]
        assert fit.silo_delta[sid] == deltas[sid]
        assert fit.silo_rounds[sid] == CONFIG.rounds
        assert rep.noise_multiplier == calibrate_noise_multiplier(
            budgets[sid], deltas[sid], 0.2, 40, "rdp"
        )
    # The smallest budget gets the most noise, and bounds every record.
    sig = fit.silo_noise_multiplier
    assert sig["s0"] > sig["s1"] > sig["s2"]
    rec = fit.privacy_record
    assert rec.delta == 1e-5
    assert rec.epsilon == epsilon_of(rec.dp_event, rec.delta, "rdp")
    assert rec.epsilon == max(
        epsilon_of(r.privacy_record.dp_event, 1e-5, "rdp")
        for r in fit.silo_reports.values()
    )


def test_secure_aggregation_record_follows_the_aggregate_noise():
    data = make_silos()
    fit = fit_federated(
        data,
        loss=LOSS,
        config=CONFIG,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        server_weights="size",
        secure_aggregation=True,
        random_state=0,
    )
    q, p = 0.2, fit.server_weights
    reps = fit.silo_reports
    noise = math.sqrt(
        sum(
            (p[s] * r.noise_multiplier / (q * r.n_samples)) ** 2
            for s, r in reps.items()
        )
    )
    z = {s: noise * q * r.n_samples / p[s] for s, r in reps.items()}
    central = fit.central_record
    # Size weights make p_i / n_i equal: every silo has the same multiplier.
    assert central.noise_multiplier == pytest.approx(min(z.values()), rel=1e-12)
    assert central.noise_multiplier == pytest.approx(
        reps["s0"].noise_multiplier * math.sqrt(3), rel=1e-12
    )
    assert central.epsilon < fit.privacy_record.epsilon
    assert "CONDITIONAL" in central.mechanism
    assert any("secure aggregation" in c for c in central.caveats)
    assert central.recompute_epsilon() == central.epsilon


def test_one_silo_secure_aggregation_equals_isrl():
    data = make_silos(sizes=(600,))
    fit = fit_federated(
        data,
        loss=LOSS,
        config=CONFIG,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        secure_aggregation=True,
        random_state=0,
    )
    assert fit.central_record.noise_multiplier == pytest.approx(
        fit.privacy_record.noise_multiplier, rel=1e-12
    )


@pytest.mark.parametrize("weights", ["uniform", "size"])
def test_secure_aggregation_with_an_unclipped_silo_is_not_private(weights):
    # A silo with epsilon = inf runs without clipping: one of its records
    # moves the aggregate without bound, whatever noise the other silos add.
    data = make_silos(sizes=(400, 600))
    fit = fit_federated(
        data,
        loss=LOSS,
        config=CONFIG,
        silo_epsilon={"s0": math.inf, "s1": 1.0},
        silo_delta=1e-5,
        server_weights=weights,
        secure_aggregation=True,
        random_state=0,
    )
    assert fit.silo_reports["s0"].privacy_record.clip_norm == math.inf
    central = fit.central_record
    assert central.epsilon == math.inf
    assert central.clip_norm == math.inf and central.noise_multiplier == 0.0
    assert central.recompute_epsilon() == math.inf
    assert fit.privacy_record.epsilon == math.inf


def test_records_of_a_seeded_run_are_seeded():
    data = make_silos(sizes=(400, 600))
    kw = dict(
        loss=LOSS,
        config=CONFIG,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        secure_aggregation=True,
    )
    seeded = fit_federated(data, **kw, random_state=0)
    records = [
        seeded.privacy_record,
        seeded.central_record,
        *(r.privacy_record for r in seeded.silo_reports.values()),
    ]
    assert {r.seed for r in records} == {noise_seed(0)}
    assert "not a private release" in str(seeded.privacy_record)
    unseeded = fit_federated(data, **kw)
    records = [
        unseeded.privacy_record,
        unseeded.central_record,
        *(r.privacy_record for r in unseeded.silo_reports.values()),
    ]
    assert all(r.seed is None for r in records)


def test_secure_aggregation_refused_for_local_sgd():
    config = FederationConfig(
        rounds=5, sampling_probability=0.2, learning_rate=1.0, local_steps=2
    )
    with pytest.raises(ValueError, match="one noisy gradient per round"):
        fit_federated(
            make_silos(),
            loss=LOSS,
            config=config,
            silo_epsilon=1.0,
            silo_delta=1e-5,
            secure_aggregation=True,
        )


def test_transcript_holds_only_noisy_messages():
    """What the server receives: one small noisy message per silo and round."""
    data = make_silos()
    canary = 12345.678
    X0, y0 = data["s0"]
    X0 = X0.copy()
    X0[7] = [canary, -canary, canary / 3]
    data["s0"] = (X0, y0)
    fit = fit_federated(
        data,
        loss=LOSS,
        config=CONFIG,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        random_state=0,
        record_transcript=True,
    )
    assert len(fit.transcript) == 3 * CONFIG.rounds
    assert all(type(m) is SiloMessage for m in fit.transcript)
    assert all(m.gradient.shape == (4, 1) for m in fit.transcript)
    received = pickle.dumps((fit.transcript, fit.silo_reports))
    for value in X0[7]:
        assert np.float64(value).tobytes() not in received


def test_seed_reproduces():
    data = make_silos()
    kw = dict(loss=LOSS, config=CONFIG, silo_epsilon=1.0, silo_delta=1e-5)
    a = fit_federated(data, **kw, random_state=3)
    b = fit_federated(data, **kw, random_state=3)
    c = fit_federated(data, **kw, random_state=4)
    assert np.array_equal(a.coef, b.coef) and np.array_equal(a.intercept, b.intercept)
    assert not np.array_equal(a.coef, c.coef)


def test_auto_step_is_the_central_rule_on_the_aggregate_noise():
    config = FederationConfig(rounds=40, sampling_probability=0.2)
    sigma = calibrate_noise_multiplier(1.0, 1e-5, 0.2, 40, "rdp")
    n_params = 4
    # N equal silos, uniform weights: aggregate noise sigma / (sqrt(N) q n_i),
    # i.e. the central rule with multiplier sigma sqrt(N) on the pooled N n_i.
    for n_silos in (1, 4):
        ids = list(range(n_silos))
        resolved = _resolve_auto_learning_rate(
            config,
            dict.fromkeys(ids, silo_privacy(500, 1.0, 1e-5, config)),
            dict.fromkeys(ids, 1 / n_silos),
            n_params=n_params,
        )
        expected = auto_learning_rate(
            sigma * math.sqrt(n_silos), 0.2, 500 * n_silos, n_params
        )
        assert resolved.learning_rate == pytest.approx(expected, rel=1e-12)
    # fit_federated uses it: "auto" and the resolved value give the same fit.
    data = make_silos()
    kw = dict(loss=LOSS, silo_epsilon=1.0, silo_delta=1e-5, random_state=0)
    auto = fit_federated(data, config=config, **kw)
    sizes = {s: x.shape[0] for s, (x, _) in data.items()}
    lr = _resolve_auto_learning_rate(
        config,
        {s: silo_privacy(n, 1.0, 1e-5, config) for s, n in sizes.items()},
        dict.fromkeys(sizes, 1 / 3),
        n_params=n_params,
    ).learning_rate
    explicit = fit_federated(data, config=replace(config, learning_rate=lr), **kw)
    np.testing.assert_array_equal(auto.coef, explicit.coef)


def test_local_sgd_baseline_accounts_all_local_steps():
    # 20 rounds x 2 local steps: 40 releases per silo, the noise of 40 rounds
    # of minibatch SGD (CONFIG), although only 20 messages are sent.
    config = replace(CONFIG, rounds=20, local_steps=2)
    fit = fit_federated(
        make_silos(),
        loss=LOSS,
        config=config,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        random_state=0,
    )
    assert fit.privacy_record.steps == 40
    assert fit.silo_rounds == {"s0": 20, "s1": 20, "s2": 20}
    assert fit.silo_noise_multiplier["s0"] == calibrate_noise_multiplier(
        1.0, 1e-5, 0.2, 40, "rdp"
    )
    assert fit.privacy_record.epsilon <= 1.0


def test_each_silo_alone_is_a_federation_of_one():
    data = make_silos()
    fits = fit_each_silo_alone(
        data,
        loss=LOSS,
        config=CONFIG,
        silo_epsilon={"s0": 2.0, "s1": 1.0, "s2": 1.0},
        silo_delta=1e-5,
        random_state=0,
    )
    assert list(fits) == ["s0", "s1", "s2"]
    for sid, fit in fits.items():
        assert list(fit.silo_reports) == [sid]
        assert fit.privacy_record.epsilon == fit.silo_epsilon[sid]
    assert fits["s1"].privacy_record.epsilon <= 1.0 < fits["s0"].privacy_record.epsilon


def test_each_silo_alone_draws_its_own_noise():
    # Two silos with the same rows: alone, each must draw its own noise (one
    # generator copied into every fit would make their models identical).
    X, y = make_silos(sizes=(500,))["s0"]
    fits = fit_each_silo_alone(
        {"a": (X, y), "b": (X, y)},
        loss=LOSS,
        config=CONFIG,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        random_state=0,
    )
    assert not np.array_equal(fits["a"].coef, fits["b"].coef)
    assert fits["a"].privacy_record.seed != fits["b"].privacy_record.seed


def test_bad_federations_are_refused():
    data = make_silos()
    with pytest.raises(ValueError, match="without an entry for silos"):
        fit_federated(
            data, loss=LOSS, config=CONFIG, silo_epsilon={"s0": 1.0}, silo_delta=1e-5
        )
    with pytest.raises(ValueError, match="too many for its silo_delta"):
        fit_federated(
            data,
            loss=LOSS,
            config=CONFIG,
            silo_epsilon=1.0,
            silo_delta={"s0": 1e-2, "s1": 1e-5, "s2": 1e-5},
        )
    with pytest.raises(ValueError, match="same columns"):
        bad = dict(data, s1=(np.zeros((500, 2)), np.zeros(500)))
        fit_federated(bad, loss=LOSS, config=CONFIG, silo_epsilon=1.0, silo_delta=1e-5)
    with pytest.raises(ValueError, match="empty"):
        fit_federated({}, loss=LOSS, config=CONFIG, silo_epsilon=1.0, silo_delta=1e-5)
    with pytest.raises(ValueError, match="execution must be"):
        fit_federated(
            data,
            loss=LOSS,
            config=CONFIG,
            silo_epsilon=1.0,
            silo_delta=1e-5,
            execution="ray",
        )


@pytest.mark.parametrize(
    "field, value",
    [
        ("sampling_probability", "0.1"),
        ("sampling_probability", True),
        ("clip_norm", None),
        ("clip_norm", True),
        ("alpha", np.True_),
        ("tail_fraction", None),
        ("learning_rate", [1.0]),
        ("fit_intercept", "no"),
    ],
)
def test_a_config_field_of_the_wrong_type_is_refused_naming_it(field, value):
    # Strings and None raised a bare comparison TypeError; bools passed the
    # config and were refused later by silo_privacy or fit_federated (or,
    # for fit_intercept, any truthy value fitted an intercept).
    kwargs = {"rounds": 10, "sampling_probability": 0.1, field: value}
    with pytest.raises(ValueError, match=f"^{field} must be"):
        FederationConfig(**kwargs)


def test_budgets_are_checked_on_the_driver_before_any_worker_starts(monkeypatch):
    # The silos' noise is resolved once, on the driver: an overshooting
    # noise_multiplier is refused before execution="dask" looks for a
    # cluster (there is none here), and no worker calibrates again.
    from sklearn_dpfair.federated import _execution

    def no_workers(*args, **kwargs):
        raise AssertionError("workers started before the budgets were checked")

    monkeypatch.setattr(_execution, "DaskExecution", no_workers)
    monkeypatch.setattr(_execution, "LocalExecution", no_workers)
    with pytest.raises(PrivacyBudgetError, match="requested noise_multiplier"):
        fit_federated(
            make_silos(),
            loss=LOSS,
            config=CONFIG,
            silo_epsilon=1.0,
            silo_delta=1e-5,
            noise_multiplier=0.2,
            execution="dask",
        )


def test_workers_receive_the_resolved_noise(monkeypatch):
    # Each silo's noise multiplier is calibrated once, on the driver.
    from sklearn_dpfair.privacy import _budget

    calls = []
    calibrate = _budget.calibrate_noise_multiplier

    def counted(*args):
        calls.append(args)
        return calibrate(*args)

    monkeypatch.setattr(_budget, "calibrate_noise_multiplier", counted)
    fit = fit_federated(
        make_silos(),
        loss=LOSS,
        config=replace(CONFIG, rounds=5),
        silo_epsilon={"s0": 1.0, "s1": 2.0, "s2": 3.0},
        silo_delta=1e-5,
        random_state=0,
    )
    assert [c[0] for c in calls] == [1.0, 2.0, 3.0]
    assert list(fit.silo_noise_multiplier.values()) == [
        calibrate(e, 1e-5, 0.2, 5, "rdp") for e in (1.0, 2.0, 3.0)
    ]


def test_strong_penalty_federated_step_stays_finite_or_is_refused():
    # The server's step multiplies the coefficients by 1 - learning_rate *
    # alpha: at epsilon = 8 the "auto" step times alpha = 1 reached 1e196
    # (alpha = 5: an unclear "the model must be a finite array" error). The
    # "auto" step is capped at 1 / alpha and a given one is refused.
    from sklearn_dpfair import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0).astype(int)
    silos = rng.integers(0, 3, 3000)
    clf = DPLogisticRegression(
        alpha=1.0, epsilon=8.0, classes=[0, 1], random_state=0
    ).fit(X, y, silos=silos)
    assert np.all(np.abs(clf.coef_) <= 1.0) and clf.score(X, y) > 0.7
    with pytest.raises(ValueError, match="learning_rate=1.0, alpha=5.0"):
        DPLogisticRegression(
            alpha=5.0, learning_rate=1.0, classes=[0, 1]
        ).privacy_plan(3000, 3, n_silos=3)


def test_a_diverging_federated_network_names_learning_rate():
    # A non-private network with a huge step: its model left the float range
    # and the silos refused it as "a finite array of shape (13,); got
    # (13,)". The server now refuses its own diverged step, with nothing
    # fitted.
    from sklearn_dpfair.neural import DPMLPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = DPMLPClassifier(
        (3,),
        epsilon=np.inf,
        classes=[0, 1],
        learning_rate=1e300,
        alpha=0.0,
        clip_norm=1e8,
        max_iter=5,
        random_state=0,
    )
    with pytest.raises(ValueError, match="not finite.*lower learning_rate"):
        clf.fit(X, y, silos=np.repeat(["a", "b"], 100))
    assert not hasattr(clf, "coefs_")
