# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import dp_accounting
import numpy as np
import pytest

from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)
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


@pytest.mark.parametrize(
    "estimator",
    [
        DPStandardScaler(bounds=(1.0, 0.0)),
        DPStandardScaler(bounds="auto", auto_quantiles=(0.9, 0.1)),
        DPSimpleImputer(bounds=[(0.0, 1.0)] * 3),
        DPQuantileTransformer(bounds=(0.0, np.inf)),
        DPKBinsDiscretizer(bounds=(0.0, np.nan)),
        DPSplineTransformer(bounds=(-1e308, 1e308)),
        DPSplineTransformer(bounds=(1e8, 1e8 + 1e-7)),
    ],
    ids=lambda est: f"{type(est).__name__}-{est.bounds}",
)
def test_the_plan_refuses_the_bounds_the_fit_refuses(estimator):
    # A plan composes a fit before it runs: one made for bounds the fit
    # would refuse promises a release that never happens.
    X = np.random.default_rng(0).uniform(0.0, 1.0, size=(100, 2))
    with pytest.raises(ValueError) as fit_error:
        estimator.fit(X)
    with pytest.raises(ValueError) as plan_error:
        estimator.privacy_plan(*X.shape)
    assert str(plan_error.value) == str(fit_error.value)
    assert any(name in str(plan_error.value) for name in ("bounds", "auto_quantiles"))


def test_the_plan_accepts_the_bounds_the_fit_accepts():
    estimator = DPSplineTransformer(bounds=[(0.0, 1.0), (-5.0, 5.0)], random_state=0)
    plan = estimator.privacy_plan(100, 2)
    fitted = estimator.fit(np.random.default_rng(0).uniform(0.0, 1.0, size=(100, 2)))
    assert plan.dp_event == fitted.dp_event_
