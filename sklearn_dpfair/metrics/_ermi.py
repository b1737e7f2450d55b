# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""ERMI and Rényi correlation of predictions and groups (thesis Chapter 5)."""

import numpy as np
from sklearn.utils.validation import check_array

from ..fairness._constraints import advantaged_class_index, make_constraint
from ..fairness._ermi import constrained_ermi, joint_table, renyi_of_joint
from ..fairness._sensitive import encode_sensitive_features
from ..utils._redact import redacting_errors
from ._labels import check_label_column

__all__ = ["ermi_score", "renyi_correlation"]

#: Relative tolerance on a row sum of ``y_proba``: float32 probabilities
#: cast to float64 sum to 1 within about 1e-7 (scikit-learn's ``log_loss``
#: checks the sums too, more tightly).
_PROBA_SUM_RTOL = 1e-6


def _prepare(y_true, y_pred, y_proba, sensitive_features, labels, need_y_true):
    """Return ``(proba, y_index or None, labels, codes, n_groups)``.

    ``y_index`` (the index in ``labels`` of each true label) is None unless
    ``need_y_true``: demographic parity reads no true label.
    """
    if (y_pred is None) == (y_proba is None):
        raise ValueError("Pass exactly one of y_pred (labels) or y_proba.")
    if y_proba is not None:
        proba = _check_proba(y_proba)
        n = proba.shape[0]
    else:
        y_pred = check_label_column(y_pred, "y_pred")
        n = y_pred.shape[0]
    if not need_y_true:
        # Demographic parity reads no true label: neither its validation
        # nor its labels decide anything.
        y_true = None
    if y_true is not None:
        y_true = check_label_column(y_true, "y_true")
        if y_true.shape[0] != n:
            raise ValueError(
                f"y_true has {y_true.shape[0]} samples but the predictions have {n}."
            )
    elif need_y_true:
        raise ValueError("y_true is needed for a label-conditional constraint.")

    if labels is None:
        if y_proba is not None:
            # Demographic parity reads no label: only the number of columns.
            labels = np.unique(y_true) if need_y_true else np.arange(proba.shape[1])
            if labels.size != proba.shape[1]:
                # The columns of y_proba cannot be named from y_true: guessing
                # would put rows in the wrong blocks (or none).
                raise ValueError(
                    f"y_proba has {proba.shape[1]} columns but y_true shows "
                    f"{labels.size} distinct labels; pass labels=[...], the "
                    "label of each column of y_proba in order."
                )
        else:
            parts = [y_pred] if y_true is None else [y_true, y_pred]
            if len({part.dtype.kind in "biuf" for part in parts}) > 1:
                # numpy would make strings of the numbers ("1" for 1), and
                # the predictions would match no label.
                raise TypeError(
                    "y_true and y_pred hold labels of different types "
                    "(numbers and strings); pass labels of one type."
                )
            labels = np.unique(np.concatenate(parts))
    labels = np.asarray(labels)
    if len(set(labels.tolist())) != labels.size:
        # A repeated label would be a second block (column) of the same
        # class: an empty one, which the uniform mean over labels counts.
        raise ValueError("labels contains duplicate values; pass each label once.")
    if y_proba is None:
        proba = np.zeros((n, labels.size))
        proba[np.arange(n), _index(labels, y_pred, "y_pred")] = 1.0
    elif proba.shape[1] != labels.size:
        raise ValueError(
            f"y_proba has {proba.shape[1]} columns but there are {labels.size} labels."
        )
    y_index = _index(labels, y_true, "y_true") if need_y_true else None
    enc = encode_sensitive_features(
        sensitive_features,
        n_samples=n,
        rows_of="y_pred" if y_proba is None else "y_proba",
    )
    return proba, y_index, labels, enc.codes, enc.n_groups


def _check_proba(y_proba):
    """``y_proba`` as float64, each row a probability distribution.

    A negative entry or a row that does not sum to 1 would make the joint
    table no law, and the scores leave their range (an ERMI above
    ``min(n_classes, n_groups) - 1``). ``check_array`` refuses non-finite
    entries.
    """
    proba = check_array(y_proba, dtype=np.float64, input_name="y_proba")
    if np.any(proba < 0):
        raise ValueError(
            "y_proba has negative entries; pass probabilities (each row a "
            "distribution over the labels, for example predict_proba's output)."
        )
    if not np.allclose(proba.sum(axis=1), 1.0, rtol=_PROBA_SUM_RTOL, atol=0.0):
        raise ValueError(
            "y_proba has rows that do not sum to 1; pass probabilities (each "
            "row a distribution over the labels, for example predict_proba's "
            "output)."
        )
    return proba


def _index(labels, values, name):
    order = np.argsort(labels, kind="stable")
    pos = np.clip(np.searchsorted(labels[order], values), 0, labels.size - 1)
    if not np.all(labels[order][pos] == values):
        raise ValueError(f"{name} contains values that are not in labels.")
    return order[pos]


def _blocks(y_true, y_pred, y_proba, sensitive_features, labels, constraint,
            opportunity_class, weighting):
    """Return ``(proba, blocks, codes, n_groups, cons, n_blocks)``.

    ``blocks[i]`` is the block (true label cell) of row ``i`` that
    ``constraint`` conditions on, all 0 for demographic parity; ``cons`` is
    the constraint object.
    """
    need = constraint != "demographic_parity"
    # Declared labels are the caller's: an error may list them.
    declared = labels is not None
    proba, y_index, labels, codes, n_groups = _prepare(
        y_true, y_pred, y_proba, sensitive_features, labels, need
    )
    class_index = (
        advantaged_class_index(
            labels, opportunity_class, parameter="labels", private=not declared
        )
        if constraint == "equal_opportunity"
        else None
    )
    cons = make_constraint(constraint, class_index=class_index, weighting=weighting)
    blocks = (
        cons.block_index(y_index) if need else np.zeros(proba.shape[0], dtype=np.intp)
    )
    n_blocks = cons.n_blocks(labels.size)
    if constraint == "equalized_odds":
        # The ERMI within a label is measured on its true rows: a label with
        # none (declared, or only predicted) has no value, and the uniform
        # mean is over the labels that have rows (an empty block would enter
        # it as 0). The prior-weighted sum gives it weight 0 either way.
        present, blocks = np.unique(blocks, return_inverse=True)
        n_blocks = present.size
    return proba, blocks, codes, n_groups, cons, n_blocks


@redacting_errors
def ermi_score(
    y_true,
    y_pred=None,
    *,
    y_proba=None,
    sensitive_features,
    constraint="demographic_parity",
    opportunity_class=None,
    weighting="label_prior",
    labels=None,
):
    """Exponential Rényi mutual information between predictions and groups.

    ``ERMI = sum_{j,r} P(j, r)^2 / (P(j) P(r)) - 1`` over the non-empty cells
    of the joint table of (prediction, group): the chi-square divergence from
    independence, 0 exactly when the prediction does not depend on the
    group. For ``"equalized_odds"`` the ERMI within each true label is
    combined with weights ``P(Y=y)`` (or uniformly); ``"equal_opportunity"``
    takes it within ``opportunity_class``. Rows with a missing group are
    ignored. Lower is fairer.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        True labels, of one type and none missing (needed for the
        label-conditional constraints; demographic parity ignores them).
    y_pred : array-like of shape (n_samples,), default=None
        Hard predictions (the papers' evaluation). Give this or ``y_proba``.
    y_proba : array-like of shape (n_samples, n_classes), default=None
        Soft predictions, columns ordered as ``labels`` (the randomized
        classifier that FERMI controls): finite, non-negative, each row
        summing to 1 (within a relative ``1e-6``), else ``ValueError``.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
        Group membership; several columns give intersectional groups.
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}, \
            default="demographic_parity"
        Which (conditional) independence is measured.
    opportunity_class : label, default=None
        Class conditioned on for equal opportunity (None: ``labels[1]`` when
        there are two labels).
    weighting : {"label_prior", "uniform"}, default="label_prior"
        Combination of the per-label values for equalized odds: weighted by
        the labels' frequencies in ``y_true``, or their unweighted mean over
        the labels with true rows.
    labels : array-like, default=None
        The label set, in the order of the columns of ``y_proba``; every
        value of ``y_pred``, and of ``y_true`` for a label-conditional
        constraint, must be in it. Default: the sorted labels seen; with
        ``y_proba`` and a label-conditional constraint, the sorted labels of
        ``y_true``, which must then show one label per column of ``y_proba``
        (otherwise pass ``labels``).

    Returns
    -------
    ermi : float
        Non-negative; at most ``min(n_classes, n_groups) - 1``.

    Examples
    --------
    >>> from sklearn_dpfair.metrics import ermi_score
    >>> ermi_score(None, [1, 1, 0, 0], sensitive_features=["a", "a", "b", "b"])
    1.0
    >>> ermi_score(None, [1, 0, 1, 0], sensitive_features=["a", "a", "b", "b"])
    0.0
    """
    proba, blocks, codes, n_groups, cons, n_blocks = _blocks(
        y_true, y_pred, y_proba, sensitive_features, labels, constraint,
        opportunity_class, weighting,
    )
    return constrained_ermi(proba, blocks, codes, n_groups, cons, n_blocks=n_blocks)


@redacting_errors
def renyi_correlation(
    y_true,
    y_pred=None,
    *,
    y_proba=None,
    sensitive_features,
    constraint="demographic_parity",
    opportunity_class=None,
    labels=None,
):
    """Rényi (Hirschfeld-Gebelein-Rényi) maximal correlation of predictions and groups.

    The largest correlation between any function of the prediction and any
    function of the group: the second singular value of
    ``Q[j, r] = P(j, r) / sqrt(P(j) P(r))``. When the prediction or the group
    is binary it equals ``sqrt(ermi_score)``. For ``"equalized_odds"`` it is
    the largest conditional correlation over the true labels.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        True labels, of one type and none missing (needed for the
        label-conditional constraints; demographic parity ignores them).
    y_pred : array-like of shape (n_samples,), default=None
        Hard predictions. Give this or ``y_proba``.
    y_proba : array-like of shape (n_samples, n_classes), default=None
        Soft predictions, columns ordered as ``labels``: finite,
        non-negative, each row summing to 1 (within a relative ``1e-6``),
        else ``ValueError``.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
        Group membership.
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}, \
            default="demographic_parity"
        Unconditional, worst label, or within ``opportunity_class``.
    opportunity_class : label, default=None
        Class conditioned on for equal opportunity.
    labels : array-like, default=None
        The label set, in the order of the columns of ``y_proba``; every
        value of ``y_pred``, and of ``y_true`` for a label-conditional
        constraint, must be in it. Default: the sorted labels seen; with
        ``y_proba`` and a label-conditional constraint, the sorted labels of
        ``y_true``, which must then show one label per column of ``y_proba``
        (otherwise pass ``labels``).

    Returns
    -------
    correlation : float
        In ``[0, 1]``.

    Examples
    --------
    >>> from sklearn_dpfair.metrics import renyi_correlation
    >>> renyi_correlation(None, [1, 1, 0, 0], sensitive_features=[0, 0, 1, 1])
    1.0
    """
    proba, blocks, codes, n_groups, _, n_blocks = _blocks(
        y_true, y_pred, y_proba, sensitive_features, labels, constraint,
        opportunity_class, "label_prior",
    )
    # Demographic parity: one block holding every row.
    values = [
        renyi_of_joint(joint_table(proba[blocks == b], codes[blocks == b], n_groups))
        for b in range(n_blocks)
    ]
    # No label at all (empty input) leaves no block: nothing depends on the
    # group, 0.0, as ermi_score and every other constraint report then.
    return float(max(values, default=0.0))
