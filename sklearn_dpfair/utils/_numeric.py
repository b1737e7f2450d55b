# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Floating-point judgements shared by the exact (non-private) computations."""

import numpy as np

__all__ = ["SQRT_SMALLEST_NORMAL", "constant_columns", "power_of_two_magnitudes"]

#: The least float64 whose square is a normal number (about 1.49e-154): a
#: norm, spread or scale below it squares into the subnormals or to 0.
SQRT_SMALLEST_NORMAL = float(np.sqrt(np.finfo(np.float64).smallest_normal))


def constant_columns(var, mean, n_samples, *, one_pass=False):
    """Which columns' variances are zero within rounding.

    A constant column whose value is not a binary fraction (0.1, 0.3) has a
    computed mean off by a few ulps, so its two-pass variance is about
    ``1e-34``, not 0; dividing by its root would turn the column into
    rounding noise scaled by ``1e16``. The bound is scikit-learn's
    (``StandardScaler``; Chan, Golub and LeVeque, "Algorithms for computing
    the sample variance", 1983): the variance's rounding error is at most
    ``n eps var + (n eps mean)^2``. A variance from the one-pass formula
    ``E[x^2] - E[x]^2`` (sparse columns) also loses ``n eps mean^2``.

    Parameters
    ----------
    var, mean : ndarray of shape (n_features,)
        The columns' computed variances and means.
    n_samples : int or ndarray of shape (n_features,)
        Number of values each was computed from.
    one_pass : bool, default=False
        Whether ``var`` came from the one-pass formula.

    Returns
    -------
    constant : ndarray of bool, shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._numeric import constant_columns
    >>> X = np.array([[0.1, 1e5 + 1e-3], [0.1, 1e5 - 1e-3], [0.1, 1e5]])
    >>> float(X[:, 0].var()) > 0
    True
    >>> constant_columns(X.var(axis=0), X.mean(axis=0), 3)
    array([ True, False])
    """
    eps = np.finfo(np.float64).eps
    var = np.asarray(var, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    bound = n_samples * eps * var + np.square(n_samples * mean * eps)
    if one_pass:
        bound = bound + n_samples * eps * np.square(mean)
    return var <= bound


def power_of_two_magnitudes(largest):
    """The power of two that brings each column's largest ``|x|`` into ``[0.5, 1)``.

    Dividing by a power of two is exact, so moments computed on the scaled
    columns round as the raw ones would, short of overflow: scaled, every
    value lies in ``(-1, 1)`` and every centred square in ``[0, 4)``, where
    the raw squares of a spread beyond ``1e154`` overflow to ``inf`` (the
    scaled sum of squares of LAPACK's ``dnrm2``). Capped at ``2**1023``
    (float64's largest power of two): values near float64's largest then
    scale to under 2 (their centred squares to under 16).

    Parameters
    ----------
    largest : array-like of shape (n_features,)
        Each column's largest absolute value.

    Returns
    -------
    magnitude : ndarray of shape (n_features,)
        Powers of two; 1 for a column whose largest value is 0 or not
        finite (computed as given).

    Examples
    --------
    >>> from sklearn_dpfair.utils._numeric import power_of_two_magnitudes
    >>> power_of_two_magnitudes([0.0, 3.0, 4.0, 0.3])
    array([1. , 4. , 8. , 0.5])
    """
    _, exponent = np.frexp(np.asarray(largest, dtype=np.float64))
    # frexp gives (0, 0) for an all-zero column, and (inf or nan, 0) for a
    # non-finite one: magnitude 1, the column as given.
    return np.ldexp(1.0, np.minimum(exponent, np.finfo(np.float64).maxexp - 1))
