# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy of a federation: each silo's set-up, the fit's records."""

import math
from dataclasses import replace

import pytest
from federated_data import CONFIG, LOSS, make_silos

from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.federated import fit_federated, silo_privacy
from sklearn_dpfair.federated._accounting import (
    AGGREGATE_MAX_MULTIPLIER,
    _aggregate_multiplier,
    resolve_silo_privacy,
    secure_aggregation_record,
)
from sklearn_dpfair.privacy import calibrate_noise_multiplier
from sklearn_dpfair.privacy._accounting import epsilon_of, noisy_sgd_event
from sklearn_dpfair.privacy._calibration import UnreachableBudgetError


def test_silo_privacy_calibrates_with_the_silos_own_accountant():
    for accountant in ("rdp", "pld"):
        config = replace(CONFIG, accountant=accountant, local_steps=2)
        privacy = silo_privacy(500, 1.0, 1e-5, config)
        sigma = calibrate_noise_multiplier(1.0, 1e-5, 0.2, 80, accountant)
        assert privacy.noise_multiplier == sigma
        assert privacy.mechanism.clip_norm == config.clip_norm
        rec = privacy.record
        assert rec.epsilon <= 1.0 and rec.steps == 80 and rec.accountant == accountant
        event = noisy_sgd_event(sigma, 0.2, 80)
        assert rec.epsilon == epsilon_of(event, 1e-5, accountant)
        assert rec.noise_multiplier == sigma and rec.adjacency == "add_remove"
        assert "ISRL-DP" in rec.mechanism


def test_non_private_silo_neither_clips_nor_adds_noise():
    privacy = silo_privacy(500, math.inf, 1e-5, CONFIG)
    assert privacy.noise_multiplier == 0.0
    assert privacy.mechanism.clip_norm == math.inf
    assert privacy.record.epsilon == math.inf
    # A forced zero noise keeps the clipping (used by sensitivity tests).
    forced = silo_privacy(500, math.inf, 1e-5, CONFIG, noise_multiplier=0.0)
    assert forced.mechanism.clip_norm == CONFIG.clip_norm


def test_a_private_silo_refuses_an_infinite_clip_norm():
    # The Gaussian noise is a multiple of the clip norm: unclipped gradients
    # with a finite budget (or a forced noise) are refused up front.
    config = replace(CONFIG, clip_norm=math.inf)
    with pytest.raises(ValueError, match="clip_norm must be finite"):
        silo_privacy(500, 1.0, 1e-5, config)
    with pytest.raises(ValueError, match="clip_norm must be finite"):
        silo_privacy(500, math.inf, 1e-5, config, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="clip_norm must be finite"):
        fit_federated(
            make_silos(),
            loss=LOSS,
            config=config,
            silo_epsilon=1.0,
            silo_delta=1e-5,
            random_state=0,
        )
    # A non-private silo neither clips nor adds noise.
    assert silo_privacy(500, math.inf, 1e-5, config).record.epsilon == math.inf


def test_calibrated_overshoot_is_reported_as_a_bug(monkeypatch):
    # The library chose the noise: overspending is its bug, not the user's.
    from sklearn_dpfair.privacy import _budget

    monkeypatch.setattr(_budget, "calibrate_noise_multiplier", lambda *a: 0.3)
    with pytest.raises(PrivacyBudgetError, match="this is a bug") as err:
        silo_privacy(500, 1.0, 1e-5, CONFIG)
    assert "noise_multiplier" not in str(err.value)


def test_user_noise_overshoot_blames_the_user():
    with pytest.raises(
        PrivacyBudgetError, match="requested noise_multiplier=0.3 spends"
    ) as err:
        silo_privacy(500, 1.0, 1e-5, CONFIG, noise_multiplier=0.3)
    assert "bug" not in str(err.value)


@pytest.mark.parametrize(
    "silo_epsilon, noise_multiplier, error, match",
    [
        # No noise multiplier reaches this epsilon under RDP: the
        # calibration's own ValueError subclass keeps its type through the
        # silo's prefix.
        ({"a": 1e-3, "b": 1.0}, None, UnreachableBudgetError, "cannot be reached"),
        # The forced noise spends more than silo a's budget.
        ({"a": 0.5, "b": 100.0}, 3.0, PrivacyBudgetError, "requested noise"),
    ],
)
def test_a_silo_budget_error_names_the_silo_and_its_budget(
    silo_epsilon, noise_multiplier, error, match
):
    sizes = {"a": 400, "b": 600}
    with pytest.raises(error, match=match) as err:
        resolve_silo_privacy(sizes, silo_epsilon, 1e-5, CONFIG, noise_multiplier)
    assert type(err.value) is error
    eps = silo_epsilon["a"]
    assert str(err.value).startswith(
        f"silo 'a' (silo_epsilon={eps:g}, silo_delta=1e-05): "
    )
    assert type(err.value.__cause__) is error


def test_each_silo_is_resolved_once_with_its_own_budget():
    sizes = {"a": 400, "b": 600}
    privacy = resolve_silo_privacy(
        sizes, {"a": 0.5, "b": 2.0, "absent": 9.0}, 1e-5, CONFIG, None
    )
    assert list(privacy) == ["a", "b"]
    assert privacy["a"].n_samples == 400 and privacy["b"].n_samples == 600
    assert privacy["a"].noise_multiplier > privacy["b"].noise_multiplier
    with pytest.raises(ValueError, match="too many for its silo_delta"):
        resolve_silo_privacy(sizes, 1.0, {"a": 1e-2, "b": 1e-5}, CONFIG, None)
    with pytest.raises(ValueError, match="without an entry for silos"):
        resolve_silo_privacy(sizes, {"a": 1.0}, 1e-5, CONFIG, None)


def test_secure_aggregation_reads_each_silos_clip_and_noise():
    # Silo s0 adds no noise but clips (a forced noise_multiplier of 0 needs
    # epsilon = inf): its records are covered by the noise of s1 alone, in
    # units of each silo's own clip norm.
    data = make_silos(sizes=(400, 600))
    fit = fit_federated(
        data,
        loss=LOSS,
        config=CONFIG,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        secure_aggregation=True,
        random_state=0,
    )
    reps, p, q = fit.silo_reports, fit.server_weights, 0.2
    quiet = {
        "s0": replace(
            reps["s0"],
            noise_multiplier=0.0,
            privacy_record=replace(reps["s0"].privacy_record, clip_norm=2.0),
        ),
        "s1": reps["s1"],
    }
    central = secure_aggregation_record(quiet, p, CONFIG, ())
    s1 = reps["s1"]
    noise = p["s1"] * s1.noise_multiplier * 1.0 / (q * s1.n_samples)
    z0 = noise / (p["s0"] * 2.0 / (q * 400))
    z1 = s1.noise_multiplier
    assert central.noise_multiplier == pytest.approx(min(z0, z1), rel=1e-12)
    assert central.clip_norm == (2.0 if z0 < z1 else 1.0)
    # A silo with no noise and no clip voids the central guarantee.
    unclipped = {
        **quiet,
        "s0": replace(
            quiet["s0"],
            privacy_record=replace(quiet["s0"].privacy_record, clip_norm=math.inf),
        ),
    }
    assert secure_aggregation_record(unclipped, p, CONFIG, ()).epsilon == math.inf


def _two_silo_fit():
    return fit_federated(
        make_silos(sizes=(400, 600)),
        loss=LOSS,
        config=CONFIG,
        silo_epsilon=1.0,
        silo_delta=1e-5,
        secure_aggregation=True,
        random_state=0,
    )


def test_secure_aggregation_reads_each_silos_sampling_rate():
    # A record of silo i is sampled with silo i's own rate q_i, and its term
    # is divided by q_i n_i: both come from the silo's report.
    fit = _two_silo_fit()
    reps, p = fit.silo_reports, fit.server_weights
    q = {"s0": 0.1, "s1": 0.2}
    reps = {
        s: replace(
            r, privacy_record=replace(r.privacy_record, sampling_probability=q[s])
        )
        for s, r in reps.items()
    }
    central = secure_aggregation_record(reps, p, CONFIG, ())
    noise = math.sqrt(
        sum(
            (p[s] * r.noise_multiplier / (q[s] * r.n_samples)) ** 2
            for s, r in reps.items()
        )
    )
    z = {s: noise * q[s] * r.n_samples / p[s] for s, r in reps.items()}
    eps = {
        s: epsilon_of(noisy_sgd_event(z[s], q[s], CONFIG.rounds), central.delta)
        for s in reps
    }
    worst = max(eps, key=eps.get)
    assert central.sampling_probability == q[worst]
    assert central.noise_multiplier == pytest.approx(z[worst], rel=1e-12)
    assert central.epsilon == pytest.approx(eps[worst], rel=1e-12)


def test_secure_aggregation_needs_every_silo_in_every_round():
    fit = _two_silo_fit()
    reps = dict(fit.silo_reports)
    reps["s0"] = replace(reps["s0"], rounds_used=CONFIG.rounds - 1)
    with pytest.raises(ValueError, match="every silo to answer each"):
        secure_aggregation_record(reps, fit.server_weights, CONFIG, ())


@pytest.mark.parametrize("tiny", [1e-300, 5e-324])
def test_a_silo_of_negligible_weight_is_covered_by_the_others_noise(tiny):
    # p_0 = 1e-300 made z_0 = S / (p_0 C / (q n_0)) overflow the accountant
    # (5e-324: the sensitivity underflowed to 0, z_0 = inf) after all the
    # rounds had run. Silo 0's records are drowned in silo 1's noise: its z
    # is capped where epsilon is already 0, and silo 1 is the worst.
    fit = _two_silo_fit()
    reps = fit.silo_reports
    central = secure_aggregation_record(reps, {"s0": tiny, "s1": 1.0}, CONFIG, ())
    s1 = reps["s1"].privacy_record
    assert math.isfinite(central.epsilon) and central.epsilon <= 1.0
    assert central.noise_multiplier == pytest.approx(s1.noise_multiplier, rel=1e-12)
    assert central.epsilon == epsilon_of(central.dp_event, central.delta)


def test_the_aggregate_multiplier_is_zero_without_noise_and_capped_when_huge():
    assert _aggregate_multiplier(2.0, 0.5) == 4.0
    assert _aggregate_multiplier(0.0, 0.0) == 0.0  # no noise: unprotected
    assert _aggregate_multiplier(1.0, math.inf) == 0.0  # an unclipped silo
    assert _aggregate_multiplier(1.0, 0.0) == AGGREGATE_MAX_MULTIPLIER
    assert _aggregate_multiplier(1e300, 1e-300) == AGGREGATE_MAX_MULTIPLIER
    # The cap is read by the accountant, as epsilon 0 (more noise only helps).
    assert epsilon_of(noisy_sgd_event(AGGREGATE_MAX_MULTIPLIER, 0.2, 80), 1e-5) == 0
