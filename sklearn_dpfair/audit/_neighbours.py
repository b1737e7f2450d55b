# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring datasets that differ in one canary record.

The audit fits the mechanism on both datasets many times. Which pair is built
must match the neighbouring relation the guarantee is stated for:

* ``"add_remove"``: ``D0 = D`` and ``D1 = D + canary``;
* ``"replace_one"``: ``D0 = D + replacement`` and ``D1 = D + canary``;
* ``"attribute"``: ``D0`` and ``D1`` both hold ``D + canary`` and differ
  only in the canary's value of one per-record fit argument (for instance
  its sensitive attribute), for attribute-level guarantees.
"""

import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..utils._validation import warn_at_caller

__all__ = ["STATUS_PARAMS", "Dataset", "Neighbours", "make_canary", "make_neighbours"]

#: Neighbouring relations :func:`make_neighbours` can build.
ADJACENCIES = ("add_remove", "replace_one", "attribute")


@dataclass(frozen=True)
class Dataset:
    """Training data of one world: ``X``, ``y`` and per-fit keyword arguments.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,) or None
        Targets.
    fit_params : dict
        Keyword arguments of ``fit`` (per-record ones have one entry per row).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import Dataset
    >>> Dataset(np.zeros((2, 1)), np.array([0, 1])).fit_params
    {}
    """

    X: object
    y: object
    fit_params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Neighbours:
    """Two neighbouring datasets and the canary that tells them apart.

    Parameters
    ----------
    without : Dataset
        World 0 (canary absent, replaced, or with its original attribute).
    with_canary : Dataset
        World 1 (canary present, or with its changed attribute).
    canary_X : ndarray of shape (1, n_features), DataFrame or sparse matrix
        The canary's features as world 1 stores them (what an auditor
        queries the model at): a one-row DataFrame with ``X``'s columns and
        dtypes when ``X`` is a DataFrame, a one-row CSR matrix (or array)
        when ``X`` is sparse.
    canary_y : object
        The canary's target.
    adjacency : {"add_remove", "replace_one", "attribute"}
        The neighbouring relation of the pair.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import make_neighbours
    >>> nb = make_neighbours(np.zeros((3, 2)), np.array([0, 1, 0]),
    ...                      canary=(np.ones(2), 1))
    >>> nb.with_canary.X.shape
    (4, 2)
    """

    without: Dataset
    with_canary: Dataset
    canary_X: np.ndarray
    canary_y: object
    adjacency: str


#: Per-record fit arguments that are public *status* of a record rather than
#: protected content: whether it is public (semi-DP, Lowy et al. 2023,
#: "Optimal differentially private learning with public data", where
#: neighbours differ in one *private* record) and which silo holds it
#: (silo membership is public metadata of a federated fit). Two neighbours
#: must agree on them, so a replaced record shares the canary's.
STATUS_PARAMS = ("public_mask", "silos")

# Kinds numpy may promote between without changing any value's meaning:
# numbers among numbers, text among text. ``np.result_type`` would also turn
# an integer column into strings to hold a string label, which changes
# every other record.
_NUMERIC_KINDS = "biufc"


class _Sentinel:
    """A private marker no caller's value can equal (None is a value here)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return self._name


#: No record in this world (the world without the canary under add/remove).
#: A record's value None is a value: a missing group, a record with no target.
_ABSENT = _Sentinel("<no record>")
#: ``alternative_value`` not given (None is a legitimate alternative: the
#: canary's group changed to missing).
_NOT_GIVEN = _Sentinel("<not given>")


def _n_rows(a):
    return a.shape[0] if hasattr(a, "shape") else len(a)


def _at(a, i):
    """Entry ``i`` of a per-record array (numpy or pandas)."""
    return a.iloc[i] if hasattr(a, "iloc") else np.asarray(a)[i]


def _missing(u):
    if u is None:
        return True
    try:
        return bool(u != u)  # noqa: PLR0124 (NaN and NaT differ from themselves)
    except TypeError:
        return True  # pandas.NA, whose comparisons are themselves missing
    except ValueError:
        return False  # an array held as one value


def _same(x, y):
    """Whether two values of one record are equal (a missing value equals one)."""
    xa, ya = np.asarray(x, dtype=object), np.asarray(y, dtype=object)
    if xa.shape != ya.shape:
        return False
    for u, v in zip(xa.ravel(), ya.ravel(), strict=True):
        if _missing(u) and _missing(v):
            continue
        # NumPy 2 compares a Python number with a numpy one in the numpy
        # one's dtype (NEP 50), so np.float32(0.1) == 0.1 holds; compare
        # the numpy one's exact value instead.
        if isinstance(u, np.generic) and isinstance(v, (int, float, complex)):
            u = u.item()
        elif isinstance(v, np.generic) and isinstance(u, (int, float, complex)):
            v = v.item()
        try:
            if not bool(u == v):
                return False
        except (TypeError, ValueError):
            return False
    return True


def _exact(values, dtype):
    """Whether casting ``values`` (an ndarray) to ``dtype`` keeps every value."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cast = values.astype(dtype)
    except (TypeError, ValueError, OverflowError):
        return False
    return _same(cast, values)


def _common_dtype(base, rows, what):
    """The dtype of ``base`` if it holds every row exactly, else a promotion.

    A silent cast would make the canary another record than the one asked
    for (a label ``"maybe"`` stored as ``"may"``, a weight 0.5 as 0), so the
    audit would test a different pair of neighbours than it reports.
    """
    dtype = base.dtype
    promoted_by = None
    for row in rows:
        if dtype == object or _exact(row, dtype):
            continue
        new = row.dtype
        if (dtype.kind in _NUMERIC_KINDS and new.kind in _NUMERIC_KINDS) or (
            dtype.kind == new.kind and dtype.kind in "US"
        ):
            promoted = np.result_type(dtype, new)
            if _exact(row, promoted):
                dtype = promoted
                if promoted_by is None:
                    promoted_by = row
                continue
        raise ValueError(
            f"The value {row.ravel().tolist()!r} given for {what} does not fit its "
            f"dtype {base.dtype}: storing it would change it, and no dtype of the "
            "same kind holds both it and the other records. Convert "
            f"{what} to a dtype that holds it (for instance object)."
        )
    if dtype != base.dtype and base.dtype.kind in "iu":
        # Integers beyond 2**53 lose digits as floats.
        back = base.astype(dtype).astype(base.dtype)
        if not np.array_equal(back, base):
            raise ValueError(
                f"{what} holds integers that {dtype} cannot represent exactly, "
                f"which the canary's value requires; convert {what} yourself."
            )
    if dtype != base.dtype and base.dtype.kind == "f":
        _warn_promoted(what, promoted_by.ravel().tolist(), base.dtype, dtype)
    return dtype


def _warn_promoted(what, value, old, new):
    """Say that a float column's dtype changed in both worlds.

    The audit then fits the mechanism on ``new`` data, not on the ``old``
    data it was asked about (a float32 fit is another computation than a
    float64 one), which the caller should know.
    """
    warn_at_caller(
        f"The value {value!r} given for {what} is not representable in its dtype "
        f"{old}: {what} is promoted from {old} to {new} in both worlds, so the "
        f"audit fits on {new} data. Give a value {old} holds (make_canary "
        "returns one) to audit the fit on the data's own dtype.",
        UserWarning,
    )


def _extend_numpy(a, records, what):
    base = np.asarray(a)
    rows = [
        _ABSENT
        if r is _ABSENT
        else np.asarray(r, dtype=object if base.dtype == object else None).reshape(
            (1,) + base.shape[1:]
        )
        for r in records
    ]
    dtype = _common_dtype(base, [r for r in rows if r is not _ABSENT], what)
    out = []
    for row in rows:
        if row is _ABSENT:
            out.append(a if dtype == base.dtype else base.astype(dtype))
        else:
            out.append(
                np.concatenate([base.astype(dtype, copy=False), row.astype(dtype)])
            )
    return out


def _extend_sparse(a, records, what):
    """:func:`_extend_numpy` for a sparse ``X``: the worlds stay sparse.

    The dtype check runs on the stored values (an implicit zero fits every
    numeric dtype); each world keeps ``a``'s class and format.
    """
    base = a.tocsr()
    rows = [
        _ABSENT if r is _ABSENT else np.asarray(r).reshape(1, a.shape[1])
        for r in records
    ]
    dtype = _common_dtype(base.data, [r for r in rows if r is not _ABSENT], what)
    out = []
    for row in rows:
        if row is _ABSENT:
            out.append(a if dtype == a.dtype else a.astype(dtype))
        else:
            stacked = sp.vstack([base.astype(dtype), type(base)(row.astype(dtype))])
            out.append(stacked.asformat(a.format))
    return out


def _pandas_cell(column, value, what):
    """``value`` as a one-row Series, in ``column``'s dtype when that holds it."""
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        # A missing value fits every categorical column.
        if _missing(value) or any(_same(value, c) for c in dtype.categories):
            return pd.Series([value], dtype=dtype)
        # Not a category: pandas stores the column as plain values.
        return pd.Series([value])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cell = pd.Series([value]).astype(dtype)
        if _same(cell.iloc[0], value):
            return cell
    except (TypeError, ValueError, OverflowError):
        pass
    return pd.Series([value])


def _field(record, frame, j):
    """Column ``j`` of ``frame``'s value in one record.

    A record read from the frame itself (a replacement copied from row
    ``i``) is a Series labelled by the frame's columns: it is read by column
    name, as is any Series with those labels; a list or array by position.
    """
    if hasattr(record, "iloc"):
        if set(record.index) == set(frame.columns):
            return record[frame.columns[j]]
        return record.iloc[j]
    return record[j]


def _extend_pandas(a, records, what):
    import pandas as pd

    frame = a.ndim == 2
    columns = [a.iloc[:, j] for j in range(a.shape[1])] if frame else [a]
    # extended[j][w]: column j of world w.
    extended = []
    for j, column in enumerate(columns):
        label = f"{what} column {a.columns[j]!r}" if frame else what
        cells = [
            _ABSENT
            if r is _ABSENT
            else _pandas_cell(column, _field(r, a, j) if frame else r, label)
            for r in records
        ]
        # One dtype for every world (pandas' own promotion of all the rows),
        # so that the worlds differ in the appended record only.
        common = pd.concat(
            [column, *[c for c in cells if c is not _ABSENT]], ignore_index=True
        ).dtype
        if common != column.dtype and getattr(column.dtype, "kind", None) == "f":
            given = [c for c in cells if c is not _ABSENT]
            cell = next((c for c in given if c.dtype != column.dtype), given[0])
            _warn_promoted(label, cell.tolist(), column.dtype, common)
        worlds = []
        for r, cell in zip(records, cells, strict=True):
            if cell is _ABSENT:
                worlds.append(
                    column if column.dtype == common else column.astype(common)
                )
                continue
            s = pd.concat([column, cell], ignore_index=True)
            if s.dtype != common:
                s = s.astype(common)
            if not _same(s.iloc[-1], _field(r, a, j) if frame else r):
                raise ValueError(
                    f"The value {cell.iloc[0]!r} given for {label} changes when "
                    f"stored in its dtype {column.dtype}; convert {label} to a "
                    "dtype that holds it."
                )
            worlds.append(s)
        extended.append(worlds)
    out = []
    for w, record in enumerate(records):
        parts = [worlds[w] for worlds in extended]
        if record is _ABSENT and all(
            p is c for p, c in zip(parts, columns, strict=True)
        ):
            out.append(a)
        elif frame:
            world = pd.concat(parts, axis=1, keys=range(len(parts)))
            world.columns = a.columns
            out.append(world)
        else:
            out.append(parts[0].rename(a.name))
    return out


def _extend(a, records, what):
    """One copy of ``a`` per world, each with that world's record appended.

    A record ``_ABSENT`` leaves ``a`` as it is (the world without the canary
    under add/remove); a record None is a value (a missing group or target).
    Every copy has the same dtype (per column for a DataFrame):
    ``a``'s own when it holds each appended value exactly, else a promotion
    that does; a value no promotion holds raises.
    """
    if hasattr(a, "iloc"):
        return _extend_pandas(a, records, what)
    if sp.issparse(a):
        return _extend_sparse(a, records, what)
    return _extend_numpy(a, records, what)


def _is_per_record(value, n):
    return (
        not isinstance(value, (str, bytes, dict))
        and hasattr(value, "__len__")
        and _n_rows(value) == n
    )


def _named_values(row, X, name, of="X"):
    """A Series or one-row DataFrame's values in the order of ``X``'s columns.

    Read by name, not by position: a canary ``{"age": 1000, "income": 5}``
    given for columns ``["income", "age"]`` is the record it names, not
    ``income=1000``. ``of`` names ``X`` in the messages (a DataFrame fit
    parameter's columns are matched alike).
    """
    if row.ndim == 2 and row.shape[0] != 1:
        raise ValueError(
            f"{name} must be one record: a DataFrame of one row, got {row.shape[0]}."
        )
    labels = row.columns if row.ndim == 2 else row.index
    if not hasattr(X, "columns"):
        # No names to match: the columns of an array are positions.
        return list(row.iloc[0]) if row.ndim == 2 else list(row)
    given, expected = set(labels), set(X.columns)
    missing = [c for c in X.columns if c not in given]
    extra = [c for c in labels if c not in expected]
    repeated = len(labels) != len(given)
    if missing or extra or repeated:
        raise ValueError(
            f"{name} must name each column of {of} once: missing {missing}, not "
            f"columns of {of} {extra}"
            + (", repeated names" if repeated else "")
            + f". Give a Series indexed by {of}'s columns, or a one-row DataFrame "
            "with them, or a list in their order."
        )
    ordered = row.reindex(columns=X.columns) if row.ndim == 2 else row[X.columns]
    return list(ordered.iloc[0]) if row.ndim == 2 else list(ordered)


def _mapping_as_series(row):
    """A mapping as a Series indexed by its keys, each value as given.

    ``object`` dtype: a number stays the number given and a string a string
    (no common dtype is forced on the record, as for a list).
    """
    import pandas as pd

    return pd.Series(list(row.values()), index=list(row.keys()), dtype=object)


def _record_values(row, X, name="canary"):
    """One record's features: a flat list (DataFrame ``X``) or 1-D array.

    A mapping names its columns: it is read by name, like a Series, for a
    DataFrame ``X`` and refused for an ``X`` without column names.
    """
    if isinstance(row, Mapping):
        if not hasattr(X, "columns"):
            raise TypeError(
                f"{name} is a mapping, but X has no column names to read it by: "
                "give the record as a list or array in X's column order."
            )
        row = _mapping_as_series(row)
    if hasattr(row, "iloc"):
        values = _named_values(row, X, name)
    elif sp.issparse(row):
        values = row.toarray().reshape(-1)
    elif hasattr(X, "iloc"):
        # Each value keeps its own type: a string for a text column, a
        # number for a numeric one (no common dtype is forced on the row).
        values = list(np.asarray(row, dtype=object).reshape(-1))
    else:
        values = np.asarray(row).reshape(-1)
    if len(values) != np.shape(X)[1]:
        raise ValueError(
            f"The canary has {len(values)} features, X has {np.shape(X)[1]}."
        )
    return values


def _record_param(value, fit_param, name, key):
    """One record's value of the per-record fit argument ``fit_param``.

    A mapping given for a DataFrame argument (``sensitive_features`` with
    columns ``sex`` and ``race``) is read by column name, like a Series:
    each column once, no other, and returned in the frame's column order.
    A mapping for a 2-D argument without column names is refused; other
    values are returned as given.
    """
    if not isinstance(value, Mapping):
        return value
    if hasattr(fit_param, "columns"):
        return _named_values(
            _mapping_as_series(value), fit_param, name, of=f"fit_params[{key!r}]"
        )
    try:
        two_d = sp.issparse(fit_param) or np.ndim(fit_param) == 2
    except ValueError:  # ragged nested lists: not a 2-D argument
        two_d = False
    if two_d:
        raise TypeError(
            f"{name} is a mapping, but fit_params[{key!r}] is 2-D without column "
            "names to read it by: give the record's row as a list or array in "
            f"the column order of fit_params[{key!r}]."
        )
    return value


def _record_params(params, fit_params, name):
    """:func:`_record_param` of each entry of ``params``, named ``name[key]``."""
    return {
        key: _record_param(value, fit_params[key], f"{name}[{key!r}]", key)
        for key, value in params.items()
    }


def _check_canary_private(canary_fit_params):
    """Refuse a canary marked public (``public_mask=True``).

    A semi-DP guarantee (Lowy et al. 2023) protects the private records
    given the public ones: nothing bounds what a public record moves, so a
    public canary may tell the worlds apart by design. Under "add_remove"
    the fits' numbers of public rows differ and the audit refuses the pair;
    under "replace_one" the record it replaces takes its status, the counts
    agree, and the audit would report a violation the claim never
    excluded.
    """
    value = canary_fit_params.get("public_mask")
    value = None if value is None else np.asarray(value)
    # A one-element [True] becomes the record's True as a scalar does.
    if value is not None and value.size == 1 and value.dtype == bool and value.item():
        raise ValueError(
            "canary_fit_params['public_mask'] is True: the canary must be a "
            "private record. The estimator's guarantee protects the private "
            "records given the public ones, so an audit of a public canary "
            "would report a violation the claim never excluded; give the "
            "canary public_mask=False."
        )


def _check_record_params(params, fit_params, per_record, name, who="canary"):
    """``params`` gives one value for each per-record fit parameter, and no other."""
    for key in params:
        if key not in fit_params:
            raise ValueError(
                f"{name}[{key!r}] is not a fit parameter: fit_params has no "
                f"{key!r}, so the value would be dropped. Pass {key!r} in fit_params "
                "with one value per record, or remove it (a misspelled name?)."
            )
        if key not in per_record:
            raise ValueError(
                f"{name}[{key!r}] is given, but fit_params[{key!r}] does not have "
                "one entry per record, so a single record has no value of its own; "
                f"remove it from {name}."
            )
    for key in per_record:
        if key not in params:
            raise ValueError(
                f"fit parameter {key!r} has one entry per record: give the "
                f"{who}'s value in {name}[{key!r}]."
            )


def _replacement_record(X, y, fit_params, per_record, canary_params, replacement):
    """The record the canary replaces under ``"replace_one"``.

    Its status (``STATUS_PARAMS``) must be the canary's: replacing a public
    record by a private one changes which rows are public, which semi-DP
    neighbours never do, and would compare the estimator against a claim
    that does not cover the pair.
    """
    status = [k for k in STATUS_PARAMS if k in per_record]
    n = _n_rows(X)
    if replacement is None or isinstance(replacement, (int, np.integer)):
        if replacement is None:
            index = next(
                (
                    i
                    for i in range(n)
                    if all(
                        _same(_at(fit_params[k], i), canary_params[k]) for k in status
                    )
                ),
                None,
            )
            if index is None:
                raise ValueError(
                    "No record has the canary's "
                    + " and ".join(f"{k}={canary_params[k]!r}" for k in status)
                    + ": the default replacement copies the first record that "
                    "does. Pass replacement=(X_row, y_value, fit_params_row)."
                )
        else:
            index = int(replacement)
            if not 0 <= index < n:
                raise ValueError(
                    f"replacement={replacement} is not a record index (0 to {n - 1})."
                )
        if hasattr(X, "iloc"):
            row = X.iloc[[index]]
        elif sp.issparse(X):
            row = X.tocsr()[[index]]
        else:
            row = np.asarray(X)[index]
        y_value = None if y is None else _at(y, index)
        params = {k: _at(fit_params[k], index) for k in per_record}
        what = f"replacement (record {index})"
    else:
        row, y_value, params = replacement
        params = dict(params or {})
        _check_record_params(
            params, fit_params, per_record, "replacement[2]", "replacement"
        )
        params = _record_params(params, fit_params, "replacement[2]")
        what = "replacement"
    for k in status:
        if not _same(params[k], canary_params[k]):
            raise ValueError(
                f"The {what} has {k}={params[k]!r}, the canary "
                f"{k}={canary_params[k]!r}: neighbours under 'replace_one' agree "
                f"on {k} (public status of a record), so replace a record with "
                f"the canary's {k}."
            )
    return _record_values(row, X, "replacement[0]"), y_value, params


def _worlds(X, y, fit_params, per_record, records):
    """The two Datasets, each ``X, y, fit_params`` plus its record (or not)."""
    xs = _extend(X, [_ABSENT if r is _ABSENT else r[0] for r in records], "X")
    ys = (
        [None, None]
        if y is None
        else _extend(y, [_ABSENT if r is _ABSENT else r[1] for r in records], "y")
    )
    params = [{}, {}]
    for name, value in fit_params.items():
        if name in per_record:
            values = _extend(
                value,
                [_ABSENT if r is _ABSENT else r[2][name] for r in records],
                f"fit_params[{name!r}]",
            )
        else:
            values = [value, value]
        for w in range(2):
            params[w][name] = values[w]
    return [Dataset(xs[w], ys[w], params[w]) for w in range(2)]


def make_neighbours(
    X,
    y,
    *,
    canary,
    adjacency="add_remove",
    fit_params=None,
    canary_fit_params=None,
    replacement=None,
    attribute=None,
    alternative_value=_NOT_GIVEN,
):
    """Build two neighbouring datasets that differ in one canary record.

    Each appended value is stored exactly as given: a column whose dtype
    cannot hold it (a longer string, a fraction in an integer column) is
    promoted in both worlds (numbers to a wider number type, text to a wider
    text type; a DataFrame column as pandas promotes it), and a value no
    such promotion holds raises.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The other records (numpy or pandas; a DataFrame may mix column types;
        a sparse ``X`` gives sparse worlds of its format).
    y : array-like of shape (n_samples,) or None
        Their targets.
    canary : tuple (canary_X, canary_y)
        The canary's features (one row: array-like in ``X``'s column order,
        or a Series, one-row DataFrame or dict, read by column name for a
        DataFrame ``X``: each of its columns once, no other; a dict for an
        ``X`` without column names raises a ``TypeError``) and target,
        e.g. from :func:`make_canary`.
    adjacency : {"add_remove", "replace_one", "attribute"}, default="add_remove"
        Neighbouring relation of the guarantee under audit.
    fit_params : dict, default=None
        Keyword arguments of ``fit``. Entries with one value per record (such
        as ``sensitive_features`` or ``public_mask``) get the canary's value
        appended; others are passed unchanged.
    canary_fit_params : dict, default=None
        The canary's value of each per-record fit parameter, and of nothing
        else (a name that is not a per-record entry of ``fit_params`` raises
        rather than being dropped). The value for a DataFrame parameter
        (``sensitive_features`` with several columns) is one row: a list in
        its column order, a Series labelled by its columns, or a dict read
        by column name (each column once, no other); a dict for a 2-D array
        raises a ``TypeError``. The canary must be a protected record: a
        canary with ``public_mask=True`` raises (give it
        ``public_mask=False``).
    replacement : int or tuple (X_row, y_value, fit_params_row), default=None
        For ``"replace_one"``: the record the canary replaces, or the index
        of a record to copy. Default: a copy of the first record with the
        canary's ``public_mask`` and ``silos`` (which rows are public and
        which silo holds each are public metadata that neighbours share);
        a replacement that differs from the canary there raises.
    attribute : str, default=None
        For ``"attribute"``: the per-record entry of ``fit_params`` whose
        canary value differs between the worlds; not one of
        ``STATUS_PARAMS`` (``public_mask``, ``silos``: public status that
        neighbours share, so changing it is refused).
    alternative_value : object
        For ``"attribute"`` (required there): the canary's value of
        ``attribute`` in world 1; it must differ from
        ``canary_fit_params[attribute]``. None is a value like any other (a
        group changed to missing, or from missing when the canary's is None).

    Returns
    -------
    neighbours : Neighbours
        ``without`` and ``with_canary`` datasets and the canary.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import make_neighbours
    >>> X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    >>> nb = make_neighbours(X, y, canary=(np.array([5.0, 0.0]), 1),
    ...                      adjacency="replace_one")
    >>> nb.without.X.shape, nb.with_canary.X.shape
    ((5, 2), (5, 2))
    """
    if adjacency not in ADJACENCIES:
        raise ValueError(f"adjacency must be one of {ADJACENCIES}, got {adjacency!r}.")
    if not isinstance(canary, (tuple, list)) or len(canary) != 2:
        raise TypeError(
            "canary must be a tuple (canary_X, canary_y), e.g. from make_canary; "
            f"got {type(canary).__name__}."
        )
    fit_params = dict(fit_params or {})
    canary_fit_params = dict(canary_fit_params or {})
    n = _n_rows(X)
    if y is not None and len(y) != n:
        # Each world would pair rows with the wrong targets, one past the
        # other after the canary is appended.
        raise ValueError(f"y has {len(y)} rows but X has {n}.")
    per_record = [k for k, v in fit_params.items() if _is_per_record(v, n)]
    _check_record_params(canary_fit_params, fit_params, per_record, "canary_fit_params")
    given_params = canary_fit_params
    canary_fit_params = _record_params(
        canary_fit_params, fit_params, "canary_fit_params"
    )
    _check_canary_private(canary_fit_params)
    canary_X, canary_y = canary
    canary_record = (
        _record_values(canary_X, X, "canary[0]"), canary_y, canary_fit_params
    )
    if adjacency == "add_remove":
        records = [_ABSENT, canary_record]
    elif adjacency == "replace_one":
        records = [
            _replacement_record(
                X, y, fit_params, per_record, canary_fit_params, replacement
            ),
            canary_record,
        ]
    else:
        if attribute is None or attribute not in per_record:
            raise ValueError(
                "adjacency='attribute' needs attribute=<name of a per-record entry "
                f"of fit_params> (got attribute={attribute!r}; per-record entries: "
                f"{per_record}), the canary's value in canary_fit_params and "
                "alternative_value: otherwise the two worlds are the same dataset."
            )
        if attribute in STATUS_PARAMS:
            # Neighbours differ in one record's protected content; whether
            # it is public and which silo holds it are public status they
            # share, and a claim stated given them does not cover a record
            # moved between silos or made public.
            raise ValueError(
                f"attribute={attribute!r} is public status of a record "
                f"({', '.join(STATUS_PARAMS)}), which neighbours share: changing "
                "it is not a neighbouring pair under the estimator's guarantee. "
                "Choose a protected per-record entry (for instance "
                "sensitive_features)."
            )
        if alternative_value is _NOT_GIVEN:
            raise ValueError(
                "adjacency='attribute' needs alternative_value, the canary's value "
                f"of {attribute!r} in world 1 (None for a missing value): "
                "otherwise the two worlds are the same dataset."
            )
        alternative = _record_param(
            alternative_value, fit_params[attribute], "alternative_value", attribute
        )
        if _same(alternative, canary_fit_params[attribute]):
            raise ValueError(
                f"alternative_value={alternative_value!r} must be a value of "
                f"{attribute!r} other than the canary's "
                f"canary_fit_params[{attribute!r}]={given_params[attribute]!r}: "
                "otherwise the two worlds are the same dataset."
            )
        changed = {**canary_fit_params, attribute: alternative}
        records = [canary_record, (canary_record[0], canary_y, changed)]
    without, with_canary = _worlds(X, y, fit_params, per_record, records)
    # What an auditor queries the model at: the canary's row as world 1
    # stores it (X's columns and dtypes for a DataFrame).
    if hasattr(with_canary.X, "iloc"):
        query = with_canary.X.iloc[-1:].reset_index(drop=True)
    elif sp.issparse(with_canary.X):
        query = with_canary.X.tocsr()[[-1]]
    else:
        query = np.asarray(with_canary.X)[-1:]
    return Neighbours(without, with_canary, query, canary_y, adjacency)


def make_canary(X, y=None, *, scale=10.0, classifier=None):
    """A strong default canary: an outlier along the least-used feature.

    The canary's features are zero except for the feature with the smallest
    mean absolute value, set to ``scale`` times the largest absolute value in
    ``X`` (at least ``scale``). Its gradient then points where no other
    record pushes, so its influence on the model is easy to see; its norm
    exceeds typical clip norms, so clipping must limit it. For classifiers its
    label is the least frequent one, for regressors ``scale`` times the largest
    absolute target. This is a heuristic, not the optimal canary of every
    mechanism; an audit is only as strong as its canary and statistic.

    The values are in ``X``'s float dtype (``y``'s for a regressor's target)
    where that holds them, so :func:`make_neighbours` stores the canary
    without promoting the data: an audit of a float32 fit tests a float32
    fit.

    Auditing is an offline test on data the auditor holds, so reading ``X``
    here is not a privacy leak of any release.

    NaN entries are ignored (the means and the largest value are over the
    present values). Non-numeric columns, and a canary value that is not a
    finite float (``X`` or ``y`` holding inf, or ``scale`` times their
    largest value overflowing), raise a ``ValueError``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The other records (a sparse ``X`` is read from its stored values,
        never densified).
    y : array-like of shape (n_samples,), default=None
        Their targets.
    scale : float, default=10.0
        How far out the canary lies, relative to the data's range: a finite
        real number > 0 (a ``TypeError`` for another type, a ``ValueError``
        for zero, a negative or a non-finite value).
    classifier : bool, default=None
        Whether ``y`` holds labels; None guesses from its dtype (integers,
        booleans and strings are labels).

    Returns
    -------
    canary_X : ndarray of shape (n_features,)
        The canary's features, in ``X``'s float dtype (float64 for other
        dtypes).
    canary_y : object
        Its target.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import make_canary
    >>> X = np.array([[1.0, 0.0], [2.0, 0.1], [1.0, 0.0]])
    >>> make_canary(X, np.array([0, 0, 1]))
    (array([ 0., 20.]), np.int64(1))
    """
    scale = _check_scale(scale)
    given = X
    if sp.issparse(X):
        # Sparse X: the statistics from the stored values (an implicit
        # zero is a present value 0), without densifying X.
        X, n_features = _numeric_sparse(X), X.shape[1]
        feature = _least_used_sparse_feature(X)
        stored = X.data.astype(float)
        given_dtype = column = X.dtype
    else:
        X = _numeric_features(X)
        n_features = X.shape[1]
        feature = _least_used_feature(X)
        stored = X
        given_dtype = np.asarray(given).dtype
        # The canary's one nonzero value, rounded to its column's float
        # dtype (X's, or a DataFrame column's), so that storing it changes
        # no dtype.
        if hasattr(given, "iloc") and getattr(given, "ndim", 1) == 2:
            column = given.iloc[:, feature].dtype
        else:
            column = given_dtype
    value = _in_float_dtype(_outlier_value(stored, scale, "X"), column)
    row_dtype = _float_dtype(given_dtype)
    if row_dtype is None or _rounded(value, row_dtype) is None:
        row_dtype = np.dtype(np.float64)  # not floats, or overflowing float16
    canary_X = np.zeros(n_features, dtype=row_dtype)
    canary_X[feature] = value
    if y is None:
        return canary_X, None
    y_dtype = getattr(y, "dtype", None)
    y = np.asarray(y)
    if classifier is None:
        classifier = y.dtype.kind in "biuOUS"
    if classifier:
        labels, counts = np.unique(y, return_counts=True)
        return canary_X, labels[int(np.argmin(counts))]
    target = _outlier_value(np.asarray(y, dtype=float), scale, "y")
    return canary_X, _in_float_dtype(target, y.dtype if y_dtype is None else y_dtype)


def _numeric_features(X):
    """``X`` as a float array, or a ValueError naming its non-numeric columns.

    The canary is a row of numbers (zeros and one outlier); a text or
    categorical column has no such value, so the caller builds that canary
    row itself.
    """
    if hasattr(X, "iloc") and getattr(X, "ndim", 1) == 2:
        import pandas as pd

        text = [
            c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c].dtype)
        ]
        if text:
            raise ValueError(
                f"make_canary needs numeric columns; X's columns {text} are not "
                "numeric. Build the canary row yourself (a Series indexed by X's "
                "columns) and pass it to make_neighbours."
            )
    try:
        if hasattr(X, "iloc") and getattr(X, "ndim", 1) == 2:
            # Nullable columns (Float64, Int64, boolean) mark a missing value
            # with pd.NA, which float() refuses; it is NaN here, ignored as
            # any missing entry is.
            values = X.to_numpy(dtype=float, na_value=np.nan)
        else:
            values = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        values = None
    if values is None:
        # Raised outside the handler: the conversion's message, quoting a
        # value, is not attached as __context__.
        raise ValueError(
            "make_canary needs numeric features; X holds values that are not "
            "numbers. Build the canary row yourself and pass it to make_neighbours."
        )
    if values.ndim != 2 or values.shape[1] == 0:
        raise ValueError(
            f"X must be 2-D with at least one column, got shape {values.shape}."
        )
    return values


def _numeric_sparse(X):
    """A sparse ``X`` as CSC with a numeric dtype (values as stored)."""
    if X.dtype.kind not in "biuf":
        raise ValueError(
            f"make_canary needs numeric features; the sparse X has dtype {X.dtype}. "
            "Build the canary row yourself and pass it to make_neighbours."
        )
    if X.ndim != 2 or X.shape[1] == 0:
        raise ValueError(
            f"X must be 2-D with at least one column, got shape {X.shape}."
        )
    # A copy: tocsc() returns a CSC X itself, whose storage sum_duplicates
    # would rewrite (the caller's matrix, and any array sharing its buffer).
    X = X.tocsc(copy=True)
    X.sum_duplicates()
    return X


def _least_used_sparse_feature(X):
    """:func:`_least_used_feature` of a CSC matrix, from its stored values.

    Every implicit zero is a present value; a stored NaN is missing.
    """
    values = X.data.astype(float)
    columns = np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))
    missing = np.isnan(values)
    counts = X.shape[0] - np.bincount(columns[missing], minlength=X.shape[1])
    with np.errstate(over="ignore"):
        sums = np.bincount(
            columns[~missing], np.abs(values[~missing]), minlength=X.shape[1]
        )
    return _least_used_column(sums, counts)


def _least_used_feature(X):
    """The column of smallest mean absolute value over its present (non-NaN) values.

    A column with no value at all is never chosen: nothing says what its
    canary value would mean to the estimator.
    """
    present = ~np.isnan(X)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.where(present, np.abs(X), 0.0).sum(axis=0)
    return _least_used_column(sums, present.sum(axis=0))


def _least_used_column(sums, counts):
    """Index of the smallest ``sums / counts`` among columns with ``counts > 0``."""
    if not np.any(counts):
        raise ValueError("make_canary needs a value in X: every entry is NaN.")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.inf)
    return int(np.argmin(means))


def _check_scale(scale):
    """``scale`` as a float, or an error naming it.

    Zero would make an all-zero canary (no outlier, nothing to audit), a
    negative value one on the other side of zero for ``X`` and ``y`` both,
    which is no longer "scale times the range": both are refused.
    """
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise TypeError(
            f"make_canary's scale must be a real number > 0, got "
            f"{type(scale).__name__}."
        )
    value = float(scale)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(
            f"make_canary's scale must be a finite real number > 0, got {scale!r}."
        )
    return value


def _outlier_value(values, scale, what):
    """``scale`` times the largest absolute non-NaN value (at least ``scale``).

    A value that is not a finite float (``values`` holds inf, or values so
    large that ``scale`` times them overflows) is refused: an infinite
    canary is no record an estimator can be fitted on.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        present = np.abs(values[~np.isnan(values)])
        largest = float(present.max()) if present.size else 0.0
        value = scale * max(1.0, largest)
    if not np.isfinite(value):
        raise ValueError(
            f"make_canary's value scale * max|{what}| is not a finite float "
            f"({what} holds inf, or values so large that scale={scale!r} times "
            "them overflows): pass a smaller scale, or build the canary yourself."
        )
    return value


def _float_dtype(dtype):
    """The numpy float dtype of a numpy or pandas (nullable) float dtype, or None."""
    dtype = getattr(dtype, "numpy_dtype", dtype)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return None
    return dtype if dtype.kind == "f" else None


def _rounded(value, dtype):
    """``value`` in the numpy float ``dtype``, or None where it overflows."""
    with np.errstate(over="ignore"):
        rounded = dtype.type(value)
    return rounded if np.isfinite(rounded) else None


def _in_float_dtype(value, dtype):
    """``value`` rounded to a float ``dtype`` that holds it finitely, else as is."""
    dtype = _float_dtype(dtype)
    rounded = None if dtype is None else _rounded(value, dtype)
    return value if rounded is None else rounded
