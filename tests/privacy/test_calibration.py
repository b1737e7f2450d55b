# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_dpfair.privacy import (
    calibrate_noise,
    calibrate_noise_multiplier,
    noise_multiplier_for_gaussian,
)
from sklearn_dpfair.privacy._accounting import (
    epsilon_of,
    gaussian_event,
    noisy_sgd_event,
)


@settings(max_examples=15, deadline=None)
@given(
    epsilon=st.floats(0.05, 10.0),
    log10_delta=st.floats(-9, -3),
    q=st.floats(0.001, 1.0),
    steps=st.integers(1, 2000),
)
def test_calibration_never_overshoots(epsilon, log10_delta, q, steps):
    delta = 10.0**log10_delta
    sigma = calibrate_noise_multiplier(epsilon, delta, q, steps, "rdp")
    spent = epsilon_of(noisy_sgd_event(sigma, q, steps), delta, "rdp")
    assert spent <= epsilon
    if sigma > 0.1:  # not at the floor of the search range: it is tight in
        # sigma (epsilon itself may jump: RDP over a grid of orders is a step
        # function of sigma for tiny q and few steps).
        less_noise = epsilon_of(noisy_sgd_event(sigma * 0.9997, q, steps), delta)
        assert less_noise > epsilon


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_calibration_is_tight_and_safe(accountant):
    sigma = calibrate_noise_multiplier(1.0, 1e-5, 0.01, 500, accountant)
    eps = epsilon_of(noisy_sgd_event(sigma, 0.01, 500), 1e-5, accountant)
    assert eps <= 1.0
    # 0.1% less noise would overshoot: the search is tight.
    assert epsilon_of(noisy_sgd_event(sigma * 0.999, 0.01, 500), 1e-5, accountant) > (
        0.999
    )


def test_small_budgets_just_work():
    # epsilon = 0.05 needs large RDP orders; Opacus' defaults refuse it.
    sigma = calibrate_noise_multiplier(0.05, 1e-5, 0.05, 600)
    assert epsilon_of(noisy_sgd_event(sigma, 0.05, 600), 1e-5) <= 0.05


def test_infinite_budget_means_no_noise():
    assert calibrate_noise_multiplier(math.inf, 1e-5, 0.1, 10) == 0.0


def test_calibration_is_memoized():
    calibrate_noise_multiplier.cache_clear()
    calibrate_noise_multiplier(2.0, 1e-5, 0.1, 100)
    calibrate_noise_multiplier(2.0, 1e-5, 0.1, 100)
    info = calibrate_noise_multiplier.cache_info()
    assert info.hits == 1 and info.misses == 1


def test_single_gaussian_is_the_analytic_gaussian():
    # sigma/Delta = 3.73 at (1, 1e-5), against 4.84 for the classic
    # sqrt(2 ln(1.25/delta))/eps (Dwork and Roth, Theorem A.1; the exact
    # calibration is Balle and Wang's analytic Gaussian mechanism).
    z = noise_multiplier_for_gaussian(1.0, 1e-5)
    assert z == pytest.approx(3.73, abs=0.01)
    assert epsilon_of(gaussian_event(z), 1e-5, "pld") <= 1.0


def test_unreachable_budget_raises():
    with pytest.raises(ValueError, match="cannot be reached"):
        calibrate_noise_multiplier(1e-6, 1e-12, 1.0, 10**6)


def test_a_budget_below_the_rdp_orders_names_the_pld_accountant():
    # One Gaussian at epsilon = 0.005 (delta = 1e-6) needs RDP orders near
    # 3000, beyond the grid's 1024: RDP cannot certify it whatever the
    # noise, PLD can.
    with pytest.raises(ValueError, match="accountant='pld' can"):
        calibrate_noise_multiplier(0.005, 1e-6, 1.0, 1, "rdp")
    z = calibrate_noise_multiplier(0.005, 1e-6, 1.0, 1, "pld")
    assert epsilon_of(gaussian_event(z), 1e-6, "pld") <= 0.005


def test_the_floor_returned_is_the_sigma_the_accountant_evaluated():
    # A budget the smallest noise already meets: the returned sigma is the
    # one the accountant certified, exp(log 0.1), not 0.1 (an ulp below).
    from dp_accounting import GaussianDpEvent

    from sklearn_dpfair.privacy._calibration import calibrate_noise

    evaluated = []

    def make_event(sigma):
        evaluated.append(sigma)
        return GaussianDpEvent(sigma)

    sigma = calibrate_noise(make_event, 1e4, 1e-5)
    assert sigma == math.exp(math.log(0.1)) and sigma in evaluated


@pytest.mark.parametrize(
    "calibrate",
    [
        lambda eps, delta: calibrate_noise(gaussian_event, eps, delta),
        lambda eps, delta: calibrate_noise_multiplier(eps, delta, 0.1, 10),
        noise_multiplier_for_gaussian,
    ],
    ids=["calibrate_noise", "calibrate_noise_multiplier", "for_gaussian"],
)
@pytest.mark.parametrize(
    "epsilon, delta, match",
    [
        (math.nan, 1e-5, "target_epsilon must be > 0"),
        (0.0, 1e-5, "target_epsilon must be > 0"),
        (-1.0, 1e-5, "target_epsilon must be > 0"),
        (1.0, math.nan, r"delta must be in \[0, 1\)"),
        (1.0, 1.0, r"delta must be in \[0, 1\)"),
        (math.inf, math.nan, r"delta must be in \[0, 1\)"),
    ],
)
def test_an_invalid_budget_is_refused_not_searched(calibrate, epsilon, delta, match):
    # The search cannot compare with NaN and would return its floor (sigma
    # = 0.1, epsilon ~ 90); delta = 1 is met by any noise.
    with pytest.raises(ValueError, match=match):
        calibrate(epsilon, delta)


def test_delta_zero_is_calibrated_for_pure_releases_only():
    from sklearn_dpfair.privacy._accounting import laplace_event

    assert calibrate_noise(laplace_event, 2.0, 0.0) == pytest.approx(0.5, rel=1e-3)
    with pytest.raises(ValueError, match="delta=0"):
        calibrate_noise_multiplier(1.0, 0.0)


def _pld_probes_kept_off_huge_grids(monkeypatch):
    """Spy on the calibration's PLD calls: fail fast on a grid of gigabytes.

    dp-accounting reads T full-batch Gaussian steps of noise sigma as one
    Gaussian of sigma / sqrt(T); below a scale of 0.1 its loss grid takes
    seconds and hundreds of megabytes (0.03: a minute and 2.7 GB).
    """
    import sklearn_dpfair.privacy._calibration as calibration
    from sklearn_dpfair.privacy._accounting import pld_gaussian_scale

    probed = []

    def spy(event, delta, accountant="rdp"):
        if accountant == "pld":
            scale = pld_gaussian_scale(event)
            assert scale >= 0.1 * (1 - 1e-9), f"PLD probed at scale {scale:.3g}"
            probed.append(scale)
        return epsilon_of(event, delta, accountant)

    monkeypatch.setattr(calibration, "epsilon_of", spy)
    return probed


@pytest.mark.parametrize("steps", [100, 1000, 10_000])
def test_pld_calibration_of_many_full_batch_steps_stays_off_huge_grids(
    monkeypatch, steps
):
    # Started at sigma = 1, the search built PLDs of sigma / sqrt(T): 11 s
    # and 0.8 GB at T = 100, a MemoryError at T = 10000. Bracketed by the
    # RDP calibration it probes near the answer only, and stays as tight.
    probed = _pld_probes_kept_off_huge_grids(monkeypatch)
    sigma = calibrate_noise_multiplier.__wrapped__(1.0, 1e-5, 1.0, steps, "pld")
    assert probed and len(probed) <= 12
    # One Gaussian of sigma / sqrt(T) (exact composition): the analytic
    # Gaussian's 3.73 at (1, 1e-5), times sqrt(T).
    assert sigma / math.sqrt(steps) == pytest.approx(3.7306, rel=1e-3)
    assert epsilon_of(noisy_sgd_event(sigma, 1.0, steps), 1e-5, "pld") <= 1.0
    less = sigma * math.exp(-2e-4)
    assert epsilon_of(noisy_sgd_event(less, 1.0, steps), 1e-5, "pld") > 1.0


@pytest.mark.parametrize(
    "epsilon, delta, q, steps",
    [(0.5, 1e-5, 0.1, 10), (1.0, 1e-6, 0.01, 1000), (3.0, 1e-5, 1.0, 300)],
)
def test_pld_calibration_is_tight_below_the_rdp_bracket(
    monkeypatch, epsilon, delta, q, steps
):
    # The RDP-calibrated sigma bounds the search from above (RDP's epsilon
    # upper-bounds PLD's); the answer is PLD's own, to the 1e-4 tolerance.
    probed = _pld_probes_kept_off_huge_grids(monkeypatch)
    rdp_sigma = calibrate_noise_multiplier.__wrapped__(epsilon, delta, q, steps)
    sigma = calibrate_noise_multiplier.__wrapped__(epsilon, delta, q, steps, "pld")
    assert probed and sigma <= rdp_sigma
    assert epsilon_of(noisy_sgd_event(sigma, q, steps), delta, "pld") <= epsilon
    less = sigma * math.exp(-2e-4)
    assert epsilon_of(noisy_sgd_event(less, q, steps), delta, "pld") > epsilon



def test_a_nan_epsilon_never_counts_as_within_budget(monkeypatch):
    # An accountant answering NaN (below sigma = 2 here) certifies nothing:
    # the search must not return a sigma whose epsilon it could not compare.
    from sklearn_dpfair.privacy import _calibration

    def accountant(event, delta, accountant):
        sigma = event.noise_multiplier
        return 1.0 / sigma if sigma >= 2.0 else math.nan

    monkeypatch.setattr(_calibration, "epsilon_of", accountant)
    sigma = calibrate_noise(gaussian_event, 1.0, 1e-5, "rdp")
    assert sigma >= 2.0
    assert accountant(gaussian_event(sigma), 1e-5, "rdp") <= 1.0
