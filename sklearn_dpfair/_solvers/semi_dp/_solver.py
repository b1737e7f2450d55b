# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-DP gradient descent for linear regression (thesis Algorithm 11).

One step of every semi-DP solver, for ``K`` configurations at once (the
columns of ``W``; the estimator uses ``K = 1``, the benchmark a whole grid):

1. private rows (all of them, or a Poisson batch): residuals
   ``R = X_priv W - y``, factorized clip factors
   ``min(1, C / (|r_i| ||x~_i||))``, clipped sum ``X~_priv^T (c * R)``;
2. Gaussian noise on that sum (the only private step), divided by ``C`` (De
   et al.'s normalization, so the learning rate does not depend on ``C``)
   and by the *expected* number of private rows in the step;
3. public rows: the same mean gradient, clipped or not, no noise;
4. ``g = alpha * g_priv + (1 - alpha) * g_pub`` (the Weighted-Gaussian
   gradient estimator, eq. 2.4 of the thesis);
5. ``w <- w - eta * P g`` with a preconditioner ``P`` built from public rows
   only (post-processing);
6. the released point is the average of the last iterates.

``K`` columns share the data passes (two matrix products per step), and each
column draws its noise from its own generator, so column ``k`` of a batched
run is bit-for-bit the single run with generator ``k``.

Memory. The private block may be given as a boolean row mask over the whole
design matrix (``SemiDPData.private_rows``) instead of a copy of its rows:
full-batch sums then run over every row with zero weight on the others, and
Poisson batches gather their rows straight from the whole matrix, so a fit
holds no second copy of the private rows (peak memory within twice the
data). Sparse (CSR) rows are used through their stored entries only, by
row blocks (``_solvers/_row_blocks.py``): with about one stored entry per
row, one float64 per row weighs half the matrix, so the residuals and clip
factors of a sparse ``X`` live one block at a time and its row norms are
recomputed from the rows read instead of stored.

Adversarial rows. Whatever a private row holds (features or target near the
float64 limit), its term in the noisy sum is finite with norm at most the
clip bound: norms are computed without overflow, a product ``x~_i^T w``
that overflows is saturated to the dtype's largest value by the linear
layer's ``raw_predictions`` (the row is then clipped like any other), a
residual that is still not finite (``inf - inf``) gives the row the fixed
contribution 0, and numpy's floating-point warnings are silenced inside the
solver (their firing would depend on the private rows). Public rows go
through the same clipped (or unclipped) sums.

Backends. The sums over rows (residuals, clip factors, clipped sums) run
in the namespace and on the device of the data (numpy, or torch on the CPU
or a GPU through the array API: the ``backend`` of the fit); everything
else (the Poisson batches and the noise, both drawn from the fit's numpy
generator, the public preconditioner, the step and the running average)
runs on the host in float64 on ``(p, K)`` arrays. A seed therefore gives
the same batches and the same noise on every backend, and the iterates
differ by floating-point round-off only.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...utils._array_api import NUMPY_BACKEND, array_namespace, to_numpy
from .._linear import (
    clipped_gradient_sum,
    raw_predictions,
    row_norms_of,
    stored_row_norms,
    weighted_raw_gradient,
)
from .._row_blocks import block_rows, row_block, row_blocks
from .._rows import clipped_rows
from .._sampling import poisson_batch
from .._schedules import tail_start

__all__ = ["SemiDPData", "SemiDPResult", "semidp_gradient_descent"]


@dataclass(frozen=True)
class SemiDPData:
    """The two row blocks of a semi-private regression.

    ``X_private`` and ``X_public`` are never concatenated or copied by the
    solver; ``intercept_scaling`` is the constant ``s`` of the augmented rows
    (0: no intercept, parameters have length ``n_features``).
    ``private_rows`` (boolean, one entry per row of ``X_private``), when
    given, says which rows of ``X_private`` form the private block, so the
    caller can pass the whole design matrix instead of copying those rows;
    None means every row of ``X_private`` is private.
    ``private_weights`` (one per row of ``X_private``) and ``public_weights``
    (one per public row) are public sample weights that multiply each row's
    residual *before* it is clipped; None is unweighted.
    """

    X_private: np.ndarray
    y_private: np.ndarray
    X_public: np.ndarray
    y_public: np.ndarray
    intercept_scaling: float
    private_rows: np.ndarray | None = None
    private_weights: np.ndarray | None = None
    public_weights: np.ndarray | None = None

    @property
    def n_params(self):
        """Length of the stacked parameter vector ``[coef, w0]``."""
        return self.X_private.shape[1] + (1 if self.intercept_scaling else 0)

    @property
    def n_private(self):
        """Number of private rows."""
        if self.private_rows is None:
            return self.X_private.shape[0]
        return int(np.count_nonzero(self.private_rows))


@dataclass
class SemiDPResult:
    """Averaged parameters ``(p, K)`` and the number of steps of each column."""

    params: np.ndarray
    n_steps: np.ndarray


def _raw_residuals(X, y, W, s):
    """``X~ W - y`` for the stacked parameters ``W`` of shape ``(p, K)``.

    The linear layer's :func:`~sklearn_dpfair._solvers._linear.raw_predictions`:
    a product that overflows on a huge finite row is saturated to the
    dtype's largest value instead of ``inf`` (the row's term is then
    clipped like any other; it stays finite and within the clip).
    """
    n_features = X.shape[1]
    intercept = s * W[n_features] if s else 0.0
    return raw_predictions(X, W[:n_features], intercept) - y[:, None]


def _clipped_sum(X, R, row_norms, clip_norm, s, excluded=None):
    """``sum_i c_ik r_ik x~_i`` for every column ``k``, shape ``(p, K)``.

    ``R`` holds the per-row raw gradients (residuals) of the ``K`` columns;
    each (row, column) pair is clipped separately with the factorized norm
    ``|r_ik| ||x~_i||`` (:func:`~sklearn_dpfair._solvers._rows.clipped_rows`),
    so one row moves column ``k`` by at most ``C``: a residual that is not
    finite contributes exactly 0, and each entry ``c_ik r_ik x_ij`` is finite
    even for a huge ``x_ij``. Rows flagged in ``excluded`` get weight exactly
    0 (set, not multiplied). ``R`` is a temporary of the caller and may be
    overwritten.

    The ``K`` columns are independent models, each clipped on its own, so
    the clip factors are taken per column here; the sum of the clipped
    terms (one product for all columns, dense or sparse rows, and the
    intercept block) is the linear layer's
    :func:`~sklearn_dpfair._solvers._linear.clipped_gradient_sum`, given
    terms that are already clipped (``clip_norm=inf`` there: no second
    clipping, non-finite terms still 0).
    """
    xp = array_namespace(R)
    if R.shape[1] == 1:
        weighted = clipped_rows(R, row_norms, clip_norm)
    else:
        weighted = xp.stack(
            [
                clipped_rows(R[:, k : k + 1], row_norms, clip_norm)[:, 0]
                for k in range(R.shape[1])
            ],
            axis=1,
        )
    if excluded is not None:
        weighted[excluded] = 0.0
    if X.dtype == xp.float64 or (sp.issparse(X) and X.dtype == np.float64):
        coef_block, intercept_block = clipped_gradient_sum(
            X, weighted, None, np.inf, s
        )
    else:
        coef_block, intercept_block = _blockwise_sum(X, weighted, s)
    # The (p, K) sum goes to the host in float64: the noise, the step and
    # the average are computed there on every backend.
    coef_block = np.asarray(to_numpy(coef_block), dtype=np.float64)
    if not s:
        return coef_block
    intercept_block = np.asarray(to_numpy(intercept_block), dtype=np.float64)
    return np.vstack([coef_block, intercept_block[None, :]])


# Rows per block of a float32 X in a float64 sum.
_BLOCK_ROWS = 4096


def _blockwise_sum(X, weighted, s):
    """The clipped sum of a float32 ``X``, accumulated in float64 by row blocks.

    A float32 sum of ``n`` terms rounds by up to ``n`` float32 units, which
    would let one record move it by more than the clip; promoting the whole
    ``X`` to float64 would double its memory. Each block of rows is
    promoted alone (a few MB), so the sum has float64 precision and ``X`` is
    never copied.
    """
    coef_block = np.zeros((X.shape[1], weighted.shape[1]))
    intercept_block = np.zeros(weighted.shape[1])
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        rows = slice(start, start + _BLOCK_ROWS)
        coef, intercept = clipped_gradient_sum(
            row_block(X, rows), weighted[rows], None, np.inf, s
        )
        coef_block += to_numpy(coef)
        intercept_block += to_numpy(intercept)
    return coef_block, intercept_block


def _rows_clipped_sum(
    X, y, W, norms, clip_norm, s, weights, excluded=None, rows_per_block=None
):
    """:func:`_clipped_sum` of every row of ``X`` at the parameters ``W``.

    Accumulated over :func:`~.._row_blocks.row_blocks`, so that the residuals of
    a sparse ``X`` are never all held at once; ``norms`` are the
    :func:`~.._linear.stored_row_norms` of ``X``. ``weights`` (one per row, or
    None) multiply the residuals *before* they are clipped: one row still
    moves a sum by at most ``C``.
    """
    total = None
    for rows in row_blocks(X, rows_per_block):
        Xb = row_block(X, rows)
        # Saturated, not inf, where a huge weight overflows the product: the
        # row's term is then clipped to C like any huge one (inf would make
        # it count as not finite and contribute 0).
        R = weighted_raw_gradient(
            _raw_residuals(Xb, y[rows], W, s),
            None if weights is None else weights[rows],
        )
        part = _clipped_sum(
            Xb, R, row_norms_of(Xb, rows, norms, s), clip_norm, s,
            None if excluded is None else excluded[rows],
        )
        total = part if total is None else total + part
    return total


def _privatize_columns(total, mechanisms, rngs, cols):
    """Gaussian noise on each column's clipped sum, from that column's generator."""
    return np.column_stack(
        [mechanisms[k].privatize(total[:, j], rngs[k]) for j, k in enumerate(cols)]
    )


# Whether numpy warns of an overflow or an invalid value depends on the
# private rows: silenced for the whole solve.
@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def semidp_gradient_descent(
    data,
    W0,
    *,
    mechanisms,
    alpha,
    learning_rate,
    n_steps,
    clip_norm,
    public_clipping,
    sampling_probability,
    preconditioner,
    rngs,
    tail_fraction,
    private_count=None,
    backend=NUMPY_BACKEND,
    progress=None,
):
    """Run ``K`` semi-DP gradient descents and return their averaged iterates.

    Parameters
    ----------
    data : SemiDPData
    W0 : ndarray of shape (p, K)
        Starting points (the public warm start).
    mechanisms : sequence of GaussianMechanism, length K
        Noise of each column's private clipped sum; its ``clip_norm`` is the
        sum's sensitivity under the stated adjacency (``C`` or ``2 C``).
    alpha, learning_rate : ndarray of shape (K,)
        Private weight and step size of each column.
    n_steps : ndarray of int of shape (K,)
        Steps of each column, fixed before the data are read.
    clip_norm : float
        Per-row clip threshold ``C`` (``inf``: no clipping, no normalization).
    public_clipping : bool
        Whether public gradients are clipped with ``C`` as well.
    sampling_probability : float
        Poisson rate of private rows per step; 1 is full batch.
    preconditioner : SpectralPreconditioner or None
        Public preconditioner (None: identity).
    rngs : sequence of numpy.random.Generator, length K
        Source of each column's noise (and batches).
    tail_fraction : float
        Fraction of each column's last iterates that are averaged.
    private_count : int or None, default=None
        The public count of private records that the noisy sum is divided
        by (times the sampling rate): a declared value, so that no count is
        read from the data; None uses the private rows of ``data`` (treated
        as public). Poisson batches are drawn among the rows of ``data``
        either way.
    backend : ArrayBackend, default=NUMPY_BACKEND
        Where the sums over rows run (dense ``X`` only off numpy); the
        batches, the noise and the step are drawn and computed on the host.
    progress : Progress or None, default=None
        Called after each step with the norm of column 0's released step
        gradient ``G`` (noisy private sum and public sum: released values).

    Returns
    -------
    result : SemiDPResult
    """
    Xq, yq, Xp, yp = data.X_private, data.y_private, data.X_public, data.y_public
    s = float(data.intercept_scaling)
    # float32 data keep float32 iterates and predictions; the target is
    # float64 (a float32 copy would overflow a target beyond its range), so
    # are the residuals of a block of rows, the clipped sums, the noise, the
    # step and the running average.
    dtype = np.float32 if Xq.dtype == np.float32 else np.float64
    if not backend.is_numpy:
        if sp.issparse(Xq):
            raise TypeError(
                "Sparse X runs on the host (numpy) only; use device='cpu' or "
                "a dense X."
            )
        # The rows move to the device once; only (p, K) arrays travel after.
        Xq, yq = backend.asarray(Xq), backend.asarray(yq)
        Xp, yp = backend.asarray(Xp), backend.asarray(yp)
    W = np.array(W0, dtype=dtype, copy=True)
    alpha = np.asarray(alpha, dtype=float)
    learning_rate = np.asarray(learning_rate, dtype=float)
    n_steps = np.asarray(n_steps, dtype=int)
    # De et al.: divide clipped gradients by C (by 1 without clipping).
    scale = clip_norm if np.isfinite(clip_norm) else 1.0
    row_norms_q = stored_row_norms(Xq, s)
    row_norms_p = stored_row_norms(Xp, s)
    public_clip = clip_norm if public_clipping else np.inf
    n_private = data.n_private
    excluded, private_index = None, None
    if data.private_rows is not None:
        if sampling_probability >= 1.0:
            excluded = backend.asarray(~np.asarray(data.private_rows, dtype=bool))
        else:
            private_index = np.flatnonzero(data.private_rows)
    private_weights = data.private_weights
    public_weights = data.public_weights
    if not backend.is_numpy:
        private_weights = (
            None if private_weights is None else backend.asarray(private_weights)
        )
        public_weights = (
            None if public_weights is None else backend.asarray(public_weights)
        )
    expected_private = sampling_probability * (
        n_private if private_count is None else private_count
    )
    has_public = Xp.shape[0] > 0
    # Public rows in blocks sized for the whole X (they are a part of it).
    public_block_rows = block_rows(Xq) if sp.issparse(Xq) else None

    tail_from = tail_start(n_steps, tail_fraction)
    total = np.zeros(W.shape)

    for t in range(int(n_steps.max(initial=0))):
        cols = np.flatnonzero(n_steps > t)
        Wa = W[:, cols]
        # The iterates go to the data's device in the data's dtype.
        Wd = Wa if backend.is_numpy else backend.asarray(Wa)
        if sampling_probability >= 1.0:
            private_sum = _rows_clipped_sum(
                Xq, yq, Wd, row_norms_q, clip_norm, s, private_weights, excluded
            )
        else:
            private_sum = np.column_stack(
                [
                    _poisson_sum(
                        Xq, yq, Wd[:, j : j + 1], row_norms_q, clip_norm, s,
                        sampling_probability, rngs[k], n_private, private_index,
                        private_weights,
                    )
                    for j, k in enumerate(cols)
                ]
            )
        # The noisy sum is the only thing computed from private rows; dividing
        # by the *expected* count keeps the realized batch size private.
        noisy_sum = _privatize_columns(private_sum, mechanisms, rngs, cols)
        G = alpha[cols] * noisy_sum / (scale * expected_private)
        if has_public:
            public_sum = _rows_clipped_sum(
                Xp, yp, Wd, row_norms_p, public_clip, s, public_weights,
                rows_per_block=public_block_rows,
            )
            G += (1.0 - alpha[cols]) * public_sum / (scale * Xp.shape[0])
        if progress is not None and cols.size and cols[0] == 0:
            # G is the released noisy private sum plus the public sum:
            # printing its norm is post-processing.
            progress(t + 1, float(np.linalg.norm(G[:, 0])))
        if preconditioner is not None:
            G = preconditioner.apply(G, cols)
        step = Wa - learning_rate[cols] * G
        # Unclipped sums (public rows, or every row with epsilon = inf) of
        # rows near the float64 limit can overflow although each row is
        # finite: the coordinates they would make non-finite (in the
        # iterates' dtype: a float32 iterate holds less than the float64
        # step) keep their value. A clipped, noised private sum is always
        # finite.
        W[:, cols] = np.where(np.abs(step) <= np.finfo(dtype).max, step, Wa)
        averaged = cols[t >= tail_from[cols]]
        total[:, averaged] += W[:, averaged]
    averaged = total / (n_steps - tail_from)
    return SemiDPResult(params=averaged.astype(dtype, copy=False), n_steps=n_steps)


def _poisson_sum(
    Xq, yq, w, row_norms, clip_norm, s, q, rng, n_private, private_index, weights=None
):
    """Clipped private sum of one column on its own Poisson batch.

    The batch is drawn among the ``n_private`` private rows; ``private_index``
    (None: the identity) maps it to rows of ``Xq``, so only the batch is copied.
    """
    # Drawn on the host from the fit's generator whatever the backend.
    idx = poisson_batch(rng, n_private, q)
    if private_index is not None:
        idx = private_index[idx]
    xp = array_namespace(w)
    if xp is not np:
        idx = xp.asarray(idx, device=w.device)
        Xb, yb = xp.take(Xq, idx, axis=0), xp.take(yq, idx, axis=0)
    else:
        Xb, yb = Xq[idx], yq[idx]
    # Saturated where a huge weight overflows (see _rows_clipped_sum).
    R = weighted_raw_gradient(
        _raw_residuals(Xb, yb, w, s),
        None
        if weights is None
        else (weights[idx] if xp is np else xp.take(weights, idx, axis=0)),
    )
    return _clipped_sum(
        Xb, R, row_norms_of(Xb, idx, row_norms, s), clip_norm, s
    )[:, 0]
