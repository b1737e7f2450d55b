# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Algorithm 8 of Lowy's thesis: one-pass noisy clipped accelerated SGD (AC-SA).

For a convex, beta-smooth population risk (Thm 173); needs no strong
convexity. Step ``t = 1..T`` queries MeanOracle1 on a fresh disjoint batch at
the extrapolated point ``w_md``, then ``w_t = Pi_W(w_{t-1} - t/(2 eta) G_t)``
and ``w_ag`` is the running average (Ghadimi and Lan's schedule
``alpha_t = 2/(t+1)``, ``eta_t = 4 eta / (t(t+1))``). Parallel composition
over the disjoint batches makes the run ``rho``-zCDP.
"""

import numpy as np

from ._clipped_sgd import ridge_gradient
from ._mean_oracle import clipped_gradient_mean
from ._projections import project_ball

__all__ = ["clipped_acsa"]


def clipped_acsa(
    X,
    y,
    loss,
    *,
    batches,
    clip_norm,
    mechanism,
    eta,
    radius,
    alpha,
    intercept_scaling,
    rng,
):
    """Run Algorithm 8 from ``w_0 = 0`` and return ``w_ag_T``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        Pointwise loss with ``raw_gradient``.
    batches : ndarray of shape (T, batch_size)
        Disjoint row indices, one batch per step.
    clip_norm : float
        Per-sample clip threshold ``C``.
    mechanism : GaussianMechanism
        Noise of each query (sensitivity ``2 C``).
    eta : float
        Step-size constant (see ``acsa_step_size``).
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
    """
    n_features = X.shape[1]
    w = np.zeros(n_features + 1)
    w_ag = w.copy()
    for t, idx in enumerate(batches, start=1):
        a = 2.0 / (t + 1)
        w_md = (1.0 - a) * w_ag + a * w
        grad = clipped_gradient_mean(
            X[idx],
            y[idx],
            w_md,
            loss,
            clip_norm=clip_norm,
            mechanism=mechanism,
            intercept_scaling=intercept_scaling,
            rng=rng,
        )
        grad += ridge_gradient(w_md, alpha, n_features)
        w = project_ball(w - (t / (2.0 * eta)) * grad, radius)
        w_ag = a * w + (1.0 - a) * w_ag
    return w_ag
