# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Which steps of a pipeline read the private rows, and how their outputs look.

A step is one of three kinds:

* **private**: a private estimator or transformer of this package, with a
  ``privacy_plan``; it is given a share of the pipeline's budget;
* **free**: a step whose fit reads no row (``"passthrough"``, a
  ``FunctionTransformer``, an encoder with declared categories, a
  ``SplineTransformer`` with declared knots, a ``PolynomialFeatures``), or a
  ``Pipeline`` / ``ColumnTransformer`` / ``FeatureUnion`` of free and private
  steps, whose private parts are budgeted one by one;
* anything else learns from the rows without a plan, and is refused with the
  name of its private replacement.

The walk also computes each private part's input width from public
information only (the number of columns, declared categories, knots and
bins, and the column selections of a ``ColumnTransformer``), or ``None``
when the width is only known after a fit (categories discovered privately),
and its input layout (dense or sparse) from the input's container and the
steps' public parameters (``sparse_output``, ``sparse_threshold``; a
``FunctionTransformer``'s ``func`` is taken to keep its input's layout, which
the pipeline checks before its final step reads a row), or ``None`` when
only a fit can tell. A ``ColumnTransformer`` is always taken to output a
dense array: scikit-learn would stack sparse blocks sparsely by the rows'
density, so the pipeline fits it with ``sparse_threshold=0``.
"""

from dataclasses import dataclass

import numpy as np
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    SplineTransformer,
)

from .._base import PrivateEstimatorMixin

__all__ = [
    "DP_REPLACEMENTS",
    "PrivateUnit",
    "composite_paths",
    "fitted_part",
    "is_passthrough",
    "pin_selections",
    "walk_steps",
]

#: The private replacement of each estimator that learns from the rows.
DP_REPLACEMENTS = {
    "StandardScaler": "sklearn_dpfair.preprocessing.DPStandardScaler",
    "MinMaxScaler": "sklearn_dpfair.preprocessing.DPStandardScaler (with public bounds)",
    "RobustScaler": "sklearn_dpfair.preprocessing.DPQuantileTransformer",
    "SimpleImputer": "sklearn_dpfair.preprocessing.DPSimpleImputer",
    "OneHotEncoder": (
        "sklearn_dpfair.preprocessing.DPOneHotEncoder, or OneHotEncoder with "
        "declared categories=[...]"
    ),
    "OrdinalEncoder": "OrdinalEncoder with declared categories=[...]",
    "QuantileTransformer": "sklearn_dpfair.preprocessing.DPQuantileTransformer",
    "KBinsDiscretizer": "sklearn_dpfair.preprocessing.DPKBinsDiscretizer",
    "SplineTransformer": (
        "sklearn_dpfair.preprocessing.DPSplineTransformer, or SplineTransformer "
        "with declared knots (an array)"
    ),
    "LogisticRegression": "sklearn_dpfair.linear_model.DPLogisticRegression",
    "FERMIClassifier": "sklearn_dpfair.linear_model.DPFERMIClassifier",
    "LinearRegression": "sklearn_dpfair.linear_model.SemiDPLinearRegression",
    "Ridge": "sklearn_dpfair.linear_model.SemiDPLinearRegression",
}


@dataclass
class PrivateUnit:
    """One private part of a pipeline: a step, or a block of a ColumnTransformer.

    Attributes
    ----------
    path : str
        Its address in the pipeline's parameters (``"scale"`` or
        ``"columns__num"``), the key of its budget share.
    estimator : estimator
        The (unfitted) part as the user gave it.
    n_features : int or None
        Its input width, from public information; None when only a fit
        (a private discovery upstream) can tell.
    final : bool
        Whether it is the pipeline's final estimator.
    sparse : bool or None
        Whether its input is a sparse matrix, from public information; None
        when only a fit upstream can tell.
    """

    path: str
    estimator: object
    n_features: int | None
    final: bool = False
    sparse: bool | None = False


def _refuse(path, estimator, why="learns from the private rows without a privacy plan"):
    name = type(estimator).__name__
    replacement = DP_REPLACEMENTS.get(name)
    hint = (
        f" Use {replacement} instead."
        if replacement
        else (
            " Replace it by a private estimator of sklearn_dpfair, or by a "
            "transformer whose parameters are all public."
        )
    )
    raise ValueError(
        f"Step {path!r} ({name}) {why}: fitting it would release statistics "
        f"of the private rows outside the pipeline's guarantee.{hint}"
    )


def _declared(categories):
    return not isinstance(categories, str)


def _encoder_is_free(encoder):
    # Infrequent-category grouping counts the rows, even with declared
    # categories.
    return (
        _declared(encoder.categories)
        and getattr(encoder, "min_frequency", None) is None
        and getattr(encoder, "max_categories", None) is None
    )


def _free_width(est, n_in):
    """Output width of a free leaf step (None: not computable before a fit)."""
    if isinstance(est, FunctionTransformer):
        return n_in if est.func is None else None
    if isinstance(est, OrdinalEncoder):
        return len(est.categories)
    if isinstance(est, OneHotEncoder):
        return sum(
            len(c) - _drops_one(est.drop, j, len(c))
            for j, c in enumerate(est.categories)
        )
    if isinstance(est, PolynomialFeatures):
        if n_in is None:
            return None
        if isinstance(est.degree, (int, np.integer)):
            min_degree, max_degree = 0, int(est.degree)
        elif isinstance(est.degree, tuple) and len(est.degree) == 2:
            min_degree, max_degree = est.degree
        else:
            # A degree its fit refuses, before it reads a row.
            return None
        return PolynomialFeatures._num_combinations(
            n_in, min_degree, max_degree, est.interaction_only, est.include_bias
        )
    if isinstance(est, SplineTransformer):
        n_knots = np.asarray(est.knots).shape[0]
        n_splines = (
            n_knots - 1 if est.extrapolation == "periodic" else n_knots + est.degree - 1
        )
        if n_in is None:
            return None
        return n_in * (n_splines - (not est.include_bias))
    return None


def _drops_one(drop, column, n_categories):
    """Whether a ``OneHotEncoder`` with declared categories drops one of a column's."""
    if drop is None:
        return False
    if isinstance(drop, str):
        return drop == "first" or (drop == "if_binary" and n_categories == 2)
    # One category (or None) per column.
    return drop[column] is not None


def _free_layout(est, sparse_in):
    """Whether a free leaf step outputs a sparse matrix (None: only its fit tells)."""
    if isinstance(est, FunctionTransformer):
        # A func is public code, taken to return the layout it is given.
        return sparse_in
    if isinstance(est, PolynomialFeatures):
        # scikit-learn keeps a sparse input sparse and a dense one dense.
        return sparse_in
    if isinstance(est, (OneHotEncoder, SplineTransformer)):
        return bool(est.sparse_output)
    # OrdinalEncoder
    return False


def _warns_on_unknown(encoder):
    """Whether a ``OneHotEncoder`` warns when it meets an undeclared category.

    scikit-learn warns (naming the columns) with ``handle_unknown="warn"``,
    and with ``"ignore"`` or ``"infrequent_if_exist"`` when ``drop`` is set:
    during the pipeline's fit that warning says whether a private row holds
    a value outside the declared categories.
    """
    if not isinstance(encoder, OneHotEncoder):
        return False
    if encoder.handle_unknown == "warn":
        return True
    return encoder.drop is not None and encoder.handle_unknown in (
        "ignore",
        "infrequent_if_exist",
    )


def _checks_its_inverse(transformer):
    # FunctionTransformer.fit applies func then inverse_func to a subsample
    # of the rows and warns when they disagree: a bit about private rows.
    return (
        transformer.check_inverse
        and transformer.func is not None
        and transformer.inverse_func is not None
    )


def _is_free_leaf(est):
    if isinstance(est, FunctionTransformer):
        return not _checks_its_inverse(est)
    if isinstance(est, (OneHotEncoder, OrdinalEncoder)):
        return _encoder_is_free(est) and not _warns_on_unknown(est)
    if isinstance(est, SplineTransformer):
        return not isinstance(est.knots, str)
    # Its fit reads the input's width only: its powers are fixed by degree,
    # interaction_only and include_bias.
    return isinstance(est, PolynomialFeatures)


def _free_leaf_refusal(path, est):
    if isinstance(est, FunctionTransformer):
        _refuse(
            path,
            est,
            "checks inverse_func against func on a subsample of the private "
            "rows and warns on a mismatch (check_inverse=True); pass "
            "check_inverse=False",
        )
    if _warns_on_unknown(est) and _encoder_is_free(est):
        given = f"handle_unknown={est.handle_unknown!r}" + (
            f" with drop={est.drop!r}" if est.drop is not None else ""
        )
        fix = (
            "Pass handle_unknown='ignore' or 'infrequent_if_exist' (an unknown "
            "value is encoded as zeros, without a warning)."
            if est.drop is None
            else "Set drop=None with handle_unknown='ignore', or "
            "handle_unknown='error' (an input check that stops the fit, "
            "outside the guarantee)."
        )
        raise ValueError(
            f"Step {path!r} (OneHotEncoder) warns during the fit when a private "
            f"row holds a category outside the declared ones ({given}): "
            "whether it warns is a bit about the private rows, outside the "
            f"pipeline's guarantee. {fix}"
        )
    if isinstance(est, (OneHotEncoder, OrdinalEncoder)) and _declared(est.categories):
        _refuse(
            path,
            est,
            "groups infrequent categories (min_frequency / max_categories) by "
            "counting the private rows",
        )
    _refuse(path, est)


def _private_width(est, n_in):
    """Output width of a private transformer from its public parameters."""
    name = type(est).__name__
    if n_in is None:
        return None
    if name in ("DPStandardScaler", "DPSimpleImputer", "DPQuantileTransformer"):
        return n_in
    if name == "DPKBinsDiscretizer":
        return n_in if est.encode == "ordinal" else n_in * est.n_bins
    if name == "DPSplineTransformer":
        return n_in * (est.n_knots + est.degree - 1 - (not est.include_bias))
    if name == "DPOneHotEncoder":
        if isinstance(est.categories, str):
            return None
        other = est.handle_unknown == "other"
        if est.max_categories is not None or est.min_frequency is not None:
            return None
        return sum(len(c) + other for c in est.categories)
    return None


def _declared_input_width(est):
    """Input width a private step's public parameters fix, or None.

    A ``DPOneHotEncoder`` with declared ``categories`` (one list per column)
    takes exactly that many columns, and a private transformer with one
    ``(lower, upper)`` pair of ``bounds`` per column (shape
    ``(n_features, 2)``) as many as it has pairs: its fit, and its plan,
    refuse any other width from the input's shape, before it reads a row.
    Its plan is then made at that width, not at a probe width its
    parameters contradict.
    """
    if type(est).__name__ == "DPOneHotEncoder" and not isinstance(est.categories, str):
        return len(est.categories)
    bounds = est.get_params(deep=False).get("bounds")
    if bounds is None or isinstance(bounds, str):
        return None
    try:
        shape = np.shape(bounds)
    except ValueError:
        # Ragged pairs: refused by the step's own plan.
        return None
    return shape[0] if len(shape) == 2 and shape[1] == 2 else None


#: A column selection by a callable the public schema does not resolve.
_UNRESOLVED = object()


def _resolved_selector(key, names):
    """``key``, with a callable selection applied to the public schema.

    scikit-learn calls a callable selection on the rows it fits; here it is
    given the schema's empty frame (the columns' names and dtypes), no row,
    and what it returns there is the selection (:func:`walk_steps` pins it on
    the fit's clone). A ``make_column_selector`` reads the names and dtypes
    only, so it selects the same columns from the rows. :data:`_UNRESOLVED`
    when there is no schema, or its dtypes are not known (a callable may
    select by dtype; a ``make_column_selector`` that selects by name only
    is resolved by the names).

    Raises
    ------
    ValueError
        When the callable fails on the empty frame.
    """
    if not callable(key):
        return key
    if names is None or names.get("frame") is None:
        return _UNRESOLVED
    by_dtype = not isinstance(key, make_column_selector) or (
        key.dtype_include is not None or key.dtype_exclude is not None
    )
    if by_dtype and not names.get("dtypes_known", True):
        return _UNRESOLVED
    try:
        return key(names["frame"])
    except Exception as exc:
        raise _SelectionError(str(exc)) from exc


class _SelectionError(ValueError):
    """A callable selection that fails on the public schema."""


def _column_indices(key, n_in, names):
    """Indices a ColumnTransformer block selects (``key`` resolved), or None."""
    if n_in is None:
        return None
    if key is _UNRESOLVED or callable(key):
        return None
    columns = None if names is None else list(names["columns"])
    if isinstance(key, slice):
        if isinstance(key.start, str) or isinstance(key.stop, str):
            if columns is None:
                return None
            start = 0 if key.start is None else columns.index(key.start)
            stop = len(columns) if key.stop is None else columns.index(key.stop) + 1
            return list(range(start, stop))
        return list(range(n_in))[key]
    keys = [key] if np.isscalar(key) else list(np.asarray(key).ravel())
    if not keys:
        return []
    if all(isinstance(k, (bool, np.bool_)) for k in keys):
        return [i for i, k in enumerate(keys) if k]
    if all(isinstance(k, (int, np.integer)) for k in keys):
        return [int(k) % n_in for k in keys]
    if all(isinstance(k, str) for k in keys):
        if columns is None or any(k not in columns for k in keys):
            return None
        return [columns.index(k) for k in keys]
    return None


def _is_empty_selection(key, names):
    """Whether a ColumnTransformer skips a block: its selection holds no column.

    scikit-learn's rule (``_is_empty_column_selection``): an empty list or
    an all-False mask, after a callable is applied, which is resolved here
    on the public schema (the columns' names and dtypes). None when only the
    fit can tell (a callable the schema does not resolve).
    """
    key = _resolved_selector(key, names)
    if key is _UNRESOLVED or callable(key):
        return None
    dtype = getattr(key, "dtype", None)
    if isinstance(dtype, np.dtype) and np.issubdtype(dtype, np.bool_):
        return not np.any(key)
    if hasattr(key, "__len__") and not isinstance(key, str):
        return len(key) == 0 or (all(isinstance(k, bool) for k in key) and not any(key))
    return False


def walk_steps(
    steps, n_features, *, names=None, prefix="", final=True, sparse=False, pins=None
):
    """Classify ``steps`` and list their private parts with their input widths.

    Parameters
    ----------
    steps : list of (str, estimator)
        The steps of a pipeline (or of a nested one).
    n_features : int or None
        Width of the input.
    names : dict or None, default=None
        ``{"columns": names, "frame": empty DataFrame}`` of a DataFrame input
        (public schema), for ColumnTransformer selections by name. It applies
        to the first step that is not ``"passthrough"`` or None (those hand
        it the input unchanged).
    prefix : str, default=""
        Parameter path of the enclosing step.
    final : bool, default=True
        Whether the last step is the pipeline's final estimator.
    sparse : bool or None, default=False
        Whether the input is a sparse matrix (None: not known).
    pins : dict or None, default=None
        For a fit: filled with ``{ColumnTransformer path: {block: columns}}``,
        the columns each callable selection selects on the public schema,
        which the fit's clones take instead of the callable (scikit-learn
        would call it on the private rows); a callable the schema does not
        resolve is then refused. None (a plan without a fit): such a
        block's width is unknown.

    Returns
    -------
    units : list of PrivateUnit
    n_out : int or None
        Output width of the last step when it is a transformer.

    Raises
    ------
    ValueError
        Naming the first step that learns from the rows without a plan.
    """
    units, width, _ = _walk_steps(
        steps, n_features, names, prefix, final, sparse, pins
    )
    return units, width


def _walk_steps(steps, n_features, names, prefix, final, sparse, pins):
    """:func:`walk_steps`, with the output layout of the last step."""
    units = []
    width = n_features
    for i, (name, est) in enumerate(steps):
        path = f"{prefix}{name}"
        is_last = final and i == len(steps) - 1
        sub, width, sparse = _walk_one(path, est, width, names, is_last, sparse, pins)
        units.extend(sub)
        if not is_passthrough(est):
            # The schema is the input's: it reaches the next step only through
            # steps the fit skips ("passthrough", None), which hand it the
            # input itself.
            names = None
    return units, width, sparse


def is_passthrough(est):
    """Whether a step is a passthrough (``None`` or ``\"passthrough\"``)."""
    return est is None or (isinstance(est, str) and est == "passthrough")


def _walk_one(path, est, n_in, names, is_last, sparse, pins):
    if is_passthrough(est):
        return [], n_in, sparse
    if isinstance(est, str) and est == "drop":
        return [], 0, False
    if isinstance(est, PrivateEstimatorMixin):
        if n_in is None:
            n_in = _declared_input_width(est)
        # The private transformers of this package output dense arrays.
        unit = PrivateUnit(path, est, n_in, final=is_last, sparse=sparse)
        return [unit], _private_width(est, n_in), False
    if isinstance(est, Pipeline):
        return _walk_steps(est.steps, n_in, names, f"{path}__", is_last, sparse, pins)
    if isinstance(est, ColumnTransformer):
        return _walk_columns(path, est, n_in, names, sparse, pins)
    if isinstance(est, FeatureUnion):
        return _walk_union(path, est, n_in, names, sparse, pins)
    if _is_free_leaf(est):
        return [], _free_width(est, n_in), _free_layout(est, sparse)
    _free_leaf_refusal(path, est)


def _pinned_selection(path, key, names, pins):
    """A block's selection with a callable resolved on the public schema.

    A callable other than a ``make_column_selector`` may read the values it
    is given; scikit-learn would call it on the private rows, so a fit
    (``pins`` given) records its result on the schema for the clone, or
    refuses it when there is no schema to resolve it by.
    """
    try:
        resolved = _resolved_selector(key, names)
    except _SelectionError as exc:
        raise ValueError(
            f"Block {path!r} selects its columns with a callable that fails on "
            "the input's public schema (an empty frame with its columns and "
            f"dtypes: {exc}). The pipeline calls it there, never on the "
            "private rows: give the columns as a list, or a "
            "make_column_selector."
        ) from exc
    if not callable(key) or isinstance(key, make_column_selector) or pins is None:
        return resolved
    if resolved is _UNRESOLVED:
        raise ValueError(
            f"Block {path!r} selects its columns with a callable, which "
            "scikit-learn would call on the private rows, and there is no "
            "public schema to call it on instead (a ColumnTransformer fitted "
            "on a DataFrame as the first step, or after 'passthrough' steps "
            "only, has one). Give the columns as a list, or a "
            "make_column_selector."
        )
    ct_path, _, block = path.rpartition("__")
    pins.setdefault(ct_path, {})[block] = resolved
    return resolved


def _refuses_one_column(est):
    """Whether ``est`` refuses the 1-d column a scalar ColumnTransformer key selects.

    Every transformer a private pipeline fits needs a 2-d input, but a
    ``FunctionTransformer``, whose function may turn the column into a
    frame; ``"passthrough"`` outputs the 1-d column, which the
    ColumnTransformer refuses. The plan refuses what the fit would.
    """
    if is_passthrough(est):
        return True
    if isinstance(est, str):
        return est != "drop"
    if isinstance(est, FunctionTransformer):
        return False
    if isinstance(est, Pipeline):
        first = next((step for _, step in est.steps if not is_passthrough(step)), None)
        return first is None or _refuses_one_column(first)
    if isinstance(est, FeatureUnion):
        return any(
            _refuses_one_column(part)
            for _, part in est.transformer_list
            if not (isinstance(part, str) and part == "drop")
        )
    return True


def _walk_columns(path, ct, n_in, names, sparse, pins):
    units = []
    width = 0
    used = set()
    known = True
    blocks = list(ct.transformers)
    for block_name, est, key in blocks:
        key = _pinned_selection(f"{path}__{block_name}", key, names, pins)
        if _is_empty_selection(key, None):
            # scikit-learn neither fits nor outputs a block that selects no
            # column; the selection is public (the schema), so the block
            # gets no plan and no share.
            continue
        if np.isscalar(key) and _refuses_one_column(est):
            raise ValueError(
                f"Block {path + '__' + block_name!r} selects a column with the scalar "
                f"key {key!r}: scikit-learn then hands {type(est).__name__} a "
                "1-d column, which it refuses. Select the column with a list of "
                f"one key, [{key!r}]."
            )
        cols = _column_indices(key, n_in, names)
        known = known and cols is not None
        if cols is not None:
            used.update(cols)
        sub, w, _ = _walk_one(
            f"{path}__{block_name}",
            est,
            None if cols is None else len(cols),
            None,
            False,
            sparse,
            pins,
        )
        units.extend(sub)
        width = None if (w is None or width is None) else width + w
    remainder = ct.remainder
    n_rest = n_in - len(used) if (known and n_in is not None) else None
    # No column left: scikit-learn skips the remainder, as an empty block.
    if not (isinstance(remainder, str) and remainder == "drop") and n_rest != 0:
        sub, w, _ = _walk_one(
            f"{path}__remainder", remainder, n_rest, None, False, sparse, pins
        )
        units.extend(sub)
        width = None if (w is None or width is None) else width + w
    # scikit-learn stacks sparse blocks sparsely when the density of the
    # fitted rows is below sparse_threshold, which one record can flip: the
    # fit's clones take sparse_threshold=0, so the output is always dense.
    return units, width, False


def _walk_union(path, union, n_in, names, sparse, pins):
    """A ``FeatureUnion``: every part reads the whole input, as a block would.

    Its output is sparse when a part's is (scikit-learn's rule, on the
    parts' public layouts).
    """
    units = []
    width = 0
    layouts = []
    for part_name, est in union.transformer_list:
        if isinstance(est, str) and est == "drop":
            continue
        sub, w, layout = _walk_one(
            f"{path}__{part_name}", est, n_in, names, False, sparse, pins
        )
        units.extend(sub)
        layouts.append(layout)
        width = None if (w is None or width is None) else width + w
    if any(layout is True for layout in layouts):
        return units, width, True
    if any(layout is None for layout in layouts):
        return units, width, None
    return units, width, False


def pin_selections(pipeline, pins):
    """Replace, on a pipeline's clones, callable selections by their columns.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        The fit's clones (the steps as given are not modified).
    pins : dict
        ``{ColumnTransformer path: {block: columns}}``, from
        :func:`walk_steps`.
    """
    params = pipeline.get_params(deep=True)
    for path, blocks in pins.items():
        ct = params[path]
        ct.transformers = [
            (name, est, blocks.get(name, key)) for name, est, key in ct.transformers
        ]


def fitted_part(fitted, path):
    """The fitted part of a fitted pipeline at parameter path ``path``."""
    obj = fitted
    for part in path.split("__"):
        if isinstance(obj, Pipeline):
            obj = obj.named_steps[part]
        elif isinstance(obj, ColumnTransformer):
            obj = obj.named_transformers_[part]
        elif isinstance(obj, FeatureUnion):
            obj = obj.named_transformers[part]
        else:  # pragma: no cover - paths come from walk_steps
            raise KeyError(path)
    return obj


def composite_paths(pipeline):
    """Parameter paths of every composite nested inside a pipeline.

    Every step, every block, every part and every remainder, at any depth:
    the fit sets their ``n_jobs`` to 1 and ``memory`` to None, so that no
    part runs in another process or thread (whatever an enclosing
    ``joblib.parallel_config`` says) or is loaded from a cache, where its
    releases would escape the fit's release log, and a
    ``ColumnTransformer``'s ``sparse_threshold``, so that its layout is not
    decided by the rows.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline

    Returns
    -------
    column_transformers : list of str
    pipelines : list of str
        The nested pipelines (not ``pipeline`` itself).
    unions : list of str
        The nested ``FeatureUnion``.
    """
    column_transformers, pipelines, unions = [], [], []

    def visit(path, est):
        if isinstance(est, Pipeline):
            pipelines.append(path)
            for name, sub in est.steps:
                visit(f"{path}__{name}", sub)
        elif isinstance(est, ColumnTransformer):
            column_transformers.append(path)
            for block, sub, _ in est.transformers:
                visit(f"{path}__{block}", sub)
            visit(f"{path}__remainder", est.remainder)
        elif isinstance(est, FeatureUnion):
            unions.append(path)
            for part, sub in est.transformer_list:
                visit(f"{path}__{part}", sub)

    for name, est in pipeline.steps:
        visit(name, est)
    return column_transformers, pipelines, unions
