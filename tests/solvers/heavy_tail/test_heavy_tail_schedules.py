# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact calibration of the heavy-tail solvers: worked examples of Algorithms 27, 8 and 29."""

import math

import numpy as np
import pytest

from sklearn_dpfair._solvers.heavy_tail._schedules import (
    acsa_saturation_eps,
    acsa_step_size,
    acsa_steps,
    clip_auto,
    clip_theory,
    mean_oracle_sigma,
    prox_steps,
    sgd_steps,
    sgd_steps_practical,
    snr_factor,
    step_cap,
    stich_schedule,
    zcdp_eps,
)
from sklearn_dpfair.privacy._zcdp import rho_for_epsilon_simple

# Worked example (Algorithm 27 with Thm 176's T and clip): n = 20000, d = 11, k = 2, r = 10, beta = mu = 1,
# D = 10, (eps_dp, delta) = (1, 1e-5) -> eps = 0.2040585.
N, D_PARAMS, K, R, DIAM = 20000, 11, 2.0, 10.0, 10.0
EPS = zcdp_eps(rho_for_epsilon_simple(1.0, 1e-5))


def test_alg27_worked_example():
    T = sgd_steps(N, D_PARAMS, EPS, K, 1.0, 1.0, DIAM, R)
    assert T == 40
    s = N // (T + 1)
    assert s == 487
    C = clip_theory(R, snr_factor("sgd", EPS, N, D_PARAMS, T), K)
    assert C == pytest.approx(139.49, abs=0.005)
    assert mean_oracle_sigma(C, s, EPS) == pytest.approx(2.807, abs=5e-4)


def test_alg8_worked_example():
    T = acsa_steps(N, D_PARAMS, EPS, K, 1.0, DIAM, R)
    assert T == 5
    assert N // T == 4000
    C = clip_theory(R, snr_factor("acsa", EPS, N, D_PARAMS, T), K)
    assert C == pytest.approx(234.6, abs=0.05)


@pytest.mark.parametrize("k", [2.0, 3.0, 8.0])
def test_acsa_saturation_is_where_thm_173_reaches_its_non_private_rate(k):
    # At T = sqrt(beta D / r) n^(1/4), the non-private step count, the
    # saturation budget is where Thm 173's two step counts meet, and there
    # the epsilon-dependent terms of eq. C.53, (sqrt(d T) / (eps n))^((k-1)/k)
    # in units of r D, equal the statistical term 1 / sqrt(n).
    n, d, beta, diam, r = 20000, 6, 1.0, 20.0, 3.0
    T = math.sqrt(beta * diam / r) * n**0.25
    eps = acsa_saturation_eps(n, d, T, k)
    ratio = beta * diam / r
    first = ratio ** (2 * k / (5 * k - 1)) * (eps * n / math.sqrt(d)) ** (
        (2 * k - 2) / (5 * k - 1)
    )
    assert first == pytest.approx(T, rel=1e-9)
    term = (math.sqrt(d * T) / (eps * n)) ** ((k - 1) / k)
    assert term == pytest.approx(1 / math.sqrt(n), rel=1e-9)
    # Below it Thm 173's T is smaller (the first count binds), above it not.
    assert acsa_steps(n, d, 0.5 * eps, k, beta, diam, r) < math.ceil(T)
    assert acsa_steps(n, d, 2.0 * eps, k, beta, diam, r) == math.ceil(T)


def test_sigma_matches_the_calibration_table():
    # Table 3.6: sigma = sqrt(2) C / (s sqrt(rho_step)) = 2 C / (s eps).
    rho = 0.0208199
    assert mean_oracle_sigma(3.0, 100, zcdp_eps(rho)) == pytest.approx(
        math.sqrt(2) * 3.0 / (100 * math.sqrt(rho))
    )
    assert mean_oracle_sigma(3.0, 100, math.inf) == 0.0


def test_snr_factors_per_solver():
    assert snr_factor("sgd", 1.0, 100, 4, 4) == pytest.approx(25.0)
    assert snr_factor("acsa", 1.0, 100, 4, 4) == pytest.approx(25.0)
    assert snr_factor("prox", 1.0, 100, 4, 4) == pytest.approx(12.5)
    assert snr_factor("localized", 1.0, 100, 4, 100) == pytest.approx(
        100 / math.sqrt(4 * math.log(100))
    )
    with pytest.raises(ValueError):
        snr_factor("newton", 1.0, 1, 1, 1)


def test_auto_clip_keeps_the_theory_scaling_above_the_reference():
    assert clip_auto(2.0, 50.0, 2.0, 100.0) == 2.0
    # Above clip_ref the rule grows like snr^(1/k), as the theory's C.
    ratio = clip_auto(2.0, 1600.0, 2.0, 100.0) / clip_auto(2.0, 400.0, 2.0, 100.0)
    assert ratio == pytest.approx(2.0)
    assert math.isinf(clip_auto(2.0, math.inf, 2.0, 100.0))


def test_step_cap_keeps_noise_below_half_the_clip():
    n, d, eps = 20000, 11, 0.2
    T = step_cap(n, d, eps)
    s = n // (T + 1)
    assert math.sqrt(d) * mean_oracle_sigma(1.0, s, eps) <= 0.5
    assert s >= 16
    assert step_cap(100, 3, math.inf) == 5
    assert step_cap(10, 3, 0.1) == 1


def test_stich_schedule_is_continuous_and_bounded():
    for T, mu, beta in [(40, 1.0, 1.0), (40, 0.2, 1.0), (3, 0.1, 1.0), (100, 0.5, 2.0)]:
        eta, zeta = stich_schedule(T, mu, beta)
        assert eta.shape == zeta.shape == (T + 1,)
        assert np.all(eta <= 1.0 / beta + 1e-15)
        assert np.all(zeta >= 0) and zeta.sum() > 0
        if T > 2 * beta / mu:
            t0 = math.ceil(T / 2)
            assert eta[t0] == pytest.approx(1.0 / beta)
            assert np.all(zeta[:t0] == 0)
            assert np.all(np.diff(eta[t0:]) < 0)


def test_sgd_steps_of_a_huge_radius_are_unbounded_not_an_overflow():
    # radius=1e200 squared passes the largest float: a Python float **
    # raised OverflowError inside the fit; the product is inf, an unbounded
    # step count that the fit caps like the non-private one.
    assert math.isinf(sgd_steps_practical(10000, 6, 0.25, 1.0, 1.0, 1e200, 3.0))
    assert math.isinf(sgd_steps(10000, 6, 0.25, 2.0, 1.0, 1.0, 2e200, 3.0))


def test_practical_sgd_steps_grow_with_kappa_and_accuracy():
    base = sgd_steps_practical(10000, 6, 0.25, 1.0, 1.0, 10.0, 3.0)
    assert sgd_steps_practical(10000, 6, 0.25, 0.25, 1.0, 10.0, 3.0) > 3 * base
    assert sgd_steps_practical(10000, 6, 1.0, 1.0, 1.0, 10.0, 3.0) > base
    assert math.isinf(sgd_steps_practical(10000, 6, math.inf, 1.0, 1.0, 10.0, 3.0))
    # Much smaller than Thm 176's worst-case constant.
    assert base < sgd_steps(10000, 6, 0.25, 2.0, 1.0, 1.0, 20.0, 3.0) / 3


def test_acsa_step_size_and_prox_steps():
    assert acsa_step_size(1, 3.0, 1.0, 0.0) == 6.0
    assert acsa_step_size(4, 1.0, 2.0, 0.64, 0.6) == pytest.approx(4.0)
    assert prox_steps(100, 1.0, 1.0) == math.ceil(2 * math.log(100))
