# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private smoothness and strong-convexity estimates of a linear least-squares risk.

For squared (and Huber) loss the population Hessian is ``E x~ x~^T``, so its
extreme eigenvalues are the smoothness ``beta`` and strong convexity ``mu``
that Algorithm 27 needs (Thm 176). They are estimated privately:

1. a private median ``m_S`` of ``||x~_i||^2`` (exponential mechanism, on
   the bins of the public edges ``ROW_NORM_EDGES``, 1e-8 .. 1e40 with open
   outer bins: :func:`~._private_quantile.private_scale_median`) sets the
   row clip ``C_S = 2 m_S``; a median in the top bin, beyond 1e40, bounds
   no clip, and the matrix is then not released (see
   :func:`private_curvature`);
2. the second-moment matrix of the clipped rows, ``S = (1/n) sum x^_i x^_i^T``
   (each term has Frobenius norm at most ``C_S``, so the replace-one
   sensitivity is ``2 C_S / n``), gets symmetric Gaussian noise;
3. ``beta = c_beta (lambda_max + nu)`` with the noise's spectral-norm margin
   ``nu = 2 sigma_S sqrt(d)`` (an upper bound), and the point estimate
   ``mu = c_mu max(lambda_min, 0)`` (subtracting ``nu`` here too would
   double the noise's downward push; it inflated kappa several-fold).

Noise on the upper triangle only (mirrored) is valid: that vector's l2
sensitivity is at most the matrix's Frobenius sensitivity.

Whatever one record holds, its term ``x^_i x^_i^T`` is finite with Frobenius
norm at most ``C_S``: a row whose squared norm overflows is scaled by
``sqrt(C_S) / ||x~_i||`` with the overflow-safe norm
(:func:`~sklearn_dpfair._solvers._rows.stable_row_norms`), never by a
factor computed from ``inf``; and a finite nonzero row whose factor cannot
be formed (its norm past the largest float, or the factor subnormal: a row
near the largest float) is projected onto the ball of radius ``sqrt(C_S)``
from its largest entry, so that its term has norm ``C_S`` like any other
clipped row's, never 0.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...privacy._clipping import clip_factors_from_norms, clip_margin
from ...privacy._releases import forgo_release
from .._linear import augmented_row_norms
from .._rows import (
    _projected_from_largest,
    canonical_csr,
    squared_row_norms,
    stable_row_norms,
)
from ._mean_oracle import scaled_augmented_gram
from ._private_quantile import private_scale_median

__all__ = ["CURVATURE_SCALE_SHARE", "CurvatureEstimate", "private_curvature"]

# Twice the median squared row norm clips only the largest rows (about 10%
# of standard Gaussian rows at d = 6, fewer as d grows) and shrinks both
# eigenvalues alike, so kappa is barely biased; a factor 4 doubles
# the sensitivity, i.e. quadruples the noise variance, and made kappa 1.5x
# too large on the benchmark's dev seeds.
_ROW_CLIP_FACTOR = 2.0
#: Share of the curvature budget spent on the row-norm median: the scalar
#: median needs far less budget than the d (d + 1) / 2 noisy matrix entries.
CURVATURE_SCALE_SHARE = 0.2
# Spectral norm of a symmetric Gaussian matrix with entry std sigma is
# about 2 sigma sqrt(d) (semicircle law); used as a safety margin.
_SPECTRAL_MARGIN = 2.0


@dataclass
class CurvatureEstimate:
    """Private ``(beta, mu)`` of ``E x~ x~^T`` and the row clip used.

    ``row_clip`` is ``inf`` (``smoothness`` ``inf``, ``strong_convexity``
    0: no bound either way) when the released median lies beyond the top
    edge of its public bins.
    """

    smoothness: float
    strong_convexity: float
    row_clip: float


def _weighted_row_scale(X, s, rho_scale, rng, weights):
    """Row factors ``min(sqrt(w_i), sqrt(C_S) / ||x~_i||)`` and the clip ``C_S``.

    The weighted term ``w_i x~_i x~_i^T`` has Frobenius norm
    ``w_i ||x~_i||^2``: its private median (each row counted at most once)
    sets ``C_S``, and scaling the row by the factor bounds the term by
    ``C_S`` whatever the weight (overflow-safe norms).

    Everything is float64 whatever ``X``'s dtype: ``sqrt(w_i)`` of a public
    weight reaches ``1.3e154``, far beyond float32's range, where a weighted
    norm or factor would overflow to ``inf`` (a nonzero row's term then
    dropped by a factor 0 instead of clipped, a zero row's ``0 * inf`` a
    NaN in the matrix). The factor is the minimum itself, not
    ``sqrt(w_i) min(1, sqrt(C_S) / (sqrt(w_i) ||x~_i||))``, so that no
    product ``sqrt(w_i) ||x~_i||`` that overflows decides it: a zero row
    gets ``sqrt(w_i)`` (its term is 0), a norm of ``inf`` or NaN the fixed
    factor 0.
    """
    with np.errstate(over="ignore"):
        # A float64 copy only for lower-precision X (one n-length array, as
        # before: with few stored entries per row it weighs half a sparse X).
        norms = np.asarray(augmented_row_norms(X, s), dtype=np.float64)
        weighted_sq = norms * np.sqrt(weights)
        weighted_sq *= weighted_sq
    # The quantile counts a record at most once (weights capped at 1 there);
    # a weighted squared norm that overflowed (inf) is above its edges.
    median = private_scale_median(weighted_sq, rho_scale, rng, weights=weights)
    del weighted_sq
    row_clip = _ROW_CLIP_FACTOR * median
    if math.isinf(row_clip):
        return None, row_clip
    # The float32 rows' norms carry their last roundings (a final + s^2 and
    # square root, in float32): the bound is shrunk by clip_margin (1 for
    # float64 rows) so that each term, formed in float64 from those rows,
    # stays within C_S.
    root = clip_margin(X) * math.sqrt(row_clip)
    # In place: sqrt(C') / ||x~_i||, inf for a zero row (or one so small that
    # the quotient overflows: then sqrt(w_i) is the smaller), 0 for a norm of
    # inf, NaN for a NaN norm.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        factors = np.divide(root, norms, out=norms)
    np.minimum(factors, np.sqrt(weights), out=factors)
    factors[np.isnan(factors)] = 0.0
    return factors, row_clip


def _projected_lost_rows(X, s, factors, radius, weights):
    """The clipped rows ``x^_i`` that a factor cannot carry, or None.

    A finite nonzero row of nonzero weight whose factor is 0 or subnormal
    (``sqrt(C_S) / ||x~_i||`` below the smallest normal float: a norm past
    the largest float, or a row near it) would contribute nothing, or a
    term too imprecise to stay within ``C_S``. Those rows' factors are set
    to 0 in place, and the rows ``x~_i`` are returned projected onto the
    ball of ``radius`` from their largest entry (the rescue of
    :func:`~sklearn_dpfair._solvers._rows.clip_rows_to_norm`): dense
    float64 of shape ``(n_lost, n_columns)``, with the second moment's
    columns (``[x, s]``; a sparse ``X``'s gram always has the ``s``
    column). One such row in a batch is the usual worst case; ``X`` is
    never made dense.
    """
    lost = np.flatnonzero(~(factors >= np.finfo(np.float64).smallest_normal))
    if not lost.size:
        return None
    if sp.issparse(X):
        rows = np.column_stack([X[lost].toarray(), np.full(lost.size, s)])
    else:
        rows = X[lost]
        if s:
            rows = np.column_stack([rows, np.full(lost.size, s)])
    rows = np.asarray(rows, dtype=np.float64)
    # A zero row, or a zero weight, has no term; a non-finite row keeps the
    # fixed contribution 0. Otherwise a factor below the smallest normal is
    # sqrt(C_S) / ||x~_i|| (sqrt(w_i) of a nonzero weight is at least
    # 1e-162): the weight does not enter the projection.
    keep = np.all(np.isfinite(rows), axis=1) & np.any(rows != 0, axis=1)
    if weights is not None:
        keep &= np.asarray(weights)[lost] > 0
    factors[lost] = 0.0
    if not keep.any():
        return None
    return _projected_from_largest(np, rows[keep], radius)


def private_curvature(
    X,
    intercept_scaling,
    scale_budget,
    matrix_budget,
    rng,
    *,
    c_beta=1.0,
    c_mu=1.0,
    sample_weight=None,
):
    """Private extreme eigenvalues of the rows' second-moment matrix.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Private rows.
    intercept_scaling : float
        Constant appended to each row (0: none).
    scale_budget : PrivacyBudget
        The row-norm median's part of the fit's budget
        (:meth:`~sklearn_dpfair.privacy.PrivacyBudget.split`; its zCDP
        ``rho``, ``inf`` when not private: exact).
    matrix_budget : PrivacyBudget
        The noisy matrix's part: its Gaussian mechanism (no noise when not
        private).
    rng : numpy.random.Generator
        Source of the noise.
    c_beta, c_mu : float, default=1.0
        Loss-specific factors on the two eigenvalues.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public weights (:func:`~sklearn_dpfair.privacy.fit_weights`) of the rows' terms ``w_i x~_i x~_i^T``; each
        *weighted* term is clipped to Frobenius norm ``C_S``, and the median
        counts each row with weight ``min(w_i, 1)``. None: unweighted.

    Returns
    -------
    estimate : CurvatureEstimate
        With ``row_clip = inf`` when the private median of ``||x~_i||^2``
        lies in the top bin of its public edges, beyond 1e40: the noisy
        matrix is then not released (its budget stays accounted) and the
        caller releases its fallback model.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_curvature import private_curvature
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> X = np.random.default_rng(0).normal(size=(20000, 3))
    >>> parts = PrivacyBudget(2.0, 1e-5).split({"scale": 0.1, "matrix": 0.4})
    >>> est = private_curvature(
    ...     X, 1.0, parts["scale"], parts["matrix"], np.random.default_rng(1))
    >>> bool(0.5 < est.strong_convexity <= est.smoothness < 2.0)
    True
    """
    n = X.shape[0]
    s = float(intercept_scaling)
    sparse = sp.issparse(X)
    if sparse:
        # Sparse rows are never made dense: [x, s] exists only implicitly.
        rows = X = canonical_csr(X)
    else:
        rows = np.column_stack([X, np.full(n, s)]) if s else X
    if sample_weight is not None:
        factors, row_clip = _weighted_row_scale(
            X, s, scale_budget.rho, rng, sample_weight
        )
    else:
        if sparse:
            with np.errstate(over="ignore"):
                # In place: with few stored entries per row, an n-length
                # temporary weighs as much as a sparse X.
                sq_norms = squared_row_norms(X)
                sq_norms += s**2
        else:
            with np.errstate(over="ignore"):
                # A huge row's squared norm overflows to inf: no warning.
                # Float32 rows (fit_intercept=False leaves X as is) are
                # summed in float64 and rounded up: a float32 sum is off by
                # more than the float32 clip margin, and one record's term
                # x^_i x^_i^T could exceed C_S. Float64 rows are unchanged.
                sq_norms = squared_row_norms(rows)
        # An overflowed squared norm (inf) counts as above the public edges.
        median = private_scale_median(sq_norms, scale_budget.rho, rng)
        row_clip = _ROW_CLIP_FACTOR * median
    if math.isinf(row_clip):
        # The median's top bin has no finite upper edge: no clip C_S bounds
        # the matrix's sensitivity 2 C_S / n. The matrix is not released
        # (a reading of the released bin; its budget stays accounted).
        forgo_release("zcdp", matrix_budget.rho)
        return CurvatureEstimate(math.inf, 0.0, math.inf)
    if sample_weight is None:
        # min(1, C_S / ||x~||^2) as C_S / max(||x~||^2, C_S): never divides
        # by a tiny number, so no overflow for a zero row.
        factors = np.sqrt(clip_factors_from_norms(sq_norms, row_clip))
        overflowed = np.isinf(sq_norms)
        if np.any(overflowed):
            # ||x~||^2 exceeds the largest float: clip the row itself to norm
            # sqrt(C_S) with its overflow-safe norm (a norm beyond the
            # largest float, or a subnormal factor: see below).
            with np.errstate(over="ignore"):
                if sparse:
                    norms = augmented_row_norms(X[overflowed], s)
                else:
                    norms = stable_row_norms(rows[overflowed])
            root = math.sqrt(row_clip)
            factors[overflowed] = clip_factors_from_norms(norms, root)
    # Rows whose factor could not be formed: projected from their largest
    # entry (their factor set to 0 here, their term added below).
    lost = _projected_lost_rows(
        X, s, factors, clip_margin(X) * math.sqrt(row_clip), sample_weight
    )
    if sparse:
        second_moment = scaled_augmented_gram(X, s, factors) / n
    else:
        clipped = rows * factors[:, None]
        second_moment = clipped.T @ clipped / n
    if lost is not None:
        second_moment += lost.T @ lost / n
    d = second_moment.shape[0]
    # The symmetric Gaussian mechanism (replace-one sensitivity 2 C_S / n).
    mechanism = matrix_budget.gaussian(2.0 * row_clip / n)
    second_moment = mechanism.privatize_symmetric(second_moment, rng)
    # Without noise the margin is 0 (the non-private mechanism's sensitivity
    # is unbounded).
    sigma = mechanism.noise_std if mechanism.noise_multiplier else 0.0
    eigenvalues = np.linalg.eigvalsh(second_moment)
    margin = _SPECTRAL_MARGIN * sigma * math.sqrt(d)
    # beta is an upper bound (a step 1/beta must not overshoot); mu is a
    # point estimate: the noise already pushes the smallest eigenvalue
    # down by up to the margin, and subtracting the margin again made
    # kappa, hence the number of steps, several times too large.
    beta = c_beta * (eigenvalues[-1] + margin)
    mu = c_mu * max(eigenvalues[0], 0.0)
    return CurvatureEstimate(beta, mu, row_clip)
