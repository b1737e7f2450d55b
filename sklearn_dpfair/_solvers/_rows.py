# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The row layer: row norms, canonical CSR, row clipping and rank-one terms.

Everything here reads rows of ``X`` (dense, CSR, or an array-API array on a
device): overflow-safe row norms (:func:`stable_row_norms`,
:func:`squared_row_norms`), the canonical CSR form and the blocks of its
stored entries (:func:`canonical_csr`, :func:`entry_blocks`), the mask of
finite rows, the projection of rows onto a ball (:func:`clip_rows_to_norm`)
and the clipping of *rank-one* per-example terms ``z_i = u_i r_i^T``, whose
norm factorizes as ``||r_i|| ||u_i||`` (:func:`per_example_norms`,
:func:`clip_factors`, :func:`clipped_rows`): the clip factor of every term
costs ``O(K)`` given the norms ``||u_i||``, and the terms are never formed.
A linear model's per-example gradient is such a term (``u_i = [x_i, s]``);
the linear-model layer (:mod:`._linear`) builds its clipped sums on these.

The privacy core keeps what acts on vectors of norms only: the clip factor
``min(1, C / ||z||)`` and its float32 margin
(:mod:`sklearn_dpfair.privacy._clipping`); it never receives ``X``.

Whatever one record holds, its clipped contribution is finite with norm at
most the clip bound (privacy needs nothing else). Norms are computed so that
they neither overflow for huge finite rows nor underflow to 0 for tiny
nonzero ones (a zero norm would leave a tiny row times a huge residual
unclipped), and a term that is still not finite is given the fixed,
data-independent contribution 0 (:func:`clipped_rows`): ``0 * inf`` never
reaches a noisy sum. Norms of lower-precision (float32) rows are
accumulated in float64 and rounded *up* to the rows' dtype (an upper bound,
also for subnormal results), so the bound holds for the values actually
summed (see :mod:`sklearn_dpfair.privacy._clipping` for the float32 margin).

Written against the array API: the functions compute in the namespace and on
the device of their inputs (numpy, or torch on a GPU); sparse inputs are
scipy CSR matrices on the host.
"""

import math

import numpy as np
import scipy.sparse as sp

from ..privacy._clipping import _is_narrow, clip_factors_from_norms, clip_margin
from ..utils._array_api import (
    array_namespace,
    device_of,
    is_numpy_namespace,
    rows_per_cast,
    rowwise_dot,
)
from ..utils._numeric import SQRT_SMALLEST_NORMAL

__all__ = [
    "canonical_csr",
    "clip_factors",
    "clip_rows_to_norm",
    "clipped_rows",
    "entry_blocks",
    "finite_rows_mask",
    "per_example_norms",
    "squared_row_norms",
    "stable_row_norms",
]


def stable_row_norms(A):
    """Euclidean norms of the rows of ``A`` that neither overflow nor underflow.

    The plain ``sqrt(sum_j a_ij^2)`` overflows to ``inf`` once a row holds an
    entry above ~1.3e154 (float64), and is 0 (or loses its precision) for a
    nonzero row whose squares underflow (entries below ~1.5e-154). Such rows
    are recomputed as ``m sqrt(sum_j (a_ij / m)^2)`` with
    ``m = max_j |a_ij|``, which is ``inf`` only if the norm itself exceeds
    the largest float. Other rows keep the plain (faster, bit-for-bit
    unchanged) result. Lower-precision rows (float32) are accumulated in
    float64, where their squares can neither overflow nor underflow, and the
    norm is rounded up to their dtype (:func:`~sklearn_dpfair.privacy._clipping.clip_margin`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._rows import stable_row_norms
    >>> stable_row_norms(np.array([[3.0, 4.0], [3e200, 4e200], [3e-200, 4e-200]]))
    array([5.e+000, 5.e+200, 5.e-200])
    """
    if sp.issparse(A):
        return _sparse_stable_row_norms(A)
    xp = array_namespace(A)
    if _is_narrow(xp, A.dtype):
        return _rounded_up(xp, xp.sqrt(_wide_squared_row_norms(A)), A.dtype)
    # The plain attempt may overflow (that is what is checked next); numpy
    # must not warn about it: a warning would depend on the data.
    with np.errstate(over="ignore", under="ignore"):
        squares = rowwise_dot(A, A)
    norms = xp.sqrt(squares)
    rescue = xp.isinf(norms) | (squares < _tiny(xp, squares.dtype))
    if not bool(xp.any(rescue)):
        return norms
    rows = A[rescue]
    scale = xp.max(xp.abs(rows), axis=1)
    safe_scale = xp.where(scale > 0, scale, xp.ones_like(scale))
    scaled = rows / safe_scale[:, None]
    with np.errstate(over="ignore", under="ignore"):  # inf only past the max
        rescued = safe_scale * xp.sqrt(rowwise_dot(scaled, scaled))
    return _scatter_like(norms, rescue, _subnormal_rounded_up(xp, rescued))


def _subnormal_rounded_up(xp, norms):
    # A rescued norm below the smallest normal float is a multiple of the
    # smallest subnormal: rounded to nearest, the norm of (5e-324, 5e-324)
    # is 5e-324, 1/sqrt(2) of the true norm, and a record clipped by it
    # would reach 1.41 times the clip norm. One step up covers that final
    # rounding (half a step); what remains is the scaled sum's relative
    # error (~d ulps, below one step except near the smallest normal),
    # the rounding every float64 norm keeps.
    tiny = _tiny(xp, norms.dtype)
    low = (norms > 0) & (norms < tiny)
    if not bool(xp.any(low)):
        return norms
    up = xp.nextafter(norms, xp.full_like(norms, math.inf))
    return xp.where(low, up, norms)


def _tiny(xp, dtype):
    # The smallest normal number of ``dtype``: a square below it underflowed.
    return float(xp.finfo(dtype).smallest_normal)


# The square root of the smallest normal float64: a plain norm
# ``sqrt(sum_j x_j^2)`` at or below it comes from a sum of squares that
# underflowed (wholly, to 0, or partly, losing its precision).
_SQRT_TINY = SQRT_SMALLEST_NORMAL


def _underflow_rescued(X, norms):
    # ``norms`` (plain norms of the dense rows of ``X``, any float dtype)
    # with the rows at or below _SQRT_TINY recomputed by stable_row_norms:
    # a tiny nonzero row would otherwise get norm 0 (or a norm too small)
    # and escape its clip. Rows above it keep their plain norm bit for bit;
    # so do zero rows (0 either way). Lower-precision rows are accumulated
    # in float64, where their squares cannot underflow: only zero rows are
    # recomputed there.
    low = norms <= _SQRT_TINY
    if not low.any():
        return norms
    norms = norms.copy()
    norms[low] = stable_row_norms(X[low])
    return norms


def _wide_squared_row_norms(A):
    # Squared row norms of a dense lower-precision ``A`` accumulated in
    # float64 (exact squares, no overflow nor underflow), without a float64
    # copy of A: numpy's einsum casts as it goes; other namespaces cast a
    # block of rows at a time.
    xp = array_namespace(A)
    if is_numpy_namespace(xp):
        return np.einsum("ij,ij->i", A, A, dtype=np.float64)
    step = rows_per_cast(A.shape[1])
    parts = []
    for start in range(0, A.shape[0], step):
        block = xp.astype(A[start : min(start + step, A.shape[0]), ...], xp.float64)
        parts.append(rowwise_dot(block, block))
    if not parts:
        return xp.zeros(0, dtype=xp.float64, device=device_of(A))
    return parts[0] if len(parts) == 1 else xp.concat(parts)


def _rounded_up(xp, values, dtype):
    # float64 ``values`` (non-negative) in ``dtype``, rounded up: an upper
    # bound of each value, also where the result is subnormal (rounding to
    # nearest could halve a tiny norm, or make it 0). Past the largest
    # float of ``dtype`` it is inf, without a warning.
    if values.dtype == dtype:
        return values
    with np.errstate(over="ignore"):
        out = xp.astype(values, dtype)
    if is_numpy_namespace(xp):
        # No n-length float64 temporary: the comparison casts by buffers,
        # and the rounded-down entries move up in place.
        below = np.less(out, values)
        np.nextafter(out, np.inf, out=out, where=below)
        return out
    below = xp.astype(out, values.dtype) < values
    if bool(xp.any(below)):
        up = xp.nextafter(out, xp.full_like(out, math.inf))
        out = xp.where(below, up, out)
    return out


def canonical_csr(A):
    """``A`` as a CSR matrix without duplicate entries (no copy if it is one).

    A CSR matrix may store one position several times (its value is their
    sum); the squares of the stored entries would then under-estimate the
    row norm, and with it a record's clipped contribution. Duplicates are
    summed on a copy (at most the sparse storage again).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._rows import canonical_csr
    >>> A = sp.csr_matrix((np.ones(2), ([0, 0], [0, 0])), shape=(1, 2))
    >>> canonical_csr(A).data
    array([2.])
    """
    A = sp.csr_matrix(A)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return A


def _sparse_squared_row_norms(A):
    # Sums of squares of the stored entries of each row of a canonical CSR
    # matrix (no dense row is formed). Overflow is expected for huge rows
    # and rescued by the callers; numpy must not warn. Lower precision is
    # accumulated in float64 and rounded up (as dense rows).
    if not _is_narrow(np, A.dtype):
        return _row_reduce(np.add, A.data, A.indptr, transform=np.square)
    return _row_reduce(
        np.add, A.data, A.indptr, transform=_wide_square, round_up_to=A.dtype
    )


def _wide_square(values):
    return np.square(values, dtype=np.float64)


# Stored entries (and rows) per block of rows in _row_reduce: the
# temporaries of one block (about 8 bytes an entry and 9 a row) stay well
# below a large matrix, and a batch of a few thousand short rows is one
# block (each block costs a handful of numpy calls).
_REDUCE_BLOCK = 1 << 13


def entry_blocks(indptr, max_size):
    """``(start, stop)`` of consecutive row blocks of a CSR ``indptr``.

    Each block has at most ``max_size`` rows and about ``max_size`` stored
    entries (at least one row), so that a pass over the stored entries
    holds the temporaries of one block, whatever the rows hold.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._rows import entry_blocks
    >>> list(entry_blocks(np.array([0, 3, 3, 4, 8]), 3))
    [(0, 2), (2, 3), (3, 4)]
    """
    n_rows = indptr.size - 1
    start = 0
    while start < n_rows:
        stop = int(np.searchsorted(indptr, indptr[start] + max_size, side="right")) - 1
        stop = min(max(stop, start + 1), start + max_size, n_rows)
        yield start, stop
        start = stop


def _row_reduce(ufunc, values, indptr, transform=None, round_up_to=None, finish=None):
    # ``ufunc`` over each row's stored values (CSR ``indptr``), of
    # ``transform(values)`` if given; 0 for an empty row. Block of rows by
    # block of rows, so that the temporaries (the transformed values, the
    # intp segment starts) are those of one block: on a matrix with few
    # entries per row, n-length or nnz-length temporaries would weigh as
    # much as the matrix. Within a block, one reduceat over the rows up to
    # the last non-empty one, written in place: a row's segment ends where
    # the next row starts, which for the rows before an empty one is still
    # its own end; an empty row gets the next row's first value, zeroed
    # after. Each row is reduced as a whole, so blocks do not change sums.
    # ``finish`` (e.g. a square root) then maps each block's results, and
    # ``round_up_to`` (a narrower dtype) stores them rounded up
    # (_rounded_up): a float64 reduction of float32 rows holds float64
    # values for one block only.
    dtype = values.dtype if transform is None else transform(values[:0]).dtype
    out = np.zeros(indptr.size - 1, dtype=dtype if round_up_to is None else round_up_to)
    if not values.size:
        return out
    with np.errstate(over="ignore", under="ignore"):
        for start, stop in entry_blocks(indptr, _REDUCE_BLOCK):
            bounds = indptr[start : stop + 1]
            lo = int(bounds[0])
            if int(bounds[-1]) == lo:
                continue
            block = values[lo : bounds[-1]]
            if transform is not None:
                block = transform(block)
            empty = bounds[1:] == bounds[:-1]
            last = empty.size - 1 - int(np.argmin(empty[::-1]))
            segment = out[start : start + last + 1]
            if round_up_to is not None:
                segment = np.empty(last + 1, dtype=dtype)
            starts = np.subtract(bounds[: last + 1], lo, dtype=np.intp)
            ufunc.reduceat(block, starts, out=segment)
            segment[empty[: last + 1]] = 0
            if finish is not None:
                segment = finish(segment)
            if round_up_to is not None:
                out[start : start + last + 1] = _rounded_up(np, segment, round_up_to)
            elif finish is not None:
                out[start : start + last + 1] = segment
    return out


def _sparse_stable_row_norms(A):
    # stable_row_norms for a CSR matrix: the same plain attempt and the same
    # rescue of the overflowed rows, on the stored entries only.
    A = canonical_csr(A)
    if _is_narrow(np, A.dtype):
        return _row_reduce(
            np.add, A.data, A.indptr, transform=_wide_square,
            round_up_to=A.dtype, finish=np.sqrt,
        )
    with np.errstate(over="ignore", under="ignore"):
        squares = _sparse_squared_row_norms(A)
    norms = np.sqrt(squares)
    # Overflowed, or underflowed on a row with stored entries (an empty
    # row's 0 is exact).
    overflowed = np.isinf(norms) | (
        (squares < _tiny(np, squares.dtype)) & (np.diff(A.indptr) > 0)
    )
    if not overflowed.any():
        return norms
    rows = A[overflowed]
    scale = _row_reduce(np.maximum, np.abs(rows.data), rows.indptr)
    safe_scale = np.where(scale > 0, scale, np.ones_like(scale))
    scaled = sp.csr_matrix(
        (rows.data / np.repeat(safe_scale, np.diff(rows.indptr)), rows.indices,
         rows.indptr),
        shape=rows.shape,
    )
    with np.errstate(over="ignore", under="ignore"):  # inf only past the max
        rescued = safe_scale * np.sqrt(_sparse_squared_row_norms(scaled))
    out = norms.copy()
    out[overflowed] = _subnormal_rounded_up(np, rescued)
    return out


def squared_row_norms(A):
    """Squared Euclidean norms of the rows of ``A`` (dense, or sparse CSR/CSC).

    Sparse rows use their stored entries only (duplicates summed first). A
    huge row overflows to ``inf`` without a numpy warning (the callers
    rescue it with :func:`stable_row_norms`). Lower-precision rows
    (float32) are accumulated in float64 and rounded up to their dtype.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._rows import squared_row_norms
    >>> squared_row_norms(sp.csr_matrix(np.array([[3.0, 4.0], [0.0, 0.0]])))
    array([25.,  0.])
    """
    if sp.issparse(A):
        return _sparse_squared_row_norms(canonical_csr(A))
    xp = array_namespace(A)
    if _is_narrow(xp, A.dtype):
        return _rounded_up(xp, _wide_squared_row_norms(A), A.dtype)
    with np.errstate(over="ignore", under="ignore"):
        return rowwise_dot(A, A)


def _scatter_like(values, mask, replacement):
    # Writes ``replacement`` into the masked positions of a copy of
    # ``values`` (boolean-mask assignment, which every namespace here has).
    xp = array_namespace(values)
    out = xp.asarray(values, copy=True)
    out[mask] = xp.astype(replacement, out.dtype, copy=False)
    return out


def finite_rows_mask(A):
    """Whether each row of a 2-D array is entirely finite.

    A record with a non-finite row is given a fixed contribution (0) by the
    callers, never a value computed from its entries.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._rows import finite_rows_mask
    >>> finite_rows_mask(np.array([[1.0, 2.0], [np.inf, 0.0], [np.nan, 1.0]]))
    array([ True, False, False])
    """
    xp = array_namespace(A)
    return xp.all(xp.isfinite(A), axis=1)


def clip_rows_to_norm(X, bound):
    """Rows of ``X`` projected onto the ball of radius ``bound`` (overflow-safe).

    Each row becomes ``x min(1, bound / ||x||)``, a data-independent map (the
    bound is public) after which every row has norm at most ``bound``: for
    float32 rows, the float64 norm of the float32 row returned (the bound is
    ``bound (1 - 2 eps)`` there, :func:`~sklearn_dpfair.privacy._clipping.clip_margin`, so the final rounding
    stays inside; float64 rows are within their own rounding, ``1e-16``
    relative). A row whose squared norm overflows
    (entries above ~1.3e154 in float64) is not sent to zero by an ``inf``
    norm: it is rescaled as ``u min(m, bound / ||u||)`` with
    ``m = max_j |x_j|`` and ``u = x / m``, i.e. projected onto the ball like
    any other row; so is a row whose factor ``bound / ||x||`` would be
    subnormal in X's dtype (float32 entries near 3e38), too imprecise to
    stay inside the ball. A nonzero row whose squares underflow (float64
    entries below ~1.5e-154) does not get norm 0 (and escape the clip): its
    norm is recomputed as in :func:`stable_row_norms`. numpy only.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Finite rows. A sparse matrix (CSR or CSC) is scaled through its
        stored entries (never made dense) and returned as canonical CSR.
    bound : float
        Public radius ``R > 0``.

    Returns
    -------
    X_clipped : ndarray or CSR matrix of shape (n_samples, n_features)
        In ``X``'s dtype (float32 stays float32); the norms and factors are
        computed in float64, and a float32 row is scaled to at most
        ``R (1 - 2 eps)``, so that after its rounding to float32 its norm is
        at most ``R``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._rows import clip_rows_to_norm
    >>> clip_rows_to_norm(np.array([[3.0, 4.0], [0.3, 0.4], [1.7e308, 0.0]]), 1.0)
    array([[0.6, 0.8],
           [0.3, 0.4],
           [1. , 0. ]])
    """
    if sp.issparse(X):
        return _clip_sparse_rows_to_norm(X, bound)
    # Overflows here (a huge row's norm, bound / tiny norm) are expected and
    # handled: numpy must not warn, a warning would depend on the data.
    with np.errstate(over="ignore"):
        if X.dtype == np.float64:
            # Rows whose squares underflow (entries below ~1.5e-154) are
            # recomputed without underflow: their plain norm can be 0.
            norms = _underflow_rescued(X, np.linalg.norm(X, axis=1))
        else:
            # Lower precision: the norms in float64 (accumulated there, no
            # float64 copy of X), so that the factors are not off by the
            # rounding of a float32 sum; squares of float32 cannot overflow.
            norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
        # Lower precision: scaled inside a slightly smaller ball, so the
        # rounding of the factor and of each product to X's dtype (at most
        # 2^-24 relative each in float32) stays inside the ball.
        bound = bound * clip_margin(X)
        factors = _ball_factors(norms, bound)
        clipped = X * factors.astype(X.dtype, copy=False)[:, None]
    # A factor below the smallest normal number of X's dtype has lost the
    # relative precision the margin counts on (subnormal: up to 100% off,
    # so the row could leave the ball): its norm overflowed, or R / ||x||
    # underflowed (float32 entries near 3e38). Those rows are projected from
    # their largest entry instead, in float64: u min(m, R / ||u||).
    rescued = _tiny_factors(factors, X.dtype)
    if rescued.any():
        clipped[rescued] = _projected_from_largest(
            np, X[rescued].astype(np.float64), bound
        )
    return clipped


def _projected_from_largest(xp, rows, bound):
    # Nonzero float64 ``rows`` projected onto the ball of radius ``bound``
    # (a float, or one per row), as ``u min(m, bound / ||u||)`` with
    # ``m = max_j |x_j|`` and ``u = x / m``: ||u|| is in [1, sqrt(d)], so
    # nothing overflows, and no factor ``bound / ||x||`` (which may be 0 or
    # subnormal) is formed.
    scale = xp.max(xp.abs(rows), axis=1)
    unit = rows / scale[:, None]
    with np.errstate(under="ignore"):
        factor = xp.minimum(scale, bound / xp.sqrt(rowwise_dot(unit, unit)))
        return unit * factor[:, None]


def _tiny_factors(factors, dtype):
    # Factors that are 0 (an overflowed norm) or subnormal in ``dtype``.
    return factors < np.finfo(dtype).smallest_normal


def _ball_factors(norms, bound):
    # min(1, R / ||x||) in float64 (the precision the projection has always
    # used), 1 for a zero row. No floor on the norm: a floor would make the
    # factor of a nonzero row of norm below it smaller than min(1, R/||x||)
    # (more shrinking than the projection); R / tiny may overflow to inf,
    # whose minimum with 1 is 1 (the caller silences the overflow).
    norms = np.asarray(norms, dtype=np.float64)
    factors = np.ones_like(norms)
    with np.errstate(over="ignore"):
        np.divide(bound, norms, out=factors, where=norms > 0)
    return np.minimum(1.0, factors)


def _clip_sparse_rows_to_norm(X, bound):
    # clip_rows_to_norm on the stored entries of a canonical CSR matrix, one
    # block of rows at a time (the temporaries of one block, not n- or
    # nnz-length ones: with few entries per row they would weigh as much as
    # the matrix). Only the clipped values are allocated for the whole
    # matrix: the result shares the indices and indptr of the canonical
    # matrix (those of X when X is canonical), which nothing writes.
    A = canonical_csr(X)
    data = np.empty_like(A.data)
    # The smaller ball of lower precision (as dense rows): the clipped
    # values are rounded back to X's dtype.
    bound = bound * clip_margin(A.dtype)
    # A one-time pass: smaller blocks than a reduction's, since a block's
    # half-dozen float64 temporaries weigh a share of a small X.
    for start, stop in entry_blocks(A.indptr, max(1, _REDUCE_BLOCK // 4)):
        lo, hi = int(A.indptr[start]), int(A.indptr[stop])
        if hi > lo:
            indptr = A.indptr[start : stop + 1] - A.indptr[start]
            data[lo:hi] = _clipped_row_values(A.data[lo:hi], indptr, bound)
    clipped = sp.csr_matrix(
        (data, A.indices, A.indptr), shape=A.shape, copy=False
    )
    # The structure of a canonical matrix: said, so that no consumer sorts
    # or merges (writes) the shared arrays.
    clipped.has_canonical_format = True
    return clipped


def _clipped_row_values(values, indptr, bound):
    # The stored values of rows (CSR ``indptr`` over ``values``) projected
    # on the ball: the factors of dense rows, and the same rescue of the
    # rows whose norm overflowed (divided by their largest entry first).
    counts = np.diff(indptr)
    # In float64 (a copy of the values only for float32).
    values = values.astype(np.float64, copy=False)
    with np.errstate(over="ignore"):
        norms = np.sqrt(_row_reduce(np.add, values, indptr, transform=np.square))
        norms = _sparse_underflow_rescued(values, indptr, norms)
        post = _ball_factors(norms, bound)
    # Overflowed norms, and factors too small to be normal (see the dense
    # rows): the rescue below.
    overflowed = _tiny_factors(post, np.float64)
    if not overflowed.any():
        # Ordinary rows are x * factor, as dense (no temporaries of the
        # rescue below: with few entries per row each weighs a share of X).
        return values * np.repeat(post, counts)
    scale = _row_reduce(np.maximum, np.abs(values), indptr)
    pre = np.where(overflowed, scale, 1.0)
    unit = values / np.repeat(pre, counts)
    unit_norms = np.sqrt(_row_reduce(np.add, unit * unit, indptr))
    # Rows that are not rescued (ordinary or tiny ones, unit = x) may give
    # bound / 0 or bound / tiny = inf here, discarded below: numpy must not
    # warn (a warning would depend on the data).
    with np.errstate(divide="ignore", over="ignore"):
        rescue = np.minimum(scale, bound / unit_norms)
    post = np.where(overflowed, rescue, post)
    # Division by 1.0 is exact: ordinary rows are x * factor, as dense.
    return (values / np.repeat(pre, counts)) * np.repeat(post, counts)


def _sparse_underflow_rescued(values, indptr, norms):
    # _underflow_rescued for rows given by their stored float64 ``values``
    # (CSR ``indptr``; canonical, so the squares of the stored entries are
    # the row's): a row whose squares underflow is recomputed as
    # m sqrt(sum_j (x_j / m)^2), m = max_j |x_j|, rounded up where the norm
    # is subnormal (as stable_row_norms). Other rows keep their norm.
    low = norms <= _SQRT_TINY
    if not low.any():
        return norms
    with np.errstate(under="ignore"):
        scale = _row_reduce(np.maximum, np.abs(values), indptr)
        low &= scale > 0
        if not low.any():
            return norms
        pre = np.where(low, scale, 1.0)
        unit = values / np.repeat(pre, np.diff(indptr))
        rescued = pre * np.sqrt(_row_reduce(np.add, unit, indptr, transform=np.square))
    norms = norms.copy()
    norms[low] = _subnormal_rounded_up(np, rescued[low])
    return norms


def clip_factors(raw_gradient, row_norms, clip_norm):
    """Factors ``c_i = min(1, C / ||g_i||)`` from factorized norms.

    The factors are float64 whatever the input precision: the clipped sum
    they weight is then accumulated in float64 too, which is what the numpy
    solver has always done. When either input is of lower precision
    (float32 residuals or row norms) the bound is ``C (1 - 2 eps)``
    (:func:`~sklearn_dpfair.privacy._clipping.clip_margin`): the term ``c_i r_i u_i^T`` computed from those
    values then has norm at most ``C`` (the row norms of float32 rows are
    upper bounds to within their final ``+ s^2`` and square root,
    :func:`squared_row_norms`).

    Parameters
    ----------
    raw_gradient : array of shape (n_samples, n_outputs)
        Per-sample gradient in raw-prediction space.
    row_norms : array of shape (n_samples,)
        Norms ``||u_i||`` of the other factor (for a linear model, the
        augmented rows ``[x_i, s]``).
    clip_norm : float
        Clip threshold ``C``; ``inf`` disables clipping.

    Returns
    -------
    factors : array of shape (n_samples,)
        In the namespace and on the device of ``raw_gradient``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._rows import clip_factors
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
    norms = per_example_norms(raw_gradient, row_norms)
    return clip_factors_from_norms(
        norms, clip_norm, margin=clip_margin(raw_gradient, row_norms)
    )


def per_example_norms(raw_gradient, row_norms):
    """Norms ``||r_i|| ||u_i||`` of rank-one terms ``u_i r_i^T``, never ``nan``.

    Float64 whatever the input precision: the gradient norms are computed in
    float64 (a float32 gradient is widened first, ``n x K`` values), with
    neither overflow nor underflow, and multiplied by the row norms in
    float64; a zero gradient has norm 0 even on a row whose norm overflowed
    (no ``0 * inf``); a non-finite gradient has norm ``inf``, which
    :func:`~sklearn_dpfair.privacy._clipping.clip_factors_from_norms` turns into the factor 0.

    Parameters
    ----------
    raw_gradient, row_norms
        As in :func:`clip_factors`.

    Returns
    -------
    norms : array of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._rows import per_example_norms
    >>> per_example_norms(np.array([[2.0], [0.0], [np.nan]]),
    ...                   np.array([3.0, np.inf, 1.0]))
    array([ 6.,  0., inf])
    """
    xp = array_namespace(raw_gradient, row_norms)
    # The product overflows to inf for a huge record (factor 0 below) and is
    # 0 * inf = nan for a zero gradient on an unbounded row (fixed below):
    # both expected, so numpy must not warn (a warning would depend on data).
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        norms = _wide_gradient_norms(xp, raw_gradient)
        if is_numpy_namespace(xp):
            # In place: n-length float64 arrays weigh as much as a sparse X
            # of one stored entry per row.
            np.multiply(norms, row_norms, out=norms)
        else:
            norms = norms * xp.astype(row_norms, xp.float64, copy=False)
    # A row whose norm overflows to inf with an exactly-zero raw gradient
    # gives 0 * inf = nan; its gradient is zero, so its norm is zero.
    zero_gradient = xp.all(raw_gradient == 0, axis=1)
    norms = xp.where(zero_gradient, xp.zeros_like(norms), norms)
    # What is still nan came from a non-finite raw gradient (a finite one
    # times a finite or infinite row norm is a number or inf): norm inf.
    return xp.where(xp.isnan(norms), xp.full_like(norms, math.inf), norms)


def _wide_gradient_norms(xp, raw_gradient):
    # Float64 norms of the rows of ``raw_gradient``: a lower-precision
    # gradient is widened first (its squares then neither overflow nor
    # underflow), and one output's norm is its exact absolute value.
    if not _is_narrow(xp, raw_gradient.dtype):
        return stable_row_norms(raw_gradient)
    if raw_gradient.shape[1] == 1:
        return xp.astype(xp.abs(raw_gradient[:, 0]), xp.float64)
    return stable_row_norms(xp.astype(raw_gradient, xp.float64))


def clipped_rows(raw_gradient, row_norms, clip_norm):
    """Per-example raw gradients scaled by their clip factors: ``c_i r_i``.

    The one place where rank-one per-example terms ``u_i r_i^T`` are made safe to
    sum: a row whose raw gradient is not finite contributes exactly 0 (also
    without clipping, ``clip_norm = inf``), so ``0 * inf`` never produces a
    ``nan``; every other row ``c_i r_i [x_i, s]`` has norm at most
    ``clip_norm``, and each entry ``c_i r_ik x_ij`` is finite because
    ``|c_i r_ik| <= C / ||x_i||``. A term whose norm ``||r_i|| ||u_i||``
    overflows (a huge public weight, a row near the largest float) or whose
    factor ``C / norm`` would be 0 or subnormal is still clipped to ``C``,
    not dropped: ``c_i r_i`` is then ``r_i`` projected onto the ball of
    radius ``C / ||u_i||`` (from its largest entry, as
    :func:`clip_rows_to_norm` projects a huge row), so its norm is
    ``min(||r_i|| ||u_i||, C)`` up to rounding, in float64 as in float32.
    Only a row norm ``||u_i||`` that is itself ``inf`` leaves the fixed
    contribution 0.

    Parameters
    ----------
    raw_gradient, row_norms, clip_norm
        As in :func:`clip_factors`.

    Returns
    -------
    weighted : array of shape (n_samples, n_outputs)
        ``c_i r_i``, float64 (the clip factors' precision) when clipping.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._rows import clipped_rows
    >>> clipped_rows(np.array([[2.0], [np.nan]]), np.array([1.0, 1.0]), 1.0)
    array([[1.],
           [0.]])
    """
    xp = array_namespace(raw_gradient)
    # A Python float: a numpy scalar (np.float32(0.5), np.int64(5)) kept
    # the bounds below in its own precision, where they overflowed (warning).
    clip_norm = float(clip_norm)
    finite = finite_rows_mask(raw_gradient)
    if not bool(xp.all(finite)):
        raw_gradient = xp.where(
            finite[:, None], raw_gradient, xp.zeros_like(raw_gradient)
        )
    if math.isinf(clip_norm):
        return raw_gradient
    factors = clip_factors(raw_gradient, row_norms, clip_norm)
    weighted = raw_gradient * factors[:, None]
    bound = clip_norm * clip_margin(raw_gradient, row_norms)
    # Two kinds of terms cannot be scaled by their factor: factor 0 on a
    # finite nonzero gradient (the norm ||r_i|| ||u_i|| overflowed, e.g. a
    # huge public weight, or C / norm was subnormal), and a clipped term
    # whose c_i r_i would be subnormal (||u_i|| > C / tiny), too imprecise
    # to stay within C. Each is representable all the same (|c_i r_ik| is
    # at most C / ||u_i||) and is clipped to C like any other, never
    # dropped. One n-length test each in the usual case.
    rescue = factors == 0
    subnormal_above = bound / _tiny(xp, xp.float64)
    # Compared only when some row norm can exceed it: a Python float beyond
    # float32's range would overflow (with a warning) when compared with
    # float32 norms.
    if subnormal_above < float(xp.finfo(row_norms.dtype).max):
        rescue = rescue | ((row_norms > subnormal_above) & (factors < 1))
    if not bool(xp.any(rescue)):
        return weighted
    rescue = (
        rescue
        & ~xp.all(raw_gradient == 0, axis=1)
        & xp.isfinite(row_norms)
        & (row_norms > 0)
    )
    if not bool(xp.any(rescue)):
        return weighted
    return _scatter_like(
        weighted,
        rescue,
        _rescued_rows(
            xp.astype(raw_gradient[rescue], xp.float64),
            xp.astype(row_norms[rescue], xp.float64),
            bound,
        ),
    )


def _rescued_rows(gradient, row_norms, clip_norm):
    # c_i r_i for terms whose factor could not be formed (clipped_rows):
    # r_i projected onto the ball of radius C / ||u_i|| without forming
    # ||r_i|| ||u_i||. A subnormal radius carries an absolute rounding of
    # up to half its last place in each of the K entries, which the term
    # multiplies by up to ||u_i||: the radius is lowered by that much
    # first, so the term stays within C (0, within any bound, if nothing is
    # left: C / ||u_i|| below a few subnormal steps).
    xp = array_namespace(gradient)
    with np.errstate(under="ignore", over="ignore"):
        radius = clip_norm / row_norms
    subnormal_ulp = float(np.nextafter(0.0, 1.0))
    slack = (math.sqrt(gradient.shape[1]) + 2.0) * subnormal_ulp
    radius = xp.where(
        radius < _tiny(xp, radius.dtype),
        xp.maximum(radius - slack, xp.zeros_like(radius)),
        radius,
    )
    return _projected_from_largest(xp, gradient, radius)
