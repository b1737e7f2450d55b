# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Category values as dictionary keys: missing values as one category.

``None``, ``float('nan')``, ``numpy.nan`` and ``pandas.NA`` are all one
category, :data:`MISSING` (scikit-learn's encoders treat ``None`` and NaN as
categories too). Categories are ordered canonically, by type then value,
with the missing category last, so that their order depends on the set only.
"""

import numbers

import numpy as np

__all__ = [
    "MISSING",
    "canonical_order",
    "check_one_kind",
    "column_keys",
    "key_of",
    "public_value",
]


class _Missing:
    """The missing-value category (a singleton, sorted last)."""

    def __repr__(self):
        return "MISSING"

    def __reduce__(self):
        return "MISSING"


MISSING = _Missing()


def key_of(value):
    """Dictionary key of a category value.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._categories import MISSING, key_of
    >>> key_of(np.nan) is MISSING and key_of(None) is MISSING
    True
    >>> key_of(np.int64(3))
    3
    """
    if value is None:
        return MISSING
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = value.item() if isinstance(value, np.generic) else value
        if value != value:  # noqa: PLR0124 (NaN, of any Real type)
            return MISSING
        return value
    if isinstance(value, np.generic):
        return value.item()
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return MISSING
    except ImportError:  # pragma: no cover
        pass
    return value


def column_keys(column):
    """The keys of a column's values, as a list."""
    return [key_of(v) for v in column]


def check_one_kind(keys):
    """Refuse a column that mixes numbers with strings (or other objects).

    scikit-learn's encoders refuse such a column too (its values do not
    sort); here its names would collide (``1`` and ``'1'`` are both
    ``x0_1``). The message names the types, never a value.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._categories import check_one_kind
    >>> check_one_kind([1, 2.5, True])
    >>> check_one_kind([1, "1"])
    Traceback (most recent call last):
    ...
    TypeError: X: a column mixes values of types ['int', 'str']; ...
    """
    kinds = {
        "number" if isinstance(k, numbers.Real) else type(k).__name__
        for k in keys
        if k is not MISSING
    }
    if len(kinds) > 1:
        types = sorted({type(k).__name__ for k in keys if k is not MISSING})
        raise TypeError(
            f"X: a column mixes values of types {types}; an encoder needs each "
            "column uniformly strings or numbers (as scikit-learn's encoders "
            "do). Convert the column, e.g. with astype(str)."
        )


def canonical_order(keys):
    """Sort category keys by type name then value, the missing one last.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._categories import MISSING, canonical_order
    >>> canonical_order(["b", MISSING, "a"])
    ['a', 'b', MISSING]
    """
    keys = list(keys)
    present = [k for k in keys if k is not MISSING]
    numeric = sorted(k for k in present if isinstance(k, numbers.Real))
    other = sorted(
        (k for k in present if not isinstance(k, numbers.Real)),
        key=lambda k: (type(k).__name__, str(k)),
    )
    return numeric + other + ([MISSING] if len(present) < len(keys) else [])


def public_value(keys):
    """The categories as an array, as scikit-learn's ``categories_`` holds them.

    Numbers give a float or int array (missing as NaN); anything else an
    object array (missing as NaN too, as scikit-learn shows it).

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._categories import MISSING, public_value
    >>> public_value([1, 2, MISSING])
    array([ 1.,  2., nan])
    """
    values = [np.nan if k is MISSING else k for k in keys]
    if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        return np.asarray(values)
    return np.asarray(values, dtype=object)
