# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Plan, run and describe a DP-SGD fit of a dense network.

The plan is the linear models' DP-SGD plan
(:func:`~sklearn_dpfair._solvers._private_fit.dp_sgd_setup`): the same
Poisson schedule ``q, T = ceil(epochs / q)``, the same calibration of the
noise multiplier by dp-accounting, the same event and record. Only the
"auto" step size differs, because it counts the network's parameters; it is
still a function of public quantities only.
"""

import copy
import math
from dataclasses import dataclass, replace

import numpy as np

from .._solvers._feature_scaling import (
    exact_feature_scaling,
    fit_feature_scaling,
    reach_capped_weights,
)
from .._solvers._private_fit import (
    DPSGDParams,
    check_planned_shape,
    dp_sgd_setup,
    weights_in_dtype,
)
from .._solvers._schedules import (
    check_sgd_steps,
    penalty_capped_learning_rate,
    resolve_epochs,
)
from ..privacy import fit_weights
from ..utils._array_api import NUMPY_BACKEND, to_numpy
from ._network import forward, init_parameters, layer_sizes, n_parameters
from ._sgd import noisy_network_sgd

__all__ = [
    "MLPParams",
    "NetworkFit",
    "auto_network_learning_rate",
    "fit_dp_network",
    "network_objective",
    "network_setup",
]

# learning_rate="auto". What limits the step of private training is the noise
# on the averaged gradient relative to the clip norm,
#     r = sigma * sqrt(n_params) / (q * n),
# as for the linear models (_solvers._schedules.auto_learning_rate), but a
# network tolerates a smaller step than a convex model before it diverges.
# A sweep on the validation split of UCI Adult's training file (public
# preprocessor, one hidden layer of 64 relu units, clip 1, epsilon 1 and 3,
# benchmarks/bench_neural.py --sweep, 2 seeds) found validation accuracy
# rising with the step up to r * lr ~ 0.3-0.6 (epsilon 1: r = 0.36, lr 1-4 all
# 0.836; epsilon 3: r = 0.14, lr 4 best at 0.838; lr 0.1 lost 0.02 at both):
# 0.5 / r, capped at 4 when the noise is negligible.
AUTO_LEARNING_RATE_SCALE = 0.5
AUTO_LEARNING_RATE_MAX = 4.0
# Without clipping (epsilon = inf) the gradient is the plain mean gradient,
# unbounded: 1.0 suits standardized or range-scaled inputs and the widths
# scikit-learn uses (load_digits, standardized: 0.980 test accuracy at 30
# epochs against MLPClassifier's 0.973; Adult public preprocessor: 0.838).
# It is not stable on every problem: the loss's curvature grows with the top
# eigenvalue of the standardized columns' correlation matrix (up to
# n_features when they are collinear) and, for a deep network, with the
# product of the other layers' norms (a (32, 32) identity network on
# standardized wine diverged to weights of 1e234 at step 1.0).
NON_PRIVATE_LEARNING_RATE = 1.0
# So the non-private limit, which releases nothing and may read the data,
# checks its run: a run is diverging when its penalized training loss, at the
# end of epochs 1, 2, 4, 8, ... or for the returned average, is not finite or
# exceeds that of the initialization (gradient descent at a step below 2 / L
# of an L-smooth loss never increases it). "auto" then restarts from the same
# initialization and batches at half the step (backtracking, as Armijo's rule
# halves a step that fails to decrease the objective), at most this many
# times (down to 1/1024), and a given learning_rate is refused.
NON_PRIVATE_HALVINGS = 10
# Rows per block when the non-private check evaluates the training loss: the
# activations of a block, not of all n rows, are held at once.
_OBJECTIVE_ROWS = 4096
_NON_PRIVATE_DESCRIPTION = (
    "non-private limit (epsilon=inf, no noise_multiplier): the same minibatch "
    "SGD on Poisson batches, without noise and without clipping, on columns "
    "standardized by their exact mean and standard deviation (by their median "
    "and robust scale where a few rows dominate them)"
)


class _Diverged(Exception):
    """A non-private run's training loss left the initialization's level."""


@dataclass(frozen=True)
class MLPParams:
    """Public hyperparameters of :func:`fit_dp_network`.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int
        Widths of the hidden layers.
    activation : str
        Activation of the hidden layers.
    clip_norm : float
        Bound on every example's full gradient (all layers stacked).
    batch_size : int, "auto" or "full"
        Expected Poisson batch size.
    epochs : int
        Expected passes over the data; ``T = ceil(epochs / q)``.
    learning_rate : float or "auto"
        Constant step size.
    alpha : float
        L2 penalty on the weights.
    """

    hidden_layer_sizes: tuple
    activation: str
    clip_norm: float
    batch_size: object
    epochs: int
    learning_rate: object
    alpha: float


@dataclass
class NetworkFit:
    """Fitted weights and biases (numpy unless dispatch), steps and record."""

    weights: list
    biases: list
    n_steps: int
    record: object


def auto_network_learning_rate(
    noise_multiplier, sampling_probability, n_samples, n_params
):
    """Constant step size of a network's DP-SGD from public quantities only.

    Parameters
    ----------
    noise_multiplier : float
        Calibrated noise multiplier; 0 means a non-private run.
    sampling_probability : float
        Poisson sampling rate ``q``.
    n_samples : int
        Number of rows (public).
    n_params : int
        Number of weights and biases.

    Returns
    -------
    learning_rate : float

    Examples
    --------
    >>> from sklearn_dpfair.neural._fit import auto_network_learning_rate
    >>> round(auto_network_learning_rate(5.0, 0.05, 30_000, 6_000), 3)
    1.936
    >>> auto_network_learning_rate(0.0, 0.05, 30_000, 6_000)
    1.0
    """
    if noise_multiplier == 0:
        return NON_PRIVATE_LEARNING_RATE
    noise_ratio = (
        noise_multiplier * math.sqrt(n_params) / (sampling_probability * n_samples)
    )
    return min(AUTO_LEARNING_RATE_MAX, AUTO_LEARNING_RATE_SCALE / noise_ratio)


def network_setup(
    n_samples, n_features, n_outputs, params, budget, *, weighted, prior=None
):
    """Schedule, mechanism, step size and record of a network's DP-SGD fit.

    From public quantities only: the linear models' plan
    (:func:`~sklearn_dpfair._solvers._private_fit.dp_sgd_setup`) for the same
    schedule and budget, with the network's "auto" step size. ``prior`` (a
    :class:`~sklearn_dpfair._solvers._feature_scaling.ScalingPlan` or None)
    is the column scaling released before the steps, composed into the
    event as the linear models compose it.

    Returns
    -------
    setup : DPSGDSetup
        ``learning_rate`` resolved; ``record.dp_event`` is the fit's event.

    Raises
    ------
    ValueError
        If the schedule has more than ``MAX_STEPS`` steps
        (:func:`~.._solvers._schedules.check_sgd_steps`), before anything
        is calibrated.
    """
    check_sgd_steps(n_samples, params.batch_size, params.epochs)
    sgd_params = DPSGDParams(
        clip_norm=params.clip_norm,
        batch_size=params.batch_size,
        epochs=params.epochs,
        # "auto" is resolved below (dp_sgd_setup's counts a linear model's
        # parameters); a given rate is checked there against alpha.
        learning_rate=params.learning_rate,
        alpha=params.alpha,
    )
    setup = dp_sgd_setup(
        n_samples,
        n_features,
        n_outputs,
        sgd_params,
        budget,
        weighted=weighted,
        prior=prior,
    )
    if params.learning_rate == "auto":
        sizes = layer_sizes(n_features, params.hidden_layer_sizes, n_outputs)
        learning_rate = penalty_capped_learning_rate(
            auto_network_learning_rate(
                setup.mechanism.noise_multiplier,
                setup.sampling_probability,
                n_samples,
                n_parameters(sizes),
            ),
            params.alpha,
        )
        setup = replace(setup, learning_rate=learning_rate)
    return setup


def network_objective(
    X, y, loss, weights, biases, *, activation, alpha, sample_weight=None
):
    """Penalized training loss of a network: the non-private divergence check.

    ``sum_i w_i loss_i / n + (alpha / 2) sum_l ||W_l||^2`` (weights only, as
    the steps penalize them), evaluated by blocks of rows. It reads every
    row: only the non-private limit, which releases nothing, calls it.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        The training rows (numpy or the backend's namespace).
    y : ndarray of shape (n_samples,)
        Encoded targets (numpy).
    loss : object
        Output loss.
    weights, biases : lists of arrays
        The parameters, in ``X``'s namespace.
    activation : str
        Activation of the hidden layers.
    alpha : float
        L2 penalty on the weights.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Weights of the rows (numpy, mean 1).

    Returns
    -------
    objective : float
        ``inf`` or ``nan`` for a diverged network.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair.neural._fit import network_objective
    >>> X, y = np.ones((2, 1)), np.array([0.0, 1.0])
    >>> W, b = [np.zeros((1, 1))], [np.zeros(1)]
    >>> round(network_objective(X, y, BinaryLogisticLoss(), W, b,
    ...                         activation="relu", alpha=0.0), 4)  # log 2
    0.6931
    """
    n_samples = X.shape[0]
    total = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, n_samples, _OBJECTIVE_ROWS):
            stop = min(n_samples, start + _OBJECTIVE_ROWS)
            raw = forward(X[start:stop, ...], weights, biases, activation)[2]
            values = loss.loss(y[start:stop], np.asarray(to_numpy(raw), np.float64))
            if sample_weight is not None:
                values = values * sample_weight[start:stop]
            total += float(np.sum(values))
        penalty = sum(
            float(np.sum(np.square(to_numpy(W), dtype=np.float64))) for W in weights
        )
        return total / n_samples + 0.5 * alpha * penalty


def fit_dp_network(
    X,
    y,
    loss,
    setup,
    params,
    *,
    rng,
    backend=NUMPY_BACKEND,
    sample_weight=None,
    progress=None,
):
    """DP-SGD with Poisson sampling and per-example clipping of a dense network.

    Add/remove adjacency: each step releases one Gaussian sum of the
    examples' full gradients, each clipped to ``clip_norm``; the noise is
    calibrated by dp-accounting before the data are read.
    ``epsilon = inf`` (without a user noise multiplier) runs the same loop
    without noise or clipping, with weights rescaled to mean 1.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Validated data (numpy, or the backend's namespace).
    y : array of shape (n_samples,)
        Encoded targets.
    loss : object
        Output loss (binary logistic or softmax).
    setup : DPSGDSetup
        The plan of the fit (:func:`network_setup` for ``X``'s shape): the
        schedule, mechanism, step size and record, the budget and the column
        scaling; the fit refuses data of another shape.
    params : MLPParams
        Public hyperparameters (the architecture and the penalty).
    rng : numpy.random.Generator
        Source of the initialization, the batches and the noise.
    backend : ArrayBackend, default=NUMPY_BACKEND
        Where the loop runs.
    sample_weight : array of shape (n_samples,) or None, default=None
        Public weights (:func:`~sklearn_dpfair.privacy.fit_weights`).
    progress : Progress or None, default=None
        Prints about one line per epoch from released quantities
        (:mod:`sklearn_dpfair._solvers._progress`).

    ``setup.scaling`` (a ScalingPlan or None) gives the per-column location
    and scale, public (declared bounds) or private (robust quantiles whose
    releases the event composes,
    :mod:`sklearn_dpfair._solvers._feature_scaling`); the network is trained
    on the scaled columns and its first layer is mapped back to the user's
    units. Without privacy the columns are always standardized by their
    exact (weighted) mean and standard deviation (median and robust scale
    where a few rows dominate them, and the rows that scale leaves beyond
    an exact standardization's reach weighted down to it,
    :func:`~sklearn_dpfair._solvers._feature_scaling.reach_capped_weights`):
    the step size 1.0 assumes unit-scale inputs, and nothing is released.

    Returns
    -------
    fit : NetworkFit
    """
    check_planned_shape(setup, X.shape)
    budget, scaling = setup.budget, setup.scaling
    n_samples, n_features = X.shape
    weights = fit_weights(sample_weight, n_samples, private=budget.is_private)
    scales = None if scaling is None else fit_feature_scaling(X, scaling, rng)
    exact = scales is None and not budget.is_private
    if exact:
        scales = exact_feature_scaling(X, weights, robust=True)
    if scales is not None:
        X = scales.transform(X)
    if exact:
        # The rows a robust scale leaves far out count as rows at the exact
        # scale's reach: their gradients would otherwise dwarf the bulk's.
        weights = reach_capped_weights(X, weights)
    sizes = layer_sizes(n_features, params.hidden_layer_sizes, loss.n_outputs)
    dtype = np.float32 if "float32" in str(X.dtype) else np.float64
    init_W, init_b = init_parameters(sizes, params.activation, _init_rng(rng), dtype)
    X = backend.asarray(X)
    init_W = [backend.asarray(W) for W in init_W]
    init_b = [backend.asarray(b) for b in init_b]

    def run(learning_rate, rng, monitor=None):
        return noisy_network_sgd(
            X,
            backend.asarray(y, dtype=X.dtype),
            loss,
            init_W,
            init_b,
            activation=params.activation,
            mechanism=setup.mechanism,
            sampling_probability=setup.sampling_probability,
            n_steps=setup.n_steps,
            learning_rate=learning_rate,
            alpha=params.alpha,
            rng=rng,
            sample_weight=(
                None
                if weights is None
                else backend.asarray(weights_in_dtype(weights, X.dtype), dtype=X.dtype)
            ),
            progress=(
                None
                if progress is None
                else progress.per(
                    setup.n_steps, resolve_epochs(params.epochs, n_samples)
                )
            ),
            monitor=monitor,
        )

    if budget.is_private:
        # The planned run, as accounted: no branch on the data.
        result = run(setup.learning_rate, rng)
    else:
        result = _checked_non_private_run(
            run,
            lambda W, b: network_objective(
                X,
                np.asarray(to_numpy(y), dtype=np.float64),
                loss,
                W,
                b,
                activation=params.activation,
                alpha=params.alpha,
                sample_weight=weights,
            ),
            (init_W, init_b),
            setup,
            given=params.learning_rate != "auto",
            rng=rng,
        )
    record = setup.record
    if not budget.is_private:
        record = replace(record, mechanism=_NON_PRIVATE_DESCRIPTION)
    weights, biases = result.weights, result.biases
    if scales is not None:
        # w . (x - m) / s + b for every first-layer unit, in the raw units.
        coef, intercept = scales.coefficients_in_user_units(
            to_numpy(weights[0]).T, to_numpy(biases[0])
        )
        weights = [backend.asarray(coef.T.copy()), *weights[1:]]
        biases = [backend.asarray(intercept), *biases[1:]]
    return NetworkFit(
        [backend.to_output(W) for W in weights],
        [backend.to_output(b) for b in biases],
        setup.n_steps,
        record,
    )


def _checked_non_private_run(run, objective, initial, setup, *, given, rng):
    """The non-private limit's run, restarted at half the step while it diverges.

    A run is diverging when the penalized training loss (``objective``) at
    the end of epochs 1, 2, 4, ... or of the returned average is not finite
    or exceeds the initialization's (see :data:`NON_PRIVATE_HALVINGS`).
    Every attempt starts from the same initialization and draws the same
    batches (a copy of ``rng``'s state before the first), so the accepted
    run is the plain run at its step. Nothing is released, so the checks
    read the data freely; a private fit never comes here.

    Parameters
    ----------
    run : callable
        ``run(learning_rate, rng, monitor)`` returns a NetworkSGDResult.
    objective : callable
        ``objective(weights, biases)`` on the training rows.
    initial : tuple
        ``(weights, biases)`` the runs start from.
    setup : DPSGDSetup
        The plan: step size, schedule.
    given : bool
        Whether the user gave ``learning_rate`` (refused on divergence, not
        halved).
    rng : numpy.random.Generator
        The fit's generator; the first attempt draws from it as an unchecked
        run would.

    Returns
    -------
    result : NetworkSGDResult

    Raises
    ------
    ValueError
        Naming ``learning_rate``, if a given step diverges, or "auto" still
        does after :data:`NON_PRIVATE_HALVINGS` halvings.
    """
    start = objective(*initial)
    q = setup.sampling_probability
    # The ends of epochs 1, 2, 4, ... before the last step (whose average is
    # checked in any case): a diverging run stops early, a sound one pays
    # about log2(epochs) loss evaluations.
    checkpoints = set()
    epochs = 1
    while (step := math.ceil(epochs / q - 1e-9)) < setup.n_steps:
        checkpoints.add(step)
        epochs *= 2

    def monitor(t, weights, biases):
        if t in checkpoints and not objective(weights, biases) <= start:
            raise _Diverged

    learning_rate = setup.learning_rate
    snapshot = copy.deepcopy(rng)
    for halving in range(NON_PRIVATE_HALVINGS + 1):
        attempt_rng = rng if halving == 0 else copy.deepcopy(snapshot)
        try:
            # A diverging iterate overflows before it is caught: nothing is
            # released, and the check below reports it.
            with np.errstate(over="ignore", invalid="ignore"):
                result = run(learning_rate, attempt_rng, monitor)
            if objective(result.weights, result.biases) <= start:
                return result
        except _Diverged:
            pass
        if given:
            raise ValueError(
                f"learning_rate={learning_rate!r} diverges in the non-private "
                "fit (epsilon=inf, no clipping): the training loss rose above "
                "that of the initialization. Pass a smaller learning_rate, or "
                "learning_rate='auto', which halves the step until it does not."
            )
        learning_rate = learning_rate / 2
    raise ValueError(
        f"learning_rate='auto' diverges in the non-private fit (epsilon=inf, no "
        f"clipping) from {setup.learning_rate!r} down to {2 * learning_rate!r}, "
        f"{NON_PRIVATE_HALVINGS} halvings: the training loss rose above that of "
        "the initialization. Pass a smaller learning_rate, or check the "
        "features and the architecture."
    )


def _init_rng(rng):
    """An independent child of the fit's generator for the initialization.

    Spawning reads the generator's seed sequence, not its stream, so the
    batches and the noise are drawn from ``rng`` exactly as a linear model's
    DP-SGD draws them for the same seed (the same first batch, for one), and
    the initialization is still fixed by the seed on every backend.
    """
    try:
        return rng.spawn(1)[0]
    except TypeError:
        # A generator built without a seed sequence cannot spawn: the
        # initialization is then the first draws of its stream.
        return rng

