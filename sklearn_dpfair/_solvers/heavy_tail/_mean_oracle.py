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
``C`` (the linear-model layer :mod:`sklearn_dpfair._solvers._linear`):
norms are computed so they do not overflow, and a record whose gradient is
not finite (an overflowed prediction ``x_i^T w`` or residual) contributes the
fixed value 0. The floating-point warnings such a record would raise are
silenced, because a warning that depends on one record is itself a leak.
"""

import numpy as np
import scipy.sparse as sp

from ...privacy._clipping import clip_factors_from_norms, clip_margin
from .._rows import (
    _projected_from_largest,
    canonical_csr,
    finite_rows_mask,
    stable_row_norms,
)
from .._linear import LinearModel, weighted_raw_gradient
from .._row_blocks import batch_block, batch_blocks, row_block, row_blocks

__all__ = [
    "clipped_gradient_mean",
    "gradient_norms_at_zero",
    "mean_oracle",
    "scaled_augmented_gram",
]

# Floating-point events of one record (overflow of a huge row's prediction,
# inf - inf, 0 * inf) must not surface as data-dependent warnings; their
# results are handled explicitly (non-finite terms contribute 0).
_QUIET = {"over": "ignore", "invalid": "ignore", "divide": "ignore", "under": "ignore"}


def mean_oracle(Z, clip_norm, mechanism, rng):
    """Algorithm 5 on explicit vectors: ``(sum_i Pi_C(z_i) + noise) / s``.

    A vector with a non-finite entry contributes the fixed value 0; every
    other one is clipped with its overflow-safe norm, to
    ``z min(1, C / ||z||)``. One whose factor ``C / ||z||`` cannot be
    formed (its norm exceeds the largest float, or the factor would be
    subnormal: a vector near the largest float) is projected onto the ball
    from its largest entry instead, so that its norm is ``C`` too, never 0.

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
            # Factor 0 on a finite nonzero vector: C / ||z|| was not
            # representable (a norm past the largest float, or a subnormal
            # quotient, which the core sets to 0), not a term to drop.
            # Projected as clip_rows_to_norm projects a huge row: from its
            # largest entry, in float64, inside the bound of Z's dtype.
            lost = (factors == 0) & np.any(Z != 0, axis=1)
            if lost.any():
                clipped[lost] = _projected_from_largest(
                    np, Z[lost].astype(np.float64), clip_norm * clip_margin(Z)
                )
        clipped_sum = clipped.sum(axis=0)
    return mechanism.privatize(clipped_sum, rng) / Z.shape[0]


def scaled_augmented_gram(X, intercept_scaling, row_scale):
    """Dense ``A^T A``, ``A = diag(row_scale) [X, s]``, for a sparse ``X``.

    The rows are scaled *before* the product, so a huge row scaled down to
    a bounded norm never overflows in ``x_ij x_ik``; ``X`` is never made
    dense (one scaled copy of its stored entries).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers.heavy_tail._mean_oracle import (
    ...     scaled_augmented_gram)
    >>> scaled_augmented_gram(sp.csr_matrix(np.array([[2.0], [0.0]])), 1.0,
    ...                       np.array([0.5, 1.0]))
    array([[1.  , 0.5 ],
           [0.5 , 1.25]])
    """
    s = float(intercept_scaling)
    X = canonical_csr(X)
    d = X.shape[1]
    gram = np.zeros((d + 1, d + 1))
    # By blocks of rows: the scaled copy is one block's, not all of X's.
    for rows in row_blocks(X):
        scale = np.asarray(row_scale[rows], dtype=np.float64)
        A = sp.diags(scale) @ row_block(X, rows).astype(np.float64)
        gram[:d, :d] += (A.T @ A).toarray()
        gram[:d, d] += s * np.asarray(A.T @ scale).ravel()
        gram[d, d] += s**2 * (scale @ scale)
    gram[d, :d] = gram[:d, d]
    return gram


def gradient_norms_at_zero(X, y, loss, intercept_scaling, sample_weight=None):
    """Per-example (weighted) gradient norms of a linear model at ``w = 0``.

    ``sample_weight`` (public) multiplies each example's gradient, as in the
    clipped sums (None: unweighted).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SquaredLoss
    >>> from sklearn_dpfair._solvers.heavy_tail._mean_oracle import gradient_norms_at_zero
    >>> gradient_norms_at_zero(np.array([[3.0], [1.7e308]]), np.array([2.0, 0.0]),
    ...                        SquaredLoss(), 4.0)
    array([10.,  0.])
    """
    model = LinearModel(n_outputs=1, intercept_scaling=float(intercept_scaling))
    coef, w0 = model.split(np.zeros((X.shape[1] + 1, 1)))
    blocks = row_blocks(X)
    norms = None
    # By blocks of rows for a sparse X: no n-length temporaries.
    for rows in blocks:
        Xb = row_block(X, rows)
        with np.errstate(**_QUIET):
            raw_grad = loss.raw_gradient(y[rows], model.raw_predictions(Xb, coef, w0))
            raw_grad = weighted_raw_gradient(
                raw_grad, None if sample_weight is None else sample_weight[rows]
            )
            part = model.gradient_norms(Xb, raw_grad)
        if len(blocks) == 1:
            return part
        if norms is None:
            norms = np.empty(X.shape[0], dtype=part.dtype)
        norms[rows] = part
    return norms


def clipped_gradient_mean(
    X, y, w, loss, *, clip_norm, mechanism, intercept_scaling, rng, sample_weight=None,
    rows=None,
):
    """MeanOracle1 on the per-sample gradients ``psi_i [x_i, s]`` of a linear model.

    Equal to :func:`mean_oracle` applied to the explicit per-sample
    gradients, without forming them (the clip factor uses the factorized
    norm ``|psi_i| ||[x_i, s]||``).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        The rows (the batch's are ``X[rows]``).
    y : ndarray of shape (n_samples,)
        The targets.
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
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public weights of the rows: each gradient is weighted *before* it is
        clipped, so a record's term stays within ``C`` whatever its weight.
    rows : ndarray of int or None, default=None
        The batch: indices of its rows (the mean is over ``len(rows)``
        rows); None: every row.

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
    model = LinearModel(n_outputs=1, intercept_scaling=float(intercept_scaling))
    coef, w0 = model.split(w[:, None])
    total = None
    n_rows = X.shape[0] if rows is None else len(rows)
    # By blocks of rows for a sparse X, a batch's gathered one block at a
    # time (a large batch, or its temporaries, would weigh as much as the
    # matrix); one block for a dense X.
    for part in batch_blocks(X, rows):
        Xb = batch_block(X, part)
        with np.errstate(**_QUIET):
            raw_grad = loss.raw_gradient(y[part], model.raw_predictions(Xb, coef, w0))
            # Saturated where a huge public weight overflows the product:
            # the term is then clipped to C, not dropped.
            raw_grad = weighted_raw_gradient(
                raw_grad, None if sample_weight is None else sample_weight[part]
            )
            sums = model.clipped_gradient_sum(Xb, raw_grad, model.row_norms(Xb), clip_norm)
        total = sums if total is None else (total[0] + sums[0], total[1] + sums[1])
    blocks = total
    # One draw for the stacked (d + 1)-vector: the mechanism's sensitivity
    # (2 C under replace-one) is not the clip C, so this is not
    # LinearModel.noisy_gradient (which clips at the mechanism's norm).
    noisy = mechanism.privatize(model.stack(*blocks)[:, 0], rng)
    if not model.has_intercept:
        # Without an intercept its coordinate carries no data; keep it at 0
        # (post-processing) so that it never enters the projection norm.
        noisy[-1] = 0.0
    return noisy / n_rows
