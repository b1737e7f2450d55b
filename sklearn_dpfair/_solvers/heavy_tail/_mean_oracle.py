# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""MeanOracle1: the private clipped mean of the heavy-tail optimizers.

Lowy's thesis, Algorithm 5 (from Barber and Duchi): clip each vector to norm
``C``, average over the fixed batch size ``s``, add Gaussian noise. Under
replace-one adjacency the sensitivity of the clipped *sum* is ``2 C``; the
noise is added to the sum and the result divided by the public constant
``s``, which is numerically the same as noising the mean and never uses the
realized batch size.

Bias and variance (Lemma 49): if ``E z = nu`` and ``E ||z||^k <= r^(k)``,
the bias of the clipped mean is at most ``r^(k) / ((k-1) C^(k-1))`` and its
variance at most ``d sigma^2 + E||z||^2 / s``.

Order of calls in :func:`clipped_gradient_mean` (one noisy query):

1. raw predictions and raw-space gradients ``psi_i`` of the batch;
2. clip factors from factorized norms ``|psi_i| ||x~_i||``;
3. clipped sum ``[X_B, s]^T (c * psi)``;
4. Gaussian noise of std ``2 C / sqrt(2 rho_step)`` (the only private step);
5. divide by the public batch size.

Whatever one record holds, its clipped term is finite with norm at most
``C`` (the shared clipping core of :mod:`sklearn_dpfair.privacy._clipping`):
norms are computed so they do not overflow, and a record whose gradient is
not finite (an overflowed prediction ``x_i^T w`` or residual) contributes the
fixed value 0. The floating-point warnings such a record would raise are
silenced, because a warning that depends on one record is itself a leak.
"""

import numpy as np

from ...privacy._clipping import (
    clip_factors_from_norms,
    finite_rows_mask,
    per_example_norms,
    stable_row_norms,
)
from .._linear import augmented_row_norms, clipped_gradient_sum

__all__ = [
    "clipped_gradient_mean",
    "gradient_norms_at_zero",
    "linear_raw",
    "mean_oracle",
]

# Floating-point events of one record (overflow of a huge row's prediction,
# inf - inf, 0 * inf) must not surface as data-dependent warnings; their
# results are handled explicitly (non-finite terms contribute 0).
_QUIET = {"over": "ignore", "invalid": "ignore", "divide": "ignore", "under": "ignore"}


def mean_oracle(Z, clip_norm, mechanism, rng):
    """Algorithm 5 on explicit vectors: ``(sum_i Pi_C(z_i) + noise) / s``.

    A vector with a non-finite entry, or whose norm exceeds the largest
    float, contributes the fixed value 0; every other one is clipped with
    its overflow-safe norm.

    Parameters
    ----------
    Z : ndarray of shape (s, d)
        The batch of vectors.
    clip_norm : float
        Clip threshold ``C`` (``inf``: no clipping).
    mechanism : GaussianMechanism
        Noise on the clipped sum; its ``clip_norm`` is the sum's
        sensitivity ``2 C``.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    mean : ndarray of shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._mean_oracle import mean_oracle
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> Z = np.array([[3.0, 4.0], [0.3, 0.4]])
    >>> mean_oracle(Z, 1.0, GaussianMechanism(2.0, 0.0), np.random.default_rng(0))
    array([0.45, 0.6 ])
    """
    with np.errstate(**_QUIET):
        # A non-finite vector contributes 0 (a fixed, data-independent value).
        Z = np.where(finite_rows_mask(Z)[:, None], Z, 0.0)
        if np.isinf(clip_norm):
            clipped = Z
        else:
            factors = clip_factors_from_norms(stable_row_norms(Z), clip_norm)
            clipped = Z * factors[:, None]
        clipped_sum = clipped.sum(axis=0)
    return mechanism.privatize(clipped_sum, rng) / Z.shape[0]


def linear_raw(X, w, intercept_scaling):
    """Raw predictions ``X w[:-1] + s w[-1]`` as a column, shape ``(n, 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._mean_oracle import linear_raw
    >>> linear_raw(np.ones((2, 2)), np.array([1.0, 2.0, 3.0]), 1.0).ravel()
    array([6., 6.])
    """
    return (X @ w[:-1] + intercept_scaling * w[-1])[:, None]


def gradient_norms_at_zero(X, y, loss, intercept_scaling):
    """Per-example gradient norms of a linear model at the public start ``w = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SquaredLoss
    >>> from sklearn_dpfair._solvers.heavy_tail._mean_oracle import gradient_norms_at_zero
    >>> gradient_norms_at_zero(np.array([[3.0], [1.7e308]]), np.array([2.0, 0.0]),
    ...                        SquaredLoss(), 4.0)
    array([10.,  0.])
    """
    s = float(intercept_scaling)
    zero = np.zeros(X.shape[1] + 1)
    with np.errstate(**_QUIET):
        raw_grad = loss.raw_gradient(y, linear_raw(X, zero, s))
        row_norms = augmented_row_norms(X, s)
    with np.errstate(**_QUIET):
        return per_example_norms(raw_grad, row_norms)


def clipped_gradient_mean(
    X, y, w, loss, *, clip_norm, mechanism, intercept_scaling, rng
):
    """MeanOracle1 on the per-sample gradients ``psi_i [x_i, s]`` of a linear model.

    Equal to :func:`mean_oracle` applied to the explicit per-sample
    gradients, without forming them (the clip factor uses the factorized
    norm ``|psi_i| ||[x_i, s]||``).

    Parameters
    ----------
    X : ndarray of shape (s, n_features)
        The batch rows.
    y : ndarray of shape (s,)
        The batch targets.
    w : ndarray of shape (n_features + 1,)
        Coefficients, then the intercept parameter ``w0`` (intercept
        ``s * w0``).
    loss : object
        Pointwise loss with ``raw_gradient(y, raw)``.
    clip_norm : float
        Per-sample clip threshold ``C``.
    mechanism : GaussianMechanism
        Noise on the clipped sum (sensitivity ``2 C`` under replace-one).
    intercept_scaling : float
        ``s``: 1 with an intercept, 0 without (then the last coordinate
        stays exactly 0).
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    gradient : ndarray of shape (n_features + 1,)
        Noisy clipped mean gradient.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SquaredLoss
    >>> from sklearn_dpfair._solvers.heavy_tail._mean_oracle import clipped_gradient_mean
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> g = clipped_gradient_mean(
    ...     np.array([[1.0], [2.0]]), np.array([1.0, 1.0]), np.zeros(2), SquaredLoss(),
    ...     clip_norm=np.inf, mechanism=GaussianMechanism(np.inf, 0.0),
    ...     intercept_scaling=1.0, rng=np.random.default_rng(0))
    >>> g
    array([-1.5, -1. ])
    """
    s = float(intercept_scaling)
    with np.errstate(**_QUIET):
        raw_grad = loss.raw_gradient(y, linear_raw(X, w, s))
        row_norms = augmented_row_norms(X, s)
        coef_block, intercept_block = clipped_gradient_sum(
            X, raw_grad, row_norms, clip_norm, s
        )
    total = np.concatenate([coef_block[:, 0], intercept_block])
    noisy = mechanism.privatize(total, rng)
    if not s:
        # Without an intercept its coordinate carries no data; keep it at 0
        # (post-processing) so that it never enters the projection norm.
        noisy[-1] = 0.0
    return noisy / X.shape[0]
