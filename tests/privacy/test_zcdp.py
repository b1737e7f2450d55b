# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import numpy as np
import pytest

from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.privacy._accounting import (
    epsilon_of,
    zcdp_composition,
    zcdp_event,
)
from sklearn_dpfair.privacy._zcdp import (
    ZCDPLedger,
    gaussian_noise_std,
    rho_for_epsilon,
    rho_for_epsilon_simple,
)


def test_simple_conversion_worked_example():
    # Bun and Steinke (2016), Prop. 1.3 solved for rho at (1, 1e-5): rho =
    # 0.0208199, i.e. sqrt(2 rho) = 0.2040585.
    rho = rho_for_epsilon_simple(1.0, 1e-5)
    assert rho == pytest.approx(0.0208199, abs=1e-7)
    assert math.sqrt(2 * rho) == pytest.approx(0.2040585, abs=1e-7)
    # It inverts Bun and Steinke's eps = rho + 2 sqrt(rho ln(1/delta)).
    assert rho + 2 * math.sqrt(rho * math.log(1e5)) == pytest.approx(1.0)


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_accountant_conversion_is_certified_and_tighter(epsilon, delta):
    rho = rho_for_epsilon(epsilon, delta)
    spent = epsilon_of(zcdp_event(rho), delta)
    assert spent <= epsilon
    # Tight: 0.1% more rho overshoots (up to the bisection tolerance).
    assert epsilon_of(zcdp_event(rho * 1.001), delta) > epsilon * 0.999
    # Never looser than the closed form, which is also certified.
    assert rho >= rho_for_epsilon_simple(epsilon, delta)
    assert (
        epsilon_of(zcdp_event(rho_for_epsilon_simple(epsilon, delta)), delta) <= epsilon
    )


def test_infinite_budget_is_non_private():
    assert rho_for_epsilon(math.inf, 1e-5) == math.inf
    assert rho_for_epsilon_simple(math.inf, 1e-5) == math.inf
    assert epsilon_of(zcdp_event(math.inf), 1e-5) == math.inf
    assert gaussian_noise_std(3.0, math.inf) == 0.0


def test_gaussian_noise_std_matches_the_renyi_identity():
    # D_alpha(N(0, s^2) || N(Delta, s^2)) = alpha Delta^2 / (2 s^2) = alpha rho.
    sigma = gaussian_noise_std(2.0, 0.125)
    assert 2.0**2 / (2 * sigma**2) == pytest.approx(0.125)
    with pytest.raises(ValueError, match="rho"):
        gaussian_noise_std(1.0, 0.0)


def test_ledger_parts_sum_to_budget():
    ledger = ZCDPLedger(0.03)
    ledger.allocate("clip_median", 0.0015)
    ledger.allocate("curvature_scale", 0.0003)
    ledger.allocate("curvature_matrix", 0.0012)
    ledger.allocate_rest("optimizer")
    assert sum(ledger.spent.values()) == pytest.approx(0.03, rel=1e-15)
    assert list(ledger.spent) == [
        "clip_median",
        "curvature_scale",
        "curvature_matrix",
        "optimizer",
    ]
    # The event composes the parts: its epsilon is that of the total.
    assert epsilon_of(ledger.dp_event(), 1e-5) == pytest.approx(
        epsilon_of(zcdp_event(0.03), 1e-5)
    )


def test_ledger_refuses_overspending_and_duplicates():
    ledger = ZCDPLedger(1.0)
    ledger.allocate("a", 0.6)
    with pytest.raises(PrivacyBudgetError, match="only"):
        ledger.allocate("b", 0.5)
    with pytest.raises(ValueError, match="already"):
        ledger.allocate("a", 0.1)
    assert ledger.remaining == pytest.approx(0.4)


def test_composition_event_is_hashable_and_additive():
    event = zcdp_composition([0.01, 0.02, 0.0])
    hash(event)
    assert epsilon_of(event, 1e-5) == pytest.approx(epsilon_of(zcdp_event(0.03), 1e-5))
    assert epsilon_of(zcdp_composition([]), 1e-5) == 0.0
    assert np.isinf(epsilon_of(zcdp_composition([0.1, math.inf]), 1e-5))


@pytest.mark.parametrize("rho", [math.nan, -0.1, "0.1"])
def test_allocate_refuses_a_malformed_rho(rho):
    # NaN passed both budget comparisons: remaining and the fit's zCDP event
    # became NaN, which the RDP accountant reads as epsilon 0.
    ledger = ZCDPLedger(1.0)
    with pytest.raises(ValueError, match="rho must be a number in"):
        ledger.allocate("step", rho)
    assert ledger.spent == {} and ledger.remaining == 1.0
    with pytest.raises(ValueError, match="budget must be a number in"):
        ZCDPLedger(math.nan)


def test_epsilon_below_the_accountants_floor_names_the_floor():
    # At delta = 1e-8 RDP's largest order (1024) cannot certify epsilon
    # 0.01 for any rho: the message gives the floor and the remedy rather
    # than blaming rho's search range.
    with pytest.raises(PrivacyBudgetError, match=r"about 0\.01\d*: its largest order"):
        rho_for_epsilon(0.01, 1e-8)
    assert rho_for_epsilon(0.015, 1e-8) > 0
