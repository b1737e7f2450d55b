# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The split of one budget: shares, replace-one conversion and the common scale."""

import dp_accounting
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sklearn_dpfair.pipeline._budget_split import (
    calibrate_scale,
    compose_plans,
    resolve_shares,
    to_replace_one,
)
from sklearn_dpfair.pipeline._steps import PrivateUnit
from sklearn_dpfair.privacy import PrivacyPlan
from sklearn_dpfair.privacy._accounting import epsilon_of, gaussian_event
from sklearn_dpfair.privacy._calibration import noise_multiplier_for_gaussian


def _units(*paths, final=None):
    return [PrivateUnit(p, None, 1, final=(p == final)) for p in paths]


def test_default_shares():
    shares = resolve_shares(_units("a", "b", "m", final="m"), None)
    assert shares == pytest.approx({"a": 0.075, "b": 0.075, "m": 0.85})
    assert list(shares) == ["a", "b", "m"]
    assert resolve_shares(_units("a", "b"), None) == {"a": 0.5, "b": 0.5}


def test_shares_are_normalized_and_split_over_a_step():
    shares = resolve_shares(_units("ct__x", "ct__y", "m"), {"ct": 2, "m": 2})
    assert shares == pytest.approx({"ct__x": 0.25, "ct__y": 0.25, "m": 0.5})
    with pytest.raises(ValueError, match="positive finite"):
        resolve_shares(_units("m"), {"m": 0})
    with pytest.raises(ValueError, match="twice"):
        resolve_shares(_units("ct__x", "m"), {"ct": 1, "ct__x": 1, "m": 1})


def test_shares_near_the_largest_float_are_normalized():
    # Their sum overflows to infinity; their ratios do not.
    units = _units("a", "b", "m")
    big = resolve_shares(units, {"a": 1e308, "b": 1e308, "m": 1.7e308})
    assert big == pytest.approx({"a": 1 / 3.7, "b": 1 / 3.7, "m": 1.7 / 3.7})
    # Ordinary shares are divided by their sum, as before.
    shares = {"a": 0.1, "b": 0.7, "m": 3.3}
    total = sum(shares.values())
    assert resolve_shares(units, shares) == {p: v / total for p, v in shares.items()}


def test_replace_one_conversion():
    event = dp_accounting.ComposedDpEvent(
        (
            dp_accounting.GaussianDpEvent(4.0),
            dp_accounting.SelfComposedDpEvent(dp_accounting.ZCDpEvent(0.01), 3),
        )
    )
    converted = to_replace_one(event, "s")
    assert converted.events[0] == dp_accounting.GaussianDpEvent(2.0)
    assert converted.events[1] == dp_accounting.SelfComposedDpEvent(
        dp_accounting.ZCDpEvent(0.04), 3
    )
    # A Gaussian of replace-one sensitivity 2C is a zCDP release of 4 rho.
    assert epsilon_of(gaussian_event(2.0), 1e-6) == pytest.approx(
        epsilon_of(dp_accounting.ZCDpEvent(4 / (2 * 4.0**2)), 1e-6), rel=1e-6
    )
    sampled = dp_accounting.PoissonSampledDpEvent(
        0.1, dp_accounting.GaussianDpEvent(1.0)
    )
    with pytest.raises(ValueError, match="Step 's'.*no replace-one conversion"):
        to_replace_one(sampled, "s")


def _gaussian_plan(epsilon, delta, adjacency="add_remove"):
    z = noise_multiplier_for_gaussian(epsilon, delta, accountant="rdp")
    return PrivacyPlan(
        estimator="G",
        dp_event=gaussian_event(z),
        delta=delta,
        accountant="rdp",
        adjacency=adjacency,
        mechanism="Gaussian",
    )


def test_compose_plans_sets_the_additional_delta_apart():
    plans = [("a", _gaussian_plan(1.0, 1e-6)), ("b", _gaussian_plan(1.0, 1e-6))]
    plans[0] = (
        "a",
        PrivacyPlan(
            estimator="G",
            dp_event=plans[0][1].dp_event,
            delta=1e-6,
            accountant="rdp",
            adjacency="add_remove",
            mechanism="Gaussian",
            additional_delta=1e-6,
        ),
    )
    event, adjacency, accounting_delta, additional, epsilon = compose_plans(
        plans, 1e-5, "rdp"
    )
    assert adjacency == "add_remove" and additional == 1e-6
    assert accounting_delta == pytest.approx(9e-6)
    assert epsilon == epsilon_of(event, 9e-6, "rdp")


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_common_scale_spends_the_budget(epsilon):
    shares = {"a": 0.2, "b": 0.8}
    scale, named, composed = calibrate_scale(
        lambda path, eps, delta: _gaussian_plan(eps, delta),
        shares,
        epsilon,
        1e-5,
        "rdp",
    )
    spent = composed[-1]
    assert epsilon * (1 - 5e-3) <= spent <= epsilon
    # Two Gaussians compose to less than the sum of their epsilons.
    assert scale > 1.0
    assert dict(named)["a"].epsilon == pytest.approx(
        epsilon_of(dict(named)["a"].dp_event, 2e-6), rel=1e-12
    )


_SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow],
}


@settings(max_examples=15, **_SETTINGS)
@given(
    # Parts' epsilons of at least 0.03: below, the RDP orders (up to 1024)
    # cannot certify a Gaussian at these deltas.
    epsilon=st.floats(0.5, 8.0),
    delta=st.sampled_from([1e-6, 1e-5]),
    weights=st.lists(st.floats(0.2, 1.0), min_size=1, max_size=4),
    zcdp=st.booleans(),
)
def test_split_never_overshoots_and_spends_the_budget(epsilon, delta, weights, zcdp):
    # Gaussian parts, the first one a zCDP part (as a private quantile's).
    shares = {f"p{i}": w / sum(weights) for i, w in enumerate(weights)}

    def plan_at(path, eps, dlt):
        plan = _gaussian_plan(eps, dlt)
        if zcdp and path == "p0":
            z = plan.dp_event.noise_multiplier
            return PrivacyPlan(
                estimator="Q",
                dp_event=dp_accounting.ZCDpEvent(1 / (2 * z * z)),
                delta=dlt,
                accountant="rdp",
                adjacency="add_remove",
                mechanism="zCDP",
            )
        return plan

    _, _, composed = calibrate_scale(plan_at, shares, epsilon, delta, "rdp")
    assert epsilon * (1 - 5e-3) <= composed[-1] <= epsilon


def _pld_gaussian_plan(epsilon, delta):
    # A step that calibrates its one Gaussian with PLD whatever the pipeline's
    # accountant (the intercept-only release, output perturbation).
    z = noise_multiplier_for_gaussian(epsilon, delta, accountant="pld")
    return PrivacyPlan(
        estimator="G",
        dp_event=gaussian_event(z),
        delta=delta,
        accountant="pld",
        adjacency="add_remove",
        mechanism="Gaussian",
    )


def test_pld_steps_compose_under_rdp_or_the_refusal_says_why():
    def plan_at(path, eps, delta):
        return _pld_gaussian_plan(eps, delta)

    # RDP reads the PLD-calibrated Gaussian above its share; a smaller share
    # brings the RDP composition within the budget.
    _, _, composed = calibrate_scale(plan_at, {"a": 1.0}, 0.05, 1e-6, "rdp")
    assert 0.05 * (1 - 5e-3) <= composed[-1] <= 0.05
    assert composed[-1] == epsilon_of(composed[0], 1e-6, "rdp")
    # Below what RDP certifies for noise multipliers up to 1e5 (about 0.0058
    # at delta 1e-6), no share helps: a ValueError that names the accountant,
    # not the step's error at a vanishing share alone.
    with pytest.raises(ValueError, match=r"RDP accountant reads.*accountant='pld' can"):
        calibrate_scale(plan_at, {"a": 1.0}, 0.005, 1e-6, "rdp")
    _, _, composed = calibrate_scale(plan_at, {"a": 1.0}, 0.005, 1e-6, "pld")
    assert composed[-1] <= 0.005


def test_a_share_rdp_cannot_certify_names_the_accountant_that_can():
    # Four private parts at epsilon = 0.1: the imputer's 5% share (0.005 at
    # a small delta) is below what RDP certifies alone; PLD plans it.
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    from sklearn_dpfair import DPLogisticRegression
    from sklearn_dpfair.pipeline import PrivatePipeline
    from sklearn_dpfair.preprocessing import (
        DPOneHotEncoder,
        DPSimpleImputer,
        DPStandardScaler,
    )

    bounds = [(17, 90), (1, 99)]

    def pipe(accountant):
        numeric = Pipeline([
            ("impute", DPSimpleImputer(bounds=bounds)),
            ("scale", DPStandardScaler(bounds=bounds)),
        ])
        columns = ColumnTransformer(
            [("num", numeric, ["age", "hours"]), ("cat", DPOneHotEncoder(), ["sex"])]
        )
        return PrivatePipeline(
            [("columns", columns), ("model", DPLogisticRegression(classes=[0, 1]))],
            epsilon=0.1, delta=1e-5, accountant=accountant,
        )

    names = ["age", "hours", "sex"]
    with pytest.raises(ValueError, match=r"cannot be split.*accountant='pld' can"):
        pipe("rdp").privacy_plan(32561, 3, feature_names=names)
    assert pipe("pld").privacy_plan(32561, 3, feature_names=names).epsilon <= 0.1
