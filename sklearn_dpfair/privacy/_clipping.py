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
"""

import numpy as np

__all__ = ["clip_factors", "clipped_gradient_sum", "augmented_row_norms"]

# Guard against 0/0 for examples whose gradient is exactly zero: their clip
# factor is then 1 (nothing to clip), which the minimum below yields.
_TINY = np.finfo(np.float64).tiny


def augmented_row_norms(X, intercept_scaling=0.0):
    """Euclidean norms of the rows of ``[X, intercept_scaling]``."""
    sq = np.einsum("ij,ij->i", X, X)
    return np.sqrt(sq + float(intercept_scaling) ** 2)


def clip_factors(raw_gradient, row_norms, clip_norm):
    """Factors ``c_i = min(1, C / ||g_i||)`` from factorized norms.

    Parameters
    ----------
    raw_gradient : ndarray of shape (n_samples, n_outputs)
        Per-sample gradient in raw-prediction space.
    row_norms : ndarray of shape (n_samples,)
        Norms of the augmented rows ``[x_i, s]``.
    clip_norm : float
        Clip threshold ``C``; ``inf`` disables clipping.

    Returns
    -------
    factors : ndarray of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._clipping import clip_factors
    >>> clip_factors(np.array([[2.0], [0.1]]), np.array([1.0, 1.0]), 1.0)
    array([0.5, 1. ])
    """
    if np.isinf(clip_norm):
        return np.ones(raw_gradient.shape[0], dtype=raw_gradient.dtype)
    norms = np.sqrt(np.einsum("ij,ij->i", raw_gradient, raw_gradient)) * row_norms
    return np.minimum(1.0, clip_norm / np.maximum(norms, _TINY))


def clipped_gradient_sum(X, raw_gradient, row_norms, clip_norm, intercept_scaling):
    """Sum of per-sample clipped gradients of a linear model.

    Returns the coefficient block ``X^T (c * R)`` of shape
    ``(n_features, n_outputs)`` and the intercept block
    ``s * sum_i c_i r_i`` of shape ``(n_outputs,)`` (the intercept's gradient
    in the scaled parametrization ``b = s * w_0``).

    Changing one example moves the stacked sum by at most ``clip_norm`` in
    Frobenius norm; that is the sensitivity the Gaussian noise is calibrated
    to under add/remove adjacency.
    """
    weighted = raw_gradient * clip_factors(raw_gradient, row_norms, clip_norm)[:, None]
    coef_block = X.T @ weighted
    intercept_block = float(intercept_scaling) * weighted.sum(axis=0)
    return coef_block, intercept_block
