# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public bounds on what a fitted step outputs, for the final estimator.

A private transformer declares, once fitted, a bound on each output column
(``output_bounds_``) and on the l2 norm of every transformed row
(``output_norm_bound_``), computed from its released statistics and public
parameters only. Handing them to the final estimator's feature bound is
post-processing of released values: it costs no budget.
"""

import math

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import OneHotEncoder

from ..preprocessing._base import PrivateTransformerMixin
from ._steps import (
    _UNRESOLVED,
    _column_indices,
    _is_empty_selection,
    _resolved_selector,
    is_passthrough,
    walk_steps,
)

__all__ = [
    "FLOWING_BOUNDS",
    "declared_output_bound",
    "declares_output_bound",
    "flowing_bound",
]

#: ``(class name, solver) -> (parameter, kind)``: the feature bounds a final
#: estimator takes from the step before it when left at None; ``kind`` is
#: ``"norm"`` (l2 norm of a row) or ``"inf"`` (largest absolute entry).
FLOWING_BOUNDS = {
    ("DPLogisticRegression", "output-perturbation"): ("feature_norm_bound", "norm"),
    ("DPLogisticRegression", "dp-frank-wolfe"): ("feature_inf_bound", "inf"),
}


def flowing_bound(estimator):
    """``(parameter, kind)`` the estimator takes from upstream, or None."""
    key = (type(estimator).__name__, getattr(estimator, "solver", None))
    spec = FLOWING_BOUNDS.get(key)
    if spec is None or getattr(estimator, spec[0]) is not None:
        return None
    return spec


def declared_output_bound(step):
    """``{"norm": ..., "inf": ...}`` declared by a fitted step, or None.

    Parameters
    ----------
    step : fitted transformer, "passthrough" or None

    Returns
    -------
    bounds : dict or None
        None when the step declares no bound (a passthrough of raw columns,
        a ``FunctionTransformer``). A ``Pipeline``, or a fitted
        ``PrivatePipeline`` (its ``pipeline_``), declares its last step's.
    """
    if hasattr(step, "output_norm_bound_") and hasattr(step, "output_bounds_"):
        return {
            "norm": float(step.output_norm_bound_),
            # A step may output no column (an encoder that kept no
            # category): it bounds nothing above 0.
            "inf": float(np.max(np.abs(step.output_bounds_), initial=0.0)),
        }
    fitted_steps = _fitted_pipeline_steps(step)
    if fitted_steps is not None:
        last = last_step(fitted_steps)
        return None if last is None else declared_output_bound(last)
    if isinstance(step, OneHotEncoder):
        # At most one 1 per input column (zeros for an ignored unknown).
        return {"norm": math.sqrt(step.n_features_in_), "inf": 1.0}
    if isinstance(step, ColumnTransformer):
        parts = [
            (name, sub)
            for name, sub, columns in step.transformers_
            # A block that selects no column is neither fitted nor output.
            if not _is_drop(sub) and not _is_empty_selection(columns, None)
        ]
        return _stacked_bound(parts, step.transformer_weights)
    if isinstance(step, FeatureUnion):
        parts = [
            (name, sub) for name, sub in step.transformer_list if not _is_drop(sub)
        ]
        return _stacked_bound(parts, step.transformer_weights)
    return None


def declares_output_bound(step, n_features=None, names=None):
    """Whether ``step``, once fitted, may declare an output bound (structure only).

    Mirrors :func:`declared_output_bound` on the unfitted step, from its
    classes, public parameters and input width: False only where its fit
    cannot declare one whatever the rows (a passthrough, a
    ``FunctionTransformer``, a pipeline ending in one, a
    ``ColumnTransformer`` block or remainder of such a step on a selection
    that holds a column), so that a final step that needs the bound is
    refused before any row is read rather than after the preprocessing's
    releases. Where the fit decides (a block whose selection only the
    schema resolves, a slice or a remainder on an unknown width), True: the
    fit checks the declared bound itself.

    Parameters
    ----------
    step : transformer, "passthrough" or None
        Unfitted.
    n_features : int or None, default=None
        Its input width, where public (None: unknown).
    names : dict or None, default=None
        The public schema of its input (:func:`walk_steps`'s ``names``),
        where it reads the pipeline's input.

    Returns
    -------
    declares : bool
    """
    # Imported here: the pipeline module imports this one.
    from ._pipeline import PrivatePipeline

    if is_passthrough(step):
        return False
    if isinstance(step, (PrivateTransformerMixin, OneHotEncoder)):
        return True
    if isinstance(step, (Pipeline, PrivatePipeline)):
        steps = list(step.steps)
        last = last_step(steps)
        if last is None:
            return False
        # The width the last step reads, from the steps before it.
        index = max(i for i, (_, sub) in enumerate(steps) if sub is last)
        before = steps[:index]
        _, width = walk_steps(before, n_features, names=names, final=False)
        if not all(is_passthrough(sub) for _, sub in before):
            names = None
        return declares_output_bound(last, width, names)
    if isinstance(step, ColumnTransformer):
        return _columns_declare(step, n_features, names)
    if isinstance(step, FeatureUnion):
        parts = [sub for _, sub in step.transformer_list if not _is_drop(sub)]
        return bool(parts) and all(
            declares_output_bound(sub, n_features, names) for sub in parts
        )
    return False


def _columns_declare(ct, n_features, names):
    """:func:`declares_output_bound` of a ``ColumnTransformer``.

    Each block that holds a column must declare one, and so must the
    remainder when columns are left to it; a block's selection and the
    remainder's columns are public where the width (and, for names, the
    schema) is.
    """
    used, known = set(), n_features is not None
    for _, sub, columns in ct.transformers:
        try:
            key = _resolved_selector(columns, names)
        except ValueError:  # refused by the plan's walk
            key = _UNRESOLVED
        indices = _column_indices(key, n_features, names)
        if indices is None:
            known = False
            # Without the width, only a selection that holds a column
            # whatever the schema (not a slice) certainly does.
            holds = (
                not isinstance(key, slice)
                and _is_empty_selection(key, None) is False
            )
        else:
            used.update(indices)
            holds = bool(indices)
        if _is_drop(sub) or not holds:
            continue
        width = None if indices is None else len(indices)
        if not declares_output_bound(sub, width):
            return False
    if known and not _is_drop(ct.remainder):
        rest = n_features - len(used)
        if rest and not declares_output_bound(ct.remainder, rest):
            return False
    return True


def _is_drop(step):
    return isinstance(step, str) and step == "drop"


def last_step(steps):
    """The last step of ``steps`` that is not a passthrough, or None."""
    for _, sub in reversed(steps):
        if not is_passthrough(sub):
            return sub
    return None


def _fitted_pipeline_steps(step):
    """The fitted steps of a ``Pipeline``, or of a fitted ``PrivatePipeline``.

    A private pipeline's fitted steps are its ``pipeline_``'s (the steps as
    given are unfitted); None for any other step.
    """
    # Imported here: the pipeline module imports this one.
    from ._pipeline import PrivatePipeline

    if isinstance(step, Pipeline):
        return step.steps
    if isinstance(step, PrivatePipeline) and hasattr(step, "pipeline_"):
        return step.pipeline_.steps
    return None


def _stacked_bound(parts, weights):
    """The bound of the side-by-side outputs of ``parts``, each times its weight.

    scikit-learn multiplies a part's output by its entry of
    ``transformer_weights`` (1 when absent), so its bounds scale by the
    weight's absolute value.
    """
    weights = weights or {}
    norms, infs = [], []
    for name, sub in parts:
        bound = declared_output_bound(sub)
        if bound is None:
            return None
        weight = abs(float(weights.get(name, 1.0)))
        norms.append(weight * bound["norm"])
        infs.append(weight * bound["inf"])
    if not norms:
        return None
    return {"norm": math.sqrt(sum(n * n for n in norms)), "inf": max(infs)}
