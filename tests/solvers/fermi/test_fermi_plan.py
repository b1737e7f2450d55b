# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The release plan of a FERMI fit: weight-selection stages, key, event, check."""

from dataclasses import replace

import numpy as np
import pytest

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair._solvers.fermi import _fit, _weight_search
from sklearn_dpfair._solvers.fermi._fit import FERMIParams, fit_fermi
from sklearn_dpfair._solvers.fermi._plan import (
    FERMIPlanKey,
    fermi_plan,
    fermi_plan_key,
    plan_from_key,
)
from sklearn_dpfair._solvers.fermi._privacy import FairPrivacy
from sklearn_dpfair._solvers.fermi._weight_search import (
    PRIVATE_BOUND_WEIGHTS,
    selection_schedule,
)
from sklearn_dpfair.exceptions import PrivacyAccountingError
from sklearn_dpfair.fairness import DemographicParity
from sklearn_dpfair.privacy import PrivacyBudget

GROUPS = np.array([0, 1])


@pytest.mark.parametrize("n_steps", range(1, 41))
def test_selection_stages_divide_exactly_the_accounted_steps(n_steps):
    s = selection_schedule(n_steps, epochs=3)
    k = min(len(PRIVATE_BOUND_WEIGHTS), n_steps)
    # Every stage runs (at least one step), and no step beyond T runs.
    assert s.n_steps == sum(s.stage_steps) + s.rest_steps == n_steps
    assert s.n_candidates == len(s.stage_steps) == k
    assert min(s.stage_steps) >= 1 and s.rest_steps >= 0
    # Candidates: increasing weights of the path, its ends kept.
    assert set(s.weights) <= set(PRIVATE_BOUND_WEIGHTS)
    assert list(s.weights) == sorted(set(s.weights))
    assert s.weights[0] == 0.0
    if k > 1:
        assert s.weights[-1] == PRIVATE_BOUND_WEIGHTS[-1]


def test_long_schedules_keep_every_candidate_and_spend_every_step_on_them():
    # The chosen candidate is returned as it was measured: no step runs
    # after the selection, so its released disparity describes the model.
    s = selection_schedule(100, epochs=10)
    assert s.weights == PRIVATE_BOUND_WEIGHTS
    assert sum(s.stage_steps) == 100 and s.rest_steps == 0


@pytest.mark.parametrize("max_weight", [1.0, 20.0, 64.0, 256.0])
def test_candidates_reach_the_public_maximum_weight(max_weight):
    s = selection_schedule(100, epochs=10, max_weight=max_weight)
    assert s.weights[0] == 0.0 and s.weights[-1] == max_weight
    assert list(s.weights) == sorted(set(s.weights))
    key = FERMIPlanKey(
        True, 0.5, 100, 10, active=True, bounded=True, max_weight=max_weight
    )
    plan = plan_from_key(key, PrivacyBudget(1.0, 1e-5))
    assert plan.selection.weights == s.weights
    assert plan.n_candidates == len(s.weights)


@pytest.mark.parametrize("n_steps", [0, -1])
def test_a_selection_needs_a_step(n_steps):
    with pytest.raises(ValueError, match="at least one step"):
        selection_schedule(n_steps, epochs=1)


# The public shape of the planned fits (FERMIParams' small_budget="fit": no
# intercept-only decision).
_SHAPE = dict(n_features=3, n_classes=2)


def _params(**kwargs):
    return FERMIParams(constraint=DemographicParity(), **kwargs)


@pytest.mark.parametrize(
    "batch_size, epochs", [(1000, 1), (1000, 2), (1000, 3), ("full", 5), (100, 2)]
)
def test_plan_event_counts_every_step_and_the_selection(batch_size, epochs):
    privacy = FairPrivacy(PrivacyBudget(2.0, 1e-5))
    params = _params(disparity_bound=0.05, batch_size=batch_size, epochs=epochs)
    plan = fermi_plan(privacy, params, n_samples=300, n_groups=2, **_SHAPE)
    hist, sgda, selection = plan.event.events
    assert sgda.count == plan.n_steps == plan.selection.n_steps
    assert selection.noise_multiplier == plan.noise.selection > 0
    assert hist.noise_multiplier == plan.noise.marginal > 0
    assert plan.n_candidates == min(len(PRIVATE_BOUND_WEIGHTS), plan.n_steps)


def test_plan_key_holds_everything_but_the_budget():
    params = _params(disparity_bound=0.05, batch_size=100, epochs=2)
    key = fermi_plan_key(
        FairPrivacy(PrivacyBudget(1.0, 1e-5)),
        params,
        n_samples=300,
        n_groups=2,
        **_SHAPE,
    )
    other = fermi_plan_key(
        FairPrivacy(PrivacyBudget(3.0, 1e-6, "pld")),
        params,
        n_samples=300,
        n_groups=2,
        **_SHAPE,
    )
    assert key == other and hash(key) == hash(other)
    budget = PrivacyBudget(2.0, 1e-5)
    # The fit's plan is the key's, plus the public shape it runs on.
    assert replace(plan_from_key(key, budget), shape=(300, 3, 2, 2)) == fermi_plan(
        FairPrivacy(budget), params, n_samples=300, n_groups=2, **_SHAPE
    )
    # Without groups there is neither a fairness term nor a selection.
    alone = fermi_plan_key(
        FairPrivacy(budget), params, n_samples=300, n_groups=1, **_SHAPE
    )
    assert not (alone.active or alone.bounded)
    non_private = fermi_plan_key(None, params, n_samples=300, n_groups=2, **_SHAPE)
    assert non_private.private is False


def test_non_private_plan_releases_nothing():
    key = FERMIPlanKey(False, 1.0, 3, 3, active=True, bounded=True)
    plan = plan_from_key(key, None)
    assert plan.noise.effective == 0.0 and plan.n_candidates == 3


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + codes[:, None]
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.5).astype(np.intp)
    return X, y, codes


def test_a_fit_that_runs_an_unaccounted_step_returns_nothing(monkeypatch):
    # A weight search that ran one step more than its schedule: the fit
    # must raise, not return a model whose record undercounts.
    original = _weight_search.selection_schedule

    def one_more(n_steps, epochs):
        s = original(n_steps, epochs)
        stages = (s.stage_steps[0] + 1, *s.stage_steps[1:])
        return type(s)(s.weights, stages, s.stage_epochs, s.rest_steps, s.rest_epochs)

    X, y, codes = _data()
    params = _params(disparity_bound=0.05, batch_size=1000, epochs=2, clip_norm=1.0)
    privacy = FairPrivacy(PrivacyBudget(2.0, 1e-5))
    plan = fermi_plan(
        privacy, params, n_samples=X.shape[0], n_groups=2, n_features=X.shape[1],
        n_classes=2,
    )
    fit = fit_fermi(
        X, y, codes, GROUPS, plan, params, rng=np.random.default_rng(0),
        privacy=privacy,
    )
    assert fit.record.steps == 2

    def run_more(problem, bound, common, *, schedule, tables, rng):
        return original_selection(
            problem, bound, common, schedule=one_more(2, 2), tables=tables, rng=rng
        )

    original_selection = _fit.private_selection
    monkeypatch.setattr(_fit, "private_selection", run_more)
    est = DPFERMIClassifier(
        epsilon=2.0, disparity_bound=0.05, batch_size=1000, max_iter=2,
        clip_norm=1.0, classes=[0, 1], groups=list(GROUPS),
    )
    with pytest.raises(PrivacyAccountingError, match="3 x gaussian"):
        est.fit(X, y, sensitive_features=codes)
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("private", [False, True])
@pytest.mark.parametrize(
    "planned",
    [
        dict(n_samples=299, n_groups=2, n_features=4),
        dict(n_samples=300, n_groups=2, n_features=5),
        dict(n_samples=300, n_groups=3, n_features=4),
    ],
)
def test_fit_fermi_refuses_data_of_another_shape_than_planned(private, planned):
    # The plan is made from public (n, d, groups, classes) before the data
    # are read; running it on other data would release what was never
    # accounted, so the solver refuses before reading a row.
    X, y, codes = _data()
    params = _params(batch_size=100, epochs=1)
    privacy = FairPrivacy(PrivacyBudget(2.0, 1e-5)) if private else None
    plan = fermi_plan(privacy, params, n_classes=2, **planned)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(PrivacyAccountingError, match="planned for"):
        fit_fermi(X, y, codes, GROUPS, plan, params, rng=rng, privacy=privacy)
    assert rng.bit_generator.state == state


def test_a_plan_made_from_a_key_alone_cannot_be_run():
    # A search plans candidates from keys; such a plan has no shape and
    # must not be executable.
    X, y, codes = _data()
    params = _params(batch_size=100, epochs=1)
    key = fermi_plan_key(None, params, n_samples=300, n_groups=2, **_SHAPE)
    with pytest.raises(PrivacyAccountingError, match="planned for"):
        fit_fermi(
            X, y, codes, GROUPS, plan_from_key(key, None), params,
            rng=np.random.default_rng(0),
        )


@pytest.mark.parametrize("disparity_bound", [None, 0.05])
def test_estimator_runs_the_plan_it_makes_once(monkeypatch, disparity_bound):
    # fit and privacy_plan share one method; fit calls it once and runs it.
    from sklearn_dpfair.linear_model import _fermi as estimator_module

    X, y, codes = _data()
    made = []
    original = estimator_module.fermi_plan

    def spy(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(estimator_module, "fermi_plan", spy)
    est = DPFERMIClassifier(
        epsilon=2.0, disparity_bound=disparity_bound, batch_size=100,
        max_iter=2, clip_norm=1.0, classes=[0, 1], groups=list(GROUPS),
        random_state=0,
    ).fit(X, y, sensitive_features=codes)
    assert len(made) == 1
    assert made[0].shape == (300, 4, 2, 2)
    assert made[0].event == est.dp_event_
    assert est.privacy_plan(300, 4).dp_event == est.dp_event_


def test_private_plan_refuses_a_diverging_penalty_step():
    # learning_rate * alpha >= 2: the model step multiplies the weights by
    # 1 - learning_rate * alpha (1e13 at alpha = 5 with the default 0.5).
    est = DPFERMIClassifier(alpha=5.0, classes=[0, 1], groups=[0, 1])
    with pytest.raises(ValueError, match="learning_rate=0.5, alpha=5.0"):
        est.privacy_plan(3000, 3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="learning_rate \\* alpha"):
        est.fit(X, y, sensitive_features=rng.integers(0, 2, 3000))
    DPFERMIClassifier(alpha=3.9, classes=[0, 1], groups=[0, 1]).privacy_plan(3000, 3)


@pytest.mark.parametrize("groups", [[np.nan, 0, 1], [None, 0, 1]])
def test_plan_and_fit_refuse_a_missing_declared_group(groups):
    # A missing sensitive value is refused in the data; declared as a group
    # it named a group no row can hold (its marginal floored) instead.
    est = DPFERMIClassifier(epsilon=1.0, classes=[0, 1], groups=groups)
    with pytest.raises(ValueError, match="groups contains a missing label"):
        est.privacy_plan(300, 3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="groups contains a missing label"):
        est.fit(X, y, sensitive_features=rng.integers(0, 2, 300))
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("private", [True, False])
def test_a_schedule_beyond_the_step_cap_is_refused_naming_max_iter(private):
    # The descent-ascent loop runs every planned step in Python, with or
    # without noise: max_iter=10**7 epochs planned ~2e7 steps and hung.
    match = r"max_iter=10000000 epochs .*pass a smaller max_iter"
    X = np.zeros((20, 2))
    y = s = np.arange(20) % 2
    if private:
        est = DPFERMIClassifier(epsilon=1.0, max_iter=10**7)
        with pytest.raises(ValueError, match=match):
            est.privacy_plan(2000, 3, n_groups=2)
    else:
        est = FERMIClassifier(max_iter=10**7)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, sensitive_features=s)
