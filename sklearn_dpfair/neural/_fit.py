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

import math
from dataclasses import dataclass, replace

import numpy as np

from .._solvers._feature_scaling import exact_feature_scaling, fit_feature_scaling
from .._solvers._private_fit import (
    DPSGDParams,
    check_planned_shape,
    dp_sgd_setup,
    weights_in_dtype,
)
from .._solvers._schedules import penalty_capped_learning_rate, resolve_epochs
from ..privacy import fit_weights
from ..utils._array_api import NUMPY_BACKEND, to_numpy
from ._network import init_parameters, layer_sizes, n_parameters
from ._sgd import noisy_network_sgd

__all__ = [
    "MLPParams",
    "NetworkFit",
    "auto_network_learning_rate",
    "fit_dp_network",
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
# unbounded: 1.0 is stable for standardized or range-scaled inputs and the
# widths scikit-learn uses (load_digits, standardized: 0.980 test accuracy at
# 30 epochs against MLPClassifier's 0.973; Adult public preprocessor: 0.838).
NON_PRIVATE_LEARNING_RATE = 1.0
_NON_PRIVATE_DESCRIPTION = (
    "non-private limit (epsilon=inf, no noise_multiplier): the same minibatch "
    "SGD on Poisson batches, without noise and without clipping, on columns "
    "standardized by their exact mean and standard deviation"
)


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
    """
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
    exact (weighted) mean and standard deviation: the step size 1.0 assumes
    unit-scale inputs, and nothing is released.

    Returns
    -------
    fit : NetworkFit
    """
    check_planned_shape(setup, X.shape)
    budget, scaling = setup.budget, setup.scaling
    n_samples, n_features = X.shape
    weights = fit_weights(sample_weight, n_samples, private=budget.is_private)
    scales = None if scaling is None else fit_feature_scaling(X, scaling, rng)
    if scales is None and not budget.is_private:
        scales = exact_feature_scaling(to_numpy(X), weights)
    if scales is not None:
        X = scales.transform(X)
    sizes = layer_sizes(n_features, params.hidden_layer_sizes, loss.n_outputs)
    dtype = np.float32 if "float32" in str(X.dtype) else np.float64
    init_W, init_b = init_parameters(sizes, params.activation, _init_rng(rng), dtype)
    X = backend.asarray(X)
    result = noisy_network_sgd(
        X,
        backend.asarray(y, dtype=X.dtype),
        loss,
        [backend.asarray(W) for W in init_W],
        [backend.asarray(b) for b in init_b],
        activation=params.activation,
        mechanism=setup.mechanism,
        sampling_probability=setup.sampling_probability,
        n_steps=setup.n_steps,
        learning_rate=setup.learning_rate,
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
            else progress.per(setup.n_steps, resolve_epochs(params.epochs, n_samples))
        ),
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
