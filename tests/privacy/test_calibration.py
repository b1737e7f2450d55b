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
        (1.0, math.nan, r"delta must be a number in \[0, 1\)"),
        (1.0, 1.0, r"delta must be a number in \[0, 1\)"),
        (math.inf, math.nan, r"delta must be a number in \[0, 1\)"),
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


def _exact_gaussian_epsilon(scale, delta):
    """Exact epsilon of one Gaussian of ``scale`` (Balle and Wang 2018), bisected."""
    from sklearn_dpfair.privacy._calibration import _analytic_gaussian_delta

    if _analytic_gaussian_delta(0.0, scale) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while _analytic_gaussian_delta(hi, scale) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        above = _analytic_gaussian_delta(mid, scale) > delta
        lo, hi = (mid, hi) if above else (lo, mid)
    return hi


@pytest.fixture
def exact_pld(monkeypatch):
    """A fast stand-in for the PLD accountant of unsampled Gaussians.

    It answers the exact epsilon (just above it, as the pessimistic PLD
    does) and records the PLD scale of every probe, for tests of the
    search itself; dp-accounting builds PLDs of scale 0.1 in ~14 s.
    """
    import sklearn_dpfair.privacy._calibration as calibration
    from sklearn_dpfair.privacy._accounting import (
        composed_gaussian_scale,
        pld_gaussian_scale,
    )

    probed = []

    def accountant(event, delta, accountant="rdp"):
        if accountant != "pld":
            return epsilon_of(event, delta, accountant)
        probed.append(pld_gaussian_scale(event))
        exact = _exact_gaussian_epsilon(composed_gaussian_scale(event), delta)
        return exact * (1 + 1e-7)

    monkeypatch.setattr(calibration, "epsilon_of", accountant)
    return probed


@pytest.mark.parametrize("epsilon", [100.0, 1e30, 1e308])
@pytest.mark.parametrize("steps", [1, 100])
def test_a_pld_budget_beyond_the_floor_builds_one_pld_at_the_floor(
    exact_pld, epsilon, steps
):
    # One Gaussian at epsilon = 100 probed sigma = 1 then 0.1, whose PLD
    # took 15-50 s (and again in the fit's record): the floor of unsampled
    # Gaussians is the PLD scale 0.15 (epsilon ~ 50 at delta = 1e-5), which
    # the analytic Gaussian shows to meet such budgets before any PLD: one
    # PLD is built, at the floor.
    sigma = calibrate_noise_multiplier.__wrapped__(epsilon, 1e-5, 1.0, steps, "pld")
    # The first point of the search's lattice exp(k * 1e-4) at the floor.
    assert 0.15 <= sigma / math.sqrt(steps) < 0.15 * math.exp(1e-4)
    assert exact_pld == [pytest.approx(sigma / math.sqrt(steps), rel=1e-12)]


@pytest.mark.parametrize("epsilon", [1.0, 1e-3, 1e-12])
def test_a_pld_budget_at_a_large_delta_is_searched_next_to_its_answer(
    exact_pld, epsilon
):
    # At delta = 0.5 one Gaussian of sigma = 1 has epsilon 0: its -inf
    # secant step went to the floor (sigma = 0.1, a grid of 14 s) and
    # bounced between 0.1 and 2 for twelve steps. The search restarts at
    # the analytic Gaussian's answer and probes a few sigmas next to it.
    sigma = calibrate_noise_multiplier.__wrapped__(epsilon, 0.5, 1.0, 1, "pld")
    assert min(exact_pld) >= 0.15 and len(set(exact_pld)) <= 5
    exact = _exact_gaussian_epsilon(sigma, 0.5) * (1 + 1e-7)
    assert exact <= epsilon
    assert _exact_gaussian_epsilon(sigma * math.exp(-2e-4), 0.5) > epsilon


def test_nearby_budgets_at_a_large_delta_probe_the_same_sigmas(exact_pld):
    # A private selection lowers its runs' budget step by step (delta = 0.5
    # took it ~25 calibrations down to epsilon 1e-17): their searches walk
    # one lattice of sigmas, so the memoized accountant builds each PLD once.
    sigmas = {
        calibrate_noise_multiplier.__wrapped__(epsilon, 0.5, 1.0, 1, "pld")
        for epsilon in [1e-6, 1e-8, 1e-10, 1e-12, 1e-17]
    }
    assert len(sigmas) == 1 and min(exact_pld) >= 0.15
    assert len(set(exact_pld)) <= 4


def test_a_numpy_scalar_budget_is_calibrated_as_the_float_it_holds(exact_pld):
    # NumPy 2 would carry a np.float32's precision through the analytic
    # Gaussian's arithmetic; the budget is read as the Python float it holds.
    import numpy as np

    epsilon, delta = np.float32(0.3), np.float32(0.5)
    as_float = calibrate_noise(gaussian_event, float(epsilon), float(delta), "pld")
    assert calibrate_noise(gaussian_event, epsilon, delta, "pld") == as_float


@pytest.mark.parametrize(
    "epsilon, delta, sigma",
    [
        (1.0, 1e-5, 3.730631646686442),
        (0.05, 1e-3, 30.010328840865835),
        (0.2, 1e-10, 27.722364376467155),
    ],
)
def test_the_pld_calibration_of_ordinary_budgets_keeps_its_sigma(epsilon, delta, sigma):
    # Recorded fits and benchmarks keep their noise: at ordinary budgets the
    # search runs from sigma = 1 as it always has (another start ends
    # elsewhere in the search's tolerance, far beyond 1e-12). Not to the
    # last bit: the PLD's FFT convolutions round differently across numpy
    # and scipy releases (numpy 2.4.6 with scipy 1.17.1 moved these sigmas
    # by 3e-16 to 2e-14, relative).
    calibrate = calibrate_noise_multiplier.__wrapped__
    assert calibrate(epsilon, delta, 1.0, 1, "pld") == pytest.approx(sigma, rel=1e-12)


@pytest.mark.parametrize(
    "epsilon, delta, name",
    [("1", 1e-5, "target_epsilon"), (True, 1e-5, "target_epsilon"),
     (1.0, None, "delta"), (1.0, "1e-5", "delta"), (1.0, False, "delta")],
)
def test_calibration_refuses_what_is_no_number_naming_it(epsilon, delta, name):
    # Text and None raised a bare "'>' not supported between 'str' and 'int'";
    # True was calibrated as epsilon 1 (noise 4.045).
    with pytest.raises(ValueError, match=f"^{name} must be"):
        calibrate_noise_multiplier(epsilon, delta)


@pytest.mark.parametrize("position", [0, 2, 3])
def test_a_bool_is_refused_whatever_was_cached_before(position):
    # The calibrations are cached, and True == 1 with the same hash: after
    # a call with steps=1, steps=True returned 4.0454 instead of raising.
    args = [1.0, 1e-5, 1.0, 1]
    calibrate_noise_multiplier(*args)
    args[position] = True
    with pytest.raises(ValueError, match="got True"):
        calibrate_noise_multiplier(*args)
    noise_multiplier_for_gaussian(1, 1e-5)
    with pytest.raises(ValueError, match="got True"):
        noise_multiplier_for_gaussian(True, 1e-5)
