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

from ._steps import _is_empty_selection

__all__ = ["FLOWING_BOUNDS", "declared_output_bound", "flowing_bound"]

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
        a ``FunctionTransformer``).
    """
    if hasattr(step, "output_norm_bound_") and hasattr(step, "output_bounds_"):
        return {
            "norm": float(step.output_norm_bound_),
            # A step may output no column (an encoder that kept no
            # category): it bounds nothing above 0.
            "inf": float(np.max(np.abs(step.output_bounds_), initial=0.0)),
        }
    if isinstance(step, Pipeline):
        for _, sub in reversed(step.steps):
            if sub is None or (isinstance(sub, str) and sub == "passthrough"):
                continue
            return declared_output_bound(sub)
        return None
    if isinstance(step, OneHotEncoder):
        # At most one 1 per input column (zeros for an ignored unknown).
        return {"norm": math.sqrt(step.n_features_in_), "inf": 1.0}
    if isinstance(step, ColumnTransformer):
        parts = [
            (name, sub)
            for name, sub, columns in step.transformers_
            # A block that selects no column is neither fitted nor output.
            if not (isinstance(sub, str) and sub == "drop")
            and not _is_empty_selection(columns, None)
        ]
        return _stacked_bound(parts, step.transformer_weights)
    if isinstance(step, FeatureUnion):
        parts = [
            (name, sub)
            for name, sub in step.transformer_list
            if not (isinstance(sub, str) and sub == "drop")
        ]
        return _stacked_bound(parts, step.transformer_weights)
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
