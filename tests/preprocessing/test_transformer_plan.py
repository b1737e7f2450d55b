# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import dp_accounting
import pytest

from sklearn_dpfair.preprocessing._plan import plan_releases
from sklearn_dpfair.privacy._accounting import epsilon_of


@pytest.mark.parametrize("n_quantiles, gaussian", [(0, True), (3, False), (4, True)])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_planned_event_meets_the_target(epsilon, n_quantiles, gaussian):
    plan = plan_releases(
        epsilon,
        1e-6,
        "rdp",
        gaussian=gaussian,
        n_quantiles=n_quantiles,
        quantile_share=0.3,
    )
    spent = epsilon_of(plan.dp_event, 1e-6, "rdp")
    assert spent <= epsilon * (1 + 1e-9)
    # Calibrated, not wasteful: within 2% of the target.
    assert spent >= 0.98 * epsilon
    assert plan.record("test").epsilon == pytest.approx(spent)


def test_the_quantile_share_is_what_the_quantiles_get():
    plan = plan_releases(
        1.0, 1e-6, "rdp", gaussian=True, n_quantiles=4, quantile_share=0.25
    )
    gaussian_rho = 0.5 / plan.gaussian.noise_multiplier**2
    total = 4 * plan.quantile_rho + gaussian_rho
    assert 4 * plan.quantile_rho == pytest.approx(0.25 * total, rel=1e-9)


def test_no_privacy_and_no_release():
    assert isinstance(
        plan_releases(math.inf, 1e-5, "rdp", gaussian=True).dp_event,
        dp_accounting.NonPrivateDpEvent,
    )
    assert plan_releases(1.0, 1e-5, "rdp", gaussian=False).record("x").epsilon == 0.0
