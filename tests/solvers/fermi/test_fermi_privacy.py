# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The DP-FERMI privacy set-up: noise multipliers, mechanisms, event."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair import DPFERMIClassifier
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


@pytest.mark.parametrize("ratio", [1e-200, 1e200])
def test_a_dual_noise_ratio_whose_noise_overflows_is_refused_naming_it(ratio):
    # r**-2 raised OverflowError before the fit (r = 1e-200), and r = 1e200
    # ran the whole fit before the release check's squares overflowed.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    s = rng.integers(0, 2, 300)
    est = DPFERMIClassifier(
        dual_noise_ratio=ratio, classes=[0, 1], groups=[0, 1], small_budget="fit"
    )
    with pytest.raises(ValueError, match="dual_noise_ratio"):
        est.fit(X, y, sensitive_features=s)
    assert not hasattr(est, "coef_")


def test_a_dual_noise_multiplier_that_overflows_names_both_factors():
    # 1e300 * 1e10 overflows: the error blamed an infinite noise_multiplier.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    s = rng.integers(0, 2, 300)
    est = DPFERMIClassifier(
        noise_multiplier=1e300, dual_noise_ratio=1e10, classes=[0, 1],
        groups=[0, 1], small_budget="fit",
    )
    with pytest.raises(ValueError, match="noise_multiplier=1e.300 times dual_noise"):
        est.fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="dual_noise_ratio=1e.10"):
        est.privacy_plan(300, 2, n_groups=2)


def test_a_weight_near_the_largest_float_moves_the_dual_sum_by_its_clip_only():
    # Equal opportunity's block weight 1 / P(Y = 1) > 1 times a public weight
    # of 1.7e308 overflowed to inf; its clip factor was 0 and inf * 0 made
    # the released dual sum NaN (then the dual variable and every gradient).
    # The noiseless private loop (epsilon=inf, noise_multiplier=0) clips as
    # a private fit does: one record moves the model by its clip only.
    rng = np.random.default_rng(0)
    n = 1000
    X = rng.normal(size=(n, 3))
    s = rng.integers(0, 2, n)
    y = (X[:, 0] + 0.8 * s + rng.normal(size=n) > 0.5).astype(int)
    kw = dict(
        constraint="equal_opportunity", groups=[0, 1], classes=[0, 1],
        epsilon=np.inf, noise_multiplier=0.0, batch_size=100000, max_iter=10,
        random_state=0,
    )
    base = DPFERMIClassifier(**kw).fit(
        X, y, sample_weight=np.ones(n), sensitive_features=s
    )
    X1, y1, s1 = np.vstack([X, [[0.0, 0.0, 0.0]]]), np.append(y, 1), np.append(s, 0)
    for weight in (1e300, np.finfo(np.float64).max):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            fit = DPFERMIClassifier(**kw).fit(
                X1, y1, sample_weight=np.append(np.ones(n), weight),
                sensitive_features=s1,
            )
        assert np.isfinite(fit.dual_coef_).all()
        assert np.abs(fit.coef_ - base.coef_).max() < 0.02
