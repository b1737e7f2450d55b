# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""fit_semidp directly: the privacy set-up, the record and who is blamed."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair import SemiDPLinearRegression
from sklearn_dpfair._solvers.semi_dp import (
    SemiDPParams,
    public_hyperparameters,
    semidp_noise_multiplier,
    semidp_setup,
)
from sklearn_dpfair._solvers.semi_dp import fit_semidp as _fit_planned
from sklearn_dpfair.privacy._record import weights_caveats
from sklearn_dpfair._solvers.semi_dp import _fit as semidp_fit
from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.privacy import PrivacyBudget, calibrate_noise_multiplier
from sklearn_dpfair.privacy._accounting import (
    epsilon_of,
    gaussian_event,
    no_op_event,
    noisy_sgd_event,
)


def fit_semidp(X, y, mask, params, *, rng, sample_weight=None):
    """The fit of the set-up planned for these counts (as the estimator runs it)."""
    n_public = int(mask.sum())
    setup = semidp_setup(
        params,
        n_private=params.private_count(len(y) - n_public),
        n_public=n_public,
        n_features=X.shape[1],
        caveats=weights_caveats(sample_weight),
    )
    return _fit_planned(X, y, mask, setup, rng=rng, sample_weight=sample_weight)


def test_a_fit_refuses_counts_other_than_planned():
    from sklearn_dpfair.exceptions import PrivacyAccountingError

    X, y, mask = _problem()
    params = SemiDPParams(budget=PrivacyBudget(1.0, 1e-5, "pld"))
    setup = semidp_setup(
        params, n_private=1300, n_public=201, n_features=X.shape[1]
    )  # the data hold 200 public rows
    with pytest.raises(PrivacyAccountingError, match="planned for"):
        _fit_planned(X, y, mask, setup, rng=np.random.default_rng(0))


def _problem(n=1500, d=4, n_pub=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ np.linspace(-1.0, 1.0, d) + 0.5 + 0.3 * rng.standard_normal(n)
    return X, y, np.arange(n) < n_pub


def _fit(solver="semidp-gd", epsilon=1.0, budget=None, **kwargs):
    X, y, mask = _problem()
    budget = budget or PrivacyBudget(epsilon, 1e-5, "pld")
    params = SemiDPParams(budget=budget, solver=solver, **kwargs)
    return fit_semidp(X, y, mask, params, rng=np.random.default_rng(0))


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_full_batch_noise_is_the_single_calibration_composed(accountant):
    # T Gaussians of multiplier z are one Gaussian of z / sqrt(T) (GDP).
    budget = PrivacyBudget(0.7, 1e-5, accountant)
    single = calibrate_noise_multiplier(0.7, 1e-5, 1.0, 1, accountant)
    for steps in (1, 10, 40):
        z = semidp_noise_multiplier(budget, 1.0, steps)
        assert z == math.sqrt(steps) * single
        spent = epsilon_of(noisy_sgd_event(z, 1.0, steps), 1e-5, accountant)
        assert spent <= 0.7 * (1 + 1e-9)


def test_subsampled_noise_is_calibrated_on_the_subsampled_event():
    budget = PrivacyBudget(1.0, 1e-5, "rdp")
    assert semidp_noise_multiplier(budget, 0.1, 50) == calibrate_noise_multiplier(
        1.0, 1e-5, 0.1, 50, "rdp"
    )
    assert semidp_noise_multiplier(PrivacyBudget(math.inf, 1e-5), 0.1, 50) == 0.0
    fixed = PrivacyBudget(1.0, 1e-5, noise_multiplier=3.0)
    assert semidp_noise_multiplier(fixed, 1.0, 20) == 3.0


@pytest.mark.parametrize(
    "solver, kwargs",
    [
        ("semidp-gd", {}),
        ("semidp-gd", {"adjacency": "add_remove", "preconditioner": None}),
        ("semidp-sgd", {"adjacency": "add_remove", "batch_size": 200}),
        ("dp-gd", {}),
        ("pda-md", {"max_iter": 5}),
    ],
)
def test_record_is_the_event_given_to_the_accountant(solver, kwargs):
    fit = _fit(solver, **kwargs)
    rec = fit.record
    q = 1.0 if rec.sampling_probability is None else rec.sampling_probability
    if q < 1.0:
        assert rec.dp_event == noisy_sgd_event(rec.noise_multiplier, q, rec.steps)
    else:
        # Full batch: T Gaussian steps of multiplier z sqrt(T) are accounted
        # as the one Gaussian of multiplier z they compose to (Gaussian DP),
        # z being the one-release calibration, whatever T.
        single = semidp_noise_multiplier(PrivacyBudget(1.0, 1e-5, "pld"), 1.0, 1)
        assert rec.dp_event == gaussian_event(single)
        assert rec.noise_multiplier == pytest.approx(single * math.sqrt(rec.steps))
    # The record's epsilon is recomputed from its own event, within budget.
    assert rec.recompute_epsilon() == rec.epsilon
    assert rec.epsilon <= 1.0 * (1 + 1e-9)
    assert rec.steps == fit.n_steps
    factor = 2.0 if kwargs.get("adjacency", "replace_one") == "replace_one" else 1.0
    assert rec.clip_norm == factor * 1.0
    assert rec.adjacency == kwargs.get("adjacency", "replace_one")
    assert rec.noise_multiplier == semidp_noise_multiplier(
        PrivacyBudget(1.0, 1e-5, "pld"), q, rec.steps
    )


def test_public_only_releases_nothing_private():
    rec = _fit("public-only").record
    assert rec.dp_event == no_op_event()
    assert rec.epsilon == 0.0 and rec.steps == 0
    assert rec.clip_norm is None and rec.noise_multiplier == 0.0


def test_infinite_epsilon_records_no_clipping_and_no_noise():
    fit = _fit("semidp-gd", epsilon=math.inf)
    assert fit.record.epsilon == math.inf
    assert fit.record.noise_multiplier == 0.0
    assert fit.record.clip_norm == math.inf


def test_weights_add_their_caveat():
    X, y, mask = _problem()
    params = SemiDPParams(budget=PrivacyBudget(1.0, 1e-5, "pld"))
    w = np.linspace(0.5, 2.0, X.shape[0])
    fit = fit_semidp(X, y, mask, params, rng=np.random.default_rng(0), sample_weight=w)
    assert any("sample_weight is public" in c for c in fit.record.caveats)
    plain = fit_semidp(X, y, mask, params, rng=np.random.default_rng(0))
    assert plain.record.caveats == ()


def test_overspending_calibration_blames_the_library(monkeypatch):
    # A calibration bug (noise too small for the budget) must not pass
    # silently: budget.account checks the composed event and, since the
    # library chose the noise, says it is a bug.
    monkeypatch.setattr(
        semidp_fit, "semidp_noise_multiplier", lambda budget, q, steps: 0.5
    )
    with pytest.raises(PrivacyBudgetError, match="this is a bug"):
        _fit("semidp-gd")


def test_overspending_user_noise_blames_the_user():
    budget = PrivacyBudget(1.0, 1e-5, "pld", noise_multiplier=0.5)
    with pytest.raises(PrivacyBudgetError, match="requested noise_multiplier"):
        _fit("semidp-gd", budget=budget)


def test_public_hyperparameters_reads_public_rows_only():
    X, y, mask = _problem()
    params = SemiDPParams(budget=PrivacyBudget(1.0, 1e-5, "pld"))
    geometry, choice = public_hyperparameters(
        X[mask], y[mask], n_private=int((~mask).sum()), params=params
    )
    assert geometry.n_public == mask.sum()
    assert 0.0 < choice.alpha <= 1.0 and choice.max_iter in (10, 20, 40)
    # The estimator's "auto" choice on the same rows is the same choice.
    fit = fit_semidp(X, y, mask, params, rng=np.random.default_rng(0))
    assert (fit.alpha, fit.learning_rate, fit.n_steps) == (
        choice.alpha, choice.learning_rate, choice.max_iter,
    )


def test_params_are_frozen_and_derive_the_sensitivity():
    params = SemiDPParams(budget=PrivacyBudget(1.0, 1e-5), clip_norm=3.0)
    assert params.sensitivity == 6.0
    assert SemiDPParams(
        budget=PrivacyBudget(1.0, 1e-5), clip_norm=3.0, adjacency="add_remove"
    ).sensitivity == 3.0
    assert SemiDPParams(budget=PrivacyBudget(math.inf, 1e-5)).sensitivity == math.inf
    with pytest.raises(AttributeError):
        params.clip_norm = 1.0


@pytest.mark.parametrize("clip_norm", [1e-160, 1e-300])
@pytest.mark.parametrize("solver", ["semidp-gd", "dp-gd"])
def test_clip_norm_whose_inverse_square_overflows_is_refused_by_plan_and_fit(
    clip_norm, solver
):
    # The model of the clipped gradients squares 1 / C (the public
    # curvature): refused from the parameter, by the plan as by the fit,
    # rather than an OverflowError inside the tuning.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.standard_normal(400)
    mask = np.arange(400) < 100
    est = SemiDPLinearRegression(clip_norm=clip_norm, solver=solver, random_state=0)
    with pytest.raises(ValueError, match="clip_norm is too small"):
        est.privacy_plan(400, 3, n_public=100)
    with pytest.raises(ValueError, match="clip_norm is too small"):
        est.fit(X, y, public_mask=mask)
    # Near the smallest admitted clip norm (1 / C^2 near the largest
    # float) the fit runs without a warning: candidates of the tuning's
    # model that overflow rank last.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SemiDPLinearRegression(clip_norm=7.6e-155, solver=solver, random_state=0).fit(
            X, y, public_mask=mask
        )


def _rows(n, n_public=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(n)
    return X, y, np.arange(n) < n_public


@pytest.mark.parametrize("max_iter", [semidp_fit.MAX_STEPS + 1, 10**30, 10**400])
@pytest.mark.parametrize("solver", ["semidp-gd", "dp-gd", "semidp-sgd"])
def test_more_noisy_steps_than_the_cap_are_refused_by_plan_and_fit(solver, max_iter):
    # max_iter=10**30 was planned, and its fit never left the Python loop
    # of the public error model over its steps.
    est = SemiDPLinearRegression(
        solver=solver, max_iter=max_iter, adjacency="add_remove", random_state=0
    )
    # 10**400 is refused by the parameter's interval, naming it.
    match = (
        r"^max_iter.* is too large: a private fit takes at most 1000000 "
        r"|The 'max_iter' parameter"
    )
    with pytest.raises(ValueError, match=match):
        est.privacy_plan(200, 3, n_public=40)
    X, y, mask = _rows(200)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, public_mask=mask)
    assert not hasattr(est, "coef_")


def test_the_step_cap_itself_is_planned():
    plan = SemiDPLinearRegression(max_iter=semidp_fit.MAX_STEPS).privacy_plan(
        200, 3, n_public=40
    )
    assert plan.epsilon <= 1.0 + 1e-9


def test_semidp_sgd_steps_beyond_the_cap_name_batch_size():
    # 20 epochs of batches of 1 among 60,000 private rows: 1.2e6 steps.
    est = SemiDPLinearRegression(
        solver="semidp-sgd", adjacency="add_remove", batch_size=1, max_iter=20
    )
    match = r"^semidp-sgd would take 1200000 noisy steps .* batch_size"
    with pytest.raises(ValueError, match=match):
        est.privacy_plan(60_040, 3, n_public=40)
    X, y, mask = _rows(60_040)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, public_mask=mask)
    assert not hasattr(est, "coef_")
