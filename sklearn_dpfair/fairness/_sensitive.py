# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validate ``sensitive_features`` and encode them as integer group codes.

One place turns what users pass (fairlearn style: a 1-D or 2-D array, a list,
a Series or a DataFrame; several columns mean intersectional groups) into an
integer code per row, ``-1`` marking a missing value (``None`` or NaN, in
any column). Estimators and metrics never look at the raw values again.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..utils._array_api import _is_array_api_array, to_numpy

__all__ = ["SensitiveEncoding", "encode_sensitive_features"]

# Messages are constants so that tests match them exactly.
_WRONG_LENGTH = (
    "sensitive_features has {got} rows but {rows_of} has {expected}; pass one "
    "value (or one row of values) per sample."
)
# The values outside the declared groups are private: the message names the
# problem and the parameter, not the data.
_UNDECLARED = (
    "sensitive_features contains groups that are not in the declared groups "
    "(the values are not shown: they are private). Declare every possible "
    "group in groups, or drop the rows whose group is outside it."
)

# A cell holding a list, an array or a dict is refused without printing it.
_UNHASHABLE = (
    "sensitive_features contains a value that is not a group label: a list, "
    "an array, a dict or another unhashable value (the values are not shown: "
    "they are private). Pass one scalar label per row and column; several "
    "attributes go in several columns, not in one cell."
)


@dataclass(frozen=True)
class SensitiveEncoding:
    """Integer group codes of the rows, and the group labels they index.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Group index of every row in ``0 .. len(groups) - 1``; ``-1`` marks a
        row whose sensitive value is missing.
    groups : ndarray of shape (n_groups,)
        The group labels (tuples, as an object array, for several columns).
    declared : bool
        Whether ``groups`` was declared by the user (public) rather than read
        from the data.

    Examples
    --------
    >>> from sklearn_dpfair.fairness import encode_sensitive_features
    >>> enc = encode_sensitive_features(["a", "b", None, "a"])
    >>> enc.codes.tolist(), enc.groups.tolist(), enc.n_missing
    ([0, 1, -1, 0], ['a', 'b'], 1)
    """

    codes: np.ndarray
    groups: np.ndarray
    declared: bool = False

    @property
    def n_groups(self):
        """Number of groups."""
        return len(self.groups)

    @property
    def n_missing(self):
        """Number of rows with a missing sensitive value."""
        return int(np.count_nonzero(self.codes < 0))


def _as_frame(sensitive_features):
    """Return the sensitive features as a DataFrame of one or more columns."""
    if isinstance(sensitive_features, pd.DataFrame):
        return sensitive_features.reset_index(drop=True)
    if isinstance(sensitive_features, pd.Series):
        return sensitive_features.reset_index(drop=True).to_frame()
    if isinstance(sensitive_features, dict):
        return sensitive_columns_frame(sensitive_features)
    # An array-API array (a CUDA tensor, a tensor that requires grad) is
    # copied to the host explicitly; numpy's implicit conversion refuses both.
    # Lists keep their labels' types (a numeric copy would make "1" of 1).
    if _is_array_api_array(sensitive_features):
        sensitive_features = to_numpy(sensitive_features)
    arr = np.asarray(sensitive_features, dtype=object)
    if arr.ndim == 0:
        raise ValueError(
            "sensitive_features must be 1-D or 2-D (one value or one row of values "
            f"per sample); got a scalar of type {type(sensitive_features).__name__}."
        )
    if arr.ndim > 2:
        raise ValueError(
            f"sensitive_features must be 1-D or 2-D; got {arr.ndim} dimensions."
        )
    if arr.ndim == 1:
        arr = arr[:, None]
    return pd.DataFrame(arr)


def sensitive_columns_frame(columns):
    """A dict of columns as a DataFrame, each column read by position.

    As a Series or a DataFrame is (their index is dropped): pandas would
    align a dict of Series by their index labels, pairing the values of
    different rows (and sorting the union where the indexes differ), so
    that groups would be built from pairs no record holds.
    """
    values = {}
    for name, column in columns.items():
        if isinstance(column, pd.Series):
            column = column.reset_index(drop=True)
        elif isinstance(column, pd.DataFrame):
            raise ValueError(
                f"sensitive_features[{name!r}] is a DataFrame; a dict of "
                "sensitive features maps each name to one column."
            )
        elif isinstance(column, (list, tuple)) and column and all(
            isinstance(label, tuple) for label in column
        ):
            # Tuple labels, one per element (np.asarray would make a 2-d
            # array of equal-length tuples); other nested values (lists,
            # arrays) are no labels and are refused below as 2-d.
            labels = np.empty(len(column), dtype=object)
            for i, label in enumerate(column):
                labels[i] = label
            column = labels
        else:
            if _is_array_api_array(column):
                column = to_numpy(column)
            column = np.asarray(column, dtype=object)
            if column.ndim != 1:
                raise ValueError(
                    f"sensitive_features[{name!r}] must be 1-D (one value per "
                    f"sample); got {column.ndim} dimensions."
                )
        values[name] = column
    lengths = {len(column) for column in values.values()}
    if len(lengths) > 1:
        raise ValueError(
            "The columns of a dict of sensitive_features must have one value "
            f"per sample each; got lengths {sorted(lengths)}."
        )
    return pd.DataFrame(values)


def sensitive_features_shape(sensitive_features):
    """``(n_rows, n_columns)`` of ``sensitive_features``, None where unknown.

    Public shape information only, read as :func:`encode_sensitive_features`
    reads it, so that a caller can check it against the other arguments
    before any value is read. An input that function refuses (a scalar, a
    dict whose values are not columns, more than two dimensions, ragged
    rows) gives None for what it cannot tell, and is refused there. A
    string is one value, not a column of characters: its length is private.
    """
    if isinstance(sensitive_features, pd.DataFrame):
        return sensitive_features.shape
    if isinstance(sensitive_features, pd.Series):
        return len(sensitive_features), 1
    if isinstance(sensitive_features, dict):
        lengths = {
            len(column)
            if hasattr(column, "__len__") and not isinstance(column, (str, bytes))
            else None
            for column in sensitive_features.values()
        }
        n_rows = lengths.pop() if len(lengths) == 1 else None
        return n_rows, len(sensitive_features)
    if isinstance(sensitive_features, (str, bytes)):
        return None, None
    try:
        shape = np.shape(sensitive_features)
    except ValueError:  # ragged rows
        return None, None
    if len(shape) == 1:
        return shape[0], 1
    if len(shape) == 2:
        return shape
    return None, None


def has_columns(sensitive_features):
    """Whether ``sensitive_features`` is laid out in columns.

    A DataFrame, a dict of columns or a 2-D array: a group is then one value
    per column (:func:`sensitive_features_shape` counts one column for these
    and for a 1-D input alike). Public layout only, no value read.
    """
    if isinstance(sensitive_features, (pd.DataFrame, dict)):
        return True
    if isinstance(sensitive_features, (pd.Series, str, bytes)):
        return False
    try:
        return np.ndim(sensitive_features) == 2
    except ValueError:  # ragged rows
        return False


def _label(values):
    """Python scalar of a group label (numpy scalars become int/float/str)."""
    return values.item() if isinstance(values, np.generic) else values


def encode_sensitive_features(
    sensitive_features, *, n_samples=None, groups=None, rows_of="X"
):
    """Encode sensitive features as integer group codes.

    Several columns are combined into intersectional groups (one group per
    observed combination of values). A row with a missing value (``None``
    or NaN) in any column gets code ``-1``; callers decide whether that is
    allowed.

    Parameters
    ----------
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
        A list, numpy array, pandas Series or DataFrame, or a dict of columns.
    n_samples : int, default=None
        Expected number of rows (``X.shape[0]``); a mismatch raises
        ``ValueError``.
    groups : array-like, default=None
        Declared, public group set: labels for one column, tuples for several
        columns. Its order defines the codes, and groups absent from the data
        are kept. If None the groups are the observed values (or combinations),
        sorted when they are comparable.
    rows_of : str, default="X"
        Name of the argument whose rows ``n_samples`` counts, for the
        message of a mismatch (``"y_true"`` for a metric).

    Returns
    -------
    encoding : SensitiveEncoding
        Codes per row and the group labels.

    Raises
    ------
    ValueError
        If the length does not match ``n_samples``, the input has more than
        two dimensions, or a value is not in the declared ``groups``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_dpfair.fairness import encode_sensitive_features
    >>> sf = pd.DataFrame({"sex": ["F", "M", "F"], "race": ["w", "w", "b"]})
    >>> enc = encode_sensitive_features(sf)
    >>> enc.codes.tolist(), enc.groups.tolist()
    ([1, 2, 0], [('F', 'b'), ('F', 'w'), ('M', 'w')])
    """
    if _is_integer_column(sensitive_features):
        encoding = _encode_integer_column(
            sensitive_features, n_samples, groups, rows_of
        )
        if encoding is not None:
            return encoding
    frame = _as_frame(sensitive_features)
    if n_samples is not None and frame.shape[0] != n_samples:
        raise ValueError(
            _WRONG_LENGTH.format(
                got=frame.shape[0], rows_of=rows_of, expected=n_samples
            )
        )
    if frame.shape[1] == 0:
        raise ValueError("sensitive_features has no columns.")
    missing = frame.isna().any(axis=1).to_numpy()
    multi = frame.shape[1] > 1
    if multi:
        keys = pd.Series(list(frame.itertuples(index=False, name=None)), dtype=object)
    else:
        keys = frame.iloc[:, 0]
    keys = keys.astype(object).where(~missing, None)

    if groups is not None:
        declared = _declared_labels(groups, frame.shape[1])
        if not multi and has_columns(sensitive_features):
            _check_plain_labels(declared, groups)
        lookup = {g: i for i, g in enumerate(declared)}
        row_unique, uniques = _factorize(keys[~missing])
        unique_codes = [lookup.get(u, -1) for u in uniques]
        unknown = [u for u, c in zip(uniques, unique_codes) if c < 0]
        _check_declared(unknown)
        codes = np.full(frame.shape[0], -1, dtype=np.intp)
        codes[~missing] = np.asarray(unique_codes, dtype=np.intp)[row_unique]
        return _declared_encoding(codes, declared)

    row_unique, observed = _factorize(keys[~missing])
    uniques = observed
    try:
        uniques = sorted(observed)
    except TypeError:  # labels of mixed types keep their order of appearance
        pass
    lookup = {g: i for i, g in enumerate(uniques)}
    observed_codes = np.asarray([lookup[g] for g in observed], dtype=np.intp)
    codes = np.full(frame.shape[0], -1, dtype=np.intp)
    codes[~missing] = observed_codes[row_unique]
    labels = np.empty(len(uniques), dtype=object)
    labels[:] = uniques
    return SensitiveEncoding(codes=codes, groups=_compact(labels), declared=False)


def _is_integer_column(values):
    return (
        isinstance(values, np.ndarray)
        and values.ndim == 1
        and values.dtype.kind in "biu"
    )


def _encode_integer_column(values, n_samples, groups, rows_of="X"):
    """The encoding of a 1-D integer or boolean array, by ``np.unique``.

    No value can be missing, and ``np.unique`` gives the groups and codes
    of the general path without its Python object per row (dozens of bytes
    a row, more than a sparse ``X`` of one entry a row). Declared
    ``groups`` take this path when they are integers (or booleans) too;
    otherwise None is returned (the general path compares the labels).
    """
    if n_samples is not None and values.shape[0] != n_samples:
        raise ValueError(
            _WRONG_LENGTH.format(
                got=values.shape[0], rows_of=rows_of, expected=n_samples
            )
        )
    uniques = np.unique(values)
    if groups is None:
        labels = np.empty(uniques.size, dtype=object)
        labels[:] = uniques.tolist()
        return SensitiveEncoding(
            codes=np.searchsorted(uniques, values),
            groups=_compact(labels),
            declared=False,
        )
    declared = _declared_labels(groups, 1)
    table = np.asarray(declared)
    if not declared or table.ndim != 1 or table.dtype.kind not in "biu":
        return None
    known = np.isin(uniques, table)
    _check_declared(uniques[~known].tolist())
    sorter = np.argsort(table, kind="stable")
    return _declared_encoding(
        sorter[np.searchsorted(table, values, sorter=sorter)], declared
    )


def check_declared_groups(groups):
    """Validate a declared group set, from the parameter alone.

    The one check of ``groups`` that a fit (through
    :func:`encode_sensitive_features`) and a privacy plan (before any data
    is read) share, so that a plan is never made for groups its fit would
    refuse: at least one label, no missing label (``None``, NaN, ``pd.NA``
    or ``NaT``, in any column), and no label twice (a label of several
    columns, a list or tuple, compared as a tuple). A missing value is
    never a group: its rows are coded ``-1``, not as the declared label
    (:func:`encode_sensitive_features`), so a missing label would declare
    a group that can hold no row.

    Parameters
    ----------
    groups : array-like
        The declared groups: labels for one column, tuples (or lists) for
        several columns.

    Returns
    -------
    declared : list
        The labels, in their declared order (lists stay lists).

    Raises
    ------
    ValueError
        If ``groups`` is a string or a scalar, is empty, holds a missing
        label, or holds a label twice; the message names ``groups``.

    Examples
    --------
    >>> from sklearn_dpfair.fairness._sensitive import check_declared_groups
    >>> check_declared_groups(["a", "b"])
    ['a', 'b']
    >>> check_declared_groups([0, 0, 1])
    Traceback (most recent call last):
    ...
    ValueError: groups contains duplicate labels: [0, 0, 1].
    >>> check_declared_groups([None, 0, 1])
    Traceback (most recent call last):
    ...
    ValueError: groups contains a missing label (None or NaN): [None, 0, 1]. ...
    """
    if isinstance(groups, (set, frozenset, Mapping)):
        # Their order is the hash order, which varies between processes for
        # strings: the group indices, the fit's noise and model with them.
        raise ValueError(
            "groups must be an ordered sequence (a list, tuple or array) of "
            f"the declared group labels; got a {type(groups).__name__}, "
            "whose order is not defined."
        )
    if isinstance(groups, np.ndarray):
        declared = groups.tolist()  # a 0-d array gives its scalar
    elif isinstance(groups, (str, bytes)) or not hasattr(groups, "__iter__"):
        declared = None
    else:
        # A label of several columns given as an array is the list of its
        # values, as one given as a list.
        declared = [g.tolist() if isinstance(g, np.ndarray) else g for g in groups]
    if not isinstance(declared, list) or len(declared) == 0:
        raise ValueError(
            "groups must be a non-empty list of the declared group labels; "
            f"got {groups!r}."
        )
    if any(is_missing_label(g) for g in declared):
        raise ValueError(
            f"groups contains a missing label (None or NaN): {groups!r}. "
            "A missing sensitive value is not a group; declare the group "
            "labels only, and drop or impute the rows whose value is missing."
        )
    keys = [
        tuple(_key(v) for v in g) if isinstance(g, (list, tuple)) else _key(g)
        for g in declared
    ]
    try:
        distinct = len(set(keys))
    except TypeError:
        distinct = None
    if distinct is None:
        raise TypeError(
            "groups must hold labels (numbers, strings, or tuples of them, "
            f"one value per column); got {groups!r}."
        )
    if distinct != len(keys):
        raise ValueError(f"groups contains duplicate labels: {groups!r}.")
    return declared


def is_missing_label(label):
    """Whether a declared label, or a column of a tuple label, is missing.

    Missing as ``pd.isna`` reads a scalar, the test that codes a row ``-1``
    (``DataFrame.isna``): ``None``, NaN, ``pd.NA``, ``NaT``.
    """
    if isinstance(label, (list, tuple)):
        return any(is_missing_label(v) for v in label)
    try:
        missing = pd.isna(label)
    except (TypeError, ValueError):
        return False
    # An array-like label gives an array: it is not a missing scalar.
    return isinstance(missing, (bool, np.bool_)) and bool(missing)


def _declared_labels(groups, n_columns):
    """The declared groups as a list of labels (tuples for several columns)."""
    declared = check_declared_groups(groups)
    multi = n_columns > 1
    if multi:
        check_labels_per_column(declared, n_columns, groups)
    # A list is no hashable label: as a tuple it names the values of several
    # columns, or one value of a column of tuples.
    declared = [
        tuple(g) if multi or isinstance(g, list) else g for g in declared
    ]
    if len(set(declared)) != len(declared):
        raise ValueError(f"groups contains duplicate labels: {groups!r}.")
    return declared


def check_labels_per_column(declared, n_columns, groups):
    """Refuse declared labels that are not one value per column of several.

    With ``n_columns > 1`` columns of ``sensitive_features`` each declared
    label is a tuple (or list) of ``n_columns`` values; a string would be
    read as its characters and a plain label would match no row (every row
    then refused as an undeclared group, blaming the data). Groups and
    columns are public: refused naming ``groups``.

    Examples
    --------
    >>> from sklearn_dpfair.fairness._sensitive import check_labels_per_column
    >>> check_labels_per_column([("F", "w"), ("M", "b")], 2, None)
    >>> check_labels_per_column(["Fw", "Mb"], 2, ["Fw", "Mb"])
    Traceback (most recent call last):
    ...
    ValueError: groups must be tuples of 2 values, one per column of ...
    """
    if not all(
        isinstance(g, (tuple, list)) and len(g) == n_columns for g in declared
    ):
        raise ValueError(
            f"groups must be tuples of {n_columns} values, one per column "
            f"of sensitive_features (it has {n_columns} columns); got "
            f"{groups!r}."
        )


def _check_plain_labels(declared, groups):
    """Refuse tuple labels for ``sensitive_features`` laid out in one column.

    A one-column DataFrame (dict, 2-D array) holds plain labels: a tuple
    would match no row, and every row would be refused as an undeclared
    group. Groups and layout are public: refused naming ``groups``.
    """
    if any(isinstance(g, tuple) for g in declared):
        raise ValueError(
            "groups must be plain labels for sensitive_features of one "
            "column (tuples give one value per column of several); got "
            f"{groups!r}."
        )


def _check_declared(unknown):
    """Refuse observed groups (Python labels) outside the declared ones."""
    if len(unknown):
        raise ValueError(_UNDECLARED)


def _declared_encoding(codes, declared):
    labels = np.empty(len(declared), dtype=object)
    labels[:] = declared
    return SensitiveEncoding(codes=codes, groups=_compact(labels), declared=True)


def _factorize(keys):
    """Per-row index into the distinct keys, and those keys as Python labels.

    Factorizes first and converts only the distinct values (numpy scalars to
    Python, :func:`_key`): one conversion per group, not one per row.
    Values that compare equal (``1``, ``1.0``, ``np.int64(1)``) share a key,
    as they would in a dict.
    """
    try:
        row_unique, raw = pd.factorize(keys.to_numpy(dtype=object))
    except TypeError:  # a list, array or dict in a cell: no label hashes it
        raise ValueError(_UNHASHABLE) from None
    uniques, index = [], {}
    remap = np.empty(len(raw), dtype=np.intp)
    for i, value in enumerate(raw):
        key = _key(value)
        remap[i] = index.setdefault(key, len(uniques))
        if remap[i] == len(uniques):
            uniques.append(key)
    return remap[row_unique], uniques


def _key(value):
    """Hashable, comparable form of one label (numpy scalars to Python)."""
    if isinstance(value, tuple):
        return tuple(_label(v) for v in value)
    return _label(value)


def _compact(labels):
    """Store plain (non-tuple) labels with their natural numpy dtype.

    Only labels of one Python type are converted: numpy would turn
    ``["a", 1]`` into the strings ``["a", "1"]``, and the fitted ``groups_``
    would no longer equal the user's labels.
    """
    kinds = {type(label) for label in labels.tolist()}
    if labels.size and len(kinds) == 1 and tuple not in kinds:
        converted = np.asarray(labels.tolist())
        # Integers beyond int64 become float64 (2**63 + 1 as 2**63): kept
        # as objects, as labels of two types are.
        exact = converted.tolist() == labels.tolist()
        if converted.ndim == 1 and converted.dtype != object and exact:
            return converted
    return labels
