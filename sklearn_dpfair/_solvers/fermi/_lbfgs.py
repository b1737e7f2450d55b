# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Full-batch phase of the non-private FERMI fit: L-BFGS on the exact-dual objective.

For a fixed model the ERMI min-max problem is strongly concave in ``W`` with
a closed-form maximiser (thesis Chapter 5, Eq. (5.1) and Lemma 221; the
maximiser ``W*`` of
:meth:`~sklearn_dpfair.fairness._ermi.ERMIRegularizer.dual_maximizer`), so
the full-batch objective

    f(theta) = mean_i l_i(theta) + lambda max_W Psi(theta, W) + alpha/2 ||coef||^2

is the soft-ERMI-regularized loss, and by Danskin's theorem its gradient is
``grad_theta Psi(theta, W*(theta))``: the primal gradient of SGDA with the
dual set to its maximiser. Minimising ``f`` by L-BFGS removes the two
constant step sizes that make SGDA oscillate at large ``lambda`` or on
features of large norm: the quasi-Newton model and the line search adapt to
the curvature, and the coordinates (each coefficient times its column's
scale) make the stopping rule the same on any per-column rescaling. The
stationarity ``max |grad f|`` in those coordinates (the duality gap is 0,
the dual being exact) is the convergence diagnostic; scikit-learn's L-BFGS
solvers use the same test. It is only as good as the scales: a column whose
scale a few extreme rows set (one record at 1e6 among ages) hides its
bulk's gradient from it, and such columns are checked, and the phase
continued, in robust coordinates
(:meth:`~._problem.FairProblem.refine_robust`,
:func:`dominated_column_moments`). A point that still fails the test there
(an extreme row on the wrong side of a boundary, whose curvature exceeds
the bulk's by ten orders of magnitude, with more than two classes; a row
near the largest float) is reported as not converged.

Reads every training row at every iteration: the non-private fit only.
The softmax and ERMI terms are computed block of rows by block
(:func:`term_rows`; the exact dual's cell sums in a first pass), so that
besides ``X`` the objective holds one small code a row for the labels and
the (block, group) cells and, for a dense ``X`` or two classes, the logits
(one float64 a row for two classes, ``m`` for more, overwritten by their
gradient), whatever the number of rows. With more than two classes and a
sparse ``X`` (whose storage may be ~16 bytes a row, less than the ``8 m``
of the logits) no ``n x m`` array is held: each block's logits are
computed from its rows (in each pass) and its gradient summed into the
coefficients' at once.
``X`` is dense numpy or scipy sparse (every product is ``X @ v`` or
``X.T @ g``, so a sparse ``X`` is never densified), in its own dtype: the
products with a float32 ``X`` are float64, computed on float64 copies of
blocks of rows, never of the whole matrix
(:func:`~sklearn_dpfair._solvers._row_blocks.float64_product`; numpy and
scipy would cast all of ``X`` to float64 for a product with the float64
parameters).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from ...utils._numeric import SQRT_SMALLEST_NORMAL, power_of_two_magnitudes
from .._row_blocks import float64_product, row_block, storage_bytes
from .._rows import canonical_csr, entry_blocks
from ._newton_polish import polish_binary
from ._sgda import softmax_probabilities, softmax_terms

__all__ = [
    "FullBatchPenalty",
    "FullBatchResult",
    "binary_softmax_terms",
    "block_logits",
    "dominated_column_moments",
    "exact_dual",
    "exact_dual_objective",
    "reach_candidates",
    "refine_full_batch",
    "keeps_terms",
    "row_slices",
    "term_rows",
]

_LARGEST = float(np.finfo(np.float64).max)


@dataclass
class FullBatchResult:
    """What :func:`refine_full_batch` returns (host numpy arrays)."""

    coef: np.ndarray  # (n_features, n_classes)
    w0: np.ndarray  # (n_classes,)
    stationarity: float
    converged: bool
    n_iter: int
    objective: float
    # Whether the solve that produced the point stopped at its iteration
    # limit (max_full_batch_iter); False where L-BFGS stopped by itself
    # (gtol, or no further decrease in floating point).
    at_limit: bool = False


# Bytes of temporaries per row and class of the full-batch terms (logits,
# probabilities, gradients, ERMI coefficients: about 16 float64 a class).
_TERM_BYTES = 128


def term_rows(X, n_classes):
    """Rows per block of the full-batch terms: temporaries at most 1/8 of ``X``.

    The softmax and ERMI terms of a block of rows take about ``16 m``
    float64 a row; blocks of at least 256 rows (few Python steps) and at
    most 65536 keep them at 1/8 of the storage of ``X`` (dense, or the
    stored entries and indices of a sparse matrix), so that with one code a
    row and the one or ``m`` float64 a row of the logits the fit stays
    within twice the storage even for a sparse ``X`` of one entry a row.
    """
    rows = storage_bytes(X) // (8 * _TERM_BYTES * max(int(n_classes), 1))
    return int(min(max(rows, 256), _MAX_TERM_ROWS))


# Most rows of a block of the full-batch terms.
_MAX_TERM_ROWS = 1 << 16
# Blocks of the sparse objective, which holds no n x m array, are this many
# times larger than term_rows.
_SPARSE_TERM_SHARE = 4


def keeps_terms(X, n_logits):
    """Whether the first pass's softmax terms are kept for the second.

    They take ``2 m + 1`` float64 a row (probabilities, gradient, loss);
    kept when that is at most 1/8 of the storage of ``X`` (a dense ``X`` of
    some tens of columns), the second pass does not compute them again.
    """
    return 8 * (2 * n_logits + 1) * X.shape[0] <= storage_bytes(X) // 8


_HALF = np.array([-0.5, 0.5])

# Correction pairs L-BFGS keeps (scipy's default is 10). At large fairness
# weights the objective is ill-conditioned along a few directions and a longer
# memory of curvature saves iterations: on Adult (StandardScaler on every
# column) the disparity_bound paths take 131 instead of 170 iterations
# (equalized odds, bound 0.01), 96 instead of 120 (0.02), at the same chosen
# weights. Each pair costs O(d m) memory and time, nothing against the
# O(n d m) products of one evaluation -- unless X is sparse with many
# columns, or small, where the workspace of 50 pairs can outweigh X itself:
# the memory is then cut (down to scipy's 10) to fit in 1/16 of X's
# storage (lbfgs_memory).
LBFGS_MEMORY = 50
_MIN_LBFGS_MEMORY = 10


def lbfgs_memory(X, n_params):
    """Correction pairs for ``n_params`` unknowns: up to 50, in 1/16 of X's storage.

    L-BFGS-B's workspace for ``m`` pairs is about ``2 m p + 11 m^2 + 8 m``
    floats (scipy's ``lbfgsb`` work arrays); the largest ``m`` in ``[10, 50]``
    whose workspace fits in 1/16 of X's storage is used, so that a
    small or very sparse X does not pay for a memory it cannot use.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._lbfgs import lbfgs_memory
    >>> lbfgs_memory(np.ones((100000, 10)), 11), lbfgs_memory(np.ones((10, 10)), 11)
    (50, 10)
    """
    p = max(int(n_params), 1)
    room = storage_bytes(X) / 16
    for m in range(LBFGS_MEMORY, _MIN_LBFGS_MEMORY, -1):
        if 8 * (2 * m * p + 11 * m * m + 8 * m) <= room:
            return m
    return _MIN_LBFGS_MEMORY


@dataclass(frozen=True)
class FullBatchPenalty:
    """The ERMI term of the full-batch objective, one small code a row.

    ``cells`` are the rows' :meth:`~sklearn_dpfair.fairness._ermi.ERMIRegularizer.row_cells`;
    each row's penalty weight is its block weight times ``weight_scale``
    (times its sample weight when the fit is weighted), as in
    :meth:`~sklearn_dpfair.fairness._ermi.ERMIRegularizer.sample_constants`.
    """

    regularizer: object
    cells: np.ndarray
    weight_scale: float = 1.0
    block: int = 1 << 16  # rows per block of the dual's cell sums

    def constants(self, rows, sample_weight=None):
        """``(block, group, weight, 1/sqrt(Ps))`` of the rows ``rows`` (a slice)."""
        scale = self.weight_scale
        if sample_weight is not None:
            scale = scale * sample_weight[rows]
        return self.regularizer.batch_constants(self.cells[rows], scale)

    def dual(self, probabilities, n_rows, sample_weight=None):
        """Exact dual maximiser ``W*`` at the probabilities ``probabilities(rows)``.

        The cell sums of ``w_i F_i`` are added block of rows by block of rows
        in row order: the single pass of
        :meth:`~sklearn_dpfair.fairness._ermi.ERMIRegularizer.dual_maximizer`
        bit for bit, with temporaries of one block.
        """
        reg = self.regularizer
        total = np.zeros((reg.n_blocks, reg.n_groups, reg.n_classes))
        for rows in row_slices(n_rows, self.block):
            proba = probabilities(rows)
            blk, grp, wt, _ = self.constants(rows, sample_weight)
            total = reg.add_cell_sums(total, proba, blk, grp, wt)
        return reg.maximizer_from_cells(total)


def row_slices(n, rows):
    """Slices of ``rows`` consecutive rows (the last shorter) covering ``n`` rows."""
    return [slice(start, min(start + rows, n)) for start in range(0, n, rows)]


def _full_batch_terms(
    logits, gradient, n, y, penalty, fairness_weight, rows, sample_weight=None,
    keep=False, binary=False,
):
    """Mean loss + ``lambda`` ERMI of ``n`` rows, block of ``rows`` rows by block.

    ``logits(part)`` gives the ``(rows, m)`` logits of a slice of the rows
    and ``gradient(part, g)`` receives their logit gradient divided by
    ``n``: the softmax and ERMI temporaries are those of one block. With a
    fairness term the logits of every block are asked for twice (the dual's
    cell sums, then the gradient), unless ``keep`` (:func:`keeps_terms`):
    then the first pass keeps each block's softmax terms for the second.
    ``sample_weight`` (mean 1, or None) weights the loss terms; the
    penalty is weighted through the rows' weights
    (:class:`FullBatchPenalty`, None without fairness term). A row whose
    logits overflow gets probabilities, gradient and loss 0
    (:func:`~._sgda.softmax_terms`). The value's sums are added block by
    block (its rounding may differ from a single sum). With ``binary``,
    ``logits(part)`` is the single logit ``z`` of class 1 of each row (the
    logits ``[-z/2, z/2]``), whose terms are :func:`binary_softmax_terms`.
    """
    kept = {}
    softmax = binary_softmax_terms if binary else softmax_terms

    def terms(part):
        got = kept.pop((part.start, part.stop), None)
        return softmax(logits(part), y[part]) if got is None else got

    def probabilities(part):
        if keep:
            kept[part.start, part.stop] = got = terms(part)
            return got[0]
        if binary:
            return binary_softmax_terms(logits(part), None)[0]
        return softmax_probabilities(logits(part))

    W = None
    if penalty is not None and fairness_weight > 0:
        W = penalty.dual(probabilities, n, sample_weight)
        reg = penalty.regularizer
    loss_sum = penalty_sum = 0.0
    for part in row_slices(n, rows):
        proba, grad_raw, loss = terms(part)
        if sample_weight is not None:
            loss = loss * sample_weight[part]
            grad_raw = grad_raw * sample_weight[part, None]
        loss_sum += float(np.sum(loss))
        if W is not None:
            blk, grp, wt, isq = penalty.constants(part, sample_weight)
            c = reg.coefficients(W, blk, grp, isq)
            penalty_sum += float(np.sum(reg.value(proba, c, wt)))
            grad_raw += fairness_weight * reg.raw_gradient(proba, c, wt)
        grad_raw /= n
        gradient(part, grad_raw)
    value = loss_sum / n
    if W is not None:
        value += fairness_weight * (penalty_sum / n)
    return value


def _in_place(raw):
    """``(logits, gradient)`` of :func:`_full_batch_terms` over all the logits ``raw``.

    ``raw`` is ``(n, m)`` logits, or ``(n,)``: the logit ``z`` of class 1
    of a binary model, whose two logits are ``[-z/2, z/2]``. It is
    overwritten, block by block, by the logit gradient (``dL/dz`` for a
    single logit).
    """
    if raw.ndim == 1:

        def logits(part):
            return np.outer(raw[part], _HALF)

        def gradient(part, grad):
            raw[part] = grad @ _HALF

    else:

        def logits(part):
            return raw[part]

        def gradient(part, grad):
            raw[part] = grad

    return logits, gradient


def _single_logit(z):
    """``(logits, gradient)`` of :func:`_full_batch_terms` (``binary``) over ``z``.

    ``z`` is the logit of class 1 of a binary model, one a row; it is
    overwritten, block by block, by ``dL/dz``.
    """

    def logits(part):
        return z[part]

    def gradient(part, grad):
        z[part] = grad @ _HALF

    return logits, gradient


@np.errstate(over="ignore", invalid="ignore")
def binary_softmax_terms(z, y):
    """:func:`~._sgda.softmax_terms` of the logits ``[-z/2, z/2]``, from ``z``.

    The stable softmax of two logits ``|z|`` apart shifts the larger to 0
    and the other to ``-|z|`` (exactly: halving is exact), so the
    probabilities are ``1 / (1 + e)`` and ``e / (1 + e)`` with
    ``e = exp(-|z|)`` and the loss is ``log(1 + e)``, plus ``|z|`` when the
    label's logit is the smaller: computed on a vector of ``n`` logits, not
    on an ``n x 2`` array, at about half the cost of the full-batch
    objective's softmax. A row whose ``z`` is not finite gets probabilities,
    gradient and loss 0, as there. With ``y`` None only the probabilities
    are computed: ``(proba, None, None)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._lbfgs import binary_softmax_terms
    >>> z, y = np.array([0.0, 2.0, np.inf]), np.array([1, 0, 0])
    >>> proba, grad, loss = binary_softmax_terms(z, y)
    >>> proba.round(4)
    array([[0.5   , 0.5   ],
           [0.1192, 0.8808],
           [0.    , 0.    ]])
    >>> grad.round(4)
    array([[ 0.5   , -0.5   ],
           [-0.8808,  0.8808],
           [ 0.    ,  0.    ]])
    >>> loss.round(4)
    array([0.6931, 2.1269, 0.    ])
    """
    finite = np.isfinite(z)
    a = np.abs(z)
    e = np.exp(-a)
    total = 1.0 + e
    big = 1.0 / total
    small = e / total
    up = z >= 0
    proba = np.empty((z.shape[0], 2))
    proba[:, 1] = np.where(up, big, small)
    proba[:, 0] = np.where(up, small, big)
    proba[~finite] = 0.0
    if y is None:
        return proba, None, None
    label = np.asarray(y) == 1
    grad = proba.copy()
    grad[:, 1] -= label
    grad[:, 0] -= ~label
    grad[~finite] = 0.0
    # The label's shifted logit: 0 when it is the larger one (both at a
    # tie), -|z| otherwise.
    loss = np.log(total) + np.where((label == up) | (z == 0), 0.0, a)
    loss[~finite] = 0.0
    return proba, grad, loss


def _penalty(regularizer, cells, weight_scale, rows):
    if regularizer is None or cells is None:
        return None
    return FullBatchPenalty(regularizer, cells, weight_scale, block=rows)


@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def exact_dual_objective(
    params,
    X,
    y,
    *,
    regularizer,
    cells,
    fairness_weight,
    alpha,
    intercept_scaling,
    weight_scale=1.0,
    sample_weight=None,
):
    """Value and gradient of ``f`` at flat ``params = [coef (d x m), w0 (m)]``.

    ``cells`` are the rows'
    :meth:`~sklearn_dpfair.fairness._ermi.ERMIRegularizer.row_cells` (each
    row's penalty weight is its block weight times ``weight_scale``, times
    its sample weight); ``regularizer`` None (or ``fairness_weight`` 0) is
    plain logistic regression. Returns ``(value, gradient)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._lbfgs import exact_dual_objective
    >>> X, y = np.array([[1.0], [-1.0]]), np.array([1, 0])
    >>> value, grad = exact_dual_objective(
    ...     np.zeros(4), X, y, regularizer=None, cells=None,
    ...     fairness_weight=0.0, alpha=0.0, intercept_scaling=1.0)
    >>> round(value, 4), grad.round(2).tolist()
    (0.6931, [0.5, -0.5, 0.0, 0.0])
    """
    n, d = X.shape
    m = int(params.size // (d + 1))
    coef = params[: d * m].reshape(d, m)
    w0 = params[d * m :]
    s = intercept_scaling
    sparse = sp.issparse(X)
    rows = term_rows(X, m)
    if sparse:
        # No n x m array is held beside a sparse X: the blocks' temporaries
        # may take half its storage (four times those of term_rows), and
        # the blocks, which each cost a few scipy calls, are fewer.
        rows = min(_SPARSE_TERM_SHARE * rows, _MAX_TERM_ROWS)
    terms = dict(
        n=n,
        y=y,
        penalty=_penalty(regularizer, cells, weight_scale, rows),
        fairness_weight=fairness_weight,
        rows=rows,
        sample_weight=sample_weight,
        keep=keeps_terms(X, m),
    )
    if sparse:
        # The n x m logits would outweigh a sparse X (24 bytes a row for
        # three classes, next to ~16 for one stored entry a row): each
        # block's logits are computed from its rows, which share the
        # stored entries of X, and its gradient is summed into the
        # coefficients' and intercept's at once.
        g_coef = np.zeros((d, m))
        g_w0 = np.zeros(m)

        def gradient(part, grad):
            g_coef[...] += float64_product(
                row_block(X, part), grad, transpose_a=True
            )
            g_w0[...] += grad.sum(axis=0)

        value = _full_batch_terms(
            lambda part: block_logits(X, coef, w0, s, part), gradient, **terms
        )
        g_w0 *= s
    else:
        # A dense X weighs d / m times the logits: one product each way.
        raw = float64_product(X, coef)
        raw += s * w0
        value = _full_batch_terms(*_in_place(raw), **terms)
        # raw now holds the logit gradient (divided by n).
        g_coef = float64_product(X, raw, transpose_a=True)
        g_w0 = s * raw.sum(axis=0)
    g_coef += alpha * coef
    value += 0.5 * alpha * float(np.sum(coef**2))
    return value, np.concatenate([g_coef.ravel(), g_w0])


@np.errstate(over="ignore", invalid="ignore")
def block_logits(X, coef, w0, intercept_scaling, rows):
    """``X[rows] coef + s w0`` in float64, for a slice ``rows`` of the rows."""
    return float64_product(row_block(X, rows), coef) + intercept_scaling * w0


def exact_dual(X, coef, w0, *, intercept_scaling, penalty, sample_weight=None):
    """The exact dual maximiser ``W*`` at the model ``(coef, w0)`` (host numpy).

    Rows whose logits overflow get probabilities 0, as in SGDA. The logits
    are computed block of rows by block (:func:`block_logits`): no
    ``n x m`` array is held.
    """
    return penalty.dual(
        lambda rows: softmax_probabilities(
            block_logits(X, coef, w0, intercept_scaling, rows)
        ),
        X.shape[0],
        sample_weight,
    )


def column_square_sums(X, sample_weight=None):
    """Each column's (weighted) sum of squares, in float64, in one pass.

    No ``n x d`` temporary: ``einsum`` sums column by column, a sparse ``X``
    its stored entries. Entries beyond ~1e154 overflow their squares to
    ``inf`` (the callers rescue or refuse those columns); numpy does not
    warn here.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if sp.issparse(X):
            return _sparse_column_squares(X, sample_weight)
        if sample_weight is None:
            return np.einsum("ij,ij->j", X, X, dtype=np.float64)
        return np.einsum("ij,ij,i->j", X, X, sample_weight, dtype=np.float64)


def column_scales(X, sample_weight=None):
    """Root mean square of each column (1 where it is 0 or not finite).

    With ``sample_weight`` the mean is weighted, so that a weight of 2 gives
    the scales of a duplicated row (and so the same L-BFGS path).

    The full-batch phase works in the coordinates ``coef_j * scale_j``, a
    diagonal preconditioner: the same problem on features scaled by any
    per-column factor (StandardScaler, MinMaxScaler, raw units) then takes
    the same L-BFGS path, and ``tol`` means the same on each of them.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        squares = column_square_sums(X, sample_weight)
        total = X.shape[0] if sample_weight is None else float(np.sum(sample_weight))
        total = total if total > 0 else 1
        scale = np.sqrt(squares / total)
    overflowed = np.flatnonzero(np.isinf(scale))
    if overflowed.size:
        # Entries beyond ~1e154 overflow their squares: those columns (only
        # they, the others keep their sums bit for bit) are summed again
        # divided by a power of two near their largest entry, exactly. With
        # scale 1 the preconditioner would be lost, and L-BFGS's first unit
        # step would move such a row's logit by ~1e300: no line search
        # recovers from that.
        scale[overflowed] = _rescaled_root_mean_squares(
            X, overflowed, sample_weight, total
        )
    return np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)


# A column is dominated by a few of its rows where its scale (standard
# deviation, or root mean square without an intercept) exceeds this many
# times its robust scale: the factor at which the non-private solver of
# :mod:`.._non_private` changes to robust coordinates. Ordinary columns
# (normal: 1; heavy tails: a few) stay far below it.
DOMINATED = 100.0
# Share of the weight, farthest from the median, left out of the robust
# scale's root mean square (the rest is the bulk a tolerance should see).
_TRIM = 0.01
# Entries per block of the robust statistics' float64 copies of columns.
_ROBUST_BLOCK = 1 << 22
# The normal's interquartile range in standard deviations.
_NORMAL_IQR = 1.3489795003921634
# A robust scale whose square is below the smallest normal float is taken
# as 0 (1 / scale would overflow the coordinates).
_SMALLEST_ROBUST = SQRT_SMALLEST_NORMAL


def dominated_column_moments(
    X, mean, scale, sample_weight=None, *, center=True, extremes=None
):
    """Robust location and scale of the columns that a few rows dominate.

    ``mean`` and ``scale`` are the columns' (weighted) mean and standard
    deviation (with ``center`` False: 0 and the root mean square). A
    column's robust scale is the larger of its interquartile range over
    1.349 and the root mean square deviation from its median of the rows
    off the median nearest it that hold 99% of those rows' weight, the last
    in part (without ``center``: the rows off 0, and no interquartile
    range), by exact weighted quantiles (inverted CDF) over the rows of
    positive weight, so that an integer weight counts as repeated rows. The
    rows at the median are left out of the root mean square: a column of
    0 but on 1% of its rows (a rare category, a sparse column) has the
    spread of those, not of a sliver of them. A column is dominated where
    ``scale`` exceeds :data:`DOMINATED` times that positive robust scale:
    five records of 999999 among 5000 ages make ``scale`` 3e4 times the
    ages', and a tolerance in units of ``scale`` then ignores the ages'
    coefficient.

    Only the columns that can be dominated are sorted: if it is, the rows
    left out of the robust scale, 1% of the weight ``W_off`` off the median,
    hold almost all of ``sum w (x - median)^2 >= W scale^2``, so that some
    row lies at least ``sqrt(0.9999 W / (0.01 W_off)) - 1`` times ``scale``
    from the mean (the median is within ``scale`` of it; without ``center``
    from 0, and no ``- 1``): about 9 with ``W_off <= W``, where a normal
    column of 1e8 rows reaches about 6, and 99 for a sparse column stored
    on 1% of the rows (its median is 0). Each column's largest and least
    entries are read (one pass over ``X``), and only the columns beyond
    that distance are sorted; nor those of two values (0 and one other
    without ``center``), which cannot be dominated. A sparse ``X`` is read
    by its stored entries (the rows not stored are one value 0 of their
    total weight): never densified.

    Returns
    -------
    moments : tuple of ndarray, or None
        ``(location, scale)``: ``mean`` and ``scale`` with the median (0
        without ``center``) and the robust scale of the dominated columns;
        None where no column is dominated.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._lbfgs import dominated_column_moments
    >>> X = np.column_stack([np.arange(1000.0) % 10, np.arange(1000.0) % 7])
    >>> X[:3, 0] = 1e6
    >>> mean, sd = X.mean(axis=0), X.std(axis=0)
    >>> round(float(sd[0]))  # three records of 1e6 among 0 to 9
    54690
    >>> location, scale = dominated_column_moments(X, mean, sd)
    >>> location.round(3).tolist(), scale.round(3).tolist()  # (7 - 2) / 1.349
    ([5.0, 2.997], [3.707, 1.999])
    >>> dominated_column_moments(X[3:], X[3:].mean(axis=0), X[3:].std(axis=0))
    """
    mean = np.asarray(mean, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    weights = None if sample_weight is None else np.asarray(sample_weight, float)
    candidates, (high, low, stored) = reach_candidates(
        X, mean, scale, weights, center=center, extremes=extremes
    )
    if not candidates.size:
        return None
    n = X.shape[0]
    total = float(n) if weights is None else float(np.sum(weights))
    sparse = sp.issparse(X)
    if sparse:
        X = canonical_csr(X)
    location = np.zeros(candidates.size)
    robust = np.zeros(candidates.size)
    if sparse:
        columns = _sparse_columns(X, candidates, stored, weights, total)
    else:
        columns = _dense_columns(X, candidates, weights)
    for part, values, w in columns:
        # Two values (0 and one other without centring): the rows off the
        # median all lie at the other, whose distance then bounds ``scale``.
        cols = candidates[part]
        a, b = low[cols], high[cols]
        # Without centring, the one value besides 0: the extreme that is not
        # 0 (a column of 0 and v > 0 has low 0, of 0 and v < 0 high 0).
        lone = np.where(a == 0.0, b, a)
        if center:
            two = np.all((values == a[:, None]) | (values == b[:, None]), axis=1)
        else:
            two = np.all((values == 0.0) | (values == lone[:, None]), axis=1)
        sort = np.flatnonzero(~two)
        if sort.size:
            got = _robust_statistics(values[sort], w, center)
            location[part[sort]], robust[part[sort]] = got
    with np.errstate(all="ignore"):
        dominated = (
            np.isfinite(robust)
            & (robust >= _SMALLEST_ROBUST)
            & (scale[candidates] > DOMINATED * robust)
        )
    if not dominated.any():
        return None
    columns = candidates[dominated]
    location_out, scale_out = mean.copy(), scale.copy()
    location_out[columns] = location[dominated]
    scale_out[columns] = robust[dominated]
    return location_out, scale_out


def reach_candidates(
    X,
    mean,
    scale,
    sample_weight=None,
    *,
    center=True,
    mean_error=0.0,
    scale_error=0.0,
    extremes=None,
):
    """The columns :func:`dominated_column_moments` sorts: those that may be dominated.

    A column whose every entry lies within ``sqrt(0.9999 W / (0.01 W_off))
    - 1`` times ``scale`` of ``mean`` (of 0, and no ``- 1``, without
    ``center``) cannot be dominated (:func:`dominated_column_moments`).
    ``mean_error`` (absolute) and ``scale_error`` (relative) bound the
    errors of ``mean`` and ``scale`` (moments summed in one pass): the test
    then holds for every mean and scale within them. One pass over ``X``
    (a sparse one's stored entries, block by block, never copied), or none
    where ``extremes`` (those an earlier call returned: they do not depend
    on the moments) are given.

    Returns
    -------
    candidates : ndarray of int
        The columns that may be dominated.
    extremes : tuple
        Each column's largest and least entries, and (sparse ``X``) stored
        counts (None for a dense one).
    """
    n, d = X.shape
    weights = None if sample_weight is None else np.asarray(sample_weight, float)
    total = float(n) if weights is None else float(np.sum(weights))
    if not (n and d and total > 0):
        return np.zeros(0, dtype=np.intp), (None, None, None)
    sparse = sp.issparse(X)
    stored = None
    if extremes is not None and extremes[0] is not None:
        high, low, stored = extremes
    elif sparse:
        high, low, stored = _sparse_extremes(canonical_csr(X))
    else:
        # fmax/fmin: the vectorized reductions (no NaN to propagate).
        high = np.fmax.reduce(X, axis=0).astype(np.float64)
        low = np.fmin.reduce(X, axis=0).astype(np.float64)
    # The share of the weight off the median (at most 1; of a sparse column
    # stored on fewer than half the rows, at most the stored rows' share,
    # the median being 0).
    off = np.ones(d)
    if sparse:
        largest = 1.0 if weights is None else float(np.max(weights))
        share = np.minimum(stored * (largest / total), 1.0)
        off = np.where(share < 0.5, share, 1.0)
    with np.errstate(all="ignore"):
        reach_factor = np.sqrt((1.0 - DOMINATED**-2) / (_TRIM * off)) - float(center)
        if center:
            reach = np.fmax(high - mean, mean - low) + mean_error
        else:
            reach = np.fmax(np.abs(high), np.abs(low))
        limit = reach_factor * (np.asarray(scale, dtype=np.float64) * (1 - scale_error))
        candidates = np.flatnonzero(~(reach < limit))
    return candidates, (high, low, stored)


def _dense_columns(X, candidates, weights):
    """``(positions, values, weights)`` of blocks of ``X``'s candidate columns.

    ``values`` holds one column a row (float64, contiguous: the sorts run
    on it), over the rows of positive weight; ``weights`` are theirs (None:
    equal). The blocks' entries stay below :data:`_ROBUST_BLOCK` and an
    eighth of ``X``'s storage (one column at least).
    """
    n = X.shape[0]
    keep = None if weights is None else weights > 0
    w = None if weights is None else weights[keep]
    room = min(_ROBUST_BLOCK, storage_bytes(X) // 64)
    step = max(1, room // max(n, 1))
    for start in range(0, candidates.size, step):
        part = np.arange(start, min(start + step, candidates.size))
        block = np.asarray(X[:, candidates[part]])
        if keep is not None:
            block = block[keep]
        yield part, np.ascontiguousarray(block.T, dtype=np.float64), w


def _sparse_columns(X, candidates, stored, weights, total):
    """:func:`_dense_columns` of a CSR ``X``, one column at a time.

    A column's values are its stored entries of positive weight, then one
    entry 0 carrying the total weight of the rows where it is not stored
    (none where every row is): its statistics are those of the dense column.
    The candidate columns are copied (as CSC) in groups of at most an
    eighth of ``X``'s stored entries (one column at least).
    """
    n = X.shape[0]
    room = max(X.nnz // 8, 1)
    groups, group, size = [], [], 0
    for i, col in enumerate(candidates):
        if group and size + stored[col] > room:
            groups.append(group)
            group, size = [], 0
        group.append(i)
        size += stored[col]
    groups.append(group)
    for group in groups:
        block = sp.csc_matrix(X[:, candidates[group]])
        for k, i in enumerate(group):
            lo, hi = block.indptr[k], block.indptr[k + 1]
            values = np.asarray(block.data[lo:hi], dtype=np.float64)
            if weights is None:
                w = np.ones(values.size)
                rest = float(n - values.size)
            else:
                w = weights[block.indices[lo:hi]]
                rest = 0.0 if hi - lo == n else max(total - float(np.sum(w)), 0.0)
                values, w = values[w > 0], w[w > 0]
            if rest > 0:
                values = np.append(values, 0.0)
                w = np.append(w, rest)
            yield np.array([i]), values[None, :], w


def _sparse_extremes(X):
    """Largest and least entries of a canonical CSR ``X``'s columns, and stored counts.

    The rows where a column is not stored hold 0. Block of stored entries
    by block (:func:`~.._rows.entry_blocks`): no copy of ``X``.
    """
    n, d = X.shape
    high, low = np.full(d, -np.inf), np.full(d, np.inf)
    stored = np.zeros(d, dtype=np.int64)
    indptr = X.indptr
    for row, end in entry_blocks(indptr, _SPARSE_BLOCK):
        lo, hi = indptr[row], indptr[end]
        cols = X.indices[lo:hi]
        values = np.asarray(X.data[lo:hi], dtype=np.float64)
        np.maximum.at(high, cols, values)
        np.minimum.at(low, cols, values)
        stored += np.bincount(cols, minlength=d)
    implicit = stored < n
    high[implicit] = np.maximum(high[implicit], 0.0)
    low[implicit] = np.minimum(low[implicit], 0.0)
    return high, low, stored


@np.errstate(all="ignore")
def _robust_statistics(values, weights, center):
    """Median (or 0) and robust scale of each row of ``values`` (one column a row).

    ``weights`` (positive, one per column of ``values``; None: equal) weigh
    every row alike. Quantiles by the inverted CDF: the least value whose
    cumulative weight reaches the share (equal weights: the value of rank
    ``ceil(q n)``). See :func:`dominated_column_moments`.
    """
    k, n = values.shape
    if not n:
        return np.zeros(k), np.zeros(k)
    weights = np.ones(n) if weights is None else np.asarray(weights, float)
    total = float(np.sum(weights))
    median, iqr = np.zeros(k), np.zeros(k)
    if center:
        order = np.argsort(values, axis=1, kind="stable")
        cumulative = np.cumsum(weights[order], axis=1)
        ranks = np.stack(
            [(cumulative < q * total).sum(axis=1) for q in (0.25, 0.5, 0.75)], axis=1
        )
        at = np.take_along_axis(order, np.minimum(ranks, n - 1), 1)
        q = np.take_along_axis(values, at, 1)
        median, iqr = q[:, 1], q[:, 2] - q[:, 0]
    squares = values - median[:, None]
    squares *= squares
    # The rows off the median nearest it holding (1 - _TRIM) of their
    # weight, the last of them in part: integer weights then give the
    # statistics of repeated rows.
    order = np.argsort(squares, axis=1, kind="stable")
    squares = np.take_along_axis(squares, order, 1)
    w = np.where(squares > 0, weights[order], 0.0)
    kept = (1.0 - _TRIM) * np.sum(w, axis=1)
    share = np.clip(kept[:, None] - (np.cumsum(w, axis=1) - w), 0.0, w)
    sums = np.sum(squares * share, axis=1)
    trimmed = np.where(kept > 0, np.sqrt(sums / np.where(kept > 0, kept, 1.0)), 0.0)
    return median, np.fmax(iqr / _NORMAL_IQR, trimmed)


def _rescaled_root_mean_squares(X, columns, sample_weight, total):
    """Root mean squares of ``X``'s ``columns``, summed in power-of-two units."""
    block = X[:, columns]
    if sp.issparse(block):
        block = sp.csc_matrix(block, dtype=np.float64)
        largest = abs(block).max(axis=0).toarray().ravel()
        magnitude = power_of_two_magnitudes(largest)
        block = block @ sp.diags(1.0 / magnitude)
        squares = _sparse_column_squares(sp.csr_matrix(block), sample_weight)
    else:
        block = np.asarray(block, dtype=np.float64)
        magnitude = power_of_two_magnitudes(np.max(np.abs(block), axis=0))
        block = block / magnitude
        weights = 1.0 if sample_weight is None else np.asarray(sample_weight)[:, None]
        squares = np.sum(weights * block * block, axis=0)
    return magnitude * np.sqrt(squares / total)


# Stored entries squared per block of a sparse column sum: the temporaries
# of one block (its squares, their weights and the rows' entry counts,
# about 24 bytes an entry) stay far below the matrix's storage even at a
# few hundred thousand entries (at 1 << 14 they took a third of a float32
# matrix of 50,000 entries).
_SPARSE_BLOCK = 1 << 12


def _sparse_column_squares(X, sample_weight=None):
    """``sum_i w_i x_ij^2`` over the stored entries of a sparse ``X``.

    For a CSR matrix in canonical form (sorted, no duplicates) the stored
    entries are added to their column's total in row order, block by block
    (``np.add.at`` is sequential): the sums of ``X.multiply(X).sum(axis=0)``
    bit for bit for float64 entries, without its copy of the matrix (float32
    entries are squared and added in float64). Other sparse formats take
    that form.
    """
    if not (X.format == "csr" and X.has_canonical_format):
        X2 = X.multiply(X)
        if sample_weight is not None:
            X2 = X2.multiply(np.asarray(sample_weight)[:, None])
        return np.asarray(X2.sum(axis=0), dtype=np.float64).ravel()
    squares = np.zeros(X.shape[1])
    indptr = X.indptr
    for row, end in entry_blocks(indptr, _SPARSE_BLOCK):
        lo, hi = indptr[row], indptr[end]
        data = X.data[lo:hi]
        block = np.multiply(data, data, dtype=np.float64)
        if sample_weight is not None:
            counts = np.diff(indptr[row : end + 1])
            block *= np.repeat(np.asarray(sample_weight)[row:end], counts)
        np.add.at(squares, X.indices[lo:hi], block)
    return squares


def _centred(fun, u0, shift, d, k):
    """``fun`` in coordinates whose intercept part is centred by ``shift``.

    ``fun`` takes ``u = [coef part (d x k, each row times its scale), w0
    part (k)]``; the centred coordinates replace the ``w0`` part by
    ``w0 + shift @ U`` (``U`` the ``(d, k)`` coefficient part, ``shift`` the
    centre over the intercept scaling and the scales). Returns the wrapped
    objective, the map ``to_plain`` back to ``fun``'s coordinates, and
    ``u0`` in the new ones. The gradient follows by the chain rule: the
    coefficient part less ``shift`` times the intercept part's gradient.
    """
    p = d * k

    def to_plain(u):
        plain = np.array(u, dtype=np.float64, copy=True)
        plain[p:] -= shift @ plain[:p].reshape(d, k)
        return plain

    def centred(u):
        value, grad = fun(to_plain(u))
        grad = np.array(grad, copy=True)
        grad[:p] -= np.outer(shift, grad[p:]).ravel()
        return value, grad

    start = np.array(u0, dtype=np.float64, copy=True)
    start[p:] += shift @ start[:p].reshape(d, k)
    return centred, to_plain, start


def _last_point_cached(fun):
    """``fun`` that returns its last result again when asked at the same point.

    L-BFGS-B evaluates its starting point, which the phase has just
    evaluated to check it is finite, and the phase evaluates the returned
    point, which L-BFGS-B evaluated last: two of the roughly ten evaluations
    of a warm-started solve of the weight path, each two passes over ``X``.
    The point is compared exactly, so the values are those of a new call.
    """
    last = {}

    def cached(u):
        if "u" in last and np.array_equal(u, last["u"]):
            return last["value"], last["grad"].copy()
        value, grad = fun(u)
        last.update(u=np.array(u, copy=True), value=value, grad=grad.copy())
        return value, grad

    return cached


@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def refine_full_batch(
    X,
    y,
    *,
    regularizer,
    cells,
    fairness_weight,
    alpha,
    intercept_scaling,
    coef,
    w0,
    tol,
    max_iter,
    weight_scale=1.0,
    sample_weight=None,
    second_order=False,
    scale=None,
    center=None,
):
    """Minimise :func:`exact_dual_objective` by L-BFGS from ``(coef, w0)``.

    Works in preconditioned coordinates ``u``: each coefficient times its
    column's root mean square (:func:`column_scales`) and, for two classes,
    the single logit ``coef[:, 1] - coef[:, 0]`` (the softmax is invariant
    to a common shift of the logits, a flat direction that slows L-BFGS;
    the model is rebuilt symmetrically, ``coef = [-v/2, v/2]``, the
    minimiser of the L2 penalty along that direction, so the objective is
    unchanged). Stops when ``max |grad_u f| <= tol`` (``gtol``, with a tiny
    ``ftol`` as in scikit-learn, so that a stalled line search is not
    mistaken for convergence) or after ``max_iter`` iterations.
    ``stationarity`` is ``max |grad_u f|`` at the returned point,
    ``converged`` whether it is at most ``tol``. Where the objective or its
    gradient is not finite (rows near the float64 limit, whose products
    overflow), or L-BFGS ends no lower than it started, the starting point
    is returned, not converged. With ``second_order`` a binary model of few
    coefficients is first polished by L-BFGS in the metric of the exact
    Hessian (:func:`~._newton_polish.polish_binary`: the same objective,
    stopping rule and coordinates), plain L-BFGS finishing where it stops
    short.

    ``scale`` (default: :func:`column_scales`) and ``center`` (default: 0)
    choose other coordinates, each coefficient times ``scale_j`` and the
    intercept parameter that of the rows centred at ``center``
    (``w0 + center . coef / s``; no centring without an intercept): the
    coordinates of :meth:`~._problem.FairProblem.refine_robust`, whose
    stationarity the stopping rule and ``stationarity`` then measure. The
    rows themselves are never centred (a sparse ``X`` stays sparse).
    """
    d, m = coef.shape
    s = float(intercept_scaling)
    if scale is None:
        scale = column_scales(X, sample_weight)
    else:
        scale = np.asarray(scale, dtype=np.float64)
    binary = m == 2
    half = np.array([-0.5, 0.5])

    def to_full(u):
        if binary:
            return np.concatenate([np.outer(u[:d] / scale, half).ravel(), u[d] * half])
        return np.concatenate([(u[: d * m].reshape(d, m) / scale[:, None]).ravel(),
                               u[d * m :]])

    def to_reduced_grad(grad):
        g_coef, g_w0 = grad[: d * m].reshape(d, m), grad[d * m :]
        if binary:
            g = np.concatenate([(g_coef @ half) / scale, [g_w0 @ half]])
        else:
            g = np.concatenate([(g_coef / scale[:, None]).ravel(), g_w0])
        if not s:
            g[-(1 if binary else m) :] = 0.0
        return g

    rows = term_rows(X, m)
    sparse_binary = binary and sp.issparse(X)
    if sparse_binary:
        # As in exact_dual_objective: no n-length array beside a sparse X.
        rows = min(_SPARSE_TERM_SHARE * rows, _MAX_TERM_ROWS)
    penalty = _penalty(regularizer, cells, weight_scale, rows)
    keep = keeps_terms(X, 2)

    def fun(u):
        if sparse_binary:
            # A float64 logit a row would weigh two thirds of a float32
            # CSR matrix of one stored entry a row: each block's logits
            # come from its rows, and its dL/dz is summed into the
            # gradient at once.
            v = u[:d] / scale
            g_v, g_b = np.zeros(d), np.zeros(1)

            def logits(part):
                return float64_product(row_block(X, part), v) + s * u[d]

            def gradient(part, grad):
                dz = grad @ _HALF
                g_v[...] += float64_product(row_block(X, part), dz, transpose_a=True)
                g_b[...] += dz.sum()

            value = _full_batch_terms(
                logits, gradient, X.shape[0], y, penalty, fairness_weight, rows,
                sample_weight, keep, binary=True,
            )
            value += 0.25 * alpha * float(v @ v)
            return value, np.concatenate([(g_v + 0.5 * alpha * v) / scale, s * g_b])
        if binary:
            # One logit z = x v + s b: half the matrix products of the
            # two-column form (logits [-z/2, z/2]), the same values.
            v = u[:d] / scale
            z = float64_product(X, v)
            z += s * u[d]
            value = _full_batch_terms(
                *_single_logit(z), z.size, y, penalty, fairness_weight, rows,
                sample_weight, keep, binary=True,
            )
            # z now holds dL/dz (divided by n).
            g_v = (float64_product(X, z, transpose_a=True) + 0.5 * alpha * v) / scale
            value += 0.25 * alpha * float(v @ v)
            return value, np.concatenate([g_v, [s * z.sum()]])
        value, grad = exact_dual_objective(
            to_full(u),
            X,
            y,
            regularizer=regularizer,
            cells=cells,
            fairness_weight=fairness_weight,
            alpha=alpha,
            intercept_scaling=s,
            weight_scale=weight_scale,
            sample_weight=sample_weight,
        )
        return value, to_reduced_grad(grad)

    coef = np.asarray(coef, float)
    w0 = np.asarray(w0, float)
    if binary:
        u0 = np.concatenate([(coef[:, 1] - coef[:, 0]) * scale, [w0[1] - w0[0]]])
    else:
        u0 = np.concatenate([(coef * scale[:, None]).ravel(), w0])
    to_plain = None
    if center is not None and s:
        # Centred coordinates: the intercept parameter of the rows x - c,
        # w0' = w0 + (c / s) . coef, so that a column's coefficient moves
        # without moving the logit of its typical row (a column far from 0
        # relative to its scale is otherwise collinear with the intercept).
        shift = np.asarray(center, dtype=np.float64) / s / scale
        fun, to_plain, u0 = _centred(fun, u0, shift, d, 1 if binary else m)
    fun = _last_point_cached(fun)
    start_value, start_grad = fun(u0)
    if not (np.isfinite(start_value) and np.all(np.isfinite(start_grad))):
        # The objective overflows (a record near the largest float): the
        # phase is skipped, and its diagnostics saturate at the largest float
        # so that every released number stays finite.
        return FullBatchResult(
            coef=coef,
            w0=w0,
            stationarity=_LARGEST,
            converged=False,
            n_iter=0,
            objective=min(float(np.nan_to_num(start_value, nan=_LARGEST)), _LARGEST),
        )
    u_start, steps = u0, 0
    if second_order and binary:
        polished = polish_binary(
            fun, u0, start_value, start_grad, X, tol=tol, max_iter=max_iter,
            maxcor=lbfgs_memory(X, u0.size), scale=scale, intercept_scaling=s,
            regularizer=regularizer, cells=cells, fairness_weight=fairness_weight,
            alpha=alpha, weight_scale=weight_scale, sample_weight=sample_weight,
            to_plain=to_plain,
        )
        if polished is not None:
            # L-BFGS-B returns at once (no iteration) where the point
            # already meets gtol; its evaluation is cached.
            u_start, steps = polished.u, polished.n_iter
    res = minimize(
        fun,
        u_start,
        jac=True,
        method="L-BFGS-B",
        options={
            "maxiter": int(max_iter) - steps,
            "gtol": float(tol),
            "ftol": 64 * np.finfo(float).eps,
            "maxls": 50,
            "maxcor": lbfgs_memory(X, u0.size),
        },
    )
    u = res.x
    value, grad = fun(u)
    finite = np.isfinite(value) and np.all(np.isfinite(grad)) and np.all(np.isfinite(u))
    if not finite or value > start_value:
        u, value, grad = u0, start_value, start_grad
    stationarity = float(np.max(np.abs(grad))) if grad.size else 0.0
    stationarity = min(stationarity, _LARGEST)
    full = to_full(u if to_plain is None else to_plain(u))
    return FullBatchResult(
        coef=full[: d * m].reshape(d, m),
        w0=full[d * m :],
        stationarity=stationarity,
        converged=bool(stationarity <= tol),
        n_iter=int(res.nit) + steps,
        objective=float(value),
        at_limit=int(res.nit) + steps >= int(max_iter),
    )
