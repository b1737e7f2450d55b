# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Floating-point judgements shared by the exact (non-private) computations."""

import sys
from numbers import Real

import numpy as np

__all__ = [
    "MAX_FLOAT64_ENTRIES",
    "SQRT_SMALLEST_NORMAL",
    "constant_columns",
    "power_of_two_magnitudes",
    "public_float",
]

#: The most float64 values one numpy array holds: numpy refuses an array
#: of more bytes than its index type (intp) counts ("array is too big",
#: "Maximum allowed size exceeded"). Public size parameters whose arrays
#: would exceed it are refused before any data are read.
MAX_FLOAT64_ENTRIES = np.iinfo(np.intp).max // np.dtype(np.float64).itemsize

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


def public_float(value, name):
    """A numeric public parameter as a Python float.

    The privacy core computes with ``float(epsilon)`` and ``float(delta)``,
    never with the value as given: a numpy scalar (``np.float32(1e-5)``)
    would keep its arithmetic in its own precision, and an int beyond the
    range of numpy's ufuncs (``10**30``) makes them raise. Only real
    numbers are read (``float("1.0")`` would parse a string).

    Parameters
    ----------
    value : int or float
        The validated parameter.
    name : str
        Its name, for the error.

    Returns
    -------
    value : float

    Raises
    ------
    TypeError
        If ``value`` is not a real number (a string, a bool).
    ValueError
        If ``value`` is an int beyond the largest float.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._numeric import public_float
    >>> public_float(10**30, "epsilon"), type(public_float(np.float32(0.5), "delta"))
    (1e+30, <class 'float'>)
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    try:
        return float(value)
    except OverflowError:
        hint = " (epsilon=np.inf for no privacy)" if name == "epsilon" else ""
        raise ValueError(
            f"{name} is beyond the largest float ({sys.float_info.max:.3g}); "
            f"pass a float{hint}."
        ) from None
