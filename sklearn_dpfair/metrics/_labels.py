# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validation of a column of labels (true or predicted) given to a metric."""

import numpy as np
import pandas as pd
from sklearn.utils.validation import column_or_1d

from ..utils._redact import redact_private_values

__all__ = ["check_label_column"]


def check_label_column(values, name):
    """``values`` as a 1-D array of orderable labels, or an error naming ``name``.

    The metrics evaluate labels that may be private: scikit-learn's
    ``column_or_1d`` prints a complex array whole, and sorting labels of
    several types (``None`` among integers, strings among numbers) raises
    numpy's bare ``TypeError``. Both are refused here naming the argument,
    the values not shown. A missing label (``None``, NaN, ``pd.NA``) is
    refused: it is no class, and counting it as one (or as no label) would
    change the rates.

    Parameters
    ----------
    values : array-like of shape (n_samples,) or (n_samples, 1)
        The labels.
    name : str
        The argument's name, for the messages.

    Returns
    -------
    column : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from sklearn_dpfair.metrics._labels import check_label_column
    >>> check_label_column([[1], [0]], "y_pred")
    array([1, 0])
    >>> check_label_column([1, None, 0], "y_pred")
    Traceback (most recent call last):
    ...
    ValueError: y_pred holds a missing label (None or NaN); ...
    """
    error = None
    try:
        column = column_or_1d(values)
    except (ValueError, TypeError) as exc:
        error = type(exc)(f"{name}: {redact_private_values(str(exc))}")
    if error is not None:
        # Raised outside the handler: chained, the original message (which
        # may print the values) would be shown with it.
        raise error
    if pd.isna(column).any():
        raise ValueError(
            f"{name} holds a missing label (None or NaN); a missing label is "
            "no class: drop those rows, or impute them before evaluating."
        )
    try:
        np.unique(column)
        orderable = True
    except TypeError:
        orderable = False
    if not orderable:
        raise TypeError(
            f"{name} holds labels of several types that cannot be ordered "
            "(strings and numbers, for example); pass labels of one type."
        )
    return column
