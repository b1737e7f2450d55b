# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""L-infinity demographic-parity violation (thesis eq. 6.2)."""

import numpy as np

from ..fairness._ermi import joint_table
from ..fairness._sensitive import encode_sensitive_features
from ..utils._redact import redacting_errors
from ..utils._sklearn_compat import check_sample_weight
from ._labels import check_label_column

__all__ = ["demographic_parity_linf"]


@redacting_errors
def demographic_parity_linf(y_true, y_pred, *, sensitive_features, sample_weight=None):
    """Largest deviation of a group's prediction rate from the overall rate.

    ``max_j max_r |P(Yhat = j | S = r) - P(Yhat = j)|`` over the predicted
    classes ``j`` and the groups ``r`` (rows with a missing group ignored).
    It is the L-infinity violation of the thesis (eq. 6.2); fairlearn's
    ``demographic_parity_difference`` is the between-groups version
    ``max_r - min_r`` of ``P(Yhat = 1 | S = r)``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Ignored; present for the scorer signature ``(y_true, y_pred)``.
    y_pred : array-like of shape (n_samples,)
        Predicted labels, of one type, none missing.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
        Group membership.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative row weights: the probabilities are those of the
        weighted rows. None weighs every row 1.

    Returns
    -------
    violation : float
        In ``[0, 1]``; 0 for independent predictions.

    Examples
    --------
    >>> from sklearn_dpfair.metrics import demographic_parity_linf
    >>> demographic_parity_linf(None, [1, 1, 0, 1], sensitive_features=[0, 0, 1, 1])
    0.25
    """
    y_pred = check_label_column(y_pred, "y_pred")
    labels, pred_index = np.unique(y_pred, return_inverse=True)
    enc = encode_sensitive_features(
        sensitive_features, n_samples=y_pred.shape[0], rows_of="y_pred"
    )
    onehot = np.zeros((y_pred.shape[0], labels.size))
    onehot[np.arange(y_pred.shape[0]), pred_index] = 1.0
    if sample_weight is not None:
        weight = check_sample_weight(sample_weight, onehot, ensure_non_negative=True)
        # Divided by the largest weight first (the probabilities are
        # unchanged): weights near 1e308 would overflow the total, and
        # subnormal ones would lose their digits in the products.
        largest = float(np.max(weight, initial=0.0))
        if largest > 0:
            weight = weight / largest
        onehot *= weight[:, None]
    joint = joint_table(onehot, enc.codes, enc.n_groups)  # (classes, groups)
    if sample_weight is not None and joint.sum() > 0:
        # joint_table divides by the number of rows; the law of the weighted
        # rows divides by their total weight.
        joint = joint / joint.sum()
    p_group = joint.sum(axis=0)
    p_pred = joint.sum(axis=1)
    seen = p_group > 0
    conditional = joint[:, seen] / p_group[seen]
    return float(np.max(np.abs(conditional - p_pred[:, None]), initial=0.0))
