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

from ..exceptions import PrivacyAccountingError
from ..privacy import GaussianMechanism, capped_weights, fit_weights
from ..privacy._accounting import (
    SINGLE_GAUSSIAN_ACCOUNTANT,
    composed_event,
    gaussian_event,
    noisy_sgd_event,
)
from ..privacy._calibration import calibrate_noise
from ..privacy._exponential import (
    ExponentialMechanism,
    epsilon_per_selection,
    least_sensitivity,
    selection_scale_problem,
)
from ..privacy._record import WEIGHTS_CAVEAT, PrivacyRecord
from ..privacy._zcdp import ZCDP_ACCOUNTANT
from ..utils._array_api import NUMPY_BACKEND, to_numpy
from ._feature_scaling import (
    fit_feature_scaling,
    in_user_units,
    narrowed_if_finite,
    scaled_columns,
)
from ._frank_wolfe import (
    INFERRED_BOUND_CAVEAT,
    INTERCEPT_BOUND,
    INTERCEPT_RHO_SHARE,
    MAX_AUTO_STEPS,
    MAX_FW_STEPS,
    auto_frank_wolfe_steps,
    private_frank_wolfe,
    score_sensitivity,
    selection_budget_shares,
)
from ._newton import noisy_newton
from ._newton import plan as newton_plan
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
from ._rows import clip_rows_to_norm
from ._schedules import (
    MAX_STEPS,
    auto_learning_rate,
    check_penalty_step,
    check_sgd_steps,
    naming_the_schedule,
    penalty_capped_learning_rate,
    resolve_epochs,
    sgd_schedule,
)
from ._sgd import noisy_sgd

__all__ = [
    "DPNewtonSetup",
    "DPSGDParams",
    "DPSGDSetup",
    "FrankWolfeParams",
    "FrankWolfeSetup",
    "LinearFit",
    "OutputPerturbationParams",
    "OutputPerturbationSetup",
    "check_planned_shape",
    "dp_newton_setup",
    "dp_sgd_setup",
    "fit_dp_frank_wolfe",
    "fit_dp_newton",
    "fit_dp_sgd",
    "fit_output_perturbation",
    "frank_wolfe_setup",
    "output_perturbation_setup",
    "weights_in_dtype",
]

# l1_radius * feature bound bounds every linear prediction |w . x~|; beyond
# this it could overflow float64 in a partial sum.
_MAX_PREDICTION_BOUND = 1e300

# Output perturbation certifies ||grad F(w)|| <= alpha tol in float64: the
# target must clear the gradient's round-off (about eps L) by this factor.
_CERTIFICATE_ROUNDING_MARGIN = 64

_CAPPED_BOUND_CAVEAT = (
    "the feature bound inferred from the data exceeded 1e300 / l1_radius and "
    "was capped there (so that no linear prediction can overflow)"
)

_RAISED_BOUND_CAVEAT = (
    "the feature bound inferred from the data was too small for the "
    "selections' float64 logits and was raised to the least bound they can "
    "use (the selections are calibrated to the raised bound)"
)

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
    epochs : int or "auto"
        Expected passes over the data; ``T = ceil(epochs / q)`` steps
        ("auto": :func:`~sklearn_dpfair._solvers._schedules.auto_epochs`).
    learning_rate : float or "auto"
        Constant step size; "auto" derives it from public quantities.
    alpha : float
        L2 penalty on the coefficients.
    fit_intercept : bool, default=True
        Whether an intercept is fitted (intercept scaling 1, else 0).
    batch_sampling : {"poisson", "balls_and_bins"}, default="poisson"
        How batches are drawn, and so how the run is accounted
        (:mod:`._balls_and_bins` for the second).
    """

    clip_norm: float
    batch_size: object
    epochs: int
    learning_rate: object
    alpha: float
    fit_intercept: bool = True
    batch_sampling: str = "poisson"


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


def check_planned_shape(setup, shape):
    """Raise unless the data have the shape the fit's set-up was planned for.

    A set-up (the solver-level plan of a fit: its mechanisms, schedule and
    record) is made from public ``(n_samples, n_features)`` before any row is
    read; running it on other data would release what was never accounted.

    Parameters
    ----------
    setup : DPSGDSetup, OutputPerturbationSetup, FrankWolfeSetup or DPNewtonSetup
        The plan the fit executes.
    shape : tuple of int
        ``(n_samples, n_features)`` of the validated data.

    Raises
    ------
    PrivacyAccountingError
        If the shapes differ (a bug of the caller, never a property of the
        data's values).
    """
    planned = (setup.n_samples, setup.n_features)
    if tuple(shape) != planned:
        raise PrivacyAccountingError(
            f"The fit was planned for data of shape {planned} but received "
            f"{tuple(shape)}: its releases would not be the accounted ones. "
            "This is a bug: please report it."
        )


@dataclass(frozen=True)
class DPSGDSetup:
    """What a DP-SGD fit fixes before it reads the data (:func:`dp_sgd_setup`).

    The solver-level plan :func:`fit_dp_sgd` executes: the schedule, the
    mechanism, the step size and the record, for ``n_samples`` rows of
    ``n_features`` columns, with the public ``params`` and ``budget`` they
    were made from and the column ``scaling`` plan whose releases the record
    composes (None: the columns are used as given).
    """

    sampling_probability: float
    n_steps: int
    mechanism: GaussianMechanism
    learning_rate: float
    record: PrivacyRecord
    n_samples: int | None = None
    n_features: int | None = None
    params: DPSGDParams | None = None
    budget: object = None
    scaling: object = None
    #: None for Poisson batches; ``t`` for balls-and-bins batches.
    batches_per_epoch: int | None = None


def resolved_learning_rate(params, mechanism, q, n_samples, n_features, n_outputs):
    """``params.learning_rate``, or the "auto" step of the calibrated mechanism.

    Either way stable for the L2 penalty's step: a given rate with
    ``learning_rate * alpha >= 2`` is refused, the "auto" rate is capped at
    ``1 / alpha``.
    """
    if params.learning_rate != "auto":
        check_penalty_step(params.learning_rate, params.alpha)
        return params.learning_rate
    return penalty_capped_learning_rate(
        auto_learning_rate(
            mechanism.noise_multiplier, q, n_samples, (n_features + 1) * n_outputs
        ),
        params.alpha,
    )


def with_scaling(description, prior):
    """A record's description, with the column scaling's phrase if any."""
    if prior is not None and prior.describe():
        return description + "; " + prior.describe()
    return description


def dp_sgd_setup(
    n_samples, n_features, n_outputs, params, budget, *, weighted, prior=None
):
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
    prior : ScalingPlan or None, default=None
        Releases made before the steps (private column scales): the steps'
        noise is calibrated so that the composition of both meets the
        budget, accounted with RDP (which reads their zCDP events).

    Returns
    -------
    setup : DPSGDSetup

    Raises
    ------
    ValueError
        If a private run (noise, or a user noise multiplier) would take more
        than :data:`~._schedules.MAX_STEPS` steps, naming ``max_iter`` and
        ``batch_size``. The non-private limit does not run the steps in
        memory (its solver is L-BFGS-B), so it is not refused here.
    """
    if budget.is_private:
        # Before the calibration composes the steps: public inputs only.
        _check_private_steps(n_samples, params)
    if params.batch_sampling == "balls_and_bins":
        # Its own schedule, event and accountant (random allocation).
        from ._balls_and_bins import balls_and_bins_setup

        return balls_and_bins_setup(
            n_samples,
            n_features,
            n_outputs,
            params,
            budget,
            weighted=weighted,
            prior=prior,
        )
    q, n_steps = sgd_schedule(n_samples, params.batch_size, params.epochs)
    prior_event = None if prior is None else prior.event
    with naming_the_schedule(params.epochs, n_steps):
        if prior_event is not None:
            # Private scales come with a calibrated budget only (the scaling
            # plan refuses a user noise multiplier).
            budget = replace(budget, accountant=ZCDP_ACCOUNTANT)
            sigma = calibrate_noise(
                lambda z: composed_event(
                    [prior_event, noisy_sgd_event(z, q, n_steps)]
                ),
                budget.epsilon,
                budget.delta,
                budget.accountant,
            )
            mechanism = GaussianMechanism(params.clip_norm, sigma)
        else:
            mechanism = budget.gaussian(
                params.clip_norm, sampling_probability=q, steps=n_steps
            )
    learning_rate = resolved_learning_rate(
        params, mechanism, q, n_samples, n_features, n_outputs
    )
    description = with_scaling(
        "DP-SGD (Poisson-subsampled Gaussian, per-example clipping)", prior
    )
    record = budget.account(
        mechanism,
        description=description,
        adjacency="add_remove",
        sampling_probability=q,
        steps=n_steps,
        caveats=(WEIGHTS_CAVEAT,) if weighted else (),
        dp_event=(
            None
            if prior_event is None
            else composed_event(
                [prior_event, mechanism.event(sampling_probability=q, steps=n_steps)]
            )
        ),
    )
    return DPSGDSetup(
        q,
        n_steps,
        mechanism,
        learning_rate,
        record,
        n_samples=n_samples,
        n_features=n_features,
        params=params,
        budget=budget,
        scaling=prior,
    )


def _check_private_steps(n_samples, params):
    """Refuse a private DP-SGD schedule of more than ``MAX_STEPS`` steps."""
    steps = None
    if params.batch_sampling == "balls_and_bins" and not (
        not isinstance(params.epochs, str) and params.epochs > MAX_STEPS
    ):
        from ._balls_and_bins import balls_and_bins_schedule

        per_epoch, n_epochs = balls_and_bins_schedule(
            n_samples, params.batch_size, params.epochs
        )
        steps = per_epoch * n_epochs
    check_sgd_steps(n_samples, params.batch_size, params.epochs, steps=steps)


def weights_in_dtype(weights, dtype):
    """Public weights in a solver's ``dtype``, saturated at its largest float.

    A weight beyond that float (``1e300`` for a float32 fit) would be cast
    to ``inf`` with an overflow warning that depends on one record's weight,
    and its term, no longer finite, would count for nothing. Saturated, the
    weight still multiplies the record's loss derivative *before* clipping,
    so its term is clipped to the clip norm as in a float64 fit. Weights
    within range are cast exactly as before.

    Parameters
    ----------
    weights : ndarray of shape (n_samples,) or None
        Non-negative float64 weights (:func:`~sklearn_dpfair.privacy.fit_weights`).
    dtype : dtype
        The solver's floating dtype (numpy's or another namespace's).

    Returns
    -------
    weights : ndarray of shape (n_samples,) or None
        float64, each at most the largest float of ``dtype`` (None stays
        None): ``weights`` itself where none exceeds it, so that no n-length
        copy is held beside them (the callers only read it).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._private_fit import weights_in_dtype
    >>> weights_in_dtype(np.array([2.0, 1e300]), np.float32).astype(np.float32)
    array([2.0000000e+00, 3.4028235e+38], dtype=float32)
    """
    cap = float(np.finfo(_numpy_dtype(dtype)).max)
    if weights is None or not np.any(weights > cap):
        return weights
    return capped_weights(weights, cap)


def _numpy_dtype(dtype):
    """numpy's dtype of the same name (``torch.float32``: ``float32``)."""
    if isinstance(dtype, (np.dtype, type)):
        return np.dtype(dtype)
    return np.dtype(str(dtype).rsplit(".", 1)[-1])


def fit_dp_sgd(
    X,
    y,
    loss,
    setup,
    *,
    rng,
    backend=NUMPY_BACKEND,
    sample_weight=None,
    progress=None,
):
    """DP-SGD with Poisson sampling and per-sample clipping (add/remove adjacency).

    Executes ``setup`` (:class:`DPSGDSetup`, from :func:`dp_sgd_setup`: the
    schedule, mechanism, step size and record planned from public
    quantities before this call) on ``X``, which must have the planned shape
    (:func:`check_planned_shape`); every noisy sum is made by the planned
    mechanism, so the release check of the estimator sees exactly the
    planned releases. ``epsilon = inf`` with ``noise_multiplier=None`` is the
    non-private limit: the full-batch L-BFGS-B solve of the same objective
    (:func:`~sklearn_dpfair._solvers._non_private.minimize_linear`), with no
    noise and no clipping, whatever the columns' scales, on host copies of
    the data whatever the backend (the coefficients come back in the
    backend's output namespace). ``noise_multiplier=0`` runs the DP-SGD loop
    itself, on the backend, without noise.

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

    ``progress`` (a :class:`~sklearn_dpfair._solvers._progress.Progress` or
    None) prints one line per expected epoch from released iterates only.

    ``setup.scaling`` (a :class:`~._feature_scaling.ScalingPlan`, from public
    inputs, or None) maps the columns to unit scale first, by public bounds
    or by private robust statistics whose releases the fit's event composes;
    the coefficients are returned in the user's units.
    """
    check_planned_shape(setup, X.shape)
    params, budget, scaling = setup.params, setup.budget, setup.scaling
    n_samples = X.shape[0]
    weights = fit_weights(sample_weight, n_samples, private=budget.is_private)
    mechanism, q, n_steps = setup.mechanism, setup.sampling_probability, setup.n_steps
    scales = None if scaling is None else fit_feature_scaling(X, scaling, rng)
    if scales is not None:
        X = scales.transform(X)
    if not budget.is_private:
        # The non-private limit: the full-batch solver of the same objective
        # (a fixed step size chosen for unit-scale data diverges on raw
        # columns). It is scipy's L-BFGS-B, so it runs on host copies on
        # every backend; the coefficients return to the input's namespace.
        if backend.is_numpy:
            return _non_private_fit(
                X, y, loss, params.alpha, params.fit_intercept, weights, setup.record
            )
        fit = _non_private_fit(
            to_numpy(X),
            to_numpy(y),
            loss,
            params.alpha,
            params.fit_intercept,
            to_numpy(weights),
            setup.record,
        )
        return replace(
            fit,
            coef=backend.to_output(backend.asarray(fit.coef)),
            intercept=backend.to_output(backend.asarray(fit.intercept)),
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
            None
            if weights is None
            else backend.asarray(weights_in_dtype(weights, X.dtype), dtype=X.dtype)
        ),
        progress=(
            None
            if progress is None
            else progress.per(n_steps, resolve_epochs(params.epochs, n_samples))
        ),
        batches_per_epoch=setup.batches_per_epoch,
    )
    coef, intercept = result.coef.T, result.intercept
    if scales is not None:
        coef, intercept = scales.coefficients_in_user_units(
            to_numpy(coef), to_numpy(intercept)
        )
    return LinearFit(
        backend.to_output(coef),
        backend.to_output(intercept),
        n_steps,
        setup.record,
    )


@dataclass(frozen=True)
class OutputPerturbationSetup:
    """What output perturbation fixes before it reads the data.

    The solver-level plan :func:`fit_output_perturbation` executes: the one
    mechanism (Gaussian, or Laplace for pure epsilon-DP), the record, the
    smoothness bound of the certified solve, and the public shape, dtype,
    ``params`` and ``budget`` they were made from.
    """

    mechanism: GaussianMechanism
    record: PrivacyRecord
    smoothness: float
    n_samples: int | None = None
    n_features: int | None = None
    params: OutputPerturbationParams | None = None
    budget: object = None
    dtype: object = np.float64
    #: Public column map (a ScalingPlan of feature_bounds) or None.
    scaling: object = None


def output_perturbation_setup(
    n_samples,
    n_features,
    loss,
    params,
    budget,
    *,
    weighted,
    dtype=np.float64,
    max_weight=1.0,
    scaling=None,
):
    """Sensitivity, mechanism and record of output perturbation (public inputs).

    The replace-one sensitivity of the certified minimizer is
    ``2 L / (alpha n) + 2 tol`` (Chaudhuri, Monteleoni and Sarwate 2011,
    Corollary 8, plus the certified solver error), with ``L`` the Lipschitz
    constant of one example's loss on rows clipped to ``feature_norm_bound``.
    The release is Gaussian (calibrated and accounted with PLD), or, when
    ``budget.delta == 0``, Laplace on every coordinate with the l1
    sensitivity ``sqrt(p)`` times that (``p`` coefficients, Cauchy-Schwarz):
    pure epsilon-DP.
    Under privacy every weight is capped at 1 (``max_weight=1``), so the
    set-up never reads the weights; the non-private limit solves with the
    weights as given and its record keeps the planned (capped) constants.

    Parameters
    ----------
    n_samples : int
        Number of rows (public under replace-one adjacency).
    n_features : int
        Number of columns (the coefficients' count, for the l1 sensitivity).
    loss : object
        The pointwise loss (its raw Lipschitz and smoothness constants).
    params : OutputPerturbationParams
        Public hyperparameters.
    budget : PrivacyBudget
        Privacy inputs; a user noise multiplier is refused.
    weighted : bool
        Whether public sample weights were passed (a caveat, whatever they hold).
    dtype : dtype, default=np.float64
        The dtype the rows are clipped in.
    max_weight : float, default=1.0
        Bound on the weights the solve uses.
    scaling : ScalingPlan or None, default=None
        Public column map of declared ``feature_bounds``
        (:func:`~._feature_scaling.public_scaling_plan`), applied before the
        rows are clipped: ``feature_norm_bound`` bounds the *scaled* rows,
        and the sensitivity is unchanged (the clip holds whatever a record
        holds, inside the bounds or not).

    Returns
    -------
    setup : OutputPerturbationSetup
    """
    if budget.noise_multiplier is not None:
        raise ValueError("Output perturbation calibrates its own noise.")
    feature_norm_bound, alpha, tol = params.feature_norm_bound, params.alpha, params.tol
    s = 1.0 if params.fit_intercept else 0.0
    caveats = ()
    description = "output perturbation (certified L2-regularized ERM + Gaussian)"
    if budget.is_private:
        caveats = (WEIGHTS_CAVEAT,) if weighted else ()
        if weighted:
            description = description[:-1] + "; each sample weight capped at 1)"
    description = with_scaling(description, scaling)
    radius = feature_norm_bound
    if dtype != np.float64:
        # The clipped float32 rows may exceed R by their final rounding
        # (clip_rows_to_norm): the Lipschitz bound covers it.
        radius = feature_norm_bound * (1.0 + 2.0 * float(np.finfo(dtype).eps))
    row_bound = math.hypot(radius, s)
    # A weighted example's loss is w_i L-Lipschitz and w_i beta-smooth.
    lipschitz = max_weight * loss.raw_lipschitz * row_bound
    smoothness = max_weight * loss.raw_smoothness * row_bound * row_bound
    if not math.isfinite(smoothness):
        # Public constants only: the certified solve's step 1 / smoothness
        # and the noise would be 0 and inf.
        raise ValueError(
            "feature_norm_bound is too large for output perturbation: the "
            "loss's smoothness bound (feature_norm_bound**2 times the loss "
            f"constant) overflows float64 (feature_norm_bound={feature_norm_bound:g})."
            " Use a bound of the size of the rows' norms."
        )
    # The certificate ||grad|| <= alpha tol is checked in float64, whose
    # gradient carries round-off of about eps L: below a margin over it,
    # whether a dataset certifies is luck of its rounding. Refused from
    # public constants, so that no neighbour fails where another succeeds
    # (the non-private limit solves exactly and certifies nothing).
    floor = _CERTIFICATE_ROUNDING_MARGIN * np.finfo(np.float64).eps * lipschitz
    if budget.is_private and alpha * tol < floor:
        raise ValueError(
            f"tol={tol!r} is below what float64 can certify for this model: "
            f"alpha * tol must be at least {floor:.3g} "
            f"({_CERTIFICATE_ROUNDING_MARGIN} x float64 eps x the loss's "
            f"Lipschitz bound); pass tol >= {floor / alpha:.3g}."
        )
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
    # Public constants only: an infinite sensitivity, or a noise scale that
    # overflows, would release +-inf coefficients (or NaN) under any budget.
    overflow = ValueError(
        "tol or alpha makes output perturbation's noise overflow float64: its "
        "sensitivity 2 L / (alpha n) + 2 tol times the noise multiplier "
        f"(tol={tol:g}, alpha={alpha:g}); use a tol of the size of the "
        "coefficients' accuracy and a positive alpha of ordinary size."
    )
    if not math.isfinite(sensitivity):
        raise overflow
    budget = replace(budget, accountant=SINGLE_GAUSSIAN_ACCOUNTANT)
    planned = (n_samples, n_features, params, budget, dtype, scaling)
    if budget.delta == 0:
        n_params = (n_features + 1) * loss.n_outputs
        if not math.isfinite(math.sqrt(n_params) * sensitivity / budget.epsilon):
            raise overflow  # the Laplace scale, l1 sensitivity / epsilon
        mechanism = budget.laplace(math.sqrt(n_params) * sensitivity)
        record = budget.account(
            mechanism,
            description=description.replace(
                "+ Gaussian", "+ Laplace noise on every coefficient, pure epsilon-DP"
            ),
            adjacency="replace_one",
            steps=1,
            caveats=caveats,
            dp_event=mechanism.event(),
        )
        return OutputPerturbationSetup(
            mechanism, record, smoothness, *planned
        )
    try:
        mechanism = budget.gaussian(sensitivity)
    except ValueError as exc:
        # The mechanism refuses a noise scale that overflows, naming its
        # clip norm; here the sensitivity comes from tol and alpha.
        if "overflows float64" in str(exc):
            raise overflow from None
        raise
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
    return OutputPerturbationSetup(mechanism, record, smoothness, *planned)


def fit_output_perturbation(X, y, loss, setup, *, rng, sample_weight=None):
    """Certified L2-regularized ERM plus one Gaussian (replace-one adjacency).

    Executes ``setup`` (:class:`OutputPerturbationSetup`, from
    :func:`output_perturbation_setup`, planned from public quantities before
    this call) on ``X`` of the planned shape and dtype. The single Gaussian
    is calibrated and accounted with PLD (exact for it) whatever the
    budget's accountant, and the noise is never the user's.

    Rows are first clipped to ``feature_norm_bound`` (a data-independent map
    that cannot overflow, see
    :func:`~sklearn_dpfair._solvers._rows.clip_rows_to_norm`), so that one
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

    ``setup.scaling`` (public, or None) maps the columns by declared
    ``feature_bounds`` before the rows are clipped; the coefficients are
    returned in the user's units.
    """
    check_planned_shape(setup, X.shape)
    params, budget = setup.params, setup.budget
    if np.dtype(X.dtype) != np.dtype(setup.dtype):
        raise PrivacyAccountingError(
            f"Output perturbation was planned for {np.dtype(setup.dtype)} rows "
            f"but received {np.dtype(X.dtype)}. This is a bug: please report it."
        )
    n_samples = X.shape[0]
    weights = fit_weights(sample_weight, n_samples, private=budget.is_private)
    if budget.is_private:
        # A weight above 1 counts as 1: each weighted loss stays L-Lipschitz.
        weights = capped_weights(weights)
    mechanism, record, alpha = setup.mechanism, setup.record, params.alpha
    X, scales = scaled_columns(X, setup.scaling)
    if not budget.is_private:
        # The non-private limit: the same regularized objective on the rows
        # as given (the public bound need not hold: nothing is released
        # privately), by the full-batch solver.
        return in_user_units(
            _non_private_fit(
                X, y, loss, alpha, params.fit_intercept, weights, record,
                penalize_intercept=True,
            ),
            scales,
        )
    # Sparse X is clipped through its stored entries and stays sparse;
    # float32 stays float32.
    X = clip_rows_to_norm(X, params.feature_norm_bound)
    s = 1.0 if params.fit_intercept else 0.0
    W = certified_regularized_erm(
        X,
        y,
        loss,
        alpha=alpha,
        intercept_scaling=s,
        tol=params.tol,
        smoothness=setup.smoothness,
        sample_weight=weights,
    )
    W = output_perturbation(W, mechanism=mechanism, rng=rng)
    # float32 X gives float32 coefficients (the solve and the noise are
    # float64, then cast), as scikit-learn's linear models do.
    dtype = X.dtype
    fit = LinearFit(W[:-1].T.astype(dtype), (s * W[-1]).astype(dtype), None, record)
    return in_user_units(fit, scales)


@dataclass(frozen=True)
class FrankWolfeSetup:
    """What private Frank-Wolfe fixes before it reads the data.

    The solver-level plan :func:`fit_dp_frank_wolfe` executes: the step
    count, one exponential mechanism per selection, the record, and the
    public shape, ``params`` (with the feature bound set) and ``budget``
    they were made from.
    """

    n_steps: int
    mechanisms: list
    intercept_mechanisms: list | None
    record: PrivacyRecord
    n_samples: int | None = None
    n_features: int | None = None
    params: FrankWolfeParams | None = None
    budget: object = None
    #: Public column map (a ScalingPlan of feature_bounds) or None.
    scaling: object = None


def frank_wolfe_setup(
    n_samples,
    n_features,
    n_outputs,
    params,
    budget,
    *,
    weighted,
    caveats=(),
    scaling=None,
):
    """Step count, selection mechanisms and record of private Frank-Wolfe.

    From public quantities only: ``params.feature_inf_bound`` must be set
    (the fit resolves None from the data first, with a caveat). The budget
    is converted to zCDP (the largest ``rho`` dp-accounting certifies for
    it); the coefficient selections get ``rho`` (less
    ``INTERCEPT_RHO_SHARE`` of it with an intercept, which the intercept
    selections get), split over the ``T`` steps in proportion to
    ``(t + 1)^2`` (Talwar, Thakurta and Zhang 2015, Algorithm 2, with the
    budget schedule of :func:`._frank_wolfe.selection_budget_shares`).

    Parameters
    ----------
    n_samples, n_features, n_outputs : int
        Shape of the problem (public).
    params : FrankWolfeParams
        Public hyperparameters, ``feature_inf_bound`` set.
    budget : PrivacyBudget
        Privacy inputs; a user noise multiplier is refused.
    weighted : bool
        Whether public sample weights were passed.
    caveats : tuple of str, default=()
        Caveats of the caller (an inferred feature bound). A bound inferred
        from the data (marked by the caveat of
        :func:`~._frank_wolfe.resolve_feature_inf_bound`, here or in
        ``budget.caveats``) with
        ``l1_radius * feature_inf_bound > 1e300`` is capped at
        ``1e300 / l1_radius``, with a caveat, rather than refused: the
        outcome of the fit must not hinge on one record's value. A public
        bound that large is refused (``ValueError``). Likewise, an inferred
        bound whose score sensitivity ``l1_radius * feature_inf_bound /
        n_samples`` the selections cannot use (below the smallest normal
        float64, or overflowing their logit factor ``epsilon0 / (2 Delta)``:
        :func:`~sklearn_dpfair.privacy._exponential.selection_scale_problem`)
        is raised to the least usable bound, with a caveat; a public one is
        refused (``ValueError`` naming ``l1_radius * feature_inf_bound``),
        at plan time.
    scaling : ScalingPlan or None, default=None
        Public column map of declared ``feature_bounds``
        (:func:`~._feature_scaling.public_scaling_plan`), applied before the
        coordinate clip: ``feature_inf_bound`` bounds the *scaled* columns,
        and the score sensitivity is unchanged (the clip holds whatever a
        record holds). ``l1_radius`` constrains the coefficients of the
        scaled columns.

    Returns
    -------
    setup : FrankWolfeSetup

    Raises
    ------
    ValueError
        If ``params.n_steps`` (``fw_steps``) exceeds
        :data:`~._frank_wolfe.MAX_FW_STEPS`, at any budget: the plan builds one
        selection per step even where the non-private limit solves without
        them.
    """
    if budget.noise_multiplier is not None:
        raise ValueError(
            "noise_multiplier does not apply to solver='dp-frank-wolfe': its "
            "selections are calibrated from epsilon and delta."
        )
    if params.n_steps is not None and params.n_steps > MAX_FW_STEPS:
        # Before the per-step shares and mechanisms are built (T of each):
        # compared as given, an int, so that no float conversion overflows
        # (nor Python's limit on the digits of an int it prints).
        steps = int(params.n_steps)
        given = (
            f"fw_steps={steps}"
            if steps < 10**20
            else "fw_steps (an int of more than 20 digits)"
        )
        raise ValueError(
            f"{given} exceeds {MAX_FW_STEPS}: each private Frank-Wolfe step is a "
            "full pass over the data and a selection among the l1 ball's "
            "vertices, each planned with its own share of the budget, and the "
            f"default count is at most {MAX_AUTO_STEPS}."
        )
    # The public radii in float64 whatever their type: a float32 l1_radius
    # of 1e38 times a feature bound would overflow float32 (in the checks
    # below and in the rate formula of auto_frank_wolfe_steps).
    params = replace(
        params,
        l1_radius=float(params.l1_radius),
        feature_inf_bound=float(params.feature_inf_bound),
    )
    l1_radius, fit_intercept, n_steps = (
        params.l1_radius,
        params.fit_intercept,
        params.n_steps,
    )
    bound = params.feature_inf_bound
    inferred = INFERRED_BOUND_CAVEAT in (*budget.caveats, *caveats)
    if inferred and not (
        l1_radius * bound <= _MAX_PREDICTION_BOUND
    ):
        # A bound read from X is one record's value: refusing (or printing
        # it) would let that record decide the outcome. Cap it from public
        # l1_radius instead; the coordinates are clipped to the cap and the
        # selections calibrated to it, so what runs is what is accounted.
        bound = _MAX_PREDICTION_BOUND / l1_radius
        while l1_radius * bound > _MAX_PREDICTION_BOUND:  # round-off of the /
            bound = math.nextafter(bound, 0.0)
        params = replace(params, feature_inf_bound=bound)
        caveats = (*caveats, _CAPPED_BOUND_CAVEAT)
    caveats = (*((WEIGHTS_CAVEAT,) if weighted else ()), *caveats)
    if not l1_radius * bound <= _MAX_PREDICTION_BOUND:
        # Public values only: a bound read from X was capped above.
        raise ValueError(
            f"l1_radius * feature_inf_bound = {l1_radius * bound:g} "
            f"exceeds {_MAX_PREDICTION_BOUND:g}: the linear predictions could "
            "overflow. Rescale the features or lower l1_radius."
        )
    # rho = inf (no privacy) stays inf in both parts.
    parts = budget.split(
        {"coef": 1.0 - INTERCEPT_RHO_SHARE, "intercept": INTERCEPT_RHO_SHARE}
        if fit_intercept
        else {"coef": 1.0}
    )
    coef_rho = parts["coef"].rho
    intercept_rho = parts["intercept"].rho if fit_intercept else 0.0
    if inferred and not math.isinf(coef_rho):
        # The least score sensitivity r B / n the selections can use (a
        # normal float64 that keeps epsilon0 / (2 r B / n) finite) at the
        # largest epsilon0 of any selection, that of the whole coef_rho. A
        # bound read from X below it is raised rather than refused, as one
        # above the cap is lowered: the outcome must not hinge on one
        # record's value. The clip and the selections use the raised bound.
        least = least_sensitivity(epsilon_per_selection(coef_rho, 1))
        floor = least * n_samples / l1_radius
        while score_sensitivity(l1_radius, floor, n_samples) < least:
            floor = math.nextafter(floor, math.inf)  # round-off of the / and *
        if bound < floor:
            bound = floor
            params = replace(params, feature_inf_bound=bound)
            caveats = (*caveats, _RAISED_BOUND_CAVEAT)
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
        epsilons = [epsilon_per_selection(rho * share, 1) for share in shares]
        # Public values only (a bound read from X was raised above). The
        # intercept's sensitivity INTERCEPT_BOUND / n cannot get this small.
        problem = selection_scale_problem(sensitivity, max(epsilons))
        if problem is not None:
            raise ValueError(
                "l1_radius * feature_inf_bound is too small for "
                "solver='dp-frank-wolfe': the score sensitivity of its "
                "selections, l1_radius * feature_inf_bound / n_samples = "
                f"{sensitivity:g}, cannot be used ({problem}). Rescale the "
                "features so that feature_inf_bound is of their size, or use "
                "a larger l1_radius."
            )
        return [ExponentialMechanism(sensitivity, e) for e in epsilons]

    mechanisms = selections(coef_rho, l1_radius, bound)
    events = [m.event() for m in mechanisms]
    intercept_mechanisms = None
    if fit_intercept:
        intercept_mechanisms = selections(intercept_rho, INTERCEPT_BOUND, 1.0)
        events += [m.event() for m in intercept_mechanisms]
    record = budget.account(
        # The record's noise multiplier is the last (least noisy) selection's.
        mechanisms[-1],
        description=with_scaling(
            "private Frank-Wolfe over the l1 ball (exponential mechanism over "
            "the vertices by Gumbel-max, each selection epsilon0^2/8-zCDP"
            + ("; the intercept's vertex selected likewise" if fit_intercept else "")
            + ")",
            scaling,
        ),
        adjacency="add_remove",
        steps=n_steps,
        dp_event=composed_event(events),
        caveats=caveats,
        # dp-accounting reads ZCDpEvent with RDP only.
        accountant=ZCDP_ACCOUNTANT,
    )
    return FrankWolfeSetup(
        n_steps,
        mechanisms,
        intercept_mechanisms,
        record,
        n_samples=n_samples,
        n_features=n_features,
        params=params,
        budget=budget,
        scaling=scaling,
    )


def fit_dp_frank_wolfe(X, y, loss, setup, *, rng, sample_weight=None):
    """Private Frank-Wolfe over the l1 ball of radius ``l1_radius`` (add/remove).

    Executes ``setup`` (:class:`FrankWolfeSetup`, from
    :func:`frank_wolfe_setup`, planned before this call from public
    quantities and a feature bound: the user's, or one resolved from ``X``
    with a ``PrivacyLeakWarning`` and a caveat by
    :func:`~._frank_wolfe.resolve_feature_inf_bound`) on ``X`` of the
    planned shape.

    Features are clipped coordinate-wise to ``feature_inf_bound``; the
    intercept lives in its own ball of radius ``INTERCEPT_BOUND``. The
    budget is converted to zCDP (``rho``, certified by dp-accounting); the
    coefficient selections get ``rho`` (less ``INTERCEPT_RHO_SHARE`` of it
    with an intercept, which the intercept selections get), split over the
    ``T`` steps in proportion to ``(t + 1)^2`` (``selection_budget_shares``;
    each selection ``epsilon0_t^2 / 8``-zCDP). The fit is described by the
    composed ``ZCDpEvent`` s of its selections, accounted with RDP. ``X`` may
    be a scipy.sparse matrix; it is never densified. ``sample_weight``
    (public) is used as given (rescaled to mean 1 only without privacy);
    each record's weighted raw gradient is clipped back to ``[-1, 1]``, so the
    score sensitivity is unchanged; weights of 1 are the unweighted fit.
    Without privacy (``epsilon=inf``) the same objective over the same l1
    ball is minimized exactly instead
    (:func:`~._non_private.minimize_l1_ball`): no feature clipping, no
    intercept bound, no step count, on any columns' scales.
    ``setup.scaling`` (public, or None) maps the columns by declared
    ``feature_bounds`` before they are clipped; the coefficients are
    returned in the user's units.
    """
    check_planned_shape(setup, X.shape)
    params, budget = setup.params, setup.budget
    X, scales = scaled_columns(X, setup.scaling)
    weights = fit_weights(
        sample_weight, X.shape[0], private=not math.isinf(budget.epsilon)
    )
    bound = params.feature_inf_bound
    fit_intercept = params.fit_intercept
    if not budget.is_private:
        # The non-private limit: the same objective over the same l1 ball,
        # minimized exactly (no clipped features, no intercept bound, no
        # step count: see minimize_l1_ball).
        fit = minimize_l1_ball(
            X, np.asarray(y), loss, params.l1_radius, n_outputs=loss.n_outputs,
            alpha=params.alpha, fit_intercept=fit_intercept, sample_weight=weights,
        )
        return in_user_units(
            LinearFit(
                fit.coef.T.astype(X.dtype), fit.intercept.astype(X.dtype), fit.n_iter,
                non_private_record(setup.record, fit.n_iter, L1_BALL_SOLVER),
            ),
            scales,
        )
    result = private_frank_wolfe(
        X,
        # In X's dtype, read by blocks: the labels are exact in any float.
        np.asarray(y),
        loss,
        l1_radius=float(params.l1_radius),
        mechanisms=setup.mechanisms,
        rng=rng,
        intercept_bound=INTERCEPT_BOUND if fit_intercept else None,
        intercept_mechanisms=setup.intercept_mechanisms,
        alpha=params.alpha,
        sample_weight=weights,
        # Clipped by the solver: a sparse X is not copied (clipped as read).
        feature_bound=bound,
    )
    # In X's dtype, as every other fit returns its model (float32 stays
    # float32); the iterates are float64.
    return in_user_units(
        LinearFit(
            result.coef.T.astype(X.dtype),
            np.asarray(result.intercept).astype(X.dtype),
            setup.n_steps,
            setup.record,
        ),
        scales,
    )


_NEWTON_DESCRIPTION = (
    "private Newton steps, double-noise mechanism (Ganesh et al. 2023): per "
    "step a Gaussian gradient, a Gaussian Hessian trace and a Gaussian on the "
    "regularized Newton direction; rows clipped to feature_norm_bound"
)


@dataclass(frozen=True)
class DPNewtonSetup:
    """What a double-noise Newton fit fixes before it reads the data.

    The solver-level plan :func:`fit_dp_newton` executes: the calibrated
    releases (:class:`~sklearn_dpfair._solvers._newton.NewtonPlan`), the
    record, and the public shape, ``params`` and ``budget`` they were made
    from.
    """

    plan: object
    record: PrivacyRecord
    n_samples: int
    n_features: int
    params: object
    budget: object
    #: Public column map (a ScalingPlan of feature_bounds) or None.
    scaling: object = None


def dp_newton_setup(n_samples, n_features, params, budget, *, weighted, scaling=None):
    """Plan and record of a double-noise Newton fit, from public quantities.

    ``n`` is public (the divisor of every mean, add/remove adjacency). The
    plan (:func:`~sklearn_dpfair._solvers._newton.plan`) calibrates the
    ``3 T`` Gaussian releases with the budget's accountant; the record
    accounts their composed event. ``scaling`` (a public
    :class:`~._feature_scaling.ScalingPlan` of declared ``feature_bounds``,
    or None) maps the columns before the rows are clipped:
    ``feature_norm_bound`` then bounds the *scaled* rows, and every
    sensitivity is unchanged.

    Returns
    -------
    setup : DPNewtonSetup
    """
    plan = newton_plan(n_samples, n_features, params, budget)
    caveats = (WEIGHTS_CAVEAT,) if weighted else ()
    description = _NEWTON_DESCRIPTION
    if weighted:
        description += "; each sample weight capped at 1"
    if plan.noise_multiplier > 0:
        description += (
            f"; noise multipliers {plan.gradient.noise_multiplier:.4g} (gradient, "
            f"sensitivity 1/n), {plan.trace.noise_multiplier:.4g} (trace) and "
            f"{plan.direction_noise_multiplier:.4g} (direction), each per step"
        )
    description = with_scaling(description, scaling)
    record = budget.account(
        plan.gradient,
        description=description,
        adjacency="add_remove",
        steps=plan.n_steps,
        dp_event=plan.dp_event,
        caveats=caveats,
    )
    # Three releases a step, each of its own noise and sensitivity: no one
    # (multiplier, sensitivity) pair describes them, dp_event does (the
    # composed-equivalent multiplier of the calibration is no release's).
    private = plan.noise_multiplier > 0
    record = replace(
        record,
        noise_multiplier=None if private else 0.0,
        clip_norm=None if private else record.clip_norm,
        steps=3 * plan.n_steps if private else record.steps,
    )
    return DPNewtonSetup(
        plan,
        record,
        n_samples,
        n_features,
        params,
        budget,
        scaling,
    )


def fit_dp_newton(X, y, loss, setup, *, rng, sample_weight=None, progress=None):
    """Private Newton steps by the double-noise mechanism (add/remove adjacency).

    Executes ``setup`` (:class:`DPNewtonSetup`, from :func:`dp_newton_setup`)
    on ``X`` of the planned shape. Binary logistic loss only. Rows are
    clipped to the public ``params.feature_norm_bound`` (never read from the
    data); public sample weights are capped at 1
    (:func:`~sklearn_dpfair.privacy.capped_weights`: the sensitivities are
    bounded, not clipped). ``epsilon = inf`` is the non-private limit: the
    full-batch L-BFGS-B minimizer of the same objective on the unclipped
    rows, as for DP-SGD. ``X`` may be dense or CSR (never densified; the
    Hessian is ``(d + 1) x (d + 1)`` dense). ``setup.scaling`` (public, or
    None) maps the columns by declared ``feature_bounds`` first; the
    coefficients are returned in the user's units.
    """
    if loss.n_outputs != 1:
        raise ValueError(
            "solver='dp-newton' fits binary problems only (two classes); use "
            "solver='dp-sgd' for three or more classes."
        )
    check_planned_shape(setup, X.shape)
    plan, record, params, budget = setup.plan, setup.record, setup.params, setup.budget
    weights = fit_weights(sample_weight, X.shape[0], private=budget.is_private)
    X, scales = scaled_columns(X, setup.scaling)
    if not budget.is_private:
        return in_user_units(
            _non_private_fit(
                X, y, loss, params.alpha, params.fit_intercept, weights, record
            ),
            scales,
        )
    dtype = X.dtype
    coef, intercept = noisy_newton(
        X,
        np.asarray(y, dtype=np.float64),
        plan,
        params,
        rng=rng,
        sample_weight=capped_weights(weights),
        progress=progress,
    )
    fit = LinearFit(
        coef[:, None].T.astype(dtype),
        np.array([intercept], dtype=dtype),
        plan.n_steps,
        record,
    )
    return in_user_units(fit, scales)


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
    # float32 X gives float32 coefficients, as scikit-learn's linear models
    # do, unless one lies beyond float32's largest float (a column in units
    # of 1e-40): cast, it would be inf and every prediction NaN. Both keep
    # one dtype, as the private fits' parameters do.
    parameters = np.concatenate([np.ravel(fit.coef), np.ravel(fit.intercept)])
    dtype = narrowed_if_finite(parameters, X.dtype).dtype
    return LinearFit(
        fit.coef.T.astype(dtype),
        fit.intercept.astype(dtype),
        fit.n_iter,
        non_private_record(record, fit.n_iter),
    )
