# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP-SGD for a dense network (Abadi et al., 2016, Algorithm 1).

Per step ``t = 1..T``, the order of the linear models' loop
(:mod:`sklearn_dpfair._solvers._sgd`):

1. a Poisson batch ``B_t`` (every row with probability ``q``,
   :func:`~sklearn_dpfair._solvers._sampling.poisson_batch`);
2. forward pass, loss derivative times the record's public weight, backward
   pass (:mod:`._network`);
3. clip factors from the ghost norms of the *full* gradient, all layers
   jointly, so that one record moves the stacked sum by at most ``C``;
4. clipped sums ``A_{l-1}^T (c * Delta_l)`` per layer (a record whose
   factor cannot be formed, e.g. a weight near the largest float, clipped
   to ``C`` all the same: :func:`~._network.clipped_network_sums`);
5. one Gaussian release: noise of std ``sigma C`` on every block of the
   stacked sum (:meth:`~sklearn_dpfair.privacy.GaussianMechanism.privatize_blocks`);
6. divide by the *expected* batch size ``q n`` (public);
7. add the data-independent L2 term ``alpha W`` (weights only) and step;
8. accumulate the average of the last half of the iterates
   (post-processing).

The initialization (from a child of the fit's generator), the batches and
the noise are drawn on the host: a seed gives the same network, batches and
noise on numpy and on torch.
"""

import math
from dataclasses import dataclass

from .._solvers._linear import weighted_raw_gradient
from .._solvers._sampling import poisson_batch
from .._solvers._schedules import tail_start
from ..privacy._clipping import clip_margin
from ..utils._array_api import array_namespace
from ._network import clipped_network_sums, forward

__all__ = ["NetworkSGDResult", "clipped_network_gradient", "noisy_network_sgd"]


@dataclass
class NetworkSGDResult:
    """Tail-averaged weights and biases (X's namespace) and the step count."""

    weights: list
    biases: list
    n_steps: int


def clipped_network_gradient(
    X, y, loss, weights, biases, *, activation, clip_norm, sample_weight=None
):
    """The sum over the rows of ``X`` of their clipped full-network gradients.

    Parameters
    ----------
    X : array of shape (n_rows, n_features)
        The batch.
    y : array of shape (n_rows,)
        Encoded targets as ``loss`` expects them.
    loss : object
        Pointwise loss with ``raw_gradient(y, raw)``.
    weights, biases : lists of arrays
        Current parameters.
    activation : str
        Activation of the hidden layers.
    clip_norm : float
        Bound ``C`` on every example's stacked gradient (``inf``: no clipping).
    sample_weight : array of shape (n_rows,) or None, default=None
        Public weights, multiplied into the loss derivative before clipping.

    Returns
    -------
    weight_sums, bias_sums : lists of arrays
        The clipped sum, block by block; its change when one row is added or
        removed is at most ``clip_norm`` (the blocks stacked).
    """
    inputs, pre_activations, raw = forward(X, weights, biases, activation)
    raw_gradient = weighted_raw_gradient(loss.raw_gradient(y, raw), sample_weight)
    # Terms made of float32 values get the core's margin on the bound. A
    # record whose factor cannot be formed (a weight near the largest
    # float) is clipped to C, not dropped (clipped_network_sums).
    return clipped_network_sums(
        inputs, pre_activations, weights, raw_gradient, activation, clip_norm,
        margin=clip_margin(X, raw_gradient),
    )


def noisy_network_sgd(
    X,
    y,
    loss,
    weights,
    biases,
    *,
    activation,
    mechanism,
    sampling_probability,
    n_steps,
    learning_rate,
    alpha,
    rng,
    tail_fraction=0.5,
    sample_weight=None,
    progress=None,
    monitor=None,
):
    """Run DP-SGD on a dense network and return the tail-averaged parameters.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        numpy or any array-API array (e.g. a torch tensor).
    y : array of shape (n_samples,)
        Encoded targets, same namespace and device.
    loss : object
        Pointwise loss (``n_outputs`` outputs).
    weights, biases : lists of arrays
        Initial parameters in X's namespace, device and dtype.
    activation : str
        Activation of the hidden layers.
    mechanism : GaussianMechanism
        Clip norm and noise multiplier of every step.
    sampling_probability : float
        Poisson rate ``q``.
    n_steps : int
        Number of steps ``T``, fixed before the data are read.
    learning_rate : float
        Constant step size.
    alpha : float
        L2 penalty ``alpha / 2 ||W||^2`` on the weights (not the biases).
    rng : numpy.random.Generator
        Source of the batches and the noise.
    tail_fraction : float, default=0.5
        Fraction of the last iterates averaged.
    sample_weight : array of shape (n_samples,) or None, default=None
        Public weights (X's namespace), applied before clipping.
    progress : Progress or None, default=None
        ``progress(t + 1, proxy)`` after step ``t``, with ``proxy`` the norm
        of the released update divided by the step size (the noisy
        gradient, penalty included): computed from released iterates only.
    monitor : callable or None, default=None
        ``monitor(t + 1, weights, biases)`` after step ``t``; it may raise to
        stop the run. It reads the iterates, hence the data, outside any
        accounting, so only a mechanism without noise and without clipping
        (the non-private limit, where nothing is released) takes one: a
        private run has no data-dependent branch.

    Returns
    -------
    result : NetworkSGDResult

    Raises
    ------
    ValueError
        If ``monitor`` is given with a mechanism that adds noise or clips.
    """
    if monitor is not None and (
        mechanism.noise_multiplier != 0 or not math.isinf(mechanism.clip_norm)
    ):
        raise ValueError(
            "monitor reads the data outside the accounting: only a run without "
            "noise and without clipping (epsilon=inf) takes one."
        )
    xp = array_namespace(X)
    n_samples = X.shape[0]
    denominator = sampling_probability * n_samples
    n_layers = len(weights)
    tail_from = tail_start(n_steps, tail_fraction)
    sums = None
    for t in range(n_steps):
        idx = poisson_batch(rng, n_samples, sampling_probability, like=y)
        wb = None if sample_weight is None else xp.take(sample_weight, idx, axis=0)
        g_weights, g_biases = clipped_network_gradient(
            xp.take(X, idx, axis=0),
            xp.take(y, idx, axis=0),
            loss,
            weights,
            biases,
            activation=activation,
            clip_norm=mechanism.clip_norm,
            sample_weight=wb,
        )
        # One release: the stacked sum, whose sensitivity is the clip norm.
        noisy = mechanism.privatize_blocks([*g_weights, *g_biases], rng)
        previous = [*weights, *biases]
        weights = [
            W - learning_rate * (xp.astype(g, W.dtype) / denominator + alpha * W)
            for W, g in zip(weights, noisy[:n_layers])
        ]
        biases = [
            b - learning_rate * xp.astype(g, b.dtype) / denominator
            for b, g in zip(biases, noisy[n_layers:])
        ]
        if progress is not None:
            progress.moved(t + 1, previous, [*weights, *biases], learning_rate)
        if monitor is not None:
            monitor(t + 1, weights, biases)
        if t >= tail_from:
            params = [*weights, *biases]
            sums = params if sums is None else [s + p for s, p in zip(sums, params)]
    n_avg = n_steps - tail_from
    averaged = [s / n_avg for s in sums]
    return NetworkSGDResult(averaged[:n_layers], averaged[n_layers:], n_steps)
