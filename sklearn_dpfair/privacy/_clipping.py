# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-sample gradient clipping for linear models, without per-sample gradients.

For a linear model the gradient of one example is an outer product
``g_i = r_i x~_i^T`` of the raw-space gradient ``r_i`` (one entry per output)
and the augmented row ``x~_i = [x_i, s]`` (``s`` the intercept scaling, 0
without intercept). Its Frobenius norm factorizes,
``||g_i|| = ||r_i|| * ||x~_i||``, so the clip factor of every example costs
O(K) given the row norms, and the clipped sum is one matrix product
``X_B^T (c * R_B)``. No ``n x d`` gradient matrix is ever formed.

Written against the array API: the functions compute in the namespace and on
the device of their inputs (numpy, or torch on a GPU).
"""

import math

from ..utils._array_api import (
    array_namespace,
    column_sums,
    device_of,
    narrow_matmul,
    rowwise_dot,
)

__all__ = [
    "augmented_row_norms",
    "clip_factors",
    "clip_factors_from_norms",
    "clipped_gradient_sum",
]


def augmented_row_norms(X, intercept_scaling=0.0):
    """Euclidean norms of the rows of ``[X, intercept_scaling]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._clipping import augmented_row_norms
    >>> augmented_row_norms(np.array([[3.0, 0.0]]), 4.0)
    array([5.])
    """
    xp = array_namespace(X)
    return xp.sqrt(rowwise_dot(X, X) + float(intercept_scaling) ** 2)


def clip_factors(raw_gradient, row_norms, clip_norm):
    """Factors ``c_i = min(1, C / ||g_i||)`` from factorized norms.

    The factors are float64 whatever the input precision: the clipped sum
    they weight is then accumulated in float64 too, which is what the numpy
    solver has always done.

    Parameters
    ----------
    raw_gradient : array of shape (n_samples, n_outputs)
        Per-sample gradient in raw-prediction space.
    row_norms : array of shape (n_samples,)
        Norms of the augmented rows ``[x_i, s]``.
    clip_norm : float
        Clip threshold ``C``; ``inf`` disables clipping.

    Returns
    -------
    factors : array of shape (n_samples,)
        In the namespace and on the device of ``raw_gradient``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._clipping import clip_factors
    >>> clip_factors(np.array([[2.0], [0.1]]), np.array([1.0, 1.0]), 1.0)
    array([0.5, 1. ])
    """
    xp = array_namespace(raw_gradient, row_norms)
    if math.isinf(clip_norm):
        return xp.ones(
            raw_gradient.shape[0],
            dtype=raw_gradient.dtype,
            device=device_of(raw_gradient),
        )
    norms = xp.sqrt(rowwise_dot(raw_gradient, raw_gradient)) * row_norms
    norms = xp.astype(norms, xp.float64, copy=False)
    # A row whose norm overflows to inf with an exactly-zero raw gradient
    # gives 0 * inf = nan; its gradient is zero, so its norm is zero.
    norms = xp.where(xp.isnan(norms), xp.zeros_like(norms), norms)
    return clip_factors_from_norms(norms, clip_norm)


def clip_factors_from_norms(norms, clip_norm):
    """``min(1, C / norm)`` for given per-example norms (finite ``C``).

    Computed as ``C / max(norm, C)``, which never divides by a tiny number
    (``C / tiny`` overflows for ``C > 1``): it is exactly 1.0 for rows inside
    the ball, 1.0 for a zero norm, and 0 for a norm that overflowed to inf.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._clipping import clip_factors_from_norms
    >>> clip_factors_from_norms(np.array([0.0, 0.5, 4.0]), 2.0)
    array([1. , 1. , 0.5])
    """
    xp = array_namespace(norms)
    return clip_norm / xp.clip(norms, clip_norm, None)


def clipped_gradient_sum(X, raw_gradient, row_norms, clip_norm, intercept_scaling):
    """Sum of per-sample clipped gradients of a linear model.

    Returns the coefficient block ``X^T (c * R)`` of shape
    ``(n_features, n_outputs)`` and the intercept block
    ``s * sum_i c_i r_i`` of shape ``(n_outputs,)`` (the intercept's gradient
    in the scaled parametrization ``b = s * w_0``), in the namespace and on
    the device of ``X``.

    Changing one example moves the stacked sum by at most ``clip_norm`` in
    Frobenius norm; that is the sensitivity the Gaussian noise is calibrated
    to under add/remove adjacency.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._clipping import (
    ...     augmented_row_norms, clipped_gradient_sum)
    >>> X, R = np.array([[3.0, 4.0]]), np.array([[2.0]])
    >>> coef_block, intercept_block = clipped_gradient_sum(
    ...     X, R, augmented_row_norms(X), 1.0, 0.0)
    >>> coef_block.ravel()
    array([0.6, 0.8])
    """
    weighted = raw_gradient * clip_factors(raw_gradient, row_norms, clip_norm)[:, None]
    # Promotes mixed precisions (float32 rows, float64 factors) as the
    # standard's matmul does; torch's @ operator would refuse them.
    coef_block = narrow_matmul(X, weighted, transpose_a=True)
    intercept_block = float(intercept_scaling) * column_sums(weighted)
    return coef_block, intercept_block
