# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The checks of a pipeline's raw ``X`` that its parts would make, made first.

Each part of a pipeline validates its own input when its fit runs: a
``DPStandardScaler`` refuses a string or an infinite value, a final
``DPLogisticRegression`` a missing one. After an earlier step's release, or
an earlier block's in a ``ColumnTransformer``, that refusal would come once
budget is spent, and whether the fit fails would depend on one record after
a release. So before the first step reads a row, the pipeline follows each
input column through the public structure (the blocks' column selections,
the parts' classes, tags and public parameters) to the parts its values may
reach, and refuses, on every row, what the strictest of them refuses
after a private part has fitted (the parts that read the rows before any
release refuse them themselves):

* a value that is not a number, in a column that reaches a part taking
  numbers only unchanged (directly, or through passthroughs);
* an infinite value, in a numeric column that reaches a part refusing it;
* a missing value (NaN), in a column that reaches a part refusing it
  without an imputer or a one-hot encoder on the way: a transformer that
  keeps NaN (``DPStandardScaler``, ``DPQuantileTransformer``,
  ``OrdinalEncoder``) hands it on to the next part;
* a column mixing strings with numbers (or other objects), in a column a
  ``DPOneHotEncoder`` discovers the categories of unchanged (its names
  would collide, and it refuses the column), and a value that cannot be a
  category (a list), in a column a ``DPOneHotEncoder`` with declared
  categories reads unchanged;
* a value outside the declared ``categories`` of a scikit-learn
  ``OneHotEncoder`` or ``OrdinalEncoder`` with ``handle_unknown="error"``
  that reads the column unchanged from the input (not from the joined
  output of an earlier ``ColumnTransformer``, whose common dtype the
  categories would be compared in), at a known position.

Where the route of a column is not decided by the public structure (a
selection by name or by a callable after a step other than a passthrough,
a part whose output width only its fit tells), the column is taken to
reach every part that any of the columns concerned may reach: the
strictest rule applies. The output of a ``FunctionTransformer``'s ``func``
is new values: what it makes of those it reads (a missing value filled or
kept, a string parsed, ``np.log`` of 0) is checked by the next part only,
outside the guarantee.
"""

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder
from sklearn.utils import get_tags
from sklearn.utils.validation import check_array

from .._base import PrivateEstimatorMixin
from ..preprocessing._categories import check_one_kind, column_keys
from ..preprocessing._encoder import _column_values
from ..utils._array_api import host_input
from ..utils._sklearn_compat import safe_indexing
from ._steps import (
    _UNRESOLVED,
    _column_indices,
    _free_width,
    _is_empty_selection,
    _private_width,
    _resolved_selector,
    is_passthrough,
)

__all__ = ["check_raw_input"]

# Transformers that keep a missing value in place, column by column, and
# output as many columns as they read.
_COLUMNWISE_NAN = ("DPStandardScaler", "DPQuantileTransformer")


def _union(flow):
    """Every input column ``flow`` may carry, wherever it is."""
    if isinstance(flow, tuple):
        return frozenset().union(*flow)
    return flow


def _spread(columns, width):
    """``columns`` possibly in each of ``width`` outputs (None: width unknown).

    A flow is a tuple (one set of input columns per position) where the
    positions are known, else one set: its columns may be anywhere.
    """
    return (columns,) * width if width is not None else columns


def _select(flow, indices):
    """The part of ``flow`` a selection of ``indices`` (None: unknown) reads."""
    if indices is None or not isinstance(flow, tuple):
        return _union(flow)
    return tuple(flow[i] for i in indices)


def _concat(flows):
    """The flow of side-by-side outputs (a ColumnTransformer, a FeatureUnion)."""
    if all(isinstance(flow, tuple) for flow in flows):
        return sum(flows, ())
    return frozenset().union(*(_union(flow) for flow in flows))


def _width(flow):
    return len(flow) if isinstance(flow, tuple) else None


def _clears_missing(est):
    """Whether ``est`` outputs no missing value whatever it reads.

    An imputer fills them; a one-hot encoder encodes one as a category, as
    zeros, or refuses it; an ``OrdinalEncoder`` whose
    ``encoded_missing_value`` is a number writes that number.
    """
    if isinstance(est, OrdinalEncoder):
        missing = est.encoded_missing_value
        return missing == missing  # NaN (the default) hands it on
    return "Imputer" in type(est).__name__ or (
        isinstance(est, OneHotEncoder) or type(est).__name__ == "DPOneHotEncoder"
    )


def _reads_infinity(est):
    """Whether a categorical part takes an infinite number as a value.

    ``DPOneHotEncoder`` reads its columns as they are (infinity is a
    category); scikit-learn's encoders refuse it in a float column.
    """
    return type(est).__name__ == "DPOneHotEncoder"


def _refuses_unknown(est):
    """Whether a scikit-learn encoder refuses a value outside its categories."""
    return (
        isinstance(est, (OneHotEncoder, OrdinalEncoder))
        and not isinstance(est.categories, str)
        and est.handle_unknown == "error"
    )


def _probe(est, position):
    """A one-column clone of the encoder with its ``position``'s categories."""
    probe = clone(est).set_params(categories=[est.categories[position]])
    if isinstance(probe, OneHotEncoder):
        probe.set_params(drop=None)  # a per-column drop needs every column
    return probe


def _within_declared(est, position, values):
    """Whether the encoder's fit takes ``values`` at input ``position``.

    The one-column probe is fitted on them: its fit releases nothing and
    compares the values with the categories exactly as the encoder will
    (dtypes, missing values). scikit-learn's encoders warn nothing about
    the values of a fit with declared categories (it raises), so the probe
    runs without a ``warnings.catch_warnings`` block, which would swap the
    process-wide filters under concurrent fits.
    """
    try:
        _probe(est, position).fit(values)
    except ValueError:
        return False
    return True


def _refused_categories(est, position):
    """The encoder's refusal of its own declared categories, or None.

    Fitted on the categories alone (public): an encoder that refuses them
    (unsorted numeric categories, say) refuses any data, and its message,
    about its parameters only, says why better than "outside the declared
    categories" would.
    """
    categories = np.asarray(est.categories[position]).reshape(-1, 1)
    try:
        _probe(est, position).fit(categories)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def _steps_of(est):
    """The steps of a ``Pipeline`` or ``PrivatePipeline``, else None."""
    # Imported here: the pipeline module imports this one.
    from ._pipeline import PrivatePipeline

    if isinstance(est, (Pipeline, PrivatePipeline)):
        return est.steps
    return None


def _join(path, name):
    return f"{path}__{name}" if path else name


class _Reach:
    """For each input column, the first part that refuses each kind of value.

    ``numbers``: a part that takes numbers only reads it unchanged;
    ``finite``: a part refusing infinity may read its infinite values;
    ``float_finite``: as ``finite``, for a part that refuses infinity in a
    float column only (scikit-learn's encoders); ``nan``: a part refusing
    NaN may read its missing values.
    """

    def __init__(self):
        self.numbers = {}
        self.finite = {}
        self.float_finite = {}
        self.nan = {}
        self.one_kind = {}
        self.hashable = {}
        # Every (part, input position) reading a column unchanged whose
        # declared categories it checks the column's values against.
        self.declared = {}
        # The columns a numeric part reads unchanged, before or after a
        # release: it parses a string ("nan", "inf") to the float it writes,
        # and a part that keeps NaN hands a parsed NaN on. A categorical
        # part (an OrdinalEncoder) reads "nan" as a category instead.
        self.parsed = set()
        # Whether a private part fits before the part visited (the parts
        # are visited in the order the fit runs them): a part that reads
        # the rows before any release refuses them itself, in time.
        self.released = False
        # Whether the part visited reads its columns from the input itself,
        # in the input's dtypes: a ColumnTransformer's or a FeatureUnion's
        # output joins its blocks into one array, whose dtype (the blocks'
        # common type) an encoder's declared categories are then compared in.
        self.direct = True

    def _add(self, rule, columns, path, est):
        if not self.released:
            return
        for column in sorted(columns):
            rule.setdefault(column, (path, est))

    def visit(self, path, est, raw, nan, names):
        """The flows out of ``est``, its rules recorded.

        ``raw``: the input columns whose values each input position holds
        unchanged; ``nan``: those whose missing (or, through a
        ``FunctionTransformer``'s func, infinite) values it may hold, a
        superset of ``raw``. ``names``: the public schema, for the
        selections of the first step only.
        """
        if is_passthrough(est):
            return raw, nan
        if isinstance(est, str):  # "drop"
            return (), ()
        steps = _steps_of(est)
        if steps is not None:
            for name, step in steps:
                raw, nan = self.visit(_join(path, name), step, raw, nan, names)
                if not is_passthrough(step):
                    # The schema is the input's, as walk_steps reads it.
                    names = None
            return raw, nan
        if isinstance(est, ColumnTransformer):
            return self._columns(path, est, raw, nan, names)
        if isinstance(est, FeatureUnion):
            direct, outs = self.direct, []
            for name, part in est.transformer_list:
                if isinstance(part, str) and part == "drop":
                    continue
                self.direct = direct
                outs.append(self.visit(_join(path, name), part, raw, nan, names))
            self.direct = False  # the parts' outputs, joined
            return _concat([r for r, _ in outs]), _concat([n for _, n in outs])
        return self._leaf(path, est, raw, nan)

    def _columns(self, path, ct, raw, nan, names):
        n_in = _width(raw)
        used, known = set(), n_in is not None
        outs = []
        direct = self.direct
        for block, sub, key in ct.transformers:
            try:
                key = _resolved_selector(key, names)
            except ValueError:  # refused by the plan's walk before this
                key = _UNRESOLVED
            if _is_empty_selection(key, None):
                # scikit-learn skips the block (a public selection).
                continue
            cols = _column_indices(key, n_in, names)
            if cols is None:
                known = False
            else:
                used.update(cols)
            if isinstance(sub, str) and sub == "drop":
                continue
            reads = _select(raw, cols), _select(nan, cols)
            self.direct = direct
            outs.append(self.visit(_join(path, block), sub, *reads, None))
        remainder = ct.remainder
        if not (isinstance(remainder, str) and remainder == "drop"):
            rest = [j for j in range(n_in) if j not in used] if known else None
            if rest != []:
                self.direct = direct
                outs.append(
                    self.visit(
                        _join(path, "remainder"),
                        remainder,
                        _select(raw, rest),
                        _select(nan, rest),
                        None,
                    )
                )
        self.direct = False  # the blocks' outputs, joined
        return _concat([r for r, _ in outs]), _concat([n for _, n in outs])

    def _leaf(self, path, est, raw, nan):
        n_in = _width(raw)
        if isinstance(est, FunctionTransformer):
            if est.validate:
                # check_array's defaults: numbers, finite, no NaN.
                self._add(self.numbers, _union(raw), path, est)
                self._add(self.finite, _union(nan), path, est)
                self._add(self.nan, _union(nan), path, est)
                if est.func is None:
                    return _spread(frozenset(), n_in), _spread(frozenset(), n_in)
                return frozenset(), frozenset()
            if est.func is None:
                return raw, nan
            # Its func reads anything, and what it returns is new values
            # (a func commonly fills or maps missing ones: fillna, a lookup),
            # checked by the next part only, outside the guarantee.
            return frozenset(), frozenset()
        if (
            self.released
            and self.direct
            and _refuses_unknown(est)
            and isinstance(raw, tuple)
            and len(raw) == len(est.categories)
        ):
            for position, columns in enumerate(raw):
                for column in columns:
                    readers = self.declared.setdefault(column, [])
                    readers.append((path, est, position))
        if type(est).__name__ == "DPOneHotEncoder":
            if _discovers(est):
                # Its categories are discovered from the values as they are.
                self._add(self.one_kind, _union(raw), path, est)
            else:
                # It looks its declared categories up by the values' keys.
                self._add(self.hashable, _union(raw), path, est)
        tags = get_tags(est).input_tags
        if tags.string or tags.categorical:
            if not _reads_infinity(est):
                self._add(self.float_finite, _union(nan), path, est)
        else:
            self.parsed.update(_union(raw))
            self._add(self.numbers, _union(raw), path, est)
            self._add(self.finite, _union(nan), path, est)
        if not tags.allow_nan:
            self._add(self.nan, _union(nan), path, est)
        if isinstance(est, PrivateEstimatorMixin):
            width = _private_width(est, n_in)
            self.released = True
        else:
            width = _free_width(est, n_in)
        nothing = _spread(frozenset(), width)
        if _clears_missing(est) or not tags.allow_nan:
            return nothing, nothing
        columnwise = type(est).__name__ in _COLUMNWISE_NAN or isinstance(
            est, OrdinalEncoder
        )
        if columnwise and isinstance(nan, tuple) and width == n_in:
            return nothing, nan
        return nothing, _spread(_union(nan), width)

    # -- the checks on the rows -----------------------------------------------

    def check(self, X):
        """Refuse what a part would refuse, on every row of ``X``."""
        X = host_input(X)
        if not (hasattr(X, "columns") or hasattr(X, "shape")):
            # A list of rows, as the parts' check_array reads it.
            X = np.asarray(X, dtype=object)
        numbers = sorted(self.numbers)
        if numbers:
            values = self._numbers(X, numbers)
            for rule, test, refusal in (
                (self.finite, np.isinf, _infinite),
                (self.nan, np.isnan, _missing),
            ):
                hit = _first_hit(values, numbers, rule, test)
                if hit is not None:
                    raise ValueError(refusal(_label(X, hit), *rule[hit]))
        others = set(self.finite) | set(self.float_finite) | set(self.nan)
        for column in sorted(others.difference(numbers)):
            values = _dense(safe_indexing(X, [column], axis=1))
            # A column of numbers written as strings ("1.5", "nan", "inf")
            # is read as floats by the numeric parts (check_array), which
            # hand a parsed NaN on: its values are checked as they read them.
            parsed = _parsed_floats(values) if column in self.parsed else None
            if parsed is not None and column in self.finite:
                tested = parsed
            else:
                tested = values
            infinite = tested.dtype.kind in "fc" and np.isinf(tested).any()
            rule = self.finite if column in self.finite else self.float_finite
            if infinite and column in rule:
                raise ValueError(_infinite(_label(X, column), *rule[column]))
            missing = _any_missing(values) or (
                parsed is not None and bool(np.isnan(parsed).any())
            )
            if column in self.nan and missing:
                raise ValueError(_missing(_label(X, column), *self.nan[column]))
        for column in sorted(self.one_kind):
            if _refused_keys(X, column, check_one_kind):
                raise TypeError(_mixed(_label(X, column), *self.one_kind[column]))
        for column in sorted(self.hashable):
            if _refused_keys(X, column):
                raise TypeError(
                    _unhashable(_label(X, column), *self.hashable[column])
                )
        for column in sorted(self.declared):
            values = safe_indexing(X, [column], axis=1)
            for path, est, position in self.declared[column]:
                if _within_declared(est, position, values):
                    continue
                problem = _refused_categories(est, position)
                if problem is not None:
                    raise ValueError(
                        f"{_part(path, est)} refuses its declared categories: "
                        f"{problem}"
                    )
                raise ValueError(_undeclared(_label(X, column), path, est))

    def _numbers(self, X, columns):
        """The ``columns`` of ``X`` as float64, as the parts convert them."""
        try:
            return _as_floats(safe_indexing(X, columns, axis=1))
        except (TypeError, ValueError):
            pass
        for column in columns:
            # The conversion's message quotes the value: not shown, and
            # raised outside its handler, so not attached as __context__.
            if _parsed_floats(safe_indexing(X, [column], axis=1)) is None:
                raise ValueError(
                    _not_a_number(_label(X, column), *self.numbers[column])
                )
        # Columns that convert one by one but not together (pandas'
        # mixed dtypes): the parts read them as their blocks select them.
        return np.column_stack(
            [_dense(_as_floats(safe_indexing(X, [c], axis=1))) for c in columns]
        )


def _discovers(encoder):
    """Whether a ``DPOneHotEncoder`` discovers categories (``"auto"``)."""
    return isinstance(encoder.categories, str) and encoder.categories == "auto"


#: What pandas' ``infer_dtype`` (skipping missing values) says of a column
#: holding one kind of value in the encoder's sense (numbers and bools are
#: one kind): only another column is read value by value. A column of
#: Timestamps and ``datetime.date`` is "date" to pandas, and two kinds to
#: the encoder.
_ONE_KIND_DTYPES = frozenset({
    "string", "bytes", "integer", "floating", "mixed-integer-float", "decimal",
    "complex", "boolean", "empty",
})


def _object_values(X, column):
    """A column's values as the encoder reads them, or None if of one kind.

    None for a numeric column, a sparse ``X``, and a column pandas reads as
    one kind (:data:`_ONE_KIND_DTYPES`); a categorical column is read by its
    categories.
    """
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        series = X.iloc[:, column]
        if series.dtype.kind in "biufc":
            return None
        kinds = (
            series.cat.categories
            if isinstance(series.dtype, pd.CategoricalDtype)
            else series
        )
        if pd.api.types.infer_dtype(kinds, skipna=True) in _ONE_KIND_DTYPES:
            return None
        return _column_values(series)
    if sp.issparse(X):
        return None
    values = np.asarray(X)[:, column]
    if values.dtype.kind != "O" or (
        pd.api.types.infer_dtype(values, skipna=True) in _ONE_KIND_DTYPES
    ):
        return None
    return values


def _refused_keys(X, column, check=None):
    """Whether the encoder refuses a column's values as category keys.

    Not hashable (a list), or refused by ``check`` of the keys
    (:func:`~sklearn_dpfair.preprocessing._categories.check_one_kind`: two
    kinds of values).
    """
    values = _object_values(X, column)
    if values is None:
        return False
    try:
        keys = column_keys(values, none_apart=True)
        if check is not None:
            check(keys)
    except TypeError:
        return True
    return False


def _as_floats(X):
    return check_array(
        X,
        accept_sparse=True,
        dtype=np.float64,
        ensure_all_finite=False,
        ensure_min_samples=0,
        ensure_min_features=0,
        input_name="X",
    )


def _parsed_floats(values):
    """``values`` as the float64 the numeric parts read, or None if they cannot."""
    try:
        return _dense(_as_floats(values))
    except (TypeError, ValueError):
        return None


def _dense(values):
    if sp.issparse(values):
        return values.toarray()
    return np.asarray(values)


def _any_missing(values):
    if values.dtype.kind in "fc":
        return bool(np.isnan(values).any())
    if values.dtype.kind == "O":
        # None, NaN and pandas' NA: what a func may read as NaN.
        return bool(np.asarray(pd.isna(values)).any())
    return False


def _first_hit(values, columns, rule, test):
    """The first of ``columns`` in ``rule`` whose values fail ``test``, or None."""
    if sp.issparse(values):
        coo = values.tocoo()
        hits = np.zeros(values.shape[1], dtype=bool)
        hits[coo.col[test(coo.data)]] = True
    else:
        hits = test(values).any(axis=0)
    for position, column in enumerate(columns):
        if hits[position] and column in rule:
            return column
    return None


def _label(X, column):
    """The public name of a column of ``X`` (its position without names)."""
    names = getattr(X, "columns", None)
    if names is not None and not sp.issparse(X):
        return f"column {list(names)[column]!r}"
    return f"column {column}"


def _part(path, est):
    return f"{path!r} ({type(est).__name__})"


def _not_a_number(label, path, est):
    return (
        f"Input X: could not convert a value of {label} to float (not shown: "
        "private values). "
        f"The column may reach {_part(path, est)}, which takes numbers "
        "only: encode it first (DPOneHotEncoder, or OneHotEncoder with "
        "declared categories), or drop it."
    )


def _infinite(label, path, est):
    return (
        "Input X contains infinity or a value too large for dtype('float64') "
        f"in {label}, which may reach {_part(path, est)}: it takes finite values "
        "only. Drop or clip those rows before the fit."
    )


def _mixed(label, path, est):
    return (
        f"X: {label} mixes values of different kinds (strings with numbers, "
        "or other objects of two types), and may reach "
        f"{_part(path, est)} unchanged, which discovers its categories: "
        "convert the column (e.g. with astype(str)) or declare its categories."
    )


def _unhashable(label, path, est):
    return (
        f"X: {label} holds a value that cannot be a category (a list or "
        f"another value that is not hashable; not shown), and may reach "
        f"{_part(path, est)}: convert the column (e.g. with astype(str))."
    )


def _undeclared(label, path, est):
    fix = (
        'handle_unknown="use_encoded_value"'
        if isinstance(est, OrdinalEncoder)
        else 'handle_unknown="ignore"'
    )
    return (
        f"X: {label} holds a value (not shown: private values) outside the "
        f"declared categories of {_part(path, est)}, which reads it unchanged "
        'and refuses it with handle_unknown="error": declare every category, '
        f"or pass {fix}."
    )


def _missing(label, path, est):
    return (
        f"Input X contains NaN in {label}, which may reach {_part(path, est)} "
        "with no imputer on the way, and "
        f"{type(est).__name__} does not accept missing values encoded as NaN. "
        "Impute them first (DPSimpleImputer), or drop those rows."
    )


def check_raw_input(X, n_features, steps, schema):
    """Refuse, before any step runs, an ``X`` a part of ``steps`` would refuse.

    Parameters
    ----------
    X : array-like, sparse matrix or DataFrame
        The fit's input.
    n_features : int
        Its number of columns.
    steps : list of (str, estimator)
        The fit's clones (callable selections pinned on the schema).
    schema : dict or None
        The public schema of ``X`` (``_column_schema``), for the first
        step's selections by name or dtype.

    Raises
    ------
    ValueError
        Naming the column (its name or position) and the part, never a
        value.
    """
    flow = tuple(frozenset((j,)) for j in range(n_features))
    reach = _Reach()
    raw, nan, names = flow, flow, schema
    for name, est in steps:
        raw, nan = reach.visit(name, est, raw, nan, names)
        if not is_passthrough(est):
            names = None
    reach.check(X)
