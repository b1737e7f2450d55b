# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Group marginals of the ERMI penalty: cell counts, floors, public values.

The penalty of every block ``b`` reads the group marginals
``P(S = r | block b)`` through ``1 / sqrt(P_s)`` (thesis Chapter 5, the
min-max form Eq. (5.1) of Corollary 66; line 2 of Algorithm 9). They come from the (block, group) cell counts of the
training rows, released by a Gaussian histogram under DP, or from values
the user declares public. Either way they are floored (a marginal near 0
would blow up the fairness gradients) and renormalized; with noisy counts
everything here is post-processing of the release.
"""

import numpy as np

from ..utils._validation import warn_at_caller

__all__ = [
    "cell_counts",
    "check_public_marginals",
    "marginals_from_counts",
    "marginals_from_public",
    "warn_floored_groups",
]

_FLOORED = (
    "group(s) {labels} have a training frequency below min_group_frequency="
    "{floor:g}{where}; their marginals are floored at it (1/sqrt(P_s) would "
    "otherwise blow up the fairness gradients)."
)


def cell_counts(blocks, codes, n_blocks, n_groups, weights=None):
    """Rows (or total weight) per (block, group) cell.

    Rows without a block or a group (code ``-1``) are skipped. One record
    moves one cell by one: the L2 sensitivity of the unweighted table is 1.

    Parameters
    ----------
    blocks, codes : ndarray of shape (n_samples,)
        Block and group index of every row (``-1``: none).
    n_blocks, n_groups : int
        Shape of the table.
    weights : ndarray of shape (n_samples,) or None, default=None
        Per-row weights (the non-private fit's weighted marginals); None
        counts rows.

    Returns
    -------
    counts : ndarray of shape (n_blocks, n_groups)
        float64.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness._marginals import cell_counts
    >>> cell_counts(np.array([0, 0, 1]), np.array([1, -1, 0]), 2, 2)
    array([[0., 1.],
           [1., 0.]])
    """
    counts = np.zeros(n_blocks * n_groups)
    # By blocks of rows: the cell indices (intp) and kept weights of all rows
    # at once would weigh as much as a sparse X of one entry a row.
    for start in range(0, np.shape(blocks)[0], _COUNT_ROWS):
        rows = slice(start, start + _COUNT_ROWS)
        block, code = blocks[rows], codes[rows]
        keep = (block >= 0) & (code >= 0)
        # Widened: the codes may come in a dtype too small for the cell index.
        cells = block[keep].astype(np.intp) * n_groups + code[keep]
        counts += np.bincount(
            cells,
            weights=None if weights is None else weights[rows][keep],
            minlength=n_blocks * n_groups,
        )
    return counts.reshape(n_blocks, n_groups)


# Rows per block of cell_counts.
_COUNT_ROWS = 1 << 13


def marginals_from_counts(counts, n_total, floor):
    """Group marginals per block (floored, renormalized) and block frequencies.

    Parameters
    ----------
    counts : array-like of shape (n_blocks, n_groups)
        Cell counts, possibly noisy: negative values are clipped to 0 first,
        so both outputs are post-processing of a released histogram.
    n_total : float
        Number (or weight) of the rows the block frequencies divide by.
    floor : float
        Lower bound on every marginal before renormalization.

    Returns
    -------
    marginals : ndarray of shape (n_blocks, n_groups)
        Rows sum to 1.
    block_frequencies : ndarray of shape (n_blocks,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness._marginals import marginals_from_counts
    >>> ps, freq = marginals_from_counts(np.array([[3.0, -1.0]]), 3, 0.1)
    >>> ps.round(3).tolist(), freq.tolist()
    ([[0.909, 0.091]], [1.0])
    """
    counts = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    totals = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ps = np.where(totals[:, None] > 0, counts / totals[:, None], 0.0)
    ps = np.maximum(ps, floor)
    ps /= ps.sum(axis=1, keepdims=True)
    return ps, totals / max(float(n_total), 1.0)


def check_public_marginals(public, constraint, n_classes=None, n_groups=None):
    """Validate declared group marginals from the parameter and the known counts.

    The one check of ``group_marginals`` that a fit (through
    :func:`marginals_from_public`, with the counts of its data) and a
    privacy plan (before any data is read, with the declared or stated
    counts only) share, so that no plan is made for values its fit would
    refuse. What does not depend on the counts is always checked: numeric,
    finite, non-negative, not all zero, and the number of dimensions; each
    dimension only when its count is known.

    Parameters
    ----------
    public : array-like
        The declared values: ``P(S = r)`` (shape ``(n_groups,)``) for
        demographic parity, the joint ``P(Y = y, S = r)`` (shape
        ``(n_classes, n_groups)``) for the label-conditional constraints.
    constraint : str
        The constraint's name (``"demographic_parity"``,
        ``"equalized_odds"`` or ``"equal_opportunity"``).
    n_classes, n_groups : int or None, default=None
        The numbers of classes and groups, where known (None: not checked).

    Returns
    -------
    public : ndarray
        float64.

    Raises
    ------
    ValueError
        Naming ``group_marginals`` and the condition that failed: values
        that are not numeric, not finite, negative or all zero, or a shape
        other than the constraint's (a public parameter: the message may
        show its shape).

    Examples
    --------
    >>> from sklearn_dpfair.fairness._marginals import check_public_marginals
    >>> check_public_marginals([1, 3], "demographic_parity", n_groups=2).tolist()
    [1.0, 3.0]
    >>> check_public_marginals([-1, 2], "demographic_parity")
    Traceback (most recent call last):
    ...
    ValueError: group_marginals must be non-negative; got a negative entry.
    """
    try:
        values = np.asarray(public, dtype=np.float64)
    except (TypeError, ValueError):
        # A public parameter: its message may show it.
        raise ValueError(
            f"group_marginals must be numeric shares; got {public!r}."
        ) from None
    if not np.all(np.isfinite(values)):
        raise ValueError("group_marginals must be finite; got NaN or inf.")
    if np.any(values < 0):
        raise ValueError("group_marginals must be non-negative; got a negative entry.")
    # A sum that is 0 (or empty) has no normalization; values this large that
    # their sum overflows are refused as non-finite shares would be.
    with np.errstate(over="ignore"):
        total = values.sum()
    if not total > 0:
        raise ValueError(
            "group_marginals must not be all zero (they are normalized to "
            "sum to 1)."
        )
    if not np.isfinite(total):
        raise ValueError(
            "group_marginals must sum to a finite number (they are normalized "
            "to sum to 1); scale them down."
        )
    dp = constraint == "demographic_parity"
    expected = (n_groups,) if dp else (n_classes, n_groups)
    if values.ndim != len(expected) or any(
        want is not None and got != want
        for got, want in zip(values.shape, expected)
    ):
        names = ("n_groups",) if dp else ("n_classes", "n_groups")
        shape = ", ".join(
            name if want is None else str(want)
            for name, want in zip(names, expected)
        )
        raise ValueError(
            f"group_marginals must be of shape ({shape}{',' if dp else ''}) "
            f"for constraint={constraint!r}: "
            + ("P(S=r)" if dp else "the joint P(Y=y, S=r)")
            + f"; got shape {values.shape}."
        )
    return values


def marginals_from_public(public, n_classes, n_groups, constraint):
    """Cell frequencies ``(n_blocks, n_groups)`` from user-declared public values.

    Parameters
    ----------
    public : array-like
        Demographic parity takes ``P(S = r)`` (shape ``(n_groups,)``); the
        label-conditional constraints take the joint ``P(Y = y, S = r)``
        (shape ``(n_classes, n_groups)``).
    n_classes, n_groups : int
        Declared numbers of classes and groups.
    constraint : object
        A constraint of :func:`~sklearn_dpfair.fairness.make_constraint`.

    Returns
    -------
    table : ndarray of shape (n_blocks, n_groups)
        Normalized to sum to 1 overall (post-processed by
        :func:`marginals_from_counts` with ``n_total=1``).

    Raises
    ------
    ValueError
        If ``public`` has the wrong shape, or is negative, non-finite or 0
        (:func:`check_public_marginals`; the message says which).

    Examples
    --------
    >>> from sklearn_dpfair.fairness import DemographicParity
    >>> from sklearn_dpfair.fairness._marginals import marginals_from_public
    >>> marginals_from_public([1, 3], 2, 2, DemographicParity()).tolist()
    [[0.25, 0.75]]
    """
    public = check_public_marginals(
        public, constraint.name, n_classes=n_classes, n_groups=n_groups
    )
    joint = public / public.sum()
    if constraint.name == "demographic_parity":
        return joint[None, :]
    if constraint.name == "equal_opportunity":
        return joint[[constraint.class_index]]
    return joint


def warn_floored_groups(counts, floor, group_labels, constraint):
    """Warn about the groups whose frequency (in some block) is below ``floor``.

    Non-private fits only: whether it warns depends on the data.

    Parameters
    ----------
    counts : ndarray of shape (n_blocks, n_groups)
        Exact cell counts (or weights).
    floor : float
        ``min_group_frequency``.
    group_labels : ndarray of shape (n_groups,)
        Labels named in the message.
    constraint : object
        The fit's constraint (the message says "within a label" for the
        label-conditional ones).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness import DemographicParity
    >>> from sklearn_dpfair.fairness._marginals import warn_floored_groups
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_floored_groups(np.array([[999.0, 1.0]]), 0.01,
    ...                         np.array(["a", "b"]), DemographicParity())
    >>> "'b'" in str(caught[0].message)
    True
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = counts / counts.sum(axis=1, keepdims=True)
    low = np.nan_to_num(freq, nan=0.0) < floor
    if np.any(low):
        names = list(group_labels.tolist())
        labels = sorted({repr(names[r]) for r in np.nonzero(low)[1]})
        where = "" if constraint.name == "demographic_parity" else " within a label"
        warn_at_caller(
            _FLOORED.format(labels=", ".join(labels[:10]), floor=floor, where=where),
            UserWarning,
        )
