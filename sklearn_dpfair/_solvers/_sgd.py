# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Noisy clipped minibatch SGD for linear models (DP-SGD).

Order of calls in :func:`noisy_sgd`, per step ``t = 1..T``:

1. sample a Poisson batch ``B_t`` (each row with probability ``q``);
2. raw predictions ``X_B W + s w_0`` and raw-space gradients ``R_B``;
3. clip factors from factorized norms ``||r_i|| * ||[x_i, s]||``;
4. clipped sum ``[X_B, s]^T (c * R_B)``;
5. Gaussian noise of std ``sigma * C`` on that sum (the only private step);
6. divide by the *expected* batch size ``q n`` (a public constant: dividing
   by the realized ``|B_t|`` would leak it under add/remove adjacency);
7. add the data-independent L2 term and update;
8. accumulate the tail average (post-processing).

With ``noise_multiplier = 0`` and ``clip_norm = inf`` the same loop is plain
minibatch SGD, which is how ``epsilon = inf`` shares the code path.
"""

from dataclasses import dataclass

import numpy as np

from ..privacy._clipping import augmented_row_norms, clipped_gradient_sum
from ._sampling import poisson_batch

__all__ = ["NoisySGDResult", "noisy_sgd"]


@dataclass
class NoisySGDResult:
    """What :func:`noisy_sgd` returns.

    ``coef`` has shape ``(n_features, n_outputs)``, ``intercept`` shape
    ``(n_outputs,)``; ``n_steps`` is the number of noisy updates ``T``.
    """

    coef: np.ndarray
    intercept: np.ndarray
    n_steps: int


def noisy_sgd(
    X,
    y,
    loss,
    *,
    mechanism,
    sampling_probability,
    n_steps,
    learning_rate,
    alpha,
    intercept_scaling,
    rng,
    tail_fraction=0.5,
):
    """Run DP-SGD on a linear model and return the tail-averaged iterate.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Encoded targets as the loss expects them.
    loss : object
        Pointwise loss with ``n_outputs`` and ``raw_gradient(y, raw)``.
    mechanism : GaussianMechanism
        Clip norm and noise multiplier of each step.
    sampling_probability : float
        Poisson sampling rate ``q`` in (0, 1].
    n_steps : int
        Number of steps ``T``, fixed before looking at the data.
    learning_rate : float
        Constant step size.
    alpha : float
        L2 penalty on the coefficients (not on the intercept).
    intercept_scaling : float
        Constant ``s`` appended to each row; 0 fits no intercept.
    rng : numpy.random.Generator
        Source of the batches and of the noise.
    tail_fraction : float, default=0.5
        Fraction of the last iterates that are averaged.

    Returns
    -------
    result : NoisySGDResult
    """
    n_samples, n_features = X.shape
    k = loss.n_outputs
    dtype = X.dtype
    coef = np.zeros((n_features, k), dtype=dtype)
    # The intercept is parametrized as b = s * w0 so that the augmented row
    # [x, s] is what gets clipped; with s = 0 it stays at zero.
    w0 = np.zeros(k, dtype=dtype)
    s = float(intercept_scaling)
    row_norms = augmented_row_norms(X, s)
    expected_batch_size = sampling_probability * n_samples

    tail_start = n_steps - max(1, int(np.ceil(tail_fraction * n_steps)))
    coef_sum = np.zeros_like(coef)
    w0_sum = np.zeros_like(w0)

    for t in range(n_steps):
        idx = poisson_batch(rng, n_samples, sampling_probability)
        Xb = X[idx]
        raw = Xb @ coef + s * w0
        raw_grad = loss.raw_gradient(y[idx], raw)
        g_coef, g_w0 = clipped_gradient_sum(
            Xb, raw_grad, row_norms[idx], mechanism.clip_norm, s
        )
        # Noise on both blocks: together they are the (d + 1) x K clipped sum
        # whose sensitivity is the clip norm.
        g_coef = mechanism.privatize(g_coef, rng) / expected_batch_size
        g_w0 = mechanism.privatize(g_w0, rng) / expected_batch_size
        coef -= learning_rate * (g_coef + alpha * coef)
        if s:
            w0 -= learning_rate * g_w0
        if t >= tail_start:
            coef_sum += coef
            w0_sum += w0

    n_avg = n_steps - tail_start
    return NoisySGDResult(
        coef=coef_sum / n_avg, intercept=s * w0_sum / n_avg, n_steps=n_steps
    )
