# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Disparity of hard predictions under a constraint (what ``disparity_bound`` bounds).

The largest difference between groups of a prediction rate, over the
classes and the blocks of the constraint:

- demographic parity: ``max_j (max_r - min_r) P(Yhat = j | S = r)``;
- equalized odds: ``max_{y, j} (max_r - min_r) P(Yhat = j | Y = y, S = r)``;
- equal opportunity: ``(max_r - min_r) P(Yhat = a | Y = a, S = r)``.

For binary targets these are fairlearn's ``demographic_parity_difference``,
``equalized_odds_difference`` and the true-positive-rate difference, except
where a group has no row in a block (no positive row, say, for the true
positive rate): fairlearn counts that group's rate as 0, here the group does
not enter that block's range, so the disparity can be smaller than
fairlearn's. Nor do the (block, group) cells a ``measured`` mask leaves out
enter it: cells with fewer rows than a public ``min_group_size``, whose
rates are too noisy to bound (:func:`measured_cells`).
"""

import numpy as np

__all__ = [
    "disparities",
    "disparity_from_counts",
    "disparity_margin",
    "hard_disparity",
    "measured_cells",
    "prediction_counts",
]


def prediction_counts(y_pred, y, codes, n_classes, n_groups):
    """Counts ``N[y, r, j]`` of rows with label ``y``, group ``r`` and prediction ``j``.

    Rows with a missing group (code ``-1``) are skipped. A record changes
    one cell by one: the table has L2 sensitivity 1 under add/remove.
    """
    keep = codes >= 0
    cells = (y[keep] * n_groups + codes[keep]) * n_classes + y_pred[keep]
    counts = np.bincount(cells, minlength=n_classes * n_groups * n_classes)
    return counts.reshape(n_classes, n_groups, n_classes).astype(np.float64)


def measured_cells(cell_counts, min_group_size):
    """Which (block, group) cells a disparity bound measures.

    Parameters
    ----------
    cell_counts : ndarray of shape (n_blocks, n_groups)
        Rows per cell of the constraint's blocks (exact, released noisy, or
        declared public frequencies times ``n``).
    min_group_size : int
        Public size below which a cell's rates are not bounded.

    Returns
    -------
    measured : ndarray of bool, shape (n_blocks, n_groups)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness._disparity import measured_cells
    >>> measured_cells(np.array([[500.0, 4.0, 31.0]]), 30).tolist()
    [[True, False, True]]
    >>> measured_cells(np.array([[500.0, -3.0]]), 0).tolist()
    [[True, True]]
    """
    counts = np.asarray(cell_counts, dtype=np.float64)
    if min_group_size <= 0:
        # "0 keeps every group": a released noisy count can be negative.
        return np.ones(counts.shape, dtype=bool)
    return counts >= float(min_group_size)


def disparity_from_counts(counts, constraint, measured=None):
    """Disparity of the predictions summarised by ``counts`` (possibly noisy).

    Noisy counts are clipped at 0 first; a (block, group) cell whose total
    is below 1 is treated as empty, and so is a cell ``measured`` (bool,
    ``(n_blocks, n_groups)``, see :func:`measured_cells`) leaves out.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness import make_constraint
    >>> from sklearn_dpfair.fairness._disparity import disparity_from_counts
    >>> counts = np.zeros((2, 2, 2))  # label, group, prediction
    >>> counts[:, 0] = [[4, 1], [1, 4]]
    >>> counts[:, 1] = [[5, 0], [2, 3]]
    >>> round(disparity_from_counts(counts, make_constraint("demographic_parity")), 3)
    0.2
    """
    return float(disparities(counts, constraint, measured))


def disparities(counts, constraint, measured=None):
    """:func:`disparity_from_counts` of a stack of tables, vectorized.

    ``counts`` has shape ``(..., n_classes, n_groups, n_classes)``; the
    result has the leading shape (a 0-d array for one table).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness import make_constraint
    >>> from sklearn_dpfair.fairness._disparity import disparities
    >>> counts = np.zeros((2, 2, 2, 2))
    >>> counts[0, :, 0] = [[4, 1], [1, 4]]
    >>> counts[0, :, 1] = [[5, 0], [2, 3]]
    >>> counts[1] = counts[0][..., ::-1]
    >>> disparities(counts, make_constraint("demographic_parity")).round(3).tolist()
    [0.2, 0.2]
    """
    counts = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    if constraint.name == "equal_opportunity":
        a = constraint.class_index
        blocks = counts[..., [a], :, :][..., [a]]
        totals = counts[..., [a], :, :].sum(axis=-1, keepdims=True)
    else:
        # Demographic parity: one block of all labels; equalized odds: one
        # per label.
        dp = constraint.name == "demographic_parity"
        blocks = counts.sum(axis=-3, keepdims=True) if dp else counts
        totals = blocks.sum(axis=-1, keepdims=True)
    keep = totals >= 1.0
    if measured is not None:
        keep = keep & np.asarray(measured, dtype=bool)[:, :, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(keep, blocks / np.maximum(totals, 1.0), np.nan)
    return _range(rates)


def disparity_margin(counts, constraint, noise_std, measured=None):
    """Two noise standard deviations of the smallest compared group's rate.

    ``counts`` are noisy counts with per-cell noise ``noise_std``; a rate
    of a group with ``N`` rows then has noise of order ``noise_std / N``.
    The smallest (noisy) ``N`` among the (block, group) cells the
    disparity compares sets the margin, post-processing of the release:
    the cells ``measured`` keeps (all by default) with at least one row,
    in blocks where two or more are kept. A block with one kept group
    compares nothing (its disparity is exactly 0, without noise), so its
    cell does not widen the margin; with no block comparing two groups
    the margin is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness import make_constraint
    >>> from sklearn_dpfair.fairness._disparity import disparity_margin
    >>> counts = np.full((2, 2, 2), 250.0)
    >>> disparity_margin(counts, make_constraint("demographic_parity"), 10.0)
    0.02
    >>> eo = make_constraint("equalized_odds")
    >>> counts[1, 1] = 2.0  # label 1 of group 1: below the size, left out
    >>> measured = np.array([[True, True], [True, False]])
    >>> disparity_margin(counts, eo, 10.0, measured)  # block 0 alone compares
    0.04
    """
    totals = np.maximum(np.asarray(counts, dtype=np.float64), 0.0).sum(axis=2)
    if constraint.name == "demographic_parity":
        totals = totals.sum(axis=0, keepdims=True)
    elif constraint.name == "equal_opportunity":
        totals = totals[[constraint.class_index]]
    compared = totals >= 1.0  # as disparity_from_counts keeps them
    if measured is not None:
        compared &= np.asarray(measured, dtype=bool)
    compared &= compared.sum(axis=1, keepdims=True) >= 2
    if not compared.any():
        return 0.0
    return float(2.0 * noise_std / float(totals[compared].min()))


def _range(rates):
    """Largest between-group range of ``rates`` ``(..., blocks, groups, classes)``.

    Groups with a NaN rate (empty or left out) do not enter; 0 where no
    block compares two groups.
    """
    with np.errstate(invalid="ignore"):
        hi = np.fmax.reduce(rates, axis=-2, initial=-np.inf)
        lo = np.fmin.reduce(rates, axis=-2, initial=np.inf)
        spread = np.where(np.isfinite(hi) & np.isfinite(lo), hi - lo, -np.inf)
    out = np.max(spread, axis=(-2, -1))
    return np.where(np.isfinite(out), out, 0.0)


def hard_disparity(y_pred, y, codes, constraint, n_classes, n_groups):
    """Disparity of the hard predictions ``y_pred`` (class indices).

    Parameters
    ----------
    y_pred, y : ndarray of shape (n_samples,)
        Predicted and true class indices.
    codes : ndarray of shape (n_samples,)
        Group codes (``-1``: missing, skipped).
    constraint : object
        A constraint of :mod:`._constraints`.
    n_classes, n_groups : int
        Number of classes and of groups.

    Returns
    -------
    disparity : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness import make_constraint
    >>> from sklearn_dpfair.fairness._disparity import hard_disparity
    >>> y_pred = np.array([1, 1, 0, 1, 0, 0])
    >>> codes = np.array([0, 0, 0, 1, 1, 1])
    >>> dp = make_constraint("demographic_parity")
    >>> round(hard_disparity(y_pred, np.zeros(6, int), codes, dp, 2, 2), 4)
    0.3333
    """
    counts = prediction_counts(
        np.asarray(y_pred), np.asarray(y), np.asarray(codes), n_classes, n_groups
    )
    return disparity_from_counts(counts, constraint)
