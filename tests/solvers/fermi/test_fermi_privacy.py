# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The DP-FERMI privacy set-up: noise multipliers, mechanisms, event."""

import math

import pytest

from sklearn_dpfair._solvers.fermi._privacy import (
    DEFAULT_MARGINAL_NOISE,
    FairPrivacy,
    FERMIMechanisms,
    calibrate_fermi_noise,
    fermi_event,
    histogram_noise,
    resolve_noise,
)
from sklearn_dpfair.privacy import PrivacyBudget, epsilon_of


def test_joint_mechanism_has_the_primal_noise_std():
    # Scaling the dual block to the primal noise scale: one Gaussian whose
    # noise std (sigma_eff times the joint sensitivity) is sigma_theta C.
    privacy = FairPrivacy(PrivacyBudget(1.0, 1e-5), dual_noise_ratio=0.5)
    noise = resolve_noise(privacy, 0.05, 200, active=True, bounded=False)
    mech = FERMIMechanisms.build(noise, 2.0, 0.7, 6)
    assert mech.joint.noise_std == pytest.approx(mech.primal.noise_std)
    assert mech.joint.clip_norm == pytest.approx(2.0 * math.sqrt(1 + 0.5**-2))
    assert mech.dual.noise_std == pytest.approx(0.5 * noise.primal * 0.7)
    assert mech.histogram.clip_norm == 1.0
    assert mech.selection.clip_norm == pytest.approx(math.sqrt(6))


def test_calibrated_event_meets_the_budget_tightly():
    privacy = FairPrivacy(PrivacyBudget(2.0, 1e-5))
    noise = resolve_noise(privacy, 0.05, 200, active=True, bounded=True)
    event = fermi_event(noise.effective, 0.05, 200, noise.marginal, noise.selection)
    eps = epsilon_of(event, 1e-5, "rdp")
    assert eps <= 2.0 and eps == pytest.approx(2.0, rel=1e-3)
    assert noise.marginal == noise.selection == DEFAULT_MARGINAL_NOISE


def test_user_noise_is_sigma_theta_and_no_fairness_term_has_no_dual():
    privacy = FairPrivacy(PrivacyBudget(1.0, 1e-5, noise_multiplier=3.0))
    noise = resolve_noise(privacy, 0.05, 200, active=False, bounded=False)
    assert (noise.primal, noise.effective, noise.dual) == (3.0, 3.0, 0.0)
    assert noise.marginal == 0.0  # no fairness term: no histogram


def test_histogram_alone_over_budget_is_refused():
    with pytest.raises(ValueError, match="group marginals alone"):
        calibrate_fermi_noise(0.01, 1e-5, 0.05, 200, 1.0, "rdp")


def test_declared_histogram_noise_wins():
    assert histogram_noise(PrivacyBudget(0.1, 1e-5), 7.0) == 7.0
    assert histogram_noise(PrivacyBudget(math.inf, 1e-5)) == DEFAULT_MARGINAL_NOISE
