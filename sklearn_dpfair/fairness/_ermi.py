# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exponential Rényi mutual information (ERMI): evaluation and the min-max penalty.

Notation of the FERMI objective (thesis Chapter 5, Algorithm 9): ``F_i`` is
the probability vector of sample ``i`` (``m`` classes), ``s_i`` its group
(``k`` groups) and ``b_i`` its block (see :mod:`._constraints`). Per block ``b`` the dual matrix
``W_b`` is ``k x m`` and the group marginals are ``Ps_b``. The per-sample term

    psi_i(theta, W) = w_i * ( sum_j c_i[j] F_i[j] - 1 ),
    c_i[j] = 2 W[b_i, s_i, j] / sqrt(Ps[b_i, s_i]) - sum_r W[b_i, r, j]^2,

averages (over all rows) to ``Psi(theta, W)``, whose maximum over ``W`` is the
(block-weighted) ERMI. Everything below works on whole batches: no
per-sample Python loops.

The batch methods of :class:`ERMIRegularizer` (the ones SGDA calls every
step) are written against the array API: they compute in the namespace and on
the device of their array arguments (numpy, or torch on a GPU). numpy keeps
the very calls it always made (``einsum``, ``bincount``), so numpy results are
bit-for-bit unchanged. The evaluation functions (tables, ERMI of a joint law)
work on host numpy arrays.
"""

import numpy as np

from ..utils._array_api import (
    array_namespace,
    device_of,
    from_host,
    is_numpy_namespace,
    rowwise_dot,
)

__all__ = [
    "ERMIRegularizer",
    "block_tables",
    "code_dtype",
    "compact_codes",
    "constrained_ermi",
    "ermi_from_tables",
    "ermi_of_joint",
    "joint_table",
    "renyi_of_joint",
]


def code_dtype(n_values):
    """Smallest signed integer dtype holding the codes ``-1 .. n_values``.

    Per-row codes (labels, groups, blocks, cells) are held for a whole fit:
    in ``int8`` they take one byte a row, not the eight of ``intp``.

    Examples
    --------
    >>> from sklearn_dpfair.fairness._ermi import code_dtype
    >>> code_dtype(2), code_dtype(300), code_dtype(10**6)
    (dtype('int8'), dtype('int16'), dtype('int32'))
    """
    for dtype in (np.int8, np.int16, np.int32):
        if n_values < np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


# Rows per chunk of compact_codes: its intp temporaries stay small.
_CODE_CHUNK = 1 << 16


def compact_codes(uniques, values):
    """Index of each of ``values`` in ``uniques``, one small code a row.

    ``uniques`` holds every value (in any order: declared labels keep
    theirs); the codes are in :func:`code_dtype`, computed by chunks of
    rows, so no ``n``-long ``intp`` array is formed (``np.unique`` with
    ``return_inverse`` forms several). With ``uniques = np.unique(values)``
    they are its inverse indices.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness._ermi import compact_codes
    >>> compact_codes(np.array([3, 1, 2]), np.array([1, 2, 3, 3]))
    array([1, 2, 0, 0], dtype=int8)
    """
    uniques = np.asarray(uniques)
    sorter = np.argsort(uniques, kind="stable")
    out = np.empty(len(values), dtype=code_dtype(uniques.size))
    for start in range(0, len(values), _CODE_CHUNK):
        part = values[start : start + _CODE_CHUNK]
        out[start : start + len(part)] = sorter[
            np.searchsorted(uniques, part, sorter=sorter)
        ]
    return out


def scatter_rows(index, values, n_bins):
    """Sum the rows of ``values`` (n x m) into ``n_bins`` bins given by ``index``.

    ``np.bincount`` per column: O(n m), no dense one-hot matrix (which would
    be n x n_bins, too large for many intersectional groups).
    """
    xp = array_namespace(index, values)
    if not is_numpy_namespace(xp):
        # The array API has no scatter-add: a (batch x n_bins) indicator
        # matrix and one matmul. Batches are small, and the bins are the
        # (block, group) cells, so this stays far below the n x n_bins matrix
        # a whole-data-set one-hot would need.
        bins = xp.arange(n_bins, dtype=index.dtype, device=device_of(index))
        onehot = xp.astype(index[:, None] == bins[None, :], values.dtype)
        return xp.matmul(onehot.T, values)
    out = np.empty((n_bins, values.shape[1]), dtype=values.dtype)
    for j in range(values.shape[1]):
        out[:, j] = np.bincount(index, weights=values[:, j], minlength=n_bins)
    return out


def _column_squares(W):
    """``colsum(W_b^2)`` per block, shape ``(n_blocks, m)``.

    numpy keeps its ``einsum`` (bit-for-bit what the solver always computed).
    """
    xp = array_namespace(W)
    if is_numpy_namespace(xp):
        return np.einsum("brj,brj->bj", W, W)
    return xp.sum(W * W, axis=1)


def _cell_rows(W, blk, grp):
    """``W[b_i, s_i]`` for each row, shape ``(batch, m)``.

    A gather on the flattened ``(block, group)`` cells: the array API has no
    multi-dimensional integer indexing, and the gathered values are the same.
    """
    xp = array_namespace(W)
    n_blocks, n_groups, m = W.shape
    flat = xp.reshape(W, (n_blocks * n_groups, m))
    return xp.take(flat, blk * n_groups + grp, axis=0)


def joint_table(proba, codes, n_groups):
    """Joint law ``P[j, r]`` of (prediction, group) over the rows with a group.

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        Soft probabilities, or one-hot hard predictions.
    codes : ndarray of shape (n_samples,)
        Group codes; ``-1`` (missing) rows are dropped.
    n_groups : int
        Number of groups ``k``.

    Returns
    -------
    joint : ndarray of shape (n_classes, n_groups)
        Sums to 1 (or all zeros when no row has a group).
    """
    keep = codes >= 0
    n_kept = np.count_nonzero(keep)
    table = scatter_rows(codes[keep], proba[keep], n_groups).T
    return table / n_kept if n_kept else table


def ermi_of_joint(joint):
    """ERMI of a joint table: ``sum P[j,r]^2 / (Py[j] Ps[r]) - 1`` over non-empty cells.

    A class never predicted (or a group never seen) has an all-zero row (or
    column), so skipping it is exact (``0/0`` counts as 0). Tiny negative
    values from round-off are clipped to 0.
    """
    py = joint.sum(axis=1)
    ps = joint.sum(axis=0)
    rows, cols = py > 0, ps > 0
    if not rows.any():
        return 0.0
    sub = joint[np.ix_(rows, cols)]
    value = np.sum(sub**2 / np.outer(py[rows], ps[cols])) - 1.0
    return float(max(value, 0.0))


def renyi_of_joint(joint):
    """Rényi (HGR) maximal correlation of a discrete joint law.

    The second singular value of ``Q[j, r] = P[j, r] / sqrt(Py[j] Ps[r])``
    (the first is exactly 1); 0 when either side takes a single value.
    """
    py = joint.sum(axis=1)
    ps = joint.sum(axis=0)
    rows, cols = py > 0, ps > 0
    if rows.sum() < 2 or cols.sum() < 2:
        return 0.0
    q = joint[np.ix_(rows, cols)] / np.sqrt(np.outer(py[rows], ps[cols]))
    sv = np.linalg.svd(q, compute_uv=False)
    return float(min(max(sv[1], 0.0), 1.0))


def block_tables(proba, blocks, codes, n_blocks, n_groups):
    """Unnormalized joint tables ``(n_blocks, n_groups, n_classes)`` of (group, prediction).

    Rows outside every block (``blocks == -1``) or with a missing group
    (``codes == -1``) are skipped. Tables of several batches add up.
    """
    keep = (blocks >= 0) & (codes >= 0)
    # Widened: the codes may come in a dtype too small for the cell index.
    cells = blocks[keep].astype(np.intp) * n_groups + codes[keep]
    table = scatter_rows(cells, proba[keep], n_blocks * n_groups)
    return table.reshape(n_blocks, n_groups, proba.shape[1])


def ermi_from_tables(tables, n_observed, constraint):
    """Combine per-block ERMI with the weights ``freq_b * w_b`` of the constraint.

    ``freq_b`` is the fraction of the ``n_observed`` rows (with a group) that
    fall in block ``b``; this gives ``ERMI`` (demographic parity),
    ``sum_y p_Y(y) ERMI_y`` or ``mean_y ERMI_y`` (equalized odds) and
    ``ERMI_a`` (equal opportunity). Returns ``(value, per_block_values)``.
    """
    totals = tables.sum(axis=(1, 2))
    freqs = totals / max(float(n_observed), 1.0)
    values = np.array(
        [ermi_of_joint(t.T / tot) if tot > 0 else 0.0 for t, tot in zip(tables, totals)]
    )
    weights = constraint.block_weights(freqs)
    return float(np.sum(freqs * weights * values)), values


def constrained_ermi(
    proba, blocks, codes, n_groups, constraint, *, n_blocks=None, per_block=False
):
    """ERMI under a constraint: blockwise ERMI combined with the block weights.

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        Soft probabilities or one-hot predictions.
    blocks : ndarray of shape (n_samples,)
        Block of each row (``-1``: outside every block).
    codes : ndarray of shape (n_samples,)
        Group codes (``-1``: missing).
    n_groups : int
        Number of groups.
    constraint : object
        A constraint from :mod:`._constraints`.
    n_blocks : int, default=None
        Number of blocks (default: from ``blocks``); set it when a block may
        be empty, e.g. a class absent from the evaluation rows.
    per_block : bool, default=False
        Also return the per-block values.

    Returns
    -------
    value : float
        The combined ERMI (see :func:`ermi_from_tables`).
    per_block_values : ndarray of shape (n_blocks,)
        Only if ``per_block``.
    """
    if n_blocks is None:
        n_blocks = max(int(blocks.max(initial=-1)) + 1, 1)
    tables = block_tables(proba, blocks, codes, n_blocks, n_groups)
    value, values = ermi_from_tables(tables, np.count_nonzero(codes >= 0), constraint)
    return (value, values) if per_block else value


class ERMIRegularizer:
    """The per-sample min-max form of ERMI on a fixed training set.

    Holds the public constants of the penalty (group marginals per block,
    block weights) and computes, for a batch, everything SGDA needs:
    logit-space gradients of ``psi_i``, the dual gradient sum (with optional
    per-sample clip factors), per-sample dual gradient norms, the exact dual
    maximiser and the box projection. The constants are host numpy arrays;
    the batch methods accept arrays of any array-API namespace and device
    (the per-row constants of :meth:`sample_constants` copied there first).

    Parameters
    ----------
    group_marginals : ndarray of shape (n_blocks, n_groups)
        ``Ps_b[r] = P(S = r | block b)``, already floored (strictly positive).
    block_weights : ndarray of shape (n_blocks,)
        Weight ``w_b`` of the terms of block ``b``.
    n_classes : int
        Number of model outputs ``m``.
    kept : ndarray of bool, shape (n_blocks, n_groups), default=None
        The cells that enter the penalty (None: all). A left-out cell's rows
        have no penalty term (as a missing group's), its dual entries are
        held at 0 (box ``[0, 0]``) and its marginal is not read; the kept
        marginals of a block must sum to 1 among themselves. The penalty is
        then, per block, ``P(kept | b)`` times the ERMI of the prediction and
        the group *conditional on a kept group*: the min-max form of thesis
        Eq. (5.1) on that sub-population, still a well-defined ERMI (zero
        exactly when the prediction is independent of the kept groups).
    """

    def __init__(self, group_marginals, block_weights, n_classes, kept=None):
        self.group_marginals = np.asarray(group_marginals, dtype=np.float64)
        self.block_weights = np.asarray(block_weights, dtype=np.float64)
        self.n_classes = int(n_classes)
        self.kept = None if kept is None else np.asarray(kept, dtype=bool)
        if self.kept is None:
            self.inv_sqrt_marginals = 1.0 / np.sqrt(self.group_marginals)
        else:
            # 1 / sqrt(Ps) of a left-out cell is 0: its box is [0, 0] and
            # its dual gradient and maximiser vanish.
            safe = np.where(self.kept, self.group_marginals, 1.0)
            self.inv_sqrt_marginals = np.where(self.kept, 1.0 / np.sqrt(safe), 0.0)
        # 1 / sqrt(Ps) (the box bounds) copied to each device the solver has
        # run on (a (n_blocks, n_groups, 1) array: one copy per fit, not per
        # step).
        self._device_inv_sqrt = {}
        # Per-cell tables of batch_constants, per device.
        self._device_tables = {}

    @property
    def n_blocks(self):
        """Number of blocks (dual matrices)."""
        return self.group_marginals.shape[0]

    @property
    def n_groups(self):
        """Number of groups."""
        return self.group_marginals.shape[1]

    def sample_constants(self, blocks, codes, scale=1.0):
        """Per-row ``(block, group, weight, 1/sqrt(Ps))`` for the whole training set.

        Rows outside every block or with a missing group get weight 0 (and
        dummy indices 0, so gathers stay valid). ``scale`` multiplies every
        weight (``n / n_observed`` with missing groups: unbiased when they are
        missing completely at random).
        """
        active = (blocks >= 0) & (codes >= 0)
        if self.kept is not None:
            active &= self.kept[np.where(active, blocks, 0), np.where(active, codes, 0)]
        blk = np.where(active, blocks, 0).astype(np.intp)
        grp = np.where(active, codes, 0).astype(np.intp)
        weight = np.where(active, self.block_weights[blk] * scale, 0.0)
        return blk, grp, weight, self.inv_sqrt_marginals[blk, grp]

    @property
    def n_cells(self):
        """Number of (block, group) cells; :meth:`row_cells` codes a row without a term by it."""
        return self.n_blocks * self.n_groups

    def row_cells(self, blocks, codes):
        """Per-row cell ``b n_groups + r`` in the smallest integer dtype.

        Rows outside every block or with a missing group get the extra cell
        ``n_cells`` (no penalty term). With :meth:`batch_constants` this
        replaces the four ``n``-long arrays of :meth:`sample_constants` by
        one code a row (one byte for up to 126 cells) and small tables.
        """
        n_cells = self.n_cells
        cells = np.asarray(blocks).astype(code_dtype(n_cells))
        # In the small dtype, in place: |b n_groups + r| <= n_cells fits.
        cells *= self.n_groups
        cells += np.asarray(codes).astype(cells.dtype, copy=False)
        cells[(np.asarray(blocks) < 0) | (np.asarray(codes) < 0)] = n_cells
        if self.kept is not None:
            # Rows of a left-out cell have no term either.
            left_out = np.append(~self.kept.ravel(), False)
            cells[left_out[cells.astype(np.intp)]] = n_cells
        return cells

    def _tables(self, like):
        """Per-cell ``(block, group, block weight, 1/sqrt(Ps))``, extra cell last.

        The extra cell (no term) has block and group 0 and weight 0, the
        dummy values of :meth:`sample_constants`. Copied once per device.
        """
        # numpy apart from any array-API namespace on the CPU (torch's).
        key = "numpy" if isinstance(like, np.ndarray) else str(device_of(like))
        tables = self._device_tables.get(key)
        if tables is None:
            n_cells = self.n_cells
            blk, grp = np.divmod(np.arange(n_cells + 1, dtype=np.intp), self.n_groups)
            blk[-1] = grp[-1] = 0
            weight = np.append(self.block_weights[blk[:-1]], 0.0)
            if self.kept is not None:
                weight[:-1] = np.where(self.kept.ravel(), weight[:-1], 0.0)
            isq = self.inv_sqrt_marginals[blk, grp]
            tables = tuple(from_host(t, like) for t in (blk, grp, weight, isq))
            self._device_tables[key] = tables
        return tables

    def batch_constants(self, cells, scale=1.0):
        """``(block, group, weight, 1/sqrt(Ps))`` of rows given their :meth:`row_cells`.

        The rows of :meth:`sample_constants` bit for bit: ``scale`` (a scalar,
        or one value per row of ``cells``) multiplies each block weight as
        there. ``cells`` may live on any array-API device (the tables are
        copied there once).
        """
        xp = array_namespace(cells)
        index = cells if is_numpy_namespace(xp) else xp.astype(cells, xp.int64)
        blk, grp, weight, isq = (
            xp.take(t, index, axis=0) for t in self._tables(cells)
        )
        return blk, grp, weight * scale, isq

    def init_dual(self, dtype=np.float64):
        """Dual variable ``W = 0`` of shape ``(n_blocks, n_groups, n_classes)``."""
        return np.zeros((self.n_blocks, self.n_groups, self.n_classes), dtype=dtype)

    def coefficients(self, W, blk, grp, inv_sqrt):
        """``c_i = 2 W[b_i, s_i] / sqrt(Ps) - colsum(W[b_i]^2)``, shape (batch, m)."""
        xp = array_namespace(W)
        col_sq = _column_squares(W)
        return 2.0 * _cell_rows(W, blk, grp) * inv_sqrt[:, None] - xp.take(
            col_sq, blk, axis=0
        )

    def raw_gradient(self, proba, coef, weight):
        """Logit-space gradient of ``psi_i``: ``w_i F_i * (c_i - <c_i, F_i>)``."""
        centred = coef - rowwise_dot(coef, proba)[:, None]
        return (weight[:, None] * proba) * centred

    def value(self, proba, coef, weight):
        """Per-sample ``psi_i = w_i (<c_i, F_i> - 1)``."""
        return weight * (rowwise_dot(coef, proba) - 1.0)

    def cell_term_norms(self, proba, weight):
        """Norms ``||w_i F_i||`` of the per-sample terms of :meth:`cell_sums`.

        Finite for every record: ``F_i`` lies in the simplex (the solver
        gives a row whose logits overflowed ``F_i = 0``), so the norm is at
        most ``|w_i|``; a norm that is still not finite gets clip factor 0
        (:func:`~sklearn_dpfair.privacy._clipping.clip_factors_from_norms`).
        """
        xp = array_namespace(proba)
        return xp.abs(weight) * xp.sqrt(rowwise_dot(proba, proba))

    def _cell_sums(self, values, blk, grp):
        """Per-(block, group) sums of ``values``: ``(n_blocks, n_groups, m)``."""
        n_blocks, n_groups = self.n_blocks, self.n_groups
        cells = scatter_rows(blk * n_groups + grp, values, n_blocks * n_groups)
        return array_namespace(cells).reshape(cells, (n_blocks, n_groups, -1))

    def _cell_inv_sqrt(self, like):
        """``1 / sqrt(Ps)`` as a ``(n_blocks, n_groups, 1)`` array on ``like``'s device.

        Copied once per device and fit (the projection's box bounds).
        """
        if is_numpy_namespace(array_namespace(like)):
            return self.inv_sqrt_marginals[:, :, None]
        key = str(device_of(like))
        if key not in self._device_inv_sqrt:
            self._device_inv_sqrt[key] = from_host(
                self.inv_sqrt_marginals[:, :, None], like
            )
        return self._device_inv_sqrt[key]

    def cell_sums(self, proba, blk, grp, factor):
        """``sum_i factor_i F_i`` per (block, group) cell: ``(n_blocks, n_groups, m)``.

        The dual gradient's sufficient statistic
        (:meth:`dual_gradient_from_cells`). One record adds ``factor_i F_i``
        to its own cell only, so with ``factor_i`` = weight x clip factor
        the sums move by at most the clip norm when a record is added or
        removed, whatever ``W`` and the marginals are.
        """
        return self._cell_sums(factor[:, None] * proba, blk, grp)

    def dual_gradient_from_cells(self, W, cells):
        """``sum_i factor_i h_i`` from the cell sums of ``factor_i F_i``.

        ``h_i = w_i (-2 W_b diag(F_i) + 2 e_s F_i^T / sqrt(Ps))`` (the dual
        gradient of ``psi_i``, thesis Eq. (5.1)) is linear in ``F_i`` with
        coefficients constant on a (block, group) cell: a block's sum is
        ``-2 W_b * colsum + 2 cells / sqrt(Ps)`` with ``colsum`` the sum of
        the block's cells. Applied to released noisy cell sums it is
        post-processing.
        """
        xp = array_namespace(W)
        f_sum = xp.sum(cells, axis=1, keepdims=True)  # (n_blocks, 1, m)
        return -2.0 * W * f_sum + 2.0 * cells * self._cell_inv_sqrt(W)

    def dual_maximizer(self, proba, blk, grp, weight):
        """Exact ``argmax_W Psi``: ``W*[b, r, j] = P(S=r | Yhat=j, b) / sqrt(Ps[b, r])``.

        The zero of the full-batch dual gradient; ``1e-12`` guards classes that
        are never predicted (an empty column of the joint law).
        """
        return self.maximizer_from_cells(
            self.cell_sums(proba, blk, grp, weight)
        )

    def maximizer_from_cells(self, cells):
        """:meth:`dual_maximizer` from the cell sums of ``w_i F_i`` (``(n_blocks, n_groups, m)``)."""
        xp = array_namespace(cells)
        f_sum = xp.sum(cells, axis=1, keepdims=True)
        return self.project(cells * self._cell_inv_sqrt(cells) / (f_sum + 1e-12))

    def add_cell_sums(self, total, proba, blk, grp, weight):
        """``total`` plus the cell sums of ``w_i F_i`` over a block of rows (numpy).

        Each cell's sum goes on from ``total`` in row order (one
        ``bincount`` whose first terms are ``total``): blocks of rows added
        in turn give the single pass of :meth:`dual_maximizer` bit for bit.
        """
        n_cells = self.n_cells
        index = np.concatenate([np.arange(n_cells), blk * self.n_groups + grp])
        values = weight[:, None] * proba
        flat = total.reshape(n_cells, -1)
        out = np.empty_like(flat)
        for j in range(flat.shape[1]):
            out[:, j] = np.bincount(
                index,
                weights=np.concatenate([flat[:, j], values[:, j]]),
                minlength=n_cells,
            )
        return out.reshape(total.shape)

    def hold_left_out(self, W):
        """``W`` with the entries of the left-out cells at 0 (``kept``).

        The box projection does it already; a fit without it
        (``dual_projection=None``) calls this so that the dual noise of a
        left-out cell never enters the penalty's ``colsum(W_b^2)``.
        """
        if self.kept is None:
            return W
        xp = array_namespace(W)
        kept = self.kept[:, :, None]
        if not is_numpy_namespace(xp):
            kept = from_host(kept, W)
        return xp.where(kept, W, xp.zeros_like(W))

    def project(self, W):
        """Box projection ``0 <= W[b, r, j] <= 1 / sqrt(Ps[b, r])``.

        The box contains the maximiser for every model (it is
        ``P(S=r | Yhat=j) / sqrt(Ps[b, r])`` with a probability <= 1), so the
        projection never moves the fixed point; it bounds the sensitivity.
        """
        xp = array_namespace(W)
        if is_numpy_namespace(xp):
            return np.clip(W, 0.0, self.inv_sqrt_marginals[:, :, None])
        return xp.minimum(xp.clip(W, 0.0, None), self._cell_inv_sqrt(W))

    def cell_sum_bound(self):
        """Bound on ``||w_i F_i||`` for weights of at most 1 (so clipping never binds).

        ``||F_i|| <= 1`` on the simplex and ``w_i`` is the record's block
        weight (times a public weight of at most 1), so the largest block
        weight over the blocks with a kept cell; 1 when no cell is kept
        (every term is then 0).
        """
        kept = self.inv_sqrt_marginals.max(axis=1) > 0
        weights = self.block_weights[kept]
        return float(weights.max()) if weights.size and weights.max() > 0 else 1.0
