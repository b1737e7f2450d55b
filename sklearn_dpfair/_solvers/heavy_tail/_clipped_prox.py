# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Algorithm 29 of Lowy's thesis: one-pass noisy clipped proximal SGD.

For a composite risk ``F = F0 + f1`` satisfying the proximal-PL condition
(Thm 63; covers LASSO and elastic net): only the data term's gradient goes
through MeanOracle1; the public penalty ``f1`` (l1 / elastic net, plus the
constraint ball) enters through its prox, which is post-processing. Constant
step ``1 / (2 beta)``; the last iterate is returned.
"""

import numpy as np

from ._mean_oracle import clipped_gradient_mean
from ._projections import project_ball, prox_elastic_net

__all__ = ["clipped_prox"]


def clipped_prox(
    X,
    y,
    loss,
    *,
    batches,
    clip_norm,
    mechanism,
    step_size,
    l1,
    l2,
    radius,
    intercept_scaling,
    rng,
):
    """Run Algorithm 29 from ``w_0 = 0`` and return the last iterate.

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
    step_size : float
        Constant step ``1 / (2 beta)``.
    l1, l2 : float
        Penalty ``l1 ||coef||_1 + l2/2 ||coef||^2`` (not on the intercept).
    radius : float
        Radius of the constraint ball ``W``.
    intercept_scaling : float
        1 with an intercept, 0 without.
    rng : numpy.random.Generator

    Returns
    -------
    w : ndarray of shape (n_features + 1,)
    """
    n_features = X.shape[1]
    w = np.zeros(n_features + 1)
    for idx in batches:
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
        # prox of (l1 + l2 + indicator of the ball): the ball's radial
        # projection after the separable prox is exact, because rescaling
        # keeps the sign pattern of the soft-thresholded point (Yu, 2013).
        w = prox_elastic_net(w - step_size * grad, step_size, l1, l2, n_features)
        w = project_ball(w, radius)
    return w
