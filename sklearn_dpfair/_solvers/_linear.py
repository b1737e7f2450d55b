# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The linear-model layer: parameters, predictions and clipped gradients.

Every solver of a linear model (DP-SGD, the primal block of DP-SGDA, the
federated silos, the heavy-tail mean oracles, output perturbation) sees the
data through this module, so that dense, CSR sparse, sample-weighted and
array-API (torch) inputs are handled in one place.

Parametrization. A model with ``K`` outputs has coefficients ``coef`` of
shape ``(n_features, K)`` and an intercept parameter ``w0`` of shape
``(K,)``; the intercept is ``b = s w0`` with ``s`` the *intercept scaling*
(1 with an intercept, 0 without). The raw predictions are
``X coef + s w0``, i.e. those of the augmented row ``x~_i = [x_i, s]``
against the stacked parameters ``W = [coef; w0]`` of shape
``(n_features + 1, K)``. Clipping the gradient with respect to ``W`` is what
bounds the intercept's share of one record's influence too.

Gradients. The gradient of one example is the outer product
``g_i = x~_i r_i^T`` of the augmented row and the loss derivative
``r_i = dl/d(raw)`` (one entry per output). Its Frobenius norm factorizes,
``||g_i|| = ||r_i|| ||x~_i||``
(:func:`~sklearn_dpfair._solvers._rows.per_example_norms`),
so the clip factor of every example costs ``O(K)`` given the row norms, and
the clipped sum is one matrix product ``X_B^T (c * R_B)``
(:func:`clipped_gradient_sum`): no ``n x d`` gradient matrix is formed.
A public sample weight multiplies ``r_i`` *before* clipping, so one record's
clipped term stays within the clip norm whatever its weight.

Inputs. Dense arrays are used in their own namespace and on their own
device (numpy, or torch on a GPU); scipy sparse matrices are converted once
to canonical CSR (:func:`as_rows`) and used through their stored entries
only (host numpy). The data matrix keeps its dtype (float32 stays float32):
the clip factors, noise and the stacked gradients are float64 and the
parameters are cast back to the data's dtype after each update.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._rows import (

    canonical_csr,

    clipped_rows,

    per_example_norms,

    squared_row_norms,

    stable_row_norms,

)
from ..privacy._clipping import clip_margin
from ..utils._array_api import (
    array_namespace,
    column_sums,
    device_of,
    finite_linear_scores,
    narrow_matmul,
)
from ._row_blocks import (
    float64_product,
    row_block,
    row_blocks,
    storage_bytes,
    take_rows,
)

__all__ = [
    "LinearModel",
    "as_rows",
    "augmented_row_norms",
    "clipped_gradient_sum",
    "raw_predictions",
    "row_norms_of",
    "stored_row_norms",
    "take_rows",
    "weighted_raw_gradient",
]


def as_rows(X):
    """``X`` in the row-access form the solvers use: canonical CSR if sparse.

    A CSC matrix becomes CSR once (at most 2x the sparse storage): batches
    are row gathers. Duplicate entries are summed, so that the row norms the
    clipping relies on are those of the rows' values. Dense arrays are
    returned unchanged (no copy, no dtype change).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._linear import as_rows
    >>> as_rows(sp.csc_matrix(np.eye(2))).format
    'csr'
    """
    if sp.issparse(X):
        return canonical_csr(X)
    return X


def augmented_row_norms(X, intercept_scaling=0.0):
    """Euclidean norms of the rows of ``[X, intercept_scaling]``, overflow-safe.

    ``X`` dense (any namespace) or sparse (CSR: stored entries only).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._linear import augmented_row_norms
    >>> augmented_row_norms(np.array([[3.0, 0.0]]), 4.0)
    array([5.])
    """
    s = float(intercept_scaling)
    xp = np if sp.issparse(X) else array_namespace(X)
    with np.errstate(over="ignore"):
        squares = squared_row_norms(X)
        if xp is np:
            # In place: no n-length temporaries (they weigh as much as a
            # sparse X with few entries per row).
            squares += s**2
            norms = np.sqrt(squares, out=squares)
        else:
            norms = xp.sqrt(squares + s**2)
    # Rows whose squared norm overflowed, or (without the constant s) fell
    # below the smallest normal float: a tiny nonzero row must not get norm
    # 0, or its term with a huge residual would escape the clip.
    rescue = xp.isinf(norms)
    if not s:
        rescue = rescue | (norms < float(xp.finfo(norms.dtype).smallest_normal) ** 0.5)
    if not bool(xp.any(rescue)):
        return norms
    # Those rows only: hypot(||x||, s) scaled by the (stable) norm, finite
    # unless the norm itself exceeds the largest float.
    rows = X[rescue]
    rescued = stable_row_norms(rows)
    beyond = xp.isinf(rescued)
    promoted = False
    if rescued.dtype != xp.float64 and bool(xp.any(beyond)):
        # A finite float32 row can have a norm beyond float32's largest
        # value ((3e38, 3e38)): as inf, its factor C / inf would drop the
        # record (a fixed 0) where a float64 fit clips it to C. Such rows'
        # norms are kept in float64, and with them the whole run's (the
        # clip factors are float64 either way).
        promoted = True
        if sp.issparse(rows):
            wide = rows.astype(np.float64)
        else:
            wide = xp.astype(rows, xp.float64)
        rescued = xp.where(
            beyond, stable_row_norms(wide), xp.astype(rescued, xp.float64)
        )
        norms = xp.astype(norms, xp.float64)
    if s:  # then only overflowed rows, whose stable norm is > 0
        rescued = rescued * xp.sqrt(1.0 + (s / rescued) ** 2)
    norms[rescue] = rescued
    if promoted:
        # The terms are still computed from float32 rows, whose clip margin
        # (clip_margin reads it from the norms' dtype, float64 now) the norms
        # carry instead: divided by it and rounded up, each factor C / norm
        # is at most the margin's C m / norm, whatever the other records.
        margin = clip_margin(X)
        norms = norms / margin
        norms = xp.nextafter(norms, xp.full_like(norms, math.inf))
    return norms


#: A sparse ``X``'s row norms are kept for a run when they weigh at most
#: this fraction of its storage (about 5 stored entries per row or more in
#: float64, 3 in float32), and recomputed from the rows read in each step
#: otherwise.
STORED_NORMS_FRACTION = 1 / 8


def stored_row_norms(X, intercept_scaling=0.0):
    """The row norms ``||[x_i, s]||`` kept for a whole run, or None.

    A dense ``X``'s norms weigh ``1 / n_features`` of it and would cost a
    pass over it in every step: kept. A sparse ``X``'s weigh one float (of
    its dtype) per row, about half of a matrix with one stored entry per
    row: kept only if they weigh at most :data:`STORED_NORMS_FRACTION` of
    its storage, else recomputed by :func:`row_norms_of` from the rows read
    in each step (at the ``O(nnz)`` cost of the rows' own products). Which
    of the two is used changes memory and time only, never a value.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._linear import stored_row_norms
    >>> stored_row_norms(np.array([[3.0, 4.0]]))
    array([5.])
    >>> stored_row_norms(sp.csr_matrix(np.eye(20))) is None
    True
    """
    if sp.issparse(X):
        if X.dtype.itemsize * X.shape[0] > STORED_NORMS_FRACTION * storage_bytes(X):
            return None
    return augmented_row_norms(X, intercept_scaling)


def row_norms_of(X_rows, rows, stored, intercept_scaling=0.0):
    """Norms of the rows ``rows`` of ``X``, read as ``X_rows = X[rows]``.

    Looked up in ``stored`` (:func:`stored_row_norms` of ``X``) or, when it
    is None, computed from ``X_rows``: the same values either way (each
    row's norm is computed on its own, from the same stored entries).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._linear import row_norms_of
    >>> X = sp.csr_matrix(np.array([[3.0, 4.0], [0.0, 1.0]]))
    >>> row_norms_of(X[[1]], [1], None)
    array([1.])
    """
    if stored is None:
        return augmented_row_norms(X_rows, intercept_scaling)
    if isinstance(rows, slice):
        return stored[rows]
    return array_namespace(stored).take(stored, rows, axis=0)


def raw_predictions(X, coef, intercept=0.0):
    """Finite raw predictions ``X coef + intercept`` of shape ``(n, K)``.

    A huge finite record may overflow its product (or give ``inf - inf``):
    only such rows are recomputed by a scaled product and saturated
    (:func:`~sklearn_dpfair.utils._array_api.finite_linear_scores`), without
    a numpy warning (it would depend on the data). ``X`` dense or CSR.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._linear import raw_predictions
    >>> raw_predictions(np.array([[1.0, 2.0]]), np.array([[1.0], [1.0]]), 0.5)
    array([[3.5]])
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if sp.issparse(X):
            raw = np.asarray(X @ coef) + intercept
        else:
            raw = narrow_matmul(X, coef) + intercept
    return finite_linear_scores(raw, X, coef, intercept)


def weighted_raw_gradient(raw_gradient, sample_weight):
    """``r_i w_i``: each record's loss derivative times its public weight.

    Applied *before* clipping, so that one record's clipped term is bounded
    by the clip norm, not by the clip norm times its weight. ``None`` returns
    ``raw_gradient`` unchanged.

    A product that overflows (a weight near the largest float times a
    residual above 1, e.g. a squared-loss residual of 3 under a weight of
    ``1e308``) is saturated, silently, at the largest float of its sign:
    the record's direction is unchanged and the clip brings its term to the
    clip norm like any other huge one, where ``inf`` would make it count as
    not finite and contribute 0 (a weight can only raise a term up to the
    clip norm, :mod:`sklearn_dpfair.privacy._weights`). No numpy warning:
    it would depend on a record's value. A loss derivative that is itself
    not finite keeps its fixed contribution 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._linear import weighted_raw_gradient
    >>> weighted_raw_gradient(np.ones((2, 1)), np.array([2.0, 0.5])).ravel()
    array([2. , 0.5])
    >>> weighted_raw_gradient(np.array([[-3.0]]), np.array([1e308])).ravel()
    array([-1.79769313e+308])
    """
    if sample_weight is None:
        return raw_gradient
    xp = array_namespace(raw_gradient)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        weighted = raw_gradient * sample_weight[:, None]
    overflowed = xp.isinf(weighted) & xp.isfinite(raw_gradient)
    if not bool(xp.any(overflowed)):
        return weighted
    largest = xp.full_like(weighted, float(xp.finfo(weighted.dtype).max))
    saturated = xp.where(weighted > 0, largest, -largest)
    return xp.where(overflowed, saturated, weighted)


def clipped_gradient_sum(X, raw_gradient, row_norms, clip_norm, intercept_scaling):
    """Sum of per-example clipped gradients ``sum_i c_i x~_i r_i^T`` of a linear model.

    Returns the coefficient block ``X^T (c * R)`` of shape
    ``(n_features, n_outputs)`` and the intercept block
    ``s * sum_i c_i r_i`` of shape ``(n_outputs,)`` (the gradient of ``w0``
    in the parametrization ``b = s w0``), in the namespace and on the device
    of ``X`` (host numpy for a CSR ``X``: one sparse-dense product,
    ``O(nnz(X) K)``).

    Changing one example moves the stacked sum by at most ``clip_norm`` in
    Frobenius norm; that is the sensitivity the Gaussian noise is calibrated
    to under add/remove adjacency. A record whose raw gradient is not finite
    contributes 0 (:func:`~sklearn_dpfair._solvers._rows.clipped_rows`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._linear import (
    ...     augmented_row_norms, clipped_gradient_sum)
    >>> X, R = np.array([[3.0, 4.0]]), np.array([[2.0]])
    >>> coef_block, intercept_block = clipped_gradient_sum(
    ...     X, R, augmented_row_norms(X), 1.0, 0.0)
    >>> coef_block.ravel()
    array([0.6, 0.8])
    """
    weighted = clipped_rows(raw_gradient, row_norms, clip_norm)
    if sp.issparse(X):
        coef_block = np.asarray(X.T @ weighted)
    else:
        # Promotes mixed precisions (float32 rows, float64 factors) as the
        # standard's matmul does; torch's @ operator would refuse them.
        coef_block = narrow_matmul(X, weighted, transpose_a=True)
    intercept_block = float(intercept_scaling) * column_sums(weighted)
    return coef_block, intercept_block


@dataclass(frozen=True)
class LinearModel:
    """A linear model with ``K`` outputs and the intercept scaling ``s``.

    The package's counterpart of scikit-learn's ``LinearModelLoss``: the
    ``[X, s]`` layout, raw predictions, clipped (noisy) gradient sums, the L2
    penalty and the parameter update, for dense, CSR sparse and array-API
    ``X``. The loss is the solver's (anything with
    ``raw_gradient(y, raw)``; ``loss(y, raw)`` for :meth:`loss_gradient`).

    Parameters
    ----------
    n_outputs : int
        ``K``, the columns of ``coef`` (one per class for the softmax, 1
        for the binary log-loss and regression losses).
    intercept_scaling : float, default=1.0
        ``s``: 1 fits an intercept ``b = s w0``, 0 fits none (``w0`` then
        stays 0 in every update).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SquaredLoss
    >>> from sklearn_dpfair._solvers._linear import LinearModel
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> model = LinearModel(n_outputs=1, intercept_scaling=1.0)
    >>> X, y = np.array([[3.0, 4.0], [0.0, 1.0]]), np.array([1.0, 0.0])
    >>> coef, w0 = model.zeros(X)
    >>> raw_grad = SquaredLoss().raw_gradient(y, model.raw_predictions(X, coef, w0))
    >>> g_coef, g_w0 = model.noisy_gradient(
    ...     X, raw_grad, model.row_norms(X),
    ...     mechanism=GaussianMechanism(clip_norm=1.0, noise_multiplier=0.0),
    ...     denominator=2.0, rng=np.random.default_rng(0))
    >>> g_coef.ravel(), g_w0
    (array([-0.2941742 , -0.39223227]), array([-0.09805807]))
    """

    n_outputs: int
    intercept_scaling: float = 1.0

    @property
    def has_intercept(self):
        """Whether the intercept parameter is fitted (``s != 0``)."""
        return bool(self.intercept_scaling)

    def zeros(self, X):
        """``(coef, w0)`` at 0, in the dtype, namespace and device of ``X``."""
        xp = np if sp.issparse(X) else array_namespace(X)
        device = "cpu" if sp.issparse(X) else device_of(X)
        coef = xp.zeros((X.shape[1], self.n_outputs), dtype=X.dtype, device=device)
        w0 = xp.zeros(self.n_outputs, dtype=X.dtype, device=device)
        return coef, w0

    def intercept(self, w0):
        """The intercept ``b = s w0``."""
        return float(self.intercept_scaling) * w0

    def split(self, W):
        """``(coef, w0)`` (views) of stacked parameters ``W``, shape ``(d + 1, K)``."""
        return W[:-1], W[-1]

    def stack(self, coef, w0):
        """Stacked parameters ``[coef; w0]`` of shape ``(d + 1, K)``."""
        xp = array_namespace(coef)
        return xp.concat([coef, w0[None, :]], axis=0)

    def row_norms(self, X):
        """Norms ``||[x_i, s]||`` of the augmented rows of ``X``."""
        return augmented_row_norms(X, self.intercept_scaling)

    def stored_row_norms(self, X):
        """The row norms a run keeps, or None (:func:`stored_row_norms`)."""
        return stored_row_norms(X, self.intercept_scaling)

    def row_norms_of(self, X_rows, rows, stored):
        """Norms of the rows ``X_rows = X[rows]`` (:func:`row_norms_of`)."""
        return row_norms_of(X_rows, rows, stored, self.intercept_scaling)

    def gradient_norms(self, X, raw_gradient, row_norms=None):
        """Per-example gradient norms ``||r_i|| ||[x_i, s]||``, never ``nan``.

        See :func:`~sklearn_dpfair._solvers._rows.per_example_norms`;
        ``row_norms`` defaults to :meth:`row_norms` of ``X``.
        """
        if row_norms is None:
            row_norms = self.row_norms(X)
        return per_example_norms(raw_gradient, row_norms)

    def raw_predictions(self, X, coef, w0):
        """Finite ``X coef + s w0`` (:func:`raw_predictions`)."""
        return raw_predictions(X, coef, self.intercept(w0))

    def clipped_gradient_sum(self, X, raw_gradient, row_norms, clip_norm):
        """Coefficient and intercept blocks of :func:`clipped_gradient_sum`."""
        return clipped_gradient_sum(
            X, raw_gradient, row_norms, clip_norm, self.intercept_scaling
        )

    def noisy_gradient(
        self, X, raw_gradient, row_norms, *, mechanism, denominator, rng
    ):
        """The privatized clipped gradient sum divided by ``denominator``.

        The per-example gradients ``x~_i r_i^T`` are clipped to
        ``mechanism.clip_norm`` and the mechanism's Gaussian noise is added
        to both blocks (together the ``(d + 1) x K`` sum whose sensitivity
        is the clip norm; the coefficient block's noise is drawn first, so
        the draws are those of one ``(d + 1) x K`` draw of the stacked sum).
        Without an intercept the intercept block carries no data: its noise
        is still drawn (the same random stream either way) and the block is
        returned as 0 (post-processing).
        ``denominator`` must be public (the *expected* batch size ``q n``
        under Poisson sampling, never the realized one).

        Returns
        -------
        g_coef : array of shape (n_features, K)
        g_w0 : array of shape (K,)
            float64 (float64 clip factors and noise) for numpy input.
        """
        g_coef, g_w0 = self.clipped_gradient_sum(
            X, raw_gradient, row_norms, mechanism.clip_norm
        )
        return self.privatize_gradient(
            g_coef, g_w0, mechanism=mechanism, denominator=denominator, rng=rng
        )

    def privatize_gradient(self, g_coef, g_w0, *, mechanism, denominator, rng):
        """Noise a clipped gradient sum and divide it by ``denominator``.

        ``(g_coef, g_w0)`` is a sum of per-example gradients each clipped to
        ``mechanism.clip_norm`` (:meth:`clipped_gradient_sum`, computed here
        or added up from the partitions of a distributed fit). The
        coefficient block's noise is drawn first; without an intercept the
        intercept block's noise is still drawn and the block returned as 0.
        """
        g_coef, g_w0 = mechanism.privatize_blocks((g_coef, g_w0), rng)
        g_coef, g_w0 = g_coef / denominator, g_w0 / denominator
        if not self.has_intercept:
            g_w0 = g_w0 * 0.0
        return g_coef, g_w0

    def private_step(
        self,
        coef,
        w0,
        g_coef,
        g_w0,
        *,
        mechanism,
        denominator,
        learning_rate,
        alpha,
        rng,
    ):
        """One private gradient step from a clipped gradient sum.

        :meth:`privatize_gradient` then :meth:`gradient_step`: the update of
        DP-SGD and of the primal block of DP-SGDA, in memory or on Dask
        (``denominator`` is the *expected* batch size, a public constant).

        Returns
        -------
        coef, w0 : arrays
            The updated parameters, in the dtype of ``coef``.
        """
        g_coef, g_w0 = self.privatize_gradient(
            g_coef, g_w0, mechanism=mechanism, denominator=denominator, rng=rng
        )
        return self.gradient_step(
            coef, w0, g_coef, g_w0, learning_rate=learning_rate, alpha=alpha
        )

    def penalty(self, coef, alpha):
        """The L2 penalty ``(alpha / 2) ||coef||^2`` (the intercept is free)."""
        xp = array_namespace(coef)
        return 0.5 * alpha * float(xp.sum(coef * coef))

    def penalty_gradient(self, coef, alpha):
        """Gradient ``alpha coef`` of :meth:`penalty`; data independent."""
        return alpha * coef

    def gradient_step(self, coef, w0, g_coef, g_w0, *, learning_rate, alpha):
        """One gradient step with the L2 term, in the parameters' dtype.

        Private gradients are float64; the update is computed in float64 and
        cast back to the parameters' dtype (what an in-place numpy update
        does), written so that strict array-API namespaces accept it.
        Without an intercept ``w0`` is returned unchanged.
        """
        xp = array_namespace(coef)
        dtype = coef.dtype
        coef = xp.astype(
            coef - learning_rate * (g_coef + self.penalty_gradient(coef, alpha)),
            dtype,
            copy=False,
        )
        if self.has_intercept:
            w0 = xp.astype(w0 - learning_rate * g_w0, dtype, copy=False)
        return coef, w0

    def loss_gradient(self, W, X, y, loss, *, alpha, sample_weight=None):
        """Full-batch objective and gradient in the stacked parameters ``W``.

        ``F(W) = (1/n) sum_i w_i l(y_i, x~_i W) + (alpha/2) ||W||^2`` (here
        the intercept parameter is penalized too, which makes ``F``
        ``alpha``-strongly convex in every coordinate, as output perturbation
        needs). ``X`` dense numpy or sparse CSR/CSC; it is never densified
        nor converted to ``W``'s dtype as a whole (float32 rows times
        float64 parameters give float64 predictions, a block of rows at a
        time). numpy only.

        Parameters
        ----------
        W : ndarray of shape (n_features + 1, K)
            Coefficient rows, then the intercept parameter ``w0``.
        X : ndarray or sparse matrix of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
        loss : object
            With ``loss(y, raw)`` and ``raw_gradient(y, raw)``.
        alpha : float
            L2 penalty.
        sample_weight : ndarray of shape (n_samples,) or None, default=None
            Public weights of each example's loss.

        Returns
        -------
        value : float
        gradient : ndarray of shape (n_features + 1, K)

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_dpfair._loss import SquaredLoss
        >>> from sklearn_dpfair._solvers._linear import LinearModel
        >>> value, grad = LinearModel(1).loss_gradient(
        ...     np.zeros((2, 1)), np.array([[1.0]]), np.array([2.0]), SquaredLoss(),
        ...     alpha=1.0)
        >>> grad.ravel()
        array([-2., -2.])
        """
        s = float(self.intercept_scaling)
        coef, w0 = W[:-1], W[-1]
        n = X.shape[0]
        blocks = row_blocks(X)
        if len(blocks) > 1:
            # A sparse X by blocks of rows: no n-length temporaries.
            loss_sum, coef_sum, intercept_sum = 0.0, 0.0, 0.0
            for rows in blocks:
                part = self._loss_gradient_sums(
                    coef, w0, row_block(X, rows), y[rows], loss,
                    None if sample_weight is None else sample_weight[rows],
                )
                loss_sum += part[0]
                coef_sum = coef_sum + part[1]
                intercept_sum = intercept_sum + part[2]
        else:
            loss_sum, coef_sum, intercept_sum = self._loss_gradient_sums(
                coef, w0, X, y, loss, sample_weight
            )
        value = loss_sum / n + 0.5 * alpha * np.sum(W * W)
        grad = np.empty_like(W)
        grad[:-1] = coef_sum / n
        grad[-1] = s * intercept_sum / n
        grad += alpha * W
        return value, grad

    def _loss_gradient_sums(self, coef, w0, X, y, loss, sample_weight):
        # Sum of the (weighted) losses, X^T R and the column sums of R.
        # float64, a block of a float32 X cast at a time (never the whole).
        raw = float64_product(X, coef) + float(self.intercept_scaling) * w0
        losses = loss.loss(y, raw)
        R = loss.raw_gradient(y, raw)
        if sample_weight is not None:
            losses = losses * sample_weight
            R = R * sample_weight[:, None]
        return losses.sum(), float64_product(X, R, transpose_a=True), R.sum(axis=0)
