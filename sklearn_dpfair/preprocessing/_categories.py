# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Category values as dictionary keys: missing values as categories.

``float('nan')``, ``numpy.nan``, ``pandas.NA`` and ``pandas.NaT`` are all one
category, :data:`MISSING` (shown as NaN). :func:`key_of` reads ``None`` as
:data:`MISSING` too; an encoder's keys (:func:`column_keys` with
``none_apart=True``) keep it apart, as the category :data:`NONE`, as
scikit-learn's encoders keep ``None`` apart from NaN in an object array.
Categories are ordered canonically, by type then value, with ``None`` then
the missing category last, so that their order depends on the set only.

Values that compare equal are one category (a dictionary merges them), so
each key is a canonical representative of its values: an integral number
is an ``int`` (``1.0``, ``-0.0``, ``np.int8(1)`` and ``1`` are the keys
``1`` and ``0``), any other real a ``float``, and a bool a :class:`BoolKey`
(``True == 1`` in Python, but a bool is a category of its own). A
released category is written from its key and the column's dtype alone
(:func:`public_value`), never from the value of whichever row came first:
otherwise one record holding ``-0.0`` or ``1.0`` ahead of the others
would rename a category every other record holds (the representation would
be a release outside the mechanism).
"""

import datetime
import numbers
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal

import numpy as np

__all__ = [
    "MISSING",
    "NONE",
    "BoolKey",
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


class _NoneCategory:
    """The ``None`` category of an encoder (a singleton, sorted before MISSING)."""

    def __repr__(self):
        return "NONE"

    def __reduce__(self):
        return "NONE"


NONE = _NoneCategory()

# Integral Decimals below 10**_DECIMAL_DIGITS are written without exponent.
_DECIMAL_DIGITS = 28


class BoolKey:
    """The key of a bool category, unequal to the numbers 0 and 1.

    Python's ``True == 1`` (and equal hashes) would merge a bool with a
    number in a dictionary, and the merged category would be written as
    whichever came first; as a kind of its own it is never merged.
    """

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = bool(value)

    def __eq__(self, other):
        return isinstance(other, BoolKey) and other.value == self.value

    def __hash__(self):
        return hash((BoolKey, self.value))

    def __repr__(self):
        return repr(self.value)

    def __reduce__(self):
        return BoolKey, (self.value,)


def key_of(value):
    """Dictionary key of a category value: a canonical representative.

    Values that compare equal get the same key, written the same way, so
    the key (and what is released from it) never depends on which of
    them a row holds: an integral real is an ``int``, any other real a
    ``float``, a bool a :class:`BoolKey`, a missing value :data:`MISSING`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._categories import MISSING, key_of
    >>> key_of(np.nan) is MISSING and key_of(None) is MISSING
    True
    >>> key_of(np.int64(3)), key_of(-0.0), key_of(2.0), key_of(np.float32(0.5))
    (3, 0, 2, 0.5)
    >>> key_of(True), key_of(True) == key_of(1)
    (True, False)
    """
    if isinstance(value, (np.datetime64, datetime.datetime)):
        return _canonical_instant(value)
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return BoolKey(value)
    if isinstance(value, numbers.Real):
        if value != value:  # noqa: PLR0124 (NaN, of any Real type)
            return MISSING
        return _canonical_real(value)
    if isinstance(value, complex):
        if value != value:  # noqa: PLR0124 (a NaN part)
            return MISSING
        # 0j and complex(0, -0.0) are equal; adding +0.0 clears the sign.
        return complex(value.real + 0.0, value.imag + 0.0)
    if isinstance(value, Decimal):
        return _canonical_decimal(value)
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return MISSING
    except ImportError:  # pragma: no cover
        pass
    return value


def _canonical_instant(value):
    """One representative of the equal datetimes: a pandas Timestamp, in UTC if aware.

    A Python datetime, a numpy datetime64 and a pandas Timestamp of one
    instant compare equal, as do one instant's times in two zones: the key
    is written the same way whichever the first row held.
    """
    import pandas as pd

    stamp = pd.Timestamp(value)
    if stamp is pd.NaT:
        return MISSING
    return stamp.tz_convert("UTC") if stamp.tzinfo is not None else stamp


def _canonical_real(value):
    """One representative of the reals equal to ``value`` (not NaN, not bool)."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if not isinstance(value, float):
        # A Fraction (or another Real) equal to a float is that float: the
        # two are one dictionary key. One that no float equals keeps its
        # own (normalised) representation.
        try:
            as_float = float(value)
        except OverflowError:
            return value
        if as_float != value:
            return value
        value = as_float
    # -0.0 == 0.0 == 0 and 2.0 == 2: an integral float is its int (exact,
    # whatever its size); infinities and fractional floats are unique.
    return int(value) if value.is_integer() else value


def _canonical_decimal(value):
    """One representative of the Decimals equal to ``value``."""
    if value.is_nan():
        return MISSING
    if not value.is_finite():
        return value
    if value.is_zero():
        # Decimal('-0'), Decimal('0.00') and Decimal('0').
        return Decimal(0)
    # Trailing zeros removed, exactly (a context as precise as the value,
    # with any exponent, so that no value rounds or overflows):
    # Decimal('0.10') and Decimal('0.1'), Decimal('1.00') and Decimal('1').
    exact = Context(
        prec=max(len(value.as_tuple().digits), 1), Emax=MAX_EMAX, Emin=MIN_EMIN
    )
    value = value.normalize(context=exact)
    if value.as_tuple().exponent > 0 and value.adjusted() < _DECIMAL_DIGITS:
        # Decimal('1E+2') as Decimal('100'), for integers of ordinary size
        # (Decimal('1E+999999999') stays so, not a billion digits).
        value = value.quantize(Decimal(1), context=Context(prec=_DECIMAL_DIGITS + 1))
    return value


def column_keys(column, *, none_apart=False, name="X"):
    """The keys of a column's values, as a list.

    With ``none_apart``, ``None`` is the category :data:`NONE`, apart from
    NaN (:data:`MISSING`), as scikit-learn's encoders read an object array.
    A value that is not hashable (a list) is refused with a TypeError
    naming ``name`` and its type.
    """
    if none_apart:
        keys = [NONE if v is None else key_of(v) for v in column]
    else:
        keys = [key_of(v) for v in column]
    _check_hashable(keys, name)
    return keys


def _hashable(key):
    try:
        hash(key)
    except TypeError:
        return False
    return True


def _check_hashable(keys, name):
    """Refuse keys that cannot be categories: a list or dict in a cell.

    The categories are dictionary keys (as scikit-learn's encoders, which
    refuse such a column too); the message names the types, never a value.
    """
    try:
        for key in keys:
            hash(key)
    except TypeError:
        types = sorted({type(k).__name__ for k in keys if not _hashable(k)})
        raise TypeError(
            f"{name}: a column holds values of types {types}, which cannot be "
            "categories (they are not hashable); an encoder needs each cell "
            "to be a string, a number, a bool or another hashable value. "
            "Convert the column, e.g. with astype(str)."
        ) from None


def _absent(key):
    """Whether a key is a missing value (NaN or None), of no kind of its own."""
    return key is MISSING or key is NONE


def _is_number(key):
    """Whether a key is a number or a bool (one kind for :func:`check_one_kind`)."""
    return isinstance(key, (numbers.Real, BoolKey))


def _type_name(key):
    return "bool" if isinstance(key, BoolKey) else type(key).__name__


def check_one_kind(keys):
    """Refuse a column that mixes numbers with strings (or other objects).

    scikit-learn's encoders refuse such a column too (its values do not
    sort); here its names would collide (``1`` and ``'1'`` are both
    ``x0_1``). Bools count as numbers here (``True`` and ``'True'`` would
    collide), but are categories of their own, never merged with ``1`` or
    ``0``: a column of numbers and bools is accepted, its bools named
    ``True`` and ``False``. The message names the types, never a value.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._categories import check_one_kind, key_of
    >>> check_one_kind([key_of(v) for v in (1, 2.5, True)])
    >>> check_one_kind([1, "1"])
    Traceback (most recent call last):
    ...
    TypeError: X: a column mixes values of types ['int', 'str']; ...
    """
    kinds = {
        "number" if _is_number(k) else type(k).__name__ for k in keys if not _absent(k)
    }
    if len(kinds) > 1:
        types = sorted({_type_name(k) for k in keys if not _absent(k)})
        raise TypeError(
            f"X: a column mixes values of types {types}; an encoder needs each "
            "column uniformly strings or numbers (as scikit-learn's encoders "
            "do). Convert the column, e.g. with astype(str)."
        )


def canonical_order(keys):
    """Sort category keys: numbers, bools, others by type name then value, missing last.

    Numbers (Decimals among them) are sorted by value, the other keys by
    their text. ``None`` (:data:`NONE`) comes before NaN (:data:`MISSING`),
    last of all, as scikit-learn orders them.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._categories import (
    ...     MISSING, NONE, canonical_order)
    >>> canonical_order(["b", MISSING, "a", NONE])
    ['a', 'b', NONE, MISSING]
    """
    keys = list(keys)
    present = [k for k in keys if not _absent(k)]
    # Decimals are sorted by value with the numbers (Decimal('9') before
    # Decimal('10'), as scikit-learn sorts them), not as text.
    numeric = sorted(k for k in present if isinstance(k, (numbers.Real, Decimal)))
    flags = sorted(
        (k for k in present if isinstance(k, BoolKey)), key=lambda k: k.value
    )
    other = sorted(
        (k for k in present if not isinstance(k, (numbers.Real, Decimal, BoolKey))),
        key=lambda k: (type(k).__name__, str(k)),
    )
    absent = [k for k in (NONE, MISSING) if any(key is k for key in keys)]
    return numeric + flags + other + absent


def public_value(keys, dtype=None):
    """The categories as an array, as scikit-learn's ``categories_`` holds them.

    Written from the keys and the column's dtype only (both public once the
    keys are released). A float column gives an array of its own dtype
    (a float32 column's ``0.1`` is ``0.1`` in float32, as scikit-learn
    shows it, missing as NaN); an integer or bool column one of its dtype
    (float64 beside a missing value). Otherwise numbers give an int64
    array when all are ints that fit (an object array of them beside a
    missing value, NaN), else a float array (missing as NaN)
    when each is a float exactly, else an object array of the numbers
    themselves (no two keys written as one float); anything else an object
    array (missing as NaN too, and :data:`NONE` as ``None``, as
    scikit-learn shows them). No keys give an empty array of the column's
    dtype, or an object one without it.

    Parameters
    ----------
    keys : list
        Keys (:func:`key_of`) or declared values, in their order.
    dtype : numpy.dtype or None, default=None
        The column's dtype when it is numeric or bool (public schema), else
        None.

    Returns
    -------
    values : ndarray of shape (len(keys),)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._categories import MISSING, public_value
    >>> public_value([1, 2, MISSING])  # as scikit-learn, of an object column
    array([1, 2, nan], dtype=object)
    >>> public_value([1.5, 2, MISSING])
    array([1.5, 2. , nan])
    >>> public_value([0, 0.1], np.dtype(np.float32))
    array([0. , 0.1], dtype=float32)
    >>> public_value([0.5, 2**53, 2**53 + 1])  # no float holds 2**53 + 1
    array([0.5, 9007199254740992, 9007199254740993], dtype=object)
    >>> public_value([])  # nothing released in a column without a numeric dtype
    array([], dtype=object)
    >>> public_value([], np.dtype(np.int32))
    array([], dtype=int32)
    """
    if any(k is NONE for k in keys):
        # None is shown as None, in an object array (as scikit-learn does);
        # the other values as beside a missing value.
        shown = public_value([MISSING if k is NONE else k for k in keys], dtype)
        return np.asarray(
            [None if k is NONE else v for v, k in zip(shown.tolist(), keys)],
            dtype=object,
        )
    values = [
        np.nan if k is MISSING else (k.value if isinstance(k, BoolKey) else k)
        for k in keys
    ]
    present = [v for v, k in zip(values, keys) if k is not MISSING]
    missing = len(present) < len(values)
    if dtype is not None and all(isinstance(v, numbers.Real) for v in present):
        bools = all(isinstance(v, bool) for v in present)
        if dtype.kind == "f" or (missing and dtype.kind in "iu"):
            target = dtype if dtype.kind == "f" else np.dtype(np.float64)
            cast = np.asarray([float(v) for v in values], dtype=target)
            # Distinct keys stay distinct (a nullable Int64 column's 2**53
            # and 2**53 + 1 are one float64): else written as themselves.
            if len(set(cast[[k is not MISSING for k in keys]].tolist())) == len(
                present
            ):
                return cast
        elif not missing and (dtype.kind in "iu" or (dtype.kind == "b" and bools)):
            return np.asarray(values, dtype=dtype)
    # No key at all (nothing released, none declared) in a column without a
    # numeric dtype: an object array, as scikit-learn holds a string
    # column's categories (all() of nothing would call it an int64 one).
    if values and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values
    ):
        return _real_array(values)
    return np.asarray(values, dtype=object)


_INT64 = np.iinfo(np.int64)


def _exact_float(value):
    """Whether a real is a float exactly (its float cast changes nothing)."""
    try:
        return float(value) == value
    except OverflowError:
        return False


def _real_array(values):
    """Reals (NaN for the missing value) without a dtype of their own, as an array.

    An int64 array when all are ints that fit (an object array of them and
    NaN beside the missing value); else a float64 one when
    every value is a float exactly; else an object array of the values
    themselves, so that no two categories are written as one float
    (``2**53`` and ``2**53 + 1``) and none is rounded. A key beyond int64
    that a float equals (:func:`key_of` writes ``1e300`` as an int) is
    written as that float, as the float column it came from shows it.
    """
    values = [
        float(v)
        if isinstance(v, int) and not _INT64.min <= v <= _INT64.max and _exact_float(v)
        else v
        for v in values
    ]
    present = [v for v in values if v == v]  # noqa: PLR0124 (NaN)
    if all(isinstance(v, int) and _INT64.min <= v <= _INT64.max for v in present):
        if len(present) == len(values):
            return np.asarray(values, dtype=np.int64)
        # Ints beside NaN stay ints, in an object array, as scikit-learn
        # holds an object column's categories (named x0_1, not x0_1.0).
        return np.asarray(values, dtype=object)
    if all(_exact_float(v) or v != v for v in values):  # noqa: PLR0124 (NaN)
        return np.asarray([float(v) for v in values], dtype=np.float64)
    return np.asarray(values, dtype=object)
