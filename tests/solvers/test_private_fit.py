# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The central private fits, called directly: records, budgets, inputs."""

import math
import warnings
from dataclasses import replace

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair._solvers._output_perturbation import certified_regularized_erm
from sklearn_dpfair._solvers._private_fit import (
    DPSGDParams,
    OutputPerturbationParams,
    dp_sgd_setup,
    fit_dp_sgd,
    fit_output_perturbation,
    output_perturbation_setup,
)
from sklearn_dpfair._solvers._rows import clip_rows_to_norm
from sklearn_dpfair._solvers._sgd import noisy_sgd
from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.privacy import (
    GaussianMechanism,
    PrivacyBudget,
    _budget,
    calibrate_noise_multiplier,
    noise_multiplier_for_gaussian,
)
from sklearn_dpfair.privacy._mechanism import observe_privatize


def _data(n=300, d=6, density=0.4, seed=0, k=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 2 * (rng.random((n, d)) < density)
    y = rng.integers(0, k, n).astype(float)
    return X, y


SGD = dict(
    clip_norm=1.0,
    batch_size=50,
    epochs=2,
    learning_rate=0.5,
    alpha=1e-3,
    fit_intercept=True,
)
OP = dict(feature_norm_bound=1.0, alpha=0.1, tol=1e-9, fit_intercept=True)


def _sgd(X, y, loss=None, *, epsilon=1.0, noise_multiplier=None, seed=0):
    loss = BinaryLogisticLoss() if loss is None else loss
    setup = dp_sgd_setup(
        *X.shape,
        loss.n_outputs,
        DPSGDParams(**SGD),
        PrivacyBudget(epsilon, 1e-5, "rdp", noise_multiplier),
        weighted=False,
    )
    return fit_dp_sgd(X, y, loss, setup, rng=np.random.default_rng(seed))


def _op(X, y, *, epsilon=1.0, seed=0, sample_weight=None, budget=None):
    loss = BinaryLogisticLoss()
    setup = output_perturbation_setup(
        *X.shape,
        loss,
        OutputPerturbationParams(**OP),
        PrivacyBudget(epsilon, 1e-5) if budget is None else budget,
        weighted=sample_weight is not None,
        dtype=X.dtype,
    )
    return fit_output_perturbation(
        X, y, loss, setup, rng=np.random.default_rng(seed), sample_weight=sample_weight
    )


# -- DP-SGD ---------------------------------------------------------------------------


def test_dp_sgd_record_describes_what_the_accountant_was_given():
    X, y = _data()
    fit = _sgd(X, y)
    rec = fit.record
    q, steps = 50 / 300, math.ceil(2 / (50 / 300) - 1e-9)
    assert rec.adjacency == "add_remove"
    assert rec.accountant == "rdp"
    assert rec.sampling_probability == pytest.approx(q)
    assert rec.steps == fit.n_steps == steps
    assert rec.clip_norm == 1.0
    assert rec.noise_multiplier == calibrate_noise_multiplier(1.0, 1e-5, q, steps)
    assert rec.epsilon == pytest.approx(rec.recompute_epsilon(), rel=1e-12)
    assert rec.epsilon <= 1.0
    assert isinstance(rec.dp_event, dp_accounting.SelfComposedDpEvent)
    assert rec.dp_event.count == steps


def test_dp_sgd_user_noise_overspending_blames_the_user():
    X, y = _data()
    with pytest.raises(PrivacyBudgetError, match="Raise noise_multiplier"):
        _sgd(X, y, noise_multiplier=0.3)


def test_dp_sgd_calibration_overspending_is_reported_as_a_bug(monkeypatch):
    # A calibration that returned too little noise is the library's fault:
    # the message must not tell the user to change noise_multiplier.
    monkeypatch.setattr(_budget, "calibrate_noise_multiplier", lambda *a: 0.3)
    X, y = _data()
    with pytest.raises(PrivacyBudgetError, match="this is a bug"):
        _sgd(X, y)


def test_dp_sgd_user_noise_within_budget_is_recorded_as_given():
    X, y = _data()
    rec = _sgd(X, y, noise_multiplier=5.0).record
    assert rec.noise_multiplier == 5.0
    assert rec.epsilon < 1.0


def test_dp_sgd_at_infinite_epsilon_is_the_full_batch_minimizer():
    # The non-private limit minimizes the objective DP-SGD approximates,
    # (1/n) sum_i l_i + (alpha/2) ||coef||^2, not the private loop without
    # noise (whose fixed step size is chosen for unit-scale data): the same
    # model as scikit-learn's lbfgs at C = 1 / (alpha n).
    X, y = _data()
    fit = _sgd(X, y, epsilon=math.inf, seed=3)
    assert fit.record.noise_multiplier == 0.0
    assert math.isinf(fit.record.clip_norm) and math.isinf(fit.record.epsilon)
    assert fit.record.mechanism.startswith("non-private limit")
    assert fit.record.steps >= 1 and fit.record.sampling_probability is None
    ref = LogisticRegression(C=1.0 / (SGD["alpha"] * X.shape[0]), tol=1e-10)
    ref.fit(X, y)
    np.testing.assert_allclose(fit.coef, ref.coef_, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(fit.intercept, ref.intercept_, rtol=1e-5, atol=1e-7)


def test_dp_sgd_with_user_noise_at_infinite_epsilon_runs_the_private_loop():
    # noise_multiplier=0 at epsilon = inf is a private budget (the user's
    # noise, accounted): the DP-SGD loop, clipping included.
    X, y = _data()
    fit = _sgd(X, y, epsilon=math.inf, noise_multiplier=0.0, seed=3)
    q, steps = 50 / 300, fit.n_steps
    plain = noisy_sgd(
        X,
        y,
        BinaryLogisticLoss(),
        mechanism=GaussianMechanism(clip_norm=1.0, noise_multiplier=0.0),
        sampling_probability=q,
        n_steps=steps,
        learning_rate=0.5,
        alpha=1e-3,
        intercept_scaling=1.0,
        rng=np.random.default_rng(3),
    )
    np.testing.assert_array_equal(fit.coef, plain.coef.T)
    np.testing.assert_array_equal(fit.intercept, plain.intercept)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_dp_sgd_float32_sparse_stays_float32_and_matches_dense(fmt):
    X, y = _data()
    X32 = X.astype(np.float32)
    dense = _sgd(X32, y)
    sparse = _sgd(sp.csr_matrix(X32).asformat(fmt), y)
    assert dense.coef.dtype == sparse.coef.dtype == np.float32
    assert dense.intercept.dtype == np.float32
    np.testing.assert_allclose(sparse.coef, dense.coef, rtol=1e-4, atol=1e-5)


def test_dp_sgd_multiclass_shapes():
    X, y = _data(k=3)
    fit = _sgd(X, y, loss=SoftmaxLoss(3))
    assert fit.coef.shape == (3, X.shape[1]) and fit.intercept.shape == (3,)


# -- output perturbation --------------------------------------------------------------


def test_output_perturbation_record_is_one_exactly_accounted_gaussian():
    X, y = _data()
    rec = _op(X, y).record
    z = noise_multiplier_for_gaussian(1.0, 1e-5, "pld")
    lipschitz = BinaryLogisticLoss().raw_lipschitz * math.hypot(1.0, 1.0)
    assert rec.adjacency == "replace_one"
    assert rec.accountant == "pld"
    assert rec.steps == 1 and rec.sampling_probability is None
    assert rec.noise_multiplier == z
    assert rec.clip_norm == pytest.approx(2 * lipschitz / (0.1 * 300) + 2e-9)
    assert rec.dp_event == dp_accounting.GaussianDpEvent(z)
    assert rec.epsilon == pytest.approx(rec.recompute_epsilon(), rel=1e-12)
    assert rec.epsilon <= 1.0


def test_output_perturbation_is_accounted_with_pld_whatever_the_budget_says():
    X, y = _data()
    rec = _op(X, y, budget=PrivacyBudget(1.0, 1e-5, "rdp", caveats=("c",))).record
    assert rec.accountant == "pld" and rec.caveats == ("c",)
    with pytest.raises(ValueError, match="calibrates its own noise"):
        _op(X, y, budget=PrivacyBudget(1.0, 1e-5, noise_multiplier=2.0))


def test_output_perturbation_noise_is_drawn_by_the_gaussian_mechanism():
    X, y = _data()

    class Seen:
        def __init__(self):
            self.calls = []

        def before_noise(self, mechanism, clipped_sum):
            self.calls.append((mechanism, np.array(clipped_sum)))
            return clipped_sum

        def after_noise(self, mechanism, noisy_sum):
            self.noisy = np.array(noisy_sum)

    with observe_privatize(Seen()) as seen:
        fit = _op(X, y)
    assert len(seen.calls) == 1
    mechanism, released = seen.calls[0]
    assert mechanism.clip_norm == fit.record.clip_norm
    assert mechanism.noise_multiplier == fit.record.noise_multiplier
    np.testing.assert_array_equal(seen.noisy[:-1].T, fit.coef)


def test_output_perturbation_at_infinite_epsilon_is_the_unclipped_minimizer():
    # The non-private limit clips nothing (rows of norm ~5 and ~100 against the
    # bound R = 1) and solves the same regularized objective exactly.
    X, y = _data()
    X[5] *= 20.0
    fit = _op(X, y, epsilon=math.inf)
    assert fit.record.noise_multiplier == 0.0 and math.isinf(fit.record.epsilon)
    assert fit.record.mechanism.startswith("non-private limit")
    row_sq = float(np.max(np.sum(X * X, axis=1))) + 1.0
    W = certified_regularized_erm(
        X,
        y,
        BinaryLogisticLoss(),
        alpha=0.1,
        intercept_scaling=1.0,
        tol=1e-9,
        smoothness=BinaryLogisticLoss().raw_smoothness * row_sq,
    )
    np.testing.assert_allclose(fit.coef, W[:-1].T, atol=1e-6)
    np.testing.assert_allclose(fit.intercept, W[-1], atol=1e-6)


def _op_before_noise(X, y, sample_weight=None):
    """The point output perturbation noises (at epsilon = 1) and its record."""

    class Seen:
        point = None

        def before_noise(self, mechanism, clipped_sum):
            self.point = np.array(clipped_sum, copy=True)
            return clipped_sum

        def after_noise(self, mechanism, noisy_sum):
            pass

    with observe_privatize(Seen()) as seen:
        fit = _op(X, y, sample_weight=sample_weight)
    return seen.point, fit.record


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("weighted", [False, True])
def test_output_perturbation_on_sparse_rows_equals_the_dense_fit(fmt, weighted):
    X, y = _data()
    X[5] *= 1e3  # a row that is clipped
    sw = np.linspace(0.5, 2.0, X.shape[0]) if weighted else None
    dense = _op(X, y, seed=7, sample_weight=sw)
    S = sp.csr_matrix(X).asformat(fmt)
    sparse = _op(S, y, seed=7, sample_weight=sw)
    np.testing.assert_allclose(sparse.coef, dense.coef, rtol=0, atol=1e-10)
    np.testing.assert_allclose(sparse.intercept, dense.intercept, rtol=0, atol=1e-10)
    assert sparse.record == dense.record
    assert S.format == fmt


def test_output_perturbation_never_densifies_sparse_rows(monkeypatch):
    X, y = _data()
    S = sp.csr_matrix(X)

    def refuse(self, *args, **kwargs):
        raise AssertionError("densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", refuse)
    monkeypatch.setattr(sp.csr_matrix, "todense", refuse)
    _op(S, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_output_perturbation_float32_gives_float32_coefficients(sparse):
    X, y = _data()
    X32 = X.astype(np.float32)
    A = sp.csr_matrix(X32) if sparse else X32
    fit32 = _op(A, y, seed=2)
    fit64 = _op(X, y, seed=2)
    assert fit32.coef.dtype == np.float32 and fit32.intercept.dtype == np.float32
    np.testing.assert_allclose(fit32.coef, fit64.coef, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_replacing_one_record_moves_the_solution_within_the_sensitivity(
    sparse, weighted
):
    # Privacy tested like correctness: without noise, the released point of
    # neighbouring datasets (one row replaced by a huge, flipped record)
    # differs by at most the recorded sensitivity.
    X, y = _data(n=120)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = 1e200, 1.0 - y[0]
    sw = np.linspace(0.5, 3.0, X.shape[0]) if weighted else None
    wrap = sp.csr_matrix if sparse else np.asarray
    a, record_a = _op_before_noise(wrap(X), y, sample_weight=sw)
    b, record_b = _op_before_noise(wrap(X2), y2, sample_weight=sw)
    shift = np.linalg.norm(a - b)
    assert record_a.clip_norm == record_b.clip_norm
    assert 0 < shift <= record_a.clip_norm


def test_float32_sensitivity_covers_the_rounding_of_the_clipped_rows():
    # Clipped float32 rows may exceed the bound by their final rounding; the
    # recorded sensitivity is computed for a radius that covers it.
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(100, 3000)) * 10).astype(np.float32)
    y = rng.integers(0, 2, 100).astype(float)
    eps32 = float(np.finfo(np.float32).eps)
    norms = np.linalg.norm(clip_rows_to_norm(X, 1.0).astype(np.float64), axis=1)
    assert norms.max() <= 1.0 + 2 * eps32
    rec32 = _op(X, y, epsilon=math.inf).record
    rec64 = _op(X.astype(np.float64), y, epsilon=math.inf).record
    assert rec64.clip_norm < rec32.clip_norm <= rec64.clip_norm * (1 + 4 * eps32)


# -- the set-up is the plan the fit executes ---------------------------------------


@pytest.mark.parametrize("solver", ["dp-sgd", "output-perturbation"])
def test_a_fit_refuses_data_of_another_shape_than_planned(solver):
    # The plan is made from the public shape before any row is read; running
    # it on other data would release what was never accounted.
    from sklearn_dpfair.exceptions import PrivacyAccountingError

    X, y = _data(n=300)
    loss = BinaryLogisticLoss()
    budget = PrivacyBudget(1.0, 1e-5)
    if solver == "dp-sgd":
        setup = dp_sgd_setup(301, X.shape[1], 1, DPSGDParams(**SGD), budget, weighted=False)
        run = fit_dp_sgd
    else:
        setup = output_perturbation_setup(
            300, X.shape[1] + 1, loss, OutputPerturbationParams(**OP), budget, weighted=False
        )
        run = fit_output_perturbation
    with pytest.raises(PrivacyAccountingError, match="planned for data of shape"):
        run(X, y, loss, setup, rng=np.random.default_rng(0))


def test_the_estimator_fit_and_plan_share_one_setup(monkeypatch):
    # fit() obtains its mechanisms from the set-up privacy_plan() is built
    # from: the same method, called once per fit with the public shape.
    from sklearn_dpfair.linear_model import DPLogisticRegression

    X, y = _data(n=400)
    calls = []
    original = DPLogisticRegression._solver_setup

    def spy(self, *args, **kwargs):
        setup = original(self, *args, **kwargs)
        calls.append(setup)
        return setup

    monkeypatch.setattr(DPLogisticRegression, "_solver_setup", spy)
    est = DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    (setup,) = calls
    assert (setup.n_samples, setup.n_features) == X.shape
    assert setup.record.dp_event == est.dp_event_
    assert est.privacy_plan(*X.shape).dp_event == est.dp_event_


@pytest.mark.parametrize("huge", [1e300, 1e308])
def test_dp_sgd_float32_weight_beyond_float32_is_clipped_as_in_float64(huge):
    # A public weight of 1e300 is past float32's range: cast, it would be
    # inf (an overflow warning that depends on one record) and the record
    # would count for nothing. Saturated, its term is clipped to the clip
    # norm, as in float64: both fits take the same steps. At 1e308 the
    # float64 term's norm |r_i w_i| ||x_i|| overflows: it is clipped all
    # the same, not dropped.
    X, y = _data()
    weights = np.ones(len(y))
    weights[::10] = huge
    setup = dp_sgd_setup(
        *X.shape,
        1,
        DPSGDParams(**SGD),
        PrivacyBudget(math.inf, 1e-5, "rdp", 0.0),
        weighted=True,
    )
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in (np.float64, np.float32):
            fits[dtype] = fit_dp_sgd(
                X.astype(dtype),
                y,
                BinaryLogisticLoss(),
                setup,
                rng=np.random.default_rng(3),
                sample_weight=weights,
            )
    np.testing.assert_allclose(
        fits[np.float32].coef, fits[np.float64].coef, rtol=1e-4, atol=1e-5
    )


# -- a Frank-Wolfe feature bound read from the data -------------------------------


def test_frank_wolfe_caps_a_bound_read_from_the_data_rather_than_refusing():
    # feature_inf_bound=None reads max |x_ij| from X: one record's value.
    # Past 1e300 / l1_radius it is capped (with a caveat), not refused with
    # the value in the message: the fit's outcome must not hinge on it.
    from sklearn_dpfair.exceptions import PrivacyLeakWarning
    from sklearn_dpfair.linear_model import DPLogisticRegression

    X, y = _data(n=200, d=3)
    X[17, 1] = 3.14159e305
    est = DPLogisticRegression(
        solver="dp-frank-wolfe", l1_radius=5.0, classes=[0, 1], random_state=0
    )
    with pytest.warns(PrivacyLeakWarning, match="feature_inf_bound"):
        est.fit(X, y)
    assert np.all(np.isfinite(est.coef_))
    assert any("capped" in caveat for caveat in est.privacy_caveats_)
    # The selections are calibrated to the cap, the bound the fit clips to.
    assert est.privacy_record_.clip_norm == pytest.approx(5.0 * (1e300 / 5.0) / 200)


def test_frank_wolfe_setup_still_refuses_a_public_bound_too_large():
    from sklearn_dpfair._solvers._frank_wolfe import (
        INFERRED_BOUND_CAVEAT,
        resolve_feature_inf_bound,
    )
    from sklearn_dpfair._solvers._private_fit import (
        FrankWolfeParams,
        frank_wolfe_setup,
    )

    # The set-up recognizes an inferred bound by the caveat it comes with.
    with pytest.warns(Warning):
        assert resolve_feature_inf_bound(None, np.ones((2, 2)))[1] == [
            INFERRED_BOUND_CAVEAT
        ]
    # A public bound may be printed.
    params = FrankWolfeParams(1e200, 3e101, None, 0.0)
    with pytest.raises(ValueError, match="feature_inf_bound = 3e\\+301"):
        frank_wolfe_setup(100, 3, 1, params, PrivacyBudget(1.0, 1e-5), weighted=False)
    setup = frank_wolfe_setup(
        100, 3, 1, params, PrivacyBudget(1.0, 1e-5),
        weighted=False, caveats=(INFERRED_BOUND_CAVEAT,),
    )
    assert 1e200 * setup.params.feature_inf_bound <= 1e300


def test_the_non_private_limit_keeps_float64_where_float32_would_overflow():
    # A float32 column in units of 1e-40 needs a coefficient near 1e40,
    # beyond float32's largest float: cast to X's dtype it was inf (with an
    # overflow warning from the library) and every prediction NaN.
    from sklearn_dpfair.linear_model import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    X[:, 0] *= 1e-40
    X32 = X.astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf = DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(X32, y)
    assert np.all(np.isfinite(clf.coef_)) and abs(clf.coef_[0, 0]) > 1e39
    assert clf.coef_.dtype == clf.intercept_.dtype == np.float64
    assert np.all(np.isfinite(clf.predict_proba(X32)))
    # Within float32's range, float32 X keeps float32 parameters.
    X[:, 0] *= 1e40
    small = DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(
        X.astype(np.float32), y
    )
    assert small.coef_.dtype == np.float32


def test_steps_no_noise_can_make_private_are_blamed_on_max_iter():
    # max_iter=10**30 planned 4e30 steps; the calibration's refusal asked
    # for fewer steps without naming the parameter that sets them. Such a
    # count is now refused by the step cap before any calibration; a
    # calibration that still cannot reach the budget names max_iter too.
    from sklearn_dpfair._solvers._schedules import naming_the_schedule
    from sklearn_dpfair.linear_model import DPLogisticRegression
    from sklearn_dpfair.privacy._calibration import UnreachableBudgetError

    clf = DPLogisticRegression(max_iter=10**30, classes=[0, 1])
    with pytest.raises(ValueError, match=r"max_iter=1e\+30 .*smaller max_iter\.$"):
        clf.privacy_plan(1000, 3)
    with pytest.raises(ValueError, match=r"fewer steps.*lower max_iter\.$"):
        with naming_the_schedule(20, 400):
            raise UnreachableBudgetError("Use fewer steps.")


@pytest.mark.parametrize(
    "budget",
    [PrivacyBudget(1.0, 1e-5), PrivacyBudget(np.inf, 1e-5, noise_multiplier=1e30),
     PrivacyBudget(1.0, 1e-5, noise_multiplier=1e30)],
)
@pytest.mark.parametrize(
    "changes",
    [dict(epochs=10**30), dict(epochs=10**308), dict(batch_size=1, epochs=1001),
     dict(batch_size=1, epochs=1001, batch_sampling="balls_and_bins")],
)
def test_a_private_schedule_beyond_the_step_cap_is_refused_at_plan_time(
    budget, changes
):
    # noise_multiplier=1e30 with max_iter=10**30 planned 4e30 steps that no
    # calibration refused: the fit ran for ever. 1001 epochs of batches of
    # 1 out of 1000 rows are 1,001,000 steps, one above the cap's 10**6.
    params = DPSGDParams(**{**SGD, **changes})
    with pytest.raises(ValueError, match="max_iter=.*smaller max_iter"):
        dp_sgd_setup(1000, 3, 1, params, budget, weighted=False)


def test_balls_and_bins_steps_are_counted_by_their_own_schedule():
    # Batches of 3 out of 1000 rows: 333 balls-and-bins steps per epoch,
    # 333.3 Poisson ones; 3001 epochs are 999,333 and 1,000,334 steps.
    from sklearn_dpfair._solvers._private_fit import _check_private_steps

    params = DPSGDParams(**{**SGD, "batch_size": 3, "epochs": 3001})
    with pytest.raises(ValueError, match="take 1000334 steps"):
        _check_private_steps(1000, params)
    _check_private_steps(1000, replace(params, batch_sampling="balls_and_bins"))


def test_the_step_cap_in_the_estimators_plan_and_fit():
    from sklearn_dpfair.linear_model import DPLogisticRegression

    X, y = _data(200, 3)
    clf = DPLogisticRegression(
        classes=[0, 1], noise_multiplier=1e30, max_iter=10**30, random_state=0
    )
    for run in (lambda: clf.privacy_plan(200, 3), lambda: clf.fit(X, y)):
        with pytest.raises(ValueError, match="max_iter=1e\\+30 epochs"):
            run()
    assert not hasattr(clf, "coef_")
    # At the cap exactly (1000 epochs of batches of 1 out of 1000 rows).
    params = DPSGDParams(**{**SGD, "batch_size": 1, "epochs": 1000})
    setup = dp_sgd_setup(1000, 3, 1, params, PrivacyBudget(1.0, 1e-5), weighted=False)
    assert setup.n_steps == 10**6
    # The non-private limit solves with L-BFGS-B: max_iter is not its count.
    clf = DPLogisticRegression(classes=[0, 1], epsilon=np.inf, max_iter=10**30)
    assert np.all(np.isfinite(clf.fit(X, y).coef_))


def test_frank_wolfe_refuses_fw_steps_beyond_the_cap_at_any_budget():
    # fw_steps=1e30 raised numpy's "Maximum allowed size exceeded" from the
    # per-step shares, fw_steps=1e12 a MemoryError (7.28 TiB), at any budget
    # (the plan builds its selections even where epsilon=inf does not use
    # them).
    from sklearn_dpfair._solvers._private_fit import (
        FrankWolfeParams,
        frank_wolfe_setup,
    )

    cases = [
        (10**30, "fw_steps \\(an int of more than 20 digits\\)"),
        (10**5000, "fw_steps \\(an int of more than 20 digits\\)"),
        (10**12, "fw_steps=1000000000000 exceeds 10000"),
        (10**4 + 1, "fw_steps=10001 exceeds"),
    ]
    for steps, match in cases:
        for budget in (PrivacyBudget(1.0, 1e-5), PrivacyBudget(np.inf, 1e-5)):
            params = FrankWolfeParams(1.0, 3.0, steps, 0.0)
            with pytest.raises(ValueError, match=match):
                frank_wolfe_setup(200, 2, 1, params, budget, weighted=False)


def test_frank_wolfe_plans_a_float32_radius_in_float64():
    # l1_radius=np.float32(1e38) times the bound 3 overflowed float32 (a
    # RuntimeWarning, then OverflowError from the auto step count's ceil).
    from sklearn_dpfair._solvers._private_fit import (
        FrankWolfeParams,
        frank_wolfe_setup,
    )

    params = FrankWolfeParams(np.float32(1e38), np.float32(3.0), None, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        setup = frank_wolfe_setup(
            200, 2, 1, params, PrivacyBudget(1.0, 1e-5), weighted=False
        )
    assert type(setup.params.l1_radius) is float
    assert setup.params.l1_radius == float(np.float32(1e38))
    assert 1 <= setup.n_steps <= 1000
