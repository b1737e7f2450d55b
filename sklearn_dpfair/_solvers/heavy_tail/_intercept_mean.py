# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private intercept correction of the ``"dp-sgd"`` solver (squared loss).

Why: per-example clipping turns DP-SGD into an M-estimator. Its intercept
solves ``E[clip(r)] = 0`` for the residuals ``r``, a Huber-type location,
not the mean the squared loss targets: with skewed noise (a Pareto tail)
the clipped steps leave the intercept biased towards the bulk, and the
bias is the larger the smaller the steps' clip.

What: one Newton step on the intercept of the squared loss (its curvature
in the intercept is 1), with the mean gradient replaced by the private
clipped mean of Lowy's thesis, Algorithm 5 (MeanOracle1), in one
dimension: ``w0 <- w0 - (sum_i clip_tau(g_i) + N(0, (tau sigma)^2)) / n``
where ``g_i = w_i (x_i^T coef + w0 - y_i)`` is record ``i``'s (weighted)
gradient in the intercept at the released steps' average. The model the
residuals are taken at is the output of an earlier release, so the step is
a new release composed with it (adaptive composition). One mean in one
dimension buys a clip ``tau`` several times the steps' at a small noise:
Lemma 49 bounds the bias of the clipped mean by ``r^(k) / ((k - 1)
tau^(k - 1))``.

Privacy: under add/remove adjacency one record adds or removes one term
``clip_tau(g_i)`` of absolute value at most ``tau`` (a non-finite gradient
contributes the fixed value 0), so the sum's sensitivity is ``tau``; the
Gaussian noise of std ``tau / sqrt(2 rho)`` makes the release rho-zCDP
(Bun and Steinke, Prop. 1.6). The sum is divided by the public ``n``.
"""

import numpy as np

from ...privacy._zcdp import gaussian_noise_std
from .._linear import raw_predictions
from .._row_blocks import row_block, row_blocks

__all__ = ["intercept_mean_noise_std", "private_intercept_step"]


def intercept_mean_noise_std(clip, rho, n_samples):
    """Noise std of the corrected intercept, in target units (public).

    ``tau / (sqrt(2 rho) n)``: the Gaussian noise on the clipped sum, divided
    by the public ``n``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._intercept_mean import (
    ...     intercept_mean_noise_std)
    >>> intercept_mean_noise_std(2.0, 0.5, 100)
    0.02
    """
    return gaussian_noise_std(clip, rho) / n_samples


@np.errstate(over="ignore", invalid="ignore")
def private_intercept_step(
    X, y, coef, intercept, clip, budget, rng, sample_weight=None
):
    """Private Newton step on the intercept of the squared loss.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Target, in the units the model was fitted in.
    coef : ndarray of shape (n_features,)
    intercept : float
        The model the residuals are taken at (released before).
    clip : float
        Clip ``tau`` of each record's gradient in the intercept (finite,
        positive).
    budget : PrivacyBudget
        The release's part of the fit's budget
        (:meth:`~sklearn_dpfair.privacy.PrivacyBudget.split`): its Gaussian
        mechanism of sensitivity ``clip`` (no noise when not private).
    rng : numpy.random.Generator
        Source of the noise.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public weights (:func:`~sklearn_dpfair.privacy.fit_weights`); each record's *weighted*
        gradient is clipped.

    Returns
    -------
    step : float
        The change of the intercept: ``-(clipped sum + noise) / n``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._intercept_mean import (
    ...     private_intercept_step)
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> X, y = np.zeros((4, 1)), np.array([1.0, 1.0, 1.0, 9.0])
    >>> rng = np.random.default_rng(0)
    >>> non_private = PrivacyBudget(np.inf, 1e-5)
    >>> private_intercept_step(X, y, np.zeros(1), 0.0, 2.0, non_private, rng)
    1.25
    """
    # In X's precision, as the steps' parameters: a float64 coef would make
    # the product promote a float32 X to a float64 copy of all of it.
    coef = np.asarray(coef, dtype=X.dtype)[:, None]
    # The mechanism comes from the planned part, before the data is read.
    mechanism = budget.gaussian(clip)
    total = 0.0
    # By blocks of rows: no n-length temporaries for a sparse X.
    for rows in row_blocks(X):
        raw = raw_predictions(row_block(X, rows), coef, intercept)
        gradient = raw[:, 0] - y[rows]
        if sample_weight is not None:
            gradient *= sample_weight[rows]
        # A non-finite gradient (a record beyond float range) contributes 0.
        terms = np.where(np.isfinite(gradient), np.clip(gradient, -clip, clip), 0.0)
        total += float(np.sum(terms))
    noisy = mechanism.privatize(np.array([total]), rng)
    return float(-noisy[0] / X.shape[0])
