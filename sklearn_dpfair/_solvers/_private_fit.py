# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate, solve, describe: the private fits shared by linear estimators.

Each function takes validated data and public parameters, chooses the noise
*before* touching the data, runs the solver, and returns the coefficients with
the ``PrivacyRecord`` of the run. Estimators only map their parameters here.
"""

import math
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..privacy import GaussianMechanism, capped_weights, fit_weights
from ..privacy._accounting import (
    composed_event,
    gaussian_event,
)
from ..privacy._clipping import clip_rows_to_norm
from ..privacy._exponential import ExponentialMechanism, epsilon_per_selection
from ..privacy._record import WEIGHTS_CAVEAT, PrivacyRecord, weights_caveats
from ..privacy._zcdp import ZCDP_ACCOUNTANT, rho_for_epsilon
from ..utils._array_api import NUMPY_BACKEND
from ._frank_wolfe import (
    INTERCEPT_BOUND,
    INTERCEPT_RHO_SHARE,
    auto_frank_wolfe_steps,
    private_frank_wolfe,
    resolve_feature_inf_bound,
    score_sensitivity,
    selection_budget_shares,
)
from ._non_private import (
    L1_BALL_SOLVER,
    minimize_l1_ball,
    minimize_linear,
    non_private_record,
)
from ._output_perturbation import (
    MAX_FALLBACK_STEPS,
    certified_regularized_erm,
    guaranteed_certificate_steps,
    output_perturbation,
)
from ._schedules import auto_learning_rate, sgd_schedule
from ._sgd import noisy_sgd

__all__ = [
    "DPSGDParams",
    "DPSGDSetup",
    "FrankWolfeParams",
    "LinearFit",
    "OutputPerturbationParams",
    "dp_sgd_setup",
    "fit_dp_frank_wolfe",
    "fit_dp_sgd",
    "fit_output_perturbation",
]

# l1_radius * feature bound bounds every linear prediction |w . x~|; beyond
# this it could overflow float64 in a partial sum.
_MAX_PREDICTION_BOUND = 1e300

# A single Gaussian release is accounted with PLD, which is exact for it (the
# analytic Gaussian mechanism); RDP would overstate epsilon by ~10-20%.
_SINGLE_GAUSSIAN_ACCOUNTANT = "pld"
_FW_PUBLIC_N = (
    "fw_steps=None: the step count is computed from n, which is public "
    "(as DP-SGD's sampling rate); the selections themselves do not use n"
)


@dataclass(frozen=True)
class DPSGDParams:
    """Public hyperparameters of :func:`fit_dp_sgd`.

    Parameters
    ----------
    clip_norm : float
        Per-example gradient clip threshold, the sensitivity of each sum.
    batch_size : int, "auto" or "full"
        Expected batch size ``q n`` (see
        :func:`~sklearn_dpfair._solvers._schedules.sgd_schedule`).
    epochs : int
        Expected passes over the data; ``T = ceil(epochs / q)`` steps.
    learning_rate : float or "auto"
        Constant step size; "auto" derives it from public quantities.
    alpha : float
        L2 penalty on the coefficients.
    fit_intercept : bool, default=True
        Whether an intercept is fitted (intercept scaling 1, else 0).
    """

    clip_norm: float
    batch_size: object
    epochs: int
    learning_rate: object
    alpha: float
    fit_intercept: bool = True


@dataclass(frozen=True)
class OutputPerturbationParams:
    """Public hyperparameters of :func:`fit_output_perturbation`.

    Parameters
    ----------
    feature_norm_bound : float
        Public bound ``R`` the rows are clipped to.
    alpha : float
        L2 penalty (> 0: it sets the sensitivity ``2 L / (alpha n)``).
    tol : float
        Certified distance to the exact minimizer (adds ``2 tol``).
    fit_intercept : bool, default=True
        Whether an intercept is fitted (intercept scaling 1, else 0).
    """

    feature_norm_bound: float
    alpha: float
    tol: float
    fit_intercept: bool = True


@dataclass(frozen=True)
class FrankWolfeParams:
    """Public hyperparameters of :func:`fit_dp_frank_wolfe`.

    Parameters
    ----------
    l1_radius : float
        Radius ``r`` of the l1 ball the coefficients live in.
    feature_inf_bound : float or None
        Public per-coordinate bound ``B`` the features are clipped to; None
        infers it from ``X`` (a ``PrivacyLeakWarning`` and a caveat).
    n_steps : int or None
        Number of Frank-Wolfe steps ``T``; None uses the rate formula.
    alpha : float
        L2 penalty on the coefficients.
    fit_intercept : bool, default=True
        Whether an intercept is fitted (in its own ball).
    """

    l1_radius: float
    feature_inf_bound: float | None
    n_steps: int | None
    alpha: float
    fit_intercept: bool = True


@dataclass
class LinearFit:
    """Coefficients ``(n_outputs, n_features)``, intercept, steps and privacy record."""

    coef: np.ndarray
    intercept: np.ndarray
    n_steps: int | None
    record: PrivacyRecord


@dataclass(frozen=True)
class DPSGDSetup:
    """What a DP-SGD fit fixes before it reads the data (:func:`dp_sgd_setup`)."""

    sampling_probability: float
    n_steps: int
    mechanism: GaussianMechanism
    learning_rate: float
    record: PrivacyRecord


def dp_sgd_setup(n_samples, n_features, n_outputs, params, budget, *, weighted):
    """Schedule, mechanism, step size and record of a DP-SGD fit.

    From public quantities only (``n`` is public under add/remove
    adjacency): ``q`` and ``T = ceil(epochs / q)``
    (:func:`~sklearn_dpfair._solvers._schedules.sgd_schedule`), the Gaussian
    mechanism the budget calibrates (or the user's noise), the "auto"
    learning rate, and the record the accountant checks. Shared by the
    in-memory and the Dask fit, which release the same noisy sums.

    Parameters
    ----------
    n_samples, n_features, n_outputs : int
        Shape of the problem.
    params : DPSGDParams
        Public hyperparameters.
    budget : PrivacyBudget
        Privacy inputs.
    weighted : bool
        Whether public sample weights were passed (a caveat, whatever they hold).

    Returns
    -------
    setup : DPSGDSetup
    """
    q, n_steps = sgd_schedule(n_samples, params.batch_size, params.epochs)
    mechanism = budget.gaussian(params.clip_norm, sampling_probability=q, steps=n_steps)
    learning_rate = params.learning_rate
    if learning_rate == "auto":
        learning_rate = auto_learning_rate(
            mechanism.noise_multiplier, q, n_samples, (n_features + 1) * n_outputs
        )
    record = budget.account(
        mechanism,
        description="DP-SGD (Poisson-subsampled Gaussian, per-example clipping)",
        adjacency="add_remove",
        sampling_probability=q,
        steps=n_steps,
        caveats=(WEIGHTS_CAVEAT,) if weighted else (),
    )
    return DPSGDSetup(q, n_steps, mechanism, learning_rate, record)


def fit_dp_sgd(
    X,
    y,
    loss,
    params,
    budget,
    *,
    rng,
    backend=NUMPY_BACKEND,
    sample_weight=None,
):
    """DP-SGD with Poisson sampling and per-sample clipping (add/remove adjacency).

    ``params`` (:class:`DPSGDParams`) holds the public hyperparameters and
    ``budget`` (:class:`~sklearn_dpfair.privacy.PrivacyBudget`) the privacy
    inputs. ``epsilon = inf`` with ``noise_multiplier=None`` is the
    non-private limit: on the host (numpy) backend the full-batch L-BFGS-B
    solve of the same objective
    (:func:`~sklearn_dpfair._solvers._non_private.minimize_linear`), with no
    noise and no clipping, whatever the columns' scales; on an array-API
    device the same loop as the private fit without noise or clipping.

    ``backend`` (an :class:`~sklearn_dpfair.utils._array_api.ArrayBackend`)
    says where the solver runs; ``X`` and ``y`` are moved there once, and the
    coefficients come back in the backend's output namespace (numpy unless
    array API dispatch kept the input's). Noise and batches are drawn from
    ``rng`` on the host for every backend.

    ``sample_weight`` (public, non-negative, or None) is used as given
    (:func:`~sklearn_dpfair.privacy.fit_weights`; rescaled to mean 1 only in
    the non-private limit): each record's *weighted* gradient is clipped, so
    the sensitivity stays the clip norm whatever a weight is, and the sum is
    divided by the public expected batch size. Weights of 1 take the
    unweighted path exactly.
    """
    n_samples = X.shape[0]
    weights = fit_weights(sample_weight, n_samples, private=budget.is_private)
    setup = dp_sgd_setup(
        n_samples,
        X.shape[1],
        loss.n_outputs,
        params,
        budget,
        # Passed, not "not all 1": the record may not depend on the weights.
        weighted=sample_weight is not None,
    )
    mechanism, q, n_steps = setup.mechanism, setup.sampling_probability, setup.n_steps
    if not budget.is_private and backend.is_numpy:
        # The non-private limit: the full-batch solver of the same objective
        # (a fixed step size chosen for unit-scale data diverges on raw
        # columns).
        return _non_private_fit(
            X, y, loss, params.alpha, params.fit_intercept, weights, setup.record
        )
    if sp.issparse(X) and not backend.is_numpy:
        raise TypeError(
            "Sparse input X is supported on the host (numpy) only; got "
            f"device {backend.device!r}. Use device='cpu' or a dense X."
        )
    result = noisy_sgd(
        X if sp.issparse(X) else backend.asarray(X),
        backend.asarray(y),
        loss,
        mechanism=mechanism,
        sampling_probability=q,
        n_steps=n_steps,
        learning_rate=setup.learning_rate,
        alpha=params.alpha,
        intercept_scaling=1.0 if params.fit_intercept else 0.0,
        rng=rng,
        sample_weight=(
            None if weights is None else backend.asarray(weights, dtype=X.dtype)
        ),
    )
    return LinearFit(
        backend.to_output(result.coef.T),
        backend.to_output(result.intercept),
        n_steps,
        setup.record,
    )


def fit_output_perturbation(X, y, loss, params, budget, *, rng, sample_weight=None):
    """Certified L2-regularized ERM plus one Gaussian (replace-one adjacency).

    ``params`` (:class:`OutputPerturbationParams`) holds the public
    hyperparameters, ``budget`` the privacy inputs; the single Gaussian is
    calibrated and accounted with PLD (exact for it) whatever the budget's
    accountant, and the noise is never the user's (``noise_multiplier`` of
    the budget must be None).

    Rows are first clipped to ``feature_norm_bound`` (a data-independent map
    that cannot overflow, see
    :func:`~sklearn_dpfair.privacy._clipping.clip_rows_to_norm`), so that one
    example's loss is ``L = raw_lipschitz * sqrt(R^2 + s^2)`` Lipschitz
    whatever the record holds; the minimizer then has replace-one
    sensitivity ``2 L / (alpha n)``, plus ``2 tol`` for the certified solver
    error.

    ``epsilon = inf`` is the non-private limit: the same L2-regularized
    objective on the unclipped rows, minimized by the full-batch solver
    (:func:`~sklearn_dpfair._solvers._non_private.minimize_linear`), whatever
    the columns' scales.

    ``sample_weight`` (public) weights each example's loss, whose Lipschitz
    constant becomes ``w_i L``. A private fit caps each weight at 1
    (:func:`~sklearn_dpfair.privacy.capped_weights`), so every weighted loss
    is ``L``-Lipschitz and the sensitivity stays ``2 L / (alpha n)`` whatever
    the records bring; the largest weight of the data is never read. The
    non-private limit rescales the weights to mean 1 (scikit-learn's
    weighted average).
    """
    if budget.noise_multiplier is not None:
        raise ValueError("Output perturbation calibrates its own noise.")
    feature_norm_bound, alpha, tol = params.feature_norm_bound, params.alpha, params.tol
    n_samples = X.shape[0]
    s = 1.0 if params.fit_intercept else 0.0
    weights = fit_weights(sample_weight, n_samples, private=budget.is_private)
    caveats = ()
    description = "output perturbation (certified L2-regularized ERM + Gaussian)"
    if budget.is_private:
        # A weight above 1 counts as 1: each weighted loss stays L-Lipschitz.
        weights = capped_weights(weights)
        max_weight = 1.0
        caveats = weights_caveats(sample_weight)
        if sample_weight is not None:
            description = description[:-1] + "; each sample weight capped at 1)"
    else:
        max_weight = 1.0 if weights is None else float(np.max(weights))
    radius = feature_norm_bound
    if X.dtype != np.float64:
        # The clipped float32 rows may exceed R by their final rounding
        # (clip_rows_to_norm): the Lipschitz bound covers it.
        radius = feature_norm_bound * (1.0 + 2.0 * float(np.finfo(X.dtype).eps))
    row_bound = math.hypot(radius, s)
    # A weighted example's loss is w_i L-Lipschitz and w_i beta-smooth.
    lipschitz = max_weight * loss.raw_lipschitz * row_bound
    smoothness = max_weight * loss.raw_smoothness * row_bound**2
    steps_needed = guaranteed_certificate_steps(
        lipschitz=lipschitz, smoothness=smoothness, alpha=alpha, tol=tol
    )
    if steps_needed > MAX_FALLBACK_STEPS:
        # Decided from public constants only, so every neighbour gets it.
        caveats = (
            *caveats,
            "alpha is small for feature_norm_bound: the certified solve may fail "
            f"on some datasets (it needs up to {steps_needed:.3g} gradient steps, "
            f"more than the cap {MAX_FALLBACK_STEPS}), and whether a fit raises "
            "instead of releasing a model depends on the data",
        )
    # The noise is chosen before the data are touched: the sensitivity is
    # public (row bound, loss constants, alpha, n, tol).
    sensitivity = 2.0 * lipschitz / (alpha * n_samples) + 2.0 * tol
    budget = replace(budget, accountant=_SINGLE_GAUSSIAN_ACCOUNTANT)
    mechanism = budget.gaussian(sensitivity)
    if not budget.is_private:
        # No noise; the record keeps the sensitivity the private fit would
        # have (the non-private limit clips nothing).
        mechanism = GaussianMechanism(clip_norm=sensitivity, noise_multiplier=0.0)
    record = budget.account(
        mechanism,
        description=description,
        adjacency="replace_one",
        steps=1,
        caveats=caveats,
        # One Gaussian release (not a composition of one): the event the
        # PLD accountant treats exactly.
        dp_event=gaussian_event(mechanism.noise_multiplier),
    )
    if not budget.is_private:
        # The non-private limit: the same regularized objective on the rows
        # as given (the public bound need not hold: nothing is released
        # privately), by the full-batch solver.
        return _non_private_fit(
            X, y, loss, alpha, params.fit_intercept, weights, record,
            penalize_intercept=True,
        )
    # Sparse X is clipped through its stored entries and stays sparse;
    # float32 stays float32.
    X = clip_rows_to_norm(X, feature_norm_bound)
    W = certified_regularized_erm(
        X,
        y,
        loss,
        alpha=alpha,
        intercept_scaling=s,
        tol=tol,
        smoothness=smoothness,
        sample_weight=weights,
    )
    W = output_perturbation(W, mechanism=mechanism, rng=rng)
    # float32 X gives float32 coefficients (the solve and the noise are
    # float64, then cast), as scikit-learn's linear models do.
    dtype = X.dtype
    return LinearFit(W[:-1].T.astype(dtype), (s * W[-1]).astype(dtype), None, record)


def fit_dp_frank_wolfe(X, y, loss, params, budget, *, rng, sample_weight=None):
    """Private Frank-Wolfe over the l1 ball of radius ``l1_radius`` (add/remove).

    ``params`` (:class:`FrankWolfeParams`) holds the public hyperparameters,
    ``budget`` the privacy inputs (its accountant is replaced by RDP, the
    one that reads zCDP events; a user noise multiplier is refused).

    Features are clipped coordinate-wise to ``feature_inf_bound`` (inferred
    from ``X`` with a ``PrivacyLeakWarning`` when None); the intercept lives
    in its own ball of radius ``INTERCEPT_BOUND``. The budget is converted to
    zCDP (``rho``, certified by dp-accounting); the coefficient selections
    get ``rho`` (less ``INTERCEPT_RHO_SHARE`` of it with an intercept, which
    the intercept selections get), split over the ``T`` steps in proportion
    to ``(t + 1)^2`` (``selection_budget_shares``; each selection
    ``epsilon0_t^2 / 8``-zCDP). The fit is described by the composed
    ``ZCDpEvent`` s of its selections, accounted with RDP. ``X`` may be a
    scipy.sparse matrix; it is never densified. The default step count reads
    ``n`` (a caveat says so); the selections do not. ``sample_weight``
    (public) is used as given (rescaled to mean 1 only without privacy);
    each record's weighted raw gradient is clipped back to ``[-1, 1]``, so the
    score sensitivity is unchanged; weights of 1 are the unweighted fit.
    Without privacy (``epsilon=inf``) the same objective over the same l1
    ball is minimized exactly instead
    (:func:`~._non_private.minimize_l1_ball`): no feature clipping, no
    intercept bound, no step count, on any columns' scales.
    """
    if budget.noise_multiplier is not None:
        raise ValueError(
            "noise_multiplier does not apply to solver='dp-frank-wolfe': its "
            "selections are calibrated from epsilon and delta."
        )
    l1_radius, fit_intercept, n_steps = (
        params.l1_radius,
        params.fit_intercept,
        params.n_steps,
    )
    n_samples, n_features = X.shape
    weights = fit_weights(
        sample_weight, n_samples, private=not math.isinf(budget.epsilon)
    )
    caveats = weights_caveats(sample_weight)
    bound, bound_caveats = resolve_feature_inf_bound(params.feature_inf_bound, X)
    caveats = (*caveats, *bound_caveats)
    if not l1_radius * bound <= _MAX_PREDICTION_BOUND:
        raise ValueError(
            f"l1_radius * feature_inf_bound = {l1_radius * bound:g} "
            f"exceeds {_MAX_PREDICTION_BOUND:g}: the linear predictions could "
            "overflow. Rescale the features or lower l1_radius."
        )
    n_outputs = loss.n_outputs
    rho = rho_for_epsilon(budget.epsilon, budget.delta)
    # rho = inf (no privacy) stays inf in both shares.
    intercept_rho = INTERCEPT_RHO_SHARE * rho if fit_intercept else 0.0
    coef_rho = (1.0 - INTERCEPT_RHO_SHARE) * rho if fit_intercept else rho
    if n_steps is None:
        caveats = (*caveats, _FW_PUBLIC_N)
        n_steps = auto_frank_wolfe_steps(
            l1_radius=l1_radius,
            feature_bound=bound,
            n_samples=n_samples,
            n_vertices=max(2 * n_features * n_outputs, 3),
            rho=coef_rho,
        )
    shares = selection_budget_shares(n_steps)

    def selections(rho, radius, feature_bound):
        sensitivity = score_sensitivity(radius, feature_bound, n_samples)
        return [
            ExponentialMechanism(sensitivity, epsilon_per_selection(rho * share, 1))
            for share in shares
        ]

    mechanisms = selections(coef_rho, l1_radius, bound)
    events = [m.event() for m in mechanisms]
    intercept_mechanisms = None
    if fit_intercept:
        intercept_mechanisms = selections(intercept_rho, INTERCEPT_BOUND, 1.0)
        events += [m.event() for m in intercept_mechanisms]
    record = budget.account(
        # The record's noise multiplier is the last (least noisy) selection's.
        mechanisms[-1],
        description=(
            "private Frank-Wolfe over the l1 ball (exponential mechanism over "
            "the vertices by Gumbel-max, each selection epsilon0^2/8-zCDP"
            + ("; the intercept's vertex selected likewise" if fit_intercept else "")
            + ")"
        ),
        adjacency="add_remove",
        steps=n_steps,
        dp_event=composed_event(events),
        caveats=caveats,
        # dp-accounting reads ZCDpEvent with RDP only.
        accountant=ZCDP_ACCOUNTANT,
    )
    if not budget.is_private:
        # The non-private limit: the same objective over the same l1 ball,
        # minimized exactly (no clipped features, no intercept bound, no
        # step count: see minimize_l1_ball).
        fit = minimize_l1_ball(
            X, np.asarray(y), loss, l1_radius, n_outputs=n_outputs,
            alpha=params.alpha, fit_intercept=fit_intercept, sample_weight=weights,
        )
        return LinearFit(
            fit.coef.T.astype(X.dtype), fit.intercept.astype(X.dtype), fit.n_iter,
            non_private_record(record, fit.n_iter, L1_BALL_SOLVER),
        )
    result = private_frank_wolfe(
        X,
        # In X's dtype, read by blocks: the labels are exact in any float.
        np.asarray(y),
        loss,
        l1_radius=float(l1_radius),
        mechanisms=mechanisms,
        rng=rng,
        intercept_bound=INTERCEPT_BOUND if fit_intercept else None,
        intercept_mechanisms=intercept_mechanisms,
        alpha=params.alpha,
        sample_weight=weights,
        # Clipped by the solver: a sparse X is not copied (clipped as read).
        feature_bound=bound,
    )
    return LinearFit(result.coef.T.copy(), result.intercept, n_steps, record)


def _non_private_fit(
    X, y, loss, alpha, fit_intercept, weights, record, *, penalize_intercept=False
):
    """The non-private limit of a linear fit: its objective minimized exactly."""
    fit = minimize_linear(
        X,
        np.asarray(y),
        loss,
        n_outputs=loss.n_outputs,
        alpha=alpha,
        fit_intercept=fit_intercept,
        sample_weight=weights,
        penalize_intercept=penalize_intercept,
    )
    # float32 X gives float32 coefficients, as scikit-learn's linear models do.
    dtype = X.dtype
    return LinearFit(
        fit.coef.T.astype(dtype),
        fit.intercept.astype(dtype),
        fit.n_iter,
        non_private_record(record, fit.n_iter),
    )
