# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the public rows of a semi-private regression tell us, for free.

Everything here is computed from the public rows ``(X_pub, y_pub)`` only (and
from public counts), so none of it costs privacy: the warm start, the public
second-moment matrix and its eigen-decomposition, the residual variance, the
row-norm statistics that fix the curvature of clipped gradients, and the
preconditioners built from them. The private rows never enter this module.

Coordinates. With an intercept, rows are augmented with a constant column
``s = 1`` and parameters are ``w = [coef, w0]`` of length
``p = n_features + 1``; without, ``w = coef`` and ``p = n_features``.
``H = X~_pub^T X~_pub / n_pub`` is the public second-moment matrix and
``D = diag(H)``; computations use the scale-free matrix
``H~ = D^-1/2 H D^-1/2 = Q diag(h) Q^T``. That is the Hessian of the
solvers' coordinates, which the preconditioners and the tuning read. The
warm start is solved apart, with an intercept in the public rows' centred
and standardized columns (:func:`_standardized_ridge`): in ``H~`` a column
whose spread is small next to its offset (500 plus units of 1e-3) is
nearly collinear with the constant, and the pseudo-inverse's cutoff, or
the ridge, would remove its direction from the fit.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...utils._numeric import constant_columns
from ...utils._validation import warn_at_caller
from .._linear import augmented_row_norms, raw_predictions
from .._non_private import column_moments
from .._row_blocks import row_block, row_blocks

__all__ = [
    "PublicGeometry",
    "SpectralPreconditioner",
    "geometry_estimable",
    "newton_preconditioner",
    "pda_md_preconditioner",
    "public_geometry",
    "public_step_curvature",
    "public_warm_start",
    "uninformative_geometry",
]

# Floor on D = diag(H): a feature that is (numerically) zero on every public
# row gets unit scale, since the public rows say nothing about its scale.
_SCALE_FLOOR = 1e-12

# Relative eigenvalue cutoff of the pseudo-inverse (numpy's lstsq default
# order of magnitude for float64).
_RANK_RTOL = 1e-12

# PDA-MD's Hessian regularization, 0.01 / p, is the constant of the original
# implementation (Amid et al. 2022), which the thesis re-used (A.4.1.3).
PDA_MD_HESSIAN_REGULARIZATION = 0.01

_FEW_PUBLIC_ROWS = (
    "Only {n} public rows for {p} parameters: the public residual variance "
    "cannot be estimated, so the model-based 'auto' choices use the public "
    "target variance instead (a conservative guess). Pass alpha, "
    "learning_rate and max_iter explicitly, or mark more rows public."
)


@dataclass(frozen=True)
class PublicGeometry:
    """Public statistics of a semi-private linear regression.

    Attributes
    ----------
    warm_start : ndarray of shape (p,)
        Public ridge solution ``[coef, w0]`` (``coef`` without intercept),
        the ridge on standardized coefficients (:func:`public_geometry`);
        zeros without public rows.
    scale : ndarray of shape (p,)
        ``D = diag(H)`` (1 where it vanishes); ones without public rows.
    eigvecs : ndarray of shape (p, p) or None
        ``Q`` of ``H~``; None without public rows.
    eigvals : ndarray of shape (p,)
        ``h``, eigenvalues of ``H~`` (zeros without public rows).
    noise_variance : float
        Residual variance ``sigma^2`` of the public fit.
    row_norms : ndarray of shape (n_public,)
        Norms ``||x~_i||`` of the augmented public rows.
    n_public : int
        Number of public rows.
    """

    warm_start: np.ndarray
    scale: np.ndarray
    eigvecs: np.ndarray | None
    eigvals: np.ndarray
    noise_variance: float
    row_norms: np.ndarray
    n_public: int

    @property
    def n_params(self):
        """Length ``p`` of the stacked parameter vector."""
        return self.scale.shape[0]

    def public_error_variance(self):
        """Variance of the warm start's error along each eigenvector of ``H~``.

        ``sigma^2 / (n_pub h_i)``: the OLS error covariance, in scale-free
        coordinates. Directions the public rows do not see (``h_i = 0``) get
        ``inf``.
        """
        with np.errstate(divide="ignore"):
            return self.noise_variance / (self.n_public * self.eigvals)


# Entries per block of the standardized public rows of the warm start
# (128 KB of float64, one temporary at a time).
_STANDARDIZED_BLOCK_ENTRIES = 1 << 14

# Rows per block of a dense public block in the weighted second moments
# (a weighted copy of one block at a time, never of the whole block).
_DENSE_BLOCK_ROWS = 4096


def _gram(X, s, weights=None):
    """``X~^T diag(weights) X~`` of the augmented rows ``[x, s]``, without building ``X~``.

    Stacking the constant column would copy the public rows (peak memory
    stays within twice the data); its blocks are ``s X^T w`` and
    ``s^2 sum(w)`` instead (``w = 1`` without ``weights``). A sparse ``X``
    (CSR) is read by row blocks, each one's sparse product added into the
    result: converting the whole block to the other compressed format for
    one product would copy its stored entries, and only the ``p x p`` result
    is dense. Weighted dense rows are read by blocks of rows too, so their
    weighted copy is one block's, never the whole block's.
    """
    d = X.shape[1]
    H = np.zeros((d + 1,) * 2 if s else (d, d))
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
    if sp.issparse(X):
        for rows in row_blocks(X):
            block = row_block(X, rows)
            right = (
                block
                if weights is None
                else block.multiply(weights[rows][:, None]).tocsr()
            )
            product = (block.T @ right).tocoo()
            np.add.at(H, (product.row, product.col), product.data)
    elif weights is None:
        H[:d, :d] = X.T @ X
    else:
        for start in range(0, X.shape[0], _DENSE_BLOCK_ROWS):
            block = X[start : start + _DENSE_BLOCK_ROWS]
            w = weights[start : start + _DENSE_BLOCK_ROWS]
            H[:d, :d] += block.T @ (w[:, None] * block)
    if s:
        if weights is None:
            col, total = X.sum(axis=0), X.shape[0]
        else:
            col, total = X.T @ weights, float(weights.sum())
        col = float(s) * np.asarray(col).ravel()
        H[:d, d] = col
        H[d, :d] = col
        H[d, d] = float(s) ** 2 * total
    return H


def public_step_curvature(X_pub, intercept_scaling, *, weights=None, preconditioner=None):
    """Largest eigenvalue of ``P H_w``: the public mean gradient's curvature.

    The unclipped public mean gradient of the squared loss at ``w`` is
    ``H_w (w - w_pub)`` with ``H_w = X~_pub^T diag(weights) X~_pub / n_pub``
    (the residuals are weighted before the sum), so a step of size ``eta``
    on ``(1 - alpha) / C`` times it, preconditioned by ``P``, multiplies the
    distance to the public fixed point by ``I - eta (1 - alpha) / C P H_w``.
    Its eigenvalues are those of the symmetric ``P^1/2 H_w P^1/2``: real and
    non-negative, and the iteration contracts only while ``eta (1 - alpha) /
    C`` times the largest is below 2 (the private term, clipped, moves a step
    by a bounded amount and cannot make up for an expansion). Public rows
    and public weights only.

    Parameters
    ----------
    X_pub : ndarray or scipy.sparse CSR matrix of shape (n_public, n_features)
        Float64 public rows.
    intercept_scaling : float
    weights : ndarray of shape (n_public,) or None, default=None
        The public rows' (public) sample weights; None: unweighted.
    preconditioner : SpectralPreconditioner or None, default=None
        ``P`` (its configuration 0); None: the identity.

    Returns
    -------
    curvature : float
        0 without public rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.semi_dp._public_geometry import (
    ...     public_step_curvature)
    >>> X = np.array([[1.0], [-1.0]])  # H = [[1, 0], [0, 1]] with the intercept
    >>> round(public_step_curvature(X, 1.0), 12)
    1.0
    >>> round(public_step_curvature(X, 1.0, weights=np.array([3.0, 3.0])), 12)
    3.0
    """
    n_pub = X_pub.shape[0]
    if n_pub == 0:
        return 0.0
    s = float(intercept_scaling)
    with np.errstate(over="ignore", invalid="ignore"):
        H = _gram(X_pub, s, weights)
    H /= n_pub
    # Else eigvalsh of inf is NaN (or fails to converge), and a NaN cap
    # would leave an "auto" step uncapped.
    _check_finite_moments(H, X_pub, weighted=weights is not None)
    if preconditioner is not None:
        p = H.shape[0]
        P = preconditioner.apply(np.eye(p), np.zeros(p, dtype=int))
        # P^1/2 H P^1/2 has the spectrum of P H; P is symmetric PSD.
        values, vectors = np.linalg.eigh((P + P.T) / 2.0)
        root = (vectors * np.sqrt(np.maximum(values, 0.0))) @ vectors.T
        H = root @ H @ root
    return float(max(np.linalg.eigvalsh((H + H.T) / 2.0)[-1], 0.0))


def _check_finite_moments(H, X_pub, *, weighted=False):
    """Refuse public second moments beyond float64, naming the remedy.

    Only public rows (and public weights) are involved, so saying so leaks
    nothing. Dense columns are scaled by the public rows' spread first (the
    default feature_scaling) where there are enough of them; sparse ones
    only by declared bounds.
    """
    if np.all(np.isfinite(H)):
        return
    hint = (
        " (a sparse X is scaled by declared feature_bounds only: declare "
        "them, or rescale the columns)"
        if sp.issparse(X_pub)
        else ""
    )
    weights = ", or public sample weights that large" if weighted else ""
    raise ValueError(
        "The public rows' second moments overflow float64 (feature or "
        f"intercept values near 1e154 or beyond{weights}); rescale the "
        f"features{hint}."
    )


def _augmented_matvec_t(X, v, s):
    """``X~^T v`` for the augmented rows ``[x, s]``."""
    head = X.T @ v
    return np.append(head, float(s) * v.sum()) if s else head


def _augmented_matvec(X, w, s):
    """``X~ w`` for the augmented rows ``[x, s]`` and ``w = [coef, w0]``.

    The linear layer's :func:`~sklearn_dpfair._solvers._linear.raw_predictions`
    (dense or CSR rows, finite on huge records).
    """
    if not s:
        return raw_predictions(X, w[:, None])[:, 0]
    return raw_predictions(X, w[:-1, None], float(s) * w[-1])[:, 0]


def geometry_estimable(n_public, n_params):
    """Whether ``n_public`` rows can estimate the geometry of ``n_params`` parameters.

    More rows than parameters (a public rule of counts): with fewer the
    public second moments are singular, the residual variance has no
    degree of freedom left, and the warm start interpolates the rows; a
    Newton step on that model multiplied the error of every step (semidp-gd
    on 2 or 3 public rows of 4 parameters: R^2 of -40 on standardized
    columns, -1e48 on raw ones, against 0.93 with no public row).
    """
    return n_public > n_params


def uninformative_geometry(
    n_params, n_public=0, *, y_public=None, intercept_scaling=0.0
):
    """The :class:`PublicGeometry` that says nothing: no public rows, or too few.

    Unit scales and no spectrum, as without public rows (no preconditioner
    or tuning rests on them); ``n_public`` keeps the count (the rows still
    enter the public gradient). The warm start is zero, but for the
    intercept, started at the mean of ``y_public`` when given: the one
    parameter so few rows estimate (their ridge fit interpolates them: from
    2 standardized rows it started the fit at R^2 0.56, where zero gives
    0.93, and on raw columns at -336).
    """
    warm_start = np.zeros(n_params)
    if y_public is not None and intercept_scaling:
        warm_start[-1] = float(np.mean(y_public)) / intercept_scaling
    return PublicGeometry(
        warm_start=warm_start,
        scale=np.ones(n_params),
        eigvecs=None,
        eigvals=np.zeros(n_params),
        noise_variance=math.nan,
        row_norms=np.zeros(0),
        n_public=n_public,
    )


def public_geometry(X_pub, y_pub, *, intercept_scaling, ridge, n_features):
    """Compute the :class:`PublicGeometry` of the public rows.

    Parameters
    ----------
    X_pub : ndarray or scipy.sparse CSR matrix of shape (n_public, n_features)
        Float64; a sparse block is never densified.
    y_pub : ndarray of shape (n_public,)
    intercept_scaling : float
        ``s``; 0 fits no intercept (and ``p = n_features``).
    ridge : float
        Ridge ``rho`` of the warm start, on standardized coefficients.
        With an intercept, that of scikit-learn's ``Ridge`` on the public
        columns centred and scaled by their (public) means and standard
        deviations, the intercept unpenalized
        (:func:`_standardized_ridge`); without, the scale-free
        ``(H~ + rho I) u = D^-1/2 X^T y / n_pub``, ``w = D^-1/2 u``. With
        ``rho = 0``, directions whose eigenvalue is below ``1e-12`` of the
        largest are left at 0 (a pseudo-inverse).
    n_features : int
        Number of features (for the empty case).

    Returns
    -------
    geometry : PublicGeometry
    """
    s = float(intercept_scaling)
    p = n_features + (1 if s else 0)
    n_pub = X_pub.shape[0]
    if n_pub == 0:
        return uninformative_geometry(p)
    # In place: the public statistics hold two p x p matrices at a time.
    H = _gram(X_pub, s)
    H /= n_pub
    _check_finite_moments(H, X_pub)
    scale, eigvals, eigvecs = _scale_free_spectrum(H)
    del H
    if s:
        warm_start, dof = _standardized_ridge(X_pub, y_pub, s, ridge)
    else:
        warm_start, dof = _scale_free_ridge(
            X_pub, y_pub, scale, eigvals, eigvecs, ridge
        )

    residual = _augmented_matvec(X_pub, warm_start, s)
    residual -= y_pub
    if n_pub - dof >= 1.0:
        # Public targets near 1e154 or beyond square past the largest float:
        # the variance is then inf, as it is, without numpy's warning.
        with np.errstate(over="ignore"):
            noise_variance = float(residual @ residual) / (n_pub - dof)
    else:
        warn_at_caller(_FEW_PUBLIC_ROWS.format(n=n_pub, p=p), UserWarning)
        with np.errstate(over="ignore"):
            noise_variance = float(np.var(y_pub)) if n_pub > 1 else 1.0
    noise_variance = max(noise_variance, np.finfo(float).tiny)

    return PublicGeometry(
        warm_start=warm_start,
        scale=scale,
        eigvecs=eigvecs,
        eigvals=eigvals,
        noise_variance=noise_variance,
        row_norms=augmented_row_norms(X_pub, s),
        n_public=n_pub,
    )


def public_warm_start(X_pub, y_pub, *, intercept_scaling, ridge, n_features):
    """The warm start of :func:`public_geometry` alone, or zeros.

    For a fit that reads no other public statistic: the non-private limit
    (``epsilon=inf``) only starts its full-batch solver there, so none of
    :func:`public_geometry`'s refusals and warnings (second moments beyond
    float64, fewer public rows than parameters), which are about the
    statistics that tune and precondition a private fit, applies. A public
    block whose ridge solution cannot be formed in float64 gives the zero
    start instead: the start moves the solver's path, not its optimum.

    Parameters
    ----------
    X_pub : ndarray or scipy.sparse CSR matrix of shape (n_public, n_features)
        Float64; a sparse block is never densified.
    y_pub : ndarray of shape (n_public,)
    intercept_scaling : float
    ridge : float
    n_features : int

    Returns
    -------
    warm_start : ndarray of shape (p,)
        That of :func:`public_geometry` where it is finite.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.semi_dp._public_geometry import (
    ...     public_warm_start)
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> public_warm_start(X, 1.0 + 2.0 * X[:, 0], intercept_scaling=1.0,
    ...                   ridge=0.0, n_features=1).round(12)
    array([2., 1.])
    >>> public_warm_start(np.array([[1e200], [3e200]]), np.array([1.0, 2.0]),
    ...                   intercept_scaling=0.0, ridge=0.0, n_features=1)
    array([0.])
    >>> rows = np.random.default_rng(0).normal(size=(10, 3)) * 1e200
    >>> public_warm_start(rows, np.ones(10), intercept_scaling=1.0, ridge=0.0,
    ...                   n_features=3)
    array([0., 0., 0., 0.])
    """
    s = float(intercept_scaling)
    zeros = np.zeros(n_features + (1 if s else 0))
    n_pub = X_pub.shape[0]
    if n_pub == 0:
        return zeros
    with np.errstate(all="ignore"):
        if s:
            try:
                warm_start, _ = _standardized_ridge(X_pub, y_pub, s, ridge)
            except np.linalg.LinAlgError:
                # Moments beyond float64 (columns near 1e200): the
                # eigendecomposition of a non-finite Gram matrix fails.
                return zeros
        else:
            H = _gram(X_pub, s)
            H /= n_pub
            if not np.all(np.isfinite(H)):
                return zeros
            scale, eigvals, eigvecs = _scale_free_spectrum(H)
            warm_start, _ = _scale_free_ridge(
                X_pub, y_pub, scale, eigvals, eigvecs, ridge
            )
    return warm_start if np.all(np.isfinite(warm_start)) else zeros


def _scale_free_spectrum(H):
    """``D = diag(H)`` (1 where it vanishes) and the eigen-decomposition of ``H~``.

    ``H~ = D^-1/2 H D^-1/2``, computed in place in ``H`` (finite).

    Returns
    -------
    scale, eigvals, eigvecs : ndarray
        ``D``; the eigenvalues of ``H~`` (clipped at 0) and its eigenvectors.
    """
    diag = np.diag(H)
    scale = np.where(diag > _SCALE_FLOOR, diag, 1.0)
    inv_sqrt = 1.0 / np.sqrt(scale)
    H *= inv_sqrt[:, None]
    H *= inv_sqrt[None, :]
    eigvals, eigvecs = np.linalg.eigh(H)
    return scale, np.maximum(eigvals, 0.0), eigvecs


def _scale_free_ridge(X_pub, y_pub, scale, eigvals, eigvecs, ridge):
    """The public ridge fit without intercept: ``(H~ + rho I) u = D^-1/2 X^T y / n``.

    ``w = D^-1/2 u`` (:func:`public_geometry`), and its degrees of freedom.
    """
    inv_sqrt = 1.0 / np.sqrt(scale)
    rhs = inv_sqrt * _augmented_matvec_t(X_pub, y_pub, 0.0) / X_pub.shape[0]
    coords, dof = _pseudo_inverse(eigvals, eigvecs, rhs, ridge)
    return inv_sqrt * (eigvecs @ coords), dof


def _pseudo_inverse(eigvals, eigvecs, rhs, ridge):
    """``(V diag(eigvals) V^T + ridge I)^+ rhs`` in eigen-coordinates, and its dof.

    ``dof`` is the fit's degrees of freedom.

    Directions the public rows do not see (an eigenvalue below
    :data:`_RANK_RTOL` of the largest, possible when ``n_pub < p`` and
    ``ridge = 0``) stay at zero and take no degree of freedom (with
    ``ridge = 0`` their ratio would be 0 / 0).
    """
    denom = eigvals + ridge
    seen = denom > _RANK_RTOL * max(float(denom.max()), _SCALE_FLOOR)
    safe = np.where(seen, denom, 1.0)
    coords = np.where(seen, eigvecs.T @ rhs / safe, 0.0)
    dof = float(np.sum(np.where(seen, eigvals / safe, 0.0)))
    return coords, dof


def _standardized_ridge(X_pub, y_pub, s, ridge):
    """The public ridge fit with an intercept, in centred and standardized columns.

    ``z = (x - m) / sd`` with the public rows' means ``m`` and standard
    deviations ``sd`` (two passes, no cancellation), so that the Gram
    matrix ``R = Z^T Z / n_pub`` (the public correlations) does not hold
    the columns' offsets: in the uncentred ``H~`` a column of offset 500
    and spread 1e-3 is collinear with the constant to ``1e-12``, below the
    pseudo-inverse's cutoff and under any ridge (a public-rows MSE of 0.88
    where least squares has 0.005). Public rows only: nothing private is
    read. Solves ``(R + rho I) u = Z^T (y - y_bar) / n_pub`` (the intercept
    unpenalized, as scikit-learn's ``Ridge``), then ``coef = u / sd`` and
    ``w0 = (y_bar - m . coef) / s``. A column constant on the public rows
    is left at 0 (the intercept holds it). A dense block is read a few
    rows at a time (:data:`_STANDARDIZED_BLOCK_ENTRIES`), with no centred
    copy of it; a sparse block is never densified: its centred Gram matrix
    is the one-pass ``X^T X / n_pub - m m^T``, exact to rounding for the
    columns whose offset is within their spread, and the columns with a
    larger offset are centred apart (:func:`_centre_offset_columns`).

    Returns
    -------
    warm_start : ndarray of shape (n_features + 1,)
    dof : float
        Degrees of freedom of the fit (the intercept's 1 included).
    """
    n_pub, d = X_pub.shape
    y_bar = float(np.mean(y_pub))
    centred_y = y_pub - y_bar
    if sp.issparse(X_pub):
        mean, sd = column_moments(X_pub)
        gram = _gram(X_pub, 0.0) / n_pub - np.outer(mean, mean)
        cross = (np.asarray(X_pub.T @ centred_y).ravel() - mean * centred_y.sum())
        cross /= n_pub
        _centre_offset_columns(X_pub, mean, sd, centred_y, gram, cross)
        gram /= np.outer(sd, sd)
        cross /= sd
    else:
        step = max(1, _STANDARDIZED_BLOCK_ENTRIES // max(d, 1))
        starts = range(0, n_pub, step)
        mean = np.mean(X_pub, axis=0)
        var = np.zeros(d)
        for start in starts:
            block = X_pub[start : start + step] - mean
            var += np.einsum("ij,ij->j", block, block)
        var /= n_pub
        # A constant column's rounding-level variance is zero (as
        # column_moments and scikit-learn's StandardScaler find it).
        sd = np.where(constant_columns(var, mean, n_pub), 1.0, np.sqrt(var))
        sd = np.where(sd > 0, sd, 1.0)
        gram = np.zeros((d, d))
        cross = np.zeros(d)
        for start in starts:
            block = X_pub[start : start + step] - mean
            block /= sd
            gram += block.T @ block
            cross += block.T @ centred_y[start : start + step]
        gram /= n_pub
        cross /= n_pub
    # A column constant on the public rows (its unit scale from
    # column_moments) has a centred diagonal near 0, every other near 1.
    varying = np.diag(gram) > 0.5
    gram = np.where(np.outer(varying, varying), gram, 0.0)
    cross = np.where(varying, cross, 0.0)
    eigvals, eigvecs = np.linalg.eigh((gram + gram.T) / 2.0)
    eigvals = np.maximum(eigvals, 0.0)
    coords, dof = _pseudo_inverse(eigvals, eigvecs, cross, ridge)
    coef = (eigvecs @ coords) / sd
    intercept = y_bar - float(mean @ coef)
    return np.append(coef, intercept / s), dof + 1.0


def _centre_offset_columns(X, mean, sd, centred_y, gram, cross):
    """Centre the sparse columns whose offset exceeds their spread, in place.

    The one-pass ``X^T X / n - m m^T`` loses about ``1e-16 |m_j m_k| /
    (sd_j sd_k)`` of the centred moment ``gram[j, k]`` to cancellation:
    nothing for columns with ``|m| <= sd``, all of it for a column of offset
    500 and spread 1e-6 (a public fit as wrong as its coefficient). Such a
    column has fewer than half of its entries zero (``m^2 / sd^2 <= (1 - f)
    / f`` with ``f`` the fraction of zeros), so its centred dense copy, one
    row block at a time (:func:`row_blocks`), weighs at most about twice its
    stored entries. With ``D`` those centred columns, their rows and columns
    of ``gram`` become ``D^T D`` among themselves and ``D^T X - s m^T``
    (``s`` the column sums of ``D``, rounding-level) against the others,
    whose offsets are within their spread; ``cross`` becomes ``D^T (y -
    y_bar)``. Both are divided by ``n`` as ``gram`` and ``cross`` are.
    """
    offset = np.flatnonzero(np.abs(mean) > sd)
    if offset.size == 0:
        return
    k, d = offset.size, X.shape[1]
    against = np.zeros((k, d))
    among = np.zeros((k, k))
    sums = np.zeros(k)
    with_y = np.zeros(k)
    for rows in row_blocks(X):
        block = row_block(X, rows)
        D = block[:, offset].toarray()
        D -= mean[offset]
        against += np.asarray(block.T @ D).T
        among += D.T @ D
        sums += D.sum(axis=0)
        with_y += D.T @ centred_y[rows]
    against -= np.outer(sums, mean)
    against[:, offset] = among
    against /= X.shape[0]
    gram[offset, :] = against
    gram[:, offset] = against.T
    cross[offset] = with_y / X.shape[0]


@dataclass(frozen=True)
class SpectralPreconditioner:
    """``P_k = L Q diag(d_k) Q^T L`` applied to column ``k`` of a gradient block.

    ``L = diag(outer)``; one spectrum ``d_k`` per column, so several
    configurations can be preconditioned in one pair of matrix products.

    Parameters
    ----------
    eigvecs : ndarray of shape (p, p)
    spectrum : ndarray of shape (p, K)
    outer : ndarray of shape (p,)
    """

    eigvecs: np.ndarray
    spectrum: np.ndarray
    outer: np.ndarray

    def apply(self, G, columns):
        """Return ``P_k G[:, j]`` for ``k = columns[j]``.

        Parameters
        ----------
        G : ndarray of shape (p, len(columns))
        columns : ndarray of int
            Which configurations the columns of ``G`` belong to.

        Returns
        -------
        PG : ndarray of shape (p, len(columns))
        """
        Z = self.eigvecs.T @ (self.outer[:, None] * G)
        Z *= self.spectrum[:, columns]
        return self.outer[:, None] * (self.eigvecs @ Z)


def newton_preconditioner(geometry, alpha, curvature, public_curvature):
    """Inverse model Hessian of ``alpha F_priv + (1 - alpha) F_pub``.

    The private (clipped) term is modelled as ``curvature * D`` and the public
    term as ``public_curvature * H``, so that
    ``P = D^-1/2 Q diag(1 / (alpha k + (1 - alpha) c h)) Q^T D^-1/2``.
    ``learning_rate = 1`` is then a full Newton step of the model. Only the
    speed and the noise shaping depend on ``P``, never the fixed point.

    Parameters
    ----------
    geometry : PublicGeometry
    alpha : ndarray of shape (K,)
        Weight of the private gradient.
    curvature : ndarray of shape (K,)
        Model curvature ``k`` of the private clipped gradient.
    public_curvature : float or ndarray of shape (K,)
        ``c``: ``1/C`` for unclipped public gradients, ``k`` for clipped ones.

    Returns
    -------
    preconditioner : SpectralPreconditioner
    """
    alpha = np.asarray(alpha, dtype=float)[None, :]
    curvature = np.asarray(curvature, dtype=float)[None, :]
    public_curvature = np.broadcast_to(
        np.asarray(public_curvature, dtype=float), alpha.shape[1:]
    )[None, :]
    h = geometry.eigvals[:, None]
    denom = alpha * curvature + (1.0 - alpha) * public_curvature * h
    # A direction with zero model curvature (no public information and a flat
    # private model) is not stepped along rather than stepped infinitely far.
    spectrum = np.where(denom > 0, 1.0 / np.where(denom > 0, denom, 1.0), 0.0)
    return SpectralPreconditioner(
        eigvecs=geometry.eigvecs,
        spectrum=spectrum,
        outer=1.0 / np.sqrt(geometry.scale),
    )


def pda_md_preconditioner(X_pub, intercept_scaling, n_configs):
    """PDA-MD's mirror map for squared loss: the normalized public Hessian inverse.

    ``P = (H + (0.01/p) I)^-1 * lambda_min(H + (0.01/p) I)``, so that the
    largest eigenvalue of ``P`` is 1 (Amid et al. 2022's official
    implementation, re-used in the thesis, A.4.1.3). Unlike :func:`newton_preconditioner` it works in the raw
    (not scale-free) coordinates.

    Parameters
    ----------
    X_pub : ndarray or scipy.sparse CSR matrix of shape (n_public, n_features)
    intercept_scaling : float
    n_configs : int
        Number of columns the preconditioner will be applied to.

    Returns
    -------
    preconditioner : SpectralPreconditioner
    """
    H = _gram(X_pub, intercept_scaling) / X_pub.shape[0]
    p = H.shape[0]
    H[np.diag_indices(p)] += PDA_MD_HESSIAN_REGULARIZATION / p
    eigvals, eigvecs = np.linalg.eigh(H)
    eigvals = np.maximum(eigvals, PDA_MD_HESSIAN_REGULARIZATION / p)
    spectrum = np.repeat((eigvals.min() / eigvals)[:, None], n_configs, axis=1)
    return SpectralPreconditioner(eigvecs=eigvecs, spectrum=spectrum, outer=np.ones(p))
