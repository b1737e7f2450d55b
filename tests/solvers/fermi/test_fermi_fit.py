# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""fit_fermi itself: the privacy set-up, the record, the histogram, parity."""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import sklearn_dpfair.privacy._budget as budget_module
from sklearn_dpfair._solvers._schedules import sgd_schedule
from sklearn_dpfair._solvers.fermi._fit import (
    MARGINAL_BUDGET_SHARE,
    FairPrivacy,
    FERMIParams,
    fermi_event,
    fit_fermi,
)
from sklearn_dpfair._solvers.fermi._plan import fermi_plan
from sklearn_dpfair._solvers.fermi._privacy import resolve_noise
from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.fairness import DemographicParity, EqualizedOdds
from sklearn_dpfair.privacy import GaussianMechanism, PrivacyBudget, epsilon_of
from sklearn_dpfair.privacy._accounting import gaussian_event

GROUPS = np.array([0, 1])


def _data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + codes[:, None]
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.5).astype(np.intp)
    return X, y, codes


def _params(**kw):
    base = dict(
        constraint=DemographicParity(),
        fairness_weight=4.0,
        clip_norm=2.0,
        batch_size=50,
        epochs=2,
        learning_rate=0.5,
        dual_learning_rate=0.1,
        min_group_frequency=0.01,
    )
    return FERMIParams(**{**base, **kw})


def _privacy(epsilon=1.0, noise_multiplier=None, **kw):
    budget = PrivacyBudget(epsilon, 1e-5, "rdp", noise_multiplier, ("a caveat",))
    return FairPrivacy(budget=budget, **kw)


def _fit(X, y, codes, params=None, privacy=None, seed=0, **kw):
    params = params or _params()
    plan = fermi_plan(
        privacy,
        params,
        n_samples=X.shape[0],
        n_groups=len(GROUPS),
        n_features=X.shape[1],
        n_classes=2,
    )
    return fit_fermi(
        X,
        y,
        codes,
        GROUPS,
        plan,
        params,
        rng=np.random.default_rng(seed),
        privacy=privacy,
        **kw,
    )


def test_record_fields_describe_the_accounted_joint_gaussian():
    X, y, codes = _data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    fit = _fit(X, y, codes, privacy=_privacy(dual_noise_ratio=2.0), sample_weight=w)
    rec, noise = fit.record, fit.noise
    q, steps = sgd_schedule(X.shape[0], 50, 2)
    assert rec.noise_multiplier == noise.effective
    assert rec.clip_norm == pytest.approx(2.0 * math.sqrt(1 + 2.0**-2))
    assert (rec.sampling_probability, rec.steps) == (q, steps)
    assert rec.adjacency == "add_remove" and rec.accountant == "rdp"
    assert rec.caveats[0] == "a caveat" and "sample_weight" in rec.caveats[1]
    # sigma_eff = (sigma_theta^-2 + sigma_w^-2)^(-1/2), sigma_w = 2 sigma_theta.
    assert noise.dual == pytest.approx(2.0 * noise.primal)
    assert noise.effective == pytest.approx(
        (noise.primal**-2 + noise.dual**-2) ** -0.5
    )
    assert rec.dp_event == fermi_event(
        noise.effective, q, steps, noise.marginal, noise.selection
    )
    assert "noise multiplier 20" in rec.mechanism  # the automatic histogram


@pytest.mark.parametrize(
    "kw",
    [{}, {"noise_multiplier": 4.0, "epsilon": 8.0}, {"public_marginals": [0.5, 0.5]}],
)
def test_epsilon_is_recomputed_from_the_event(kw):
    X, y, codes = _data()
    fit = _fit(X, y, codes, privacy=_privacy(**kw))
    rec = fit.record
    assert rec.recompute_epsilon() == pytest.approx(rec.epsilon, rel=1e-12)
    assert epsilon_of(rec.dp_event, 1e-5, "rdp") == pytest.approx(rec.epsilon)
    assert rec.epsilon <= kw.get("epsilon", 1.0) * (1 + 1e-6)


def test_budget_split_between_histogram_and_sgda():
    X, y, codes = _data()
    eps = 0.2
    fit = _fit(X, y, codes, privacy=_privacy(epsilon=eps))
    noise, rec = fit.noise, fit.record
    # The automatic histogram spends at most its share of epsilon alone, the
    # calibrated SGDA the rest: the composition meets the budget tightly.
    hist_eps = epsilon_of(gaussian_event(noise.marginal), 1e-5, "rdp")
    assert noise.marginal > 20.0
    assert hist_eps <= MARGINAL_BUDGET_SHARE * eps * (1 + 1e-3)
    assert rec.epsilon == pytest.approx(eps, rel=1e-3)
    q, steps = sgd_schedule(X.shape[0], 50, 2)
    sgda_alone = epsilon_of(fermi_event(noise.effective, q, steps, 0.0), 1e-5, "rdp")
    assert hist_eps < eps and sgda_alone < eps
    # Declared public marginals spend nothing: no histogram in the event.
    public = _fit(X, y, codes, privacy=_privacy(epsilon=eps, public_marginals=[1, 1]))
    assert public.noise.marginal == 0.0
    assert public.noise.effective < noise.effective
    assert "histogram" not in public.record.mechanism


def test_noise_is_fixed_before_the_data():
    # resolve_noise reads public inputs only: the same for any data set.
    privacy = _privacy(epsilon=0.5)
    a = resolve_noise(privacy, 0.1, 40, active=True, bounded=False)
    b = resolve_noise(privacy, 0.1, 40, active=True, bounded=False)
    assert a == b and a.effective > 0 and a.marginal >= 20.0
    assert resolve_noise(None, 0.1, 40, active=True, bounded=False).primal == 0.0
    inf = resolve_noise(_privacy(epsilon=np.inf), 0.1, 40, active=True, bounded=True)
    assert (inf.effective, inf.marginal, inf.selection) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("noise_multiplier", [None, 3.0])
def test_budget_check_blames_the_user_only_for_their_noise(
    monkeypatch, noise_multiplier
):
    seen = []
    original = budget_module.check_budget

    def spy(record, epsilon, *, calibrated):
        seen.append(calibrated)
        return original(record, epsilon, calibrated=calibrated)

    monkeypatch.setattr(budget_module, "check_budget", spy)
    X, y, codes = _data()
    _fit(X, y, codes, privacy=_privacy(epsilon=50.0, noise_multiplier=noise_multiplier))
    assert seen == [noise_multiplier is None]


def test_overspending_user_noise_names_the_primal_multiplier():
    X, y, codes = _data()
    # sigma_theta = 0.7 gives sigma_eff = 0.7 / sqrt(2); the message names
    # the parameter the user set.
    with pytest.raises(PrivacyBudgetError, match=r"noise_multiplier=0\.7 spends"):
        _fit(X, y, codes, privacy=_privacy(epsilon=1.0, noise_multiplier=0.7))


def test_non_private_parity_at_infinite_epsilon():
    # epsilon=inf without a noise multiplier: no noise, no histogram noise,
    # and the dual clip at the box bound never binds; the fit equals the
    # non-private one with the same clip norm and seed.
    X, y, codes = _data()
    params = _params(final_phase=None)
    private = _fit(X, y, codes, params, privacy=_privacy(epsilon=np.inf))
    plain = _fit(X, y, codes, params, privacy=None)
    np.testing.assert_array_equal(private.coef, plain.coef)
    np.testing.assert_array_equal(private.intercept, plain.intercept)
    np.testing.assert_array_equal(private.group_marginals, plain.group_marginals)
    assert math.isinf(private.record.epsilon) and plain.record is None


def _histogram_inputs(monkeypatch):
    """Capture what the histogram mechanism is given, before its noise."""
    captured = []
    original = GaussianMechanism.privatize

    def spy(self, clipped_sum, rng):
        # The histogram's mechanism: sensitivity 1 and the test's histogram
        # noise multiplier (the dual's cell sums also have sensitivity 1).
        if self.clip_norm == 1.0 and self.noise_multiplier == _HISTOGRAM_Z:
            captured.append(np.array(clipped_sum, dtype=float))
        return original(self, clipped_sum, rng)

    monkeypatch.setattr(GaussianMechanism, "privatize", spy)
    return captured


_HISTOGRAM_Z = 30.0


@pytest.mark.parametrize("constraint", [DemographicParity(), EqualizedOdds()])
def test_histogram_sensitivity_on_neighbouring_datasets(monkeypatch, constraint):
    captured = _histogram_inputs(monkeypatch)
    X, y, codes = _data(n=200)
    params = _params(constraint=constraint, clip_norm=10.0)
    privacy = _privacy(marginal_noise_multiplier=_HISTOGRAM_Z, epsilon=5.0)
    for i in (0, 17, 199):
        keep = np.arange(X.shape[0]) != i
        captured.clear()
        _fit(X, y, codes, params, privacy=privacy)
        _fit(X[keep], y[keep], codes[keep], params, privacy=privacy)
        full, neighbour = captured
        diff = full - neighbour
        # Add/remove one record: one cell moves by exactly one.
        assert np.linalg.norm(diff) == pytest.approx(1.0)
        assert np.count_nonzero(diff) == 1


def test_private_histogram_counts_records_not_weights(monkeypatch):
    # A record's weight never enters the released histogram (sensitivity 1).
    captured = _histogram_inputs(monkeypatch)
    X, y, codes = _data(n=200)
    privacy = _privacy(marginal_noise_multiplier=30.0, epsilon=5.0)
    w = np.ones(X.shape[0])
    w[0] = 1e6
    _fit(X, y, codes, privacy=privacy, sample_weight=w)
    _fit(X, y, codes, privacy=privacy)
    np.testing.assert_array_equal(captured[0], captured[1])
    assert captured[0].sum() == X.shape[0]


@pytest.mark.parametrize("sparse", [False, True])
def test_full_batch_scales_weight_like_duplicated_rows(sparse):
    # The L-BFGS preconditioner of a weighted fit is that of the repeated
    # rows: before, it was unweighted, and FERMIClassifier's weighted and
    # repeated fits stopped at different points (check_sample_weight_
    # equivalence failed at its defaults).
    import scipy.sparse as sparse_module

    from sklearn_dpfair._solvers.fermi._lbfgs import column_scales

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3)) * [1.0, 10.0, 0.1]
    weights = np.array([0, 1, 2, 3] * 3, dtype=float)
    repeated = np.repeat(X, weights.astype(int), axis=0)
    wrap = sparse_module.csr_matrix if sparse else np.asarray
    np.testing.assert_allclose(
        column_scales(wrap(X), weights), column_scales(wrap(repeated)), rtol=1e-12
    )


def test_convergence_message_names_the_cause_of_the_returned_model():
    # The remedy follows the solve that produced the returned model:
    # max_full_batch_iter only when it stopped there.
    from sklearn_dpfair._solvers.fermi._fit import _not_converged

    params = _params(tol=1e-6, final_max_iter=100, fairness_weight=4.0)
    path = [{"fairness_weight": 8.0, "tol": 1e-5}]
    free = {"stationarity": 3e-6, "n_final_iter": 12}
    bounded = {**free, "fairness_weight": 8.0, "path": path, "n_final_iter": 90}

    def text(extra, name="FERMIClassifier", **diagnosis):
        options = {
            "at_limit": False,
            "unpolished": False,
            "polished": False,
            "weight_n_iter": None,
        }
        return _not_converged(name, extra, params, **{**options, **diagnosis})

    limit = text(free, at_limit=True)
    assert "after 12 L-BFGS iterations." in limit
    assert "stopped at max_full_batch_iter=100" in limit
    floor = text(free)
    assert "tol is below the precision attainable" in floor
    assert "increase max_full_batch_iter" not in floor.lower()
    overflow = text({**free, "stationarity": float(np.finfo(float).max)})
    assert "not finite" in overflow
    # Under disparity_bound: the chosen weight's own iterations (not the
    # path's 90), and a model kept at its path tolerance says so.
    kept = text(bounded, unpolished=True, polished=True, weight_n_iter=7)
    assert "after 7 L-BFGS iterations at the chosen fairness_weight_ = 8." in kept
    assert "solved to 1e-05" in kept and "fairness_weight=8 without" in kept
    assert "polishing it to tol made it worse" in kept
    # Never polished (the polishes went to other weights): not said worse.
    never = text(bounded, unpolished=True, polished=False, weight_n_iter=7)
    assert "solved to 1e-05" in never and "fairness_weight=8 without" in never
    assert "made it worse" not in never
    assert "polishes having gone to other weights" in never
    # DP-FERMI's non-private limit keeps its own remedy.
    assert "fit FERMIClassifier" in text(free, name="DPFERMIClassifier", at_limit=True)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_a_relu_network_that_stops_short_is_said_to_stall_on_its_kinks(activation):
    # L-BFGS stalls on the kinks of ReLU well above the round-off floor:
    # the remedy names the activation, not the floating-point precision.
    from sklearn_dpfair._solvers.fermi._fit import _not_converged

    params = _params(tol=1e-6, hidden_layer_sizes=(4,), activation=activation)
    message = _not_converged(
        "FERMIClassifier",
        {"stationarity": 3e-3, "n_final_iter": 200},
        params,
        at_limit=False,
        unpolished=False,
        polished=False,
        weight_n_iter=None,
    )
    relu = activation == "relu"
    assert ("activation='tanh' or 'logistic'" in message) is relu
    assert ("precision attainable" in message) is not relu
    # The iteration limit is still named as such.
    limit = _not_converged(
        "FERMIClassifier",
        {"stationarity": 3e-3, "n_final_iter": 200},
        params,
        at_limit=True,
        unpolished=False,
        polished=False,
        weight_n_iter=None,
    )
    assert "stopped at max_full_batch_iter" in limit


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_column_scales_of_entries_whose_squares_overflow(sparse, weighted):
    # A row near 1e300 overflowed its column's sum of squares: the scale fell
    # back to 1, and L-BFGS's first unit step moved that row's logit by
    # ~1e300 (FERMIClassifier stopped after 0 iterations, unconverged).
    import scipy.sparse as sp

    from sklearn_dpfair._solvers.fermi._lbfgs import column_scales

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X[3, :2] = 1e300
    weights = rng.uniform(0.5, 2.0, size=50) if weighted else None
    wrap = sp.csr_matrix if sparse else np.asarray
    # The same columns in units 1e290 times larger, whose squares do not
    # overflow, give the reference; the third column is left as it was.
    small = X.copy()
    small[:, :2] /= 1e290
    expected = column_scales(small, weights) * np.array([1e290, 1e290, 1.0])
    np.testing.assert_allclose(column_scales(wrap(X), weights), expected, rtol=1e-12)


def test_a_row_near_the_largest_float_leaves_a_finite_fit_that_says_it_stopped():
    # The row's gradient overflows the Hessian and defeats the line search:
    # the fit stays finite, warns nothing from numpy, and reports that it
    # stopped short (an intercept-only model was reported converged, its
    # stationarity measured in units the row had stretched).
    from sklearn_dpfair import FERMIClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    s = rng.integers(0, 2, 400)
    X[3] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("always", ConvergenceWarning)
        with pytest.warns(ConvergenceWarning, match="stopped at stationarity"):
            clf = FERMIClassifier(max_iter=3, random_state=0)
            clf.fit(X, y, sensitive_features=s)
    assert clf.n_iter_ > 0
    assert np.all(np.isfinite(clf.coef_)) and clf.stationarity_ > clf.tol
