# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivacyBudget: the one set-up of every fit (mechanism, record, budget check)."""

import dataclasses
import math

import dp_accounting
import numpy as np
import pytest

from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.privacy import (
    GaussianMechanism,
    PrivacyBudget,
    calibrate_noise_multiplier,
    epsilon_of,
)
from sklearn_dpfair.privacy._accounting import gaussian_event, noisy_sgd_event


def test_budget_is_frozen_and_flags_follow_its_inputs():
    budget = PrivacyBudget(1.0, 1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        budget.epsilon = 2.0
    assert budget.is_private and budget.is_calibrated
    assert not PrivacyBudget(math.inf, 1e-5).is_private
    user = PrivacyBudget(math.inf, 1e-5, noise_multiplier=2.0)
    assert user.is_private and not user.is_calibrated


def test_gaussian_calibrates_for_the_sampling_rate_and_steps():
    mech = PrivacyBudget(2.0, 1e-5, "rdp").gaussian(
        0.5, sampling_probability=0.02, steps=500
    )
    assert mech.clip_norm == 0.5
    assert mech.noise_multiplier == calibrate_noise_multiplier(2.0, 1e-5, 0.02, 500)
    spent = epsilon_of(noisy_sgd_event(mech.noise_multiplier, 0.02, 500), 1e-5)
    assert spent <= 2.0


def test_gaussian_takes_the_users_noise_as_given():
    mech = PrivacyBudget(1.0, 1e-5, noise_multiplier=0.7).gaussian(3.0, steps=10)
    assert mech == GaussianMechanism(clip_norm=3.0, noise_multiplier=0.7)


def test_gaussian_without_privacy_neither_clips_nor_adds_noise():
    mech = PrivacyBudget(math.inf, 1e-5).gaussian(1.0, sampling_probability=0.1)
    assert math.isinf(mech.clip_norm) and mech.noise_multiplier == 0.0


def test_account_records_the_mechanisms_event_and_the_budgets_caveats():
    budget = PrivacyBudget(1.0, 1e-5, "rdp", caveats=("public n",))
    mech = budget.gaussian(1.0, sampling_probability=0.01, steps=1000)
    rec = budget.account(
        mech,
        description="DP-SGD",
        adjacency="add_remove",
        sampling_probability=0.01,
        steps=1000,
        caveats=("weights public",),
    )
    assert rec.dp_event == mech.event(sampling_probability=0.01, steps=1000)
    assert rec.noise_multiplier == mech.noise_multiplier
    assert rec.clip_norm == 1.0
    assert rec.sampling_probability == 0.01 and rec.steps == 1000
    assert rec.caveats == ("public n", "weights public")
    assert rec.accountant == "rdp" and rec.delta == 1e-5
    assert rec.epsilon == pytest.approx(rec.recompute_epsilon(), rel=1e-12)
    assert rec.epsilon <= 1.0


def test_account_uses_a_given_event_and_accountant_override():
    budget = PrivacyBudget(1.0, 1e-5, "rdp")
    mech = GaussianMechanism(clip_norm=0.2, noise_multiplier=4.0)
    rec = budget.account(
        mech,
        description="one Gaussian",
        adjacency="replace_one",
        dp_event=gaussian_event(4.0),
        accountant="pld",
    )
    assert rec.accountant == "pld"
    assert rec.dp_event == dp_accounting.GaussianDpEvent(4.0)
    assert rec.epsilon == epsilon_of(gaussian_event(4.0), 1e-5, "pld")
    assert rec.steps is None and rec.sampling_probability is None


def test_account_blames_the_user_only_for_the_users_noise():
    user = PrivacyBudget(1.0, 1e-5, noise_multiplier=0.5)
    with pytest.raises(PrivacyBudgetError, match="Raise noise_multiplier"):
        user.account(user.gaussian(1.0), description="x", adjacency="add_remove")
    library = PrivacyBudget(1.0, 1e-5)
    too_little = GaussianMechanism(clip_norm=1.0, noise_multiplier=0.5)
    with pytest.raises(PrivacyBudgetError, match="this is a bug"):
        library.account(too_little, description="x", adjacency="add_remove")


def test_account_without_privacy_records_infinite_epsilon():
    budget = PrivacyBudget(math.inf, 1e-5)
    rec = budget.account(
        budget.gaussian(1.0), description="plain SGD", adjacency="add_remove"
    )
    assert math.isinf(rec.epsilon) and rec.noise_multiplier == 0.0


def test_split_parts_compose_within_the_budget():
    from sklearn_dpfair.privacy._accounting import composed_event, epsilon_of
    from sklearn_dpfair.privacy._zcdp import rho_for_epsilon

    budget = PrivacyBudget(1.0, 1e-5, "pld")
    parts = budget.split({"scales": 0.1, "steps": 0.6, "intercept": 0.3})
    rho = rho_for_epsilon(1.0, 1e-5)
    assert sum(p.rho for p in parts.values()) == pytest.approx(rho, rel=1e-12)
    assert all(p.accountant == "rdp" for p in parts.values())
    # Each part's Gaussians, calibrated to its rho, compose within (1, 1e-5).
    events = [
        parts["scales"].gaussian(1.0).event(),
        parts["steps"].gaussian(1.0, steps=5).event(steps=5),
        parts["intercept"].gaussian(2.0).event(),
    ]
    assert epsilon_of(composed_event(events), 1e-5, "rdp") <= 1.0
    # A part alone certifies less than the whole.
    assert parts["scales"].epsilon < parts["steps"].epsilon < 1.0
    assert parts["steps"].gaussian(1.0, steps=5).noise_multiplier == pytest.approx(
        math.sqrt(5 / (2 * 0.6 * rho))
    )


@pytest.mark.parametrize(
    "shares, match",
    [({"a": 0.7, "b": 0.4}, "sum to at most 1"), ({"a": -0.1}, "lie in")],
)
def test_split_refuses_bad_shares(shares, match):
    with pytest.raises(ValueError, match=match):
        PrivacyBudget(1.0, 1e-5).split(shares)


def test_split_of_a_non_private_or_user_noise_budget():
    parts = PrivacyBudget(math.inf, 1e-5).split({"a": 0.5, "b": 0.5})
    assert all(math.isinf(p.rho) and math.isinf(p.epsilon) for p in parts.values())
    assert parts["a"].gaussian(1.0).noise_multiplier == 0.0
    with pytest.raises(ValueError, match="noise_multiplier"):
        PrivacyBudget(1.0, 1e-5, noise_multiplier=2.0).split({"a": 1.0})
    with pytest.raises(ValueError, match="subsampling"):
        PrivacyBudget(1.0, 1e-5).split({"a": 1.0})["a"].gaussian(
            1.0, sampling_probability=0.1
        )


@pytest.mark.parametrize(
    "epsilon, delta, match",
    [
        (math.nan, 1e-5, "epsilon must be > 0"),
        (0.0, 1e-5, "epsilon must be > 0"),
        (-1.0, 1e-5, "epsilon must be > 0"),
        (1.0, math.nan, r"delta must be a number in \[0, 1\)"),
        (1.0, 1.0, r"delta must be a number in \[0, 1\)"),
        (1.0, -1e-9, r"delta must be a number in \[0, 1\)"),
    ],
)
def test_an_invalid_budget_is_refused(epsilon, delta, match):
    # A NaN delta calibrated the least noise and its record claimed epsilon 0.
    with pytest.raises(ValueError, match=match):
        PrivacyBudget(epsilon, delta)


def test_the_budgets_the_estimators_make_are_accepted():
    assert not PrivacyBudget(math.inf, 1e-5).is_private
    assert PrivacyBudget(2.0, 0.0).laplace(1.0).noise_multiplier == 0.5  # pure
    # A part of a split that gets no share holds no budget.
    part = PrivacyBudget(1.0, 1e-5).split({"none": 0.0, "all": 1.0})["none"]
    assert part.epsilon == 0.0 and part.rho == 0.0
    # A share so small that dp-accounting converts its rho to epsilon 0 (a
    # small budget's private column scales): its guarantee is its rho.
    tiny = PrivacyBudget(0.001, 1e-5).split({"scales": 0.1})["scales"]
    assert tiny.epsilon == 0.0 and tiny.rho > 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"noise_multiplier": math.nan}, "noise_multiplier"),
        ({"noise_multiplier": -1.0}, "noise_multiplier"),
        ({"rho": math.nan}, "rho"),
        ({"rho": -0.1}, "rho"),
    ],
)
def test_a_malformed_noise_or_rho_is_refused(kwargs, match):
    # PrivacyBudget(noise_multiplier=nan) recorded epsilon 0: RDP reads a
    # Gaussian of NaN noise as no privacy loss at all.
    with pytest.raises(ValueError, match=f"{match} must be a number in"):
        PrivacyBudget(1.0, 1e-5, **kwargs)


@pytest.mark.parametrize("steps", [0, 0.5, 0.01, -1, True, 2.5])
def test_laplace_refuses_steps_that_would_underspend_the_noise(steps):
    # laplace() did not check steps: 0 steps gave a mechanism of no noise
    # under epsilon=1 (its sum released exactly), 0.01 steps 1/100 of the
    # noise each release needs.
    with pytest.raises(ValueError, match="^steps must be"):
        PrivacyBudget(1.0, 0.0).laplace(1.0, steps=steps)


def test_laplace_of_zero_steps_needs_no_noise_only_without_privacy():
    mechanism = PrivacyBudget(math.inf, 0.0).laplace(1.0, steps=0)
    assert mechanism.noise_multiplier == 0.0
    assert PrivacyBudget(2.0, 0.0).laplace(1.0, steps=4).noise_multiplier == 2.0


def test_a_split_part_refuses_a_laplace_mechanism():
    # A part's epsilon is what its rho certifies at delta: as a pure epsilon
    # it would spend ~epsilon^2 / 2 of zCDP, far beyond the part's rho.
    part = PrivacyBudget(1.0, 1e-5).split({"a": 0.5, "b": 0.5})["a"]
    with pytest.raises(ValueError, match="split budget.*Laplace"):
        part.laplace(1.0)
    assert PrivacyBudget(1.0, 0.0).laplace(1.0).noise_multiplier == 1.0


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize(
    "kwargs",
    [{"steps": 0.5}, {"steps": 2.9}, {"steps": -1}, {"sampling_probability": math.nan},
     {"sampling_probability": 1.5}, {"sampling_probability": 0.0}],
)
def test_gaussian_refuses_steps_and_rates_the_event_would_not_state(split, kwargs):
    # int() would truncate 0.5 steps to none (a part of a split then divides
    # its rho by zero) and a NaN rate would be read as a full batch.
    budget = PrivacyBudget(1.0, 1e-5)
    if split:
        budget = budget.split({"a": 0.5, "b": 0.5})["a"]
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        budget.gaussian(1.0, **kwargs)


def test_a_split_part_refuses_zero_steps():
    part = PrivacyBudget(1.0, 1e-5).split({"a": 0.5, "b": 0.5})["a"]
    with pytest.raises(ValueError, match="steps"):
        part.gaussian(1.0, steps=0)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_a_laplace_budget_with_delta_passes_its_own_check(accountant):
    # laplace() spends epsilon / steps per release: (epsilon, 0)-DP, hence
    # (epsilon, delta)-DP. RDP's conversion of the releases at delta > 0 is
    # above the pure epsilon, and the check called its own fit a bug.
    budget = PrivacyBudget(1.0, 1e-5, accountant=accountant)
    mechanism = budget.laplace(1.0, steps=4)
    record = budget.account(
        mechanism,
        description="Laplace",
        adjacency="add_remove",
        dp_event=mechanism.event(steps=4),
    )
    assert record.epsilon <= 1.0
    assert record.recompute_epsilon() == record.epsilon


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_account_asks_a_laplace_mechanism_for_its_event(delta):
    # account() without dp_event asked every mechanism for
    # event(sampling_probability=..., steps=...), which the Laplace
    # mechanism's event did not take: a TypeError for the documented path.
    budget = PrivacyBudget(1.0, delta)
    mechanism = budget.laplace(1.0, steps=4)
    record = budget.account(
        mechanism, description="Laplace", adjacency="add_remove", steps=4
    )
    assert record.dp_event == mechanism.event(steps=4)
    assert record.epsilon == pytest.approx(1.0)
    assert record.recompute_epsilon() == record.epsilon


def test_account_refuses_a_subsampled_laplace_mechanism():
    # Its pure-epsilon event is that of releases over every record.
    budget = PrivacyBudget(1.0, 0.0)
    mechanism = budget.laplace(1.0, steps=4)
    with pytest.raises(ValueError, match="sampling_probability must be 1"):
        budget.account(
            mechanism,
            description="Laplace",
            adjacency="add_remove",
            steps=4,
            sampling_probability=0.5,
        )


def test_numpy_and_int_budgets_are_read_as_python_floats():
    # A float32 delta kept its shares in float32 (1e-45 * 0.5 rounded to 0)
    # and an int of 10**30 broke numpy's isfinite.
    budget = PrivacyBudget(
        np.float32(0.5), np.float32(1e-5), noise_multiplier=np.int64(2)
    )
    assert type(budget.epsilon) is float and budget.epsilon == 0.5
    assert type(budget.delta) is float and budget.delta == float(np.float32(1e-5))
    assert type(budget.noise_multiplier) is float
    assert PrivacyBudget(10**30, 1e-5).epsilon == 1e30
    with pytest.raises(ValueError, match="^epsilon is beyond the largest float"):
        PrivacyBudget(10**400, 1e-5)
    with pytest.raises(TypeError, match="^delta must be a real number, got str"):
        PrivacyBudget(1.0, "1e-5")


@pytest.mark.parametrize("accountant", ["foo", None, "RDP"])
def test_an_unknown_accountant_is_refused_when_the_budget_is_made(accountant):
    # A pure (Laplace) budget never reaches the accountant: its record
    # carried accountant='foo' with epsilon 2.
    with pytest.raises(ValueError, match="accountant must be one of"):
        PrivacyBudget(2.0, 0.0, accountant=accountant)
