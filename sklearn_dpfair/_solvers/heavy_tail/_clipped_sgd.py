# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Algorithm 27 of Lowy's thesis: one-pass noisy clipped SGD with weighted averaging.

For a mu-strongly convex, beta-smooth *population* risk (Thm 176). Each of
the ``T + 1`` steps draws a fresh disjoint batch, queries MeanOracle1 at the
current iterate, takes a projected step and accumulates the Stich (2019)
weighted average. No per-sample Lipschitz or smoothness constant is needed,
and every row is used at most once, so with ``rho``-zCDP per query the
whole run is ``rho``-zCDP by parallel composition.
"""

import numpy as np

from ._mean_oracle import clipped_gradient_mean
from ._projections import project_ball

__all__ = ["clipped_sgd", "ridge_gradient"]


def ridge_gradient(w, alpha, n_penalized):
    """Gradient of ``alpha/2 ||w[:n_penalized]||^2`` (data independent, never clipped).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._clipped_sgd import ridge_gradient
    >>> ridge_gradient(np.array([1.0, 2.0, 3.0]), 0.5, 2)
    array([0.5, 1. , 0. ])
    """
    grad = np.zeros_like(w)
    grad[:n_penalized] = alpha * w[:n_penalized]
    return grad


def clipped_sgd(
    X,
    y,
    loss,
    *,
    batches,
    clip_norm,
    mechanism,
    step_sizes,
    weights,
    radius,
    alpha,
    intercept_scaling,
    rng,
):
    """Run Algorithm 27 from ``w_0 = 0`` and return the weighted average.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        Pointwise loss with ``raw_gradient``.
    batches : ndarray of shape (T + 1, batch_size)
        Disjoint row indices, one batch per step.
    clip_norm : float
        Per-sample clip threshold ``C``.
    mechanism : GaussianMechanism
        Noise of each query (sensitivity ``2 C``).
    step_sizes, weights : ndarray of shape (T + 1,)
        Stich's schedule (see ``stich_schedule``).
    radius : float
        Radius of the constraint ball ``W``.
    alpha : float
        Ridge penalty on the coefficients (not the intercept).
    intercept_scaling : float
        1 with an intercept, 0 without.
    rng : numpy.random.Generator

    Returns
    -------
    w : ndarray of shape (n_features + 1,)
        Averaged coefficients then intercept parameter.
    """
    n_features = X.shape[1]
    w = np.zeros(n_features + 1)
    average = np.zeros_like(w)
    for idx, step, weight in zip(batches, step_sizes, weights):
        grad = clipped_gradient_mean(
            X[idx],
            y[idx],
            w,
            loss,
            clip_norm=clip_norm,
            mechanism=mechanism,
            intercept_scaling=intercept_scaling,
            rng=rng,
        )
        grad += ridge_gradient(w, alpha, n_features)
        w = project_ball(w - step * grad, radius)
        average += weight * w
    return average / np.sum(weights)
