# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Synthetic training inputs for any estimator of the package.

The audits, the fuzzing and the robustness tests run over every estimator
that :func:`~sklearn_dpfair.utils.all_estimators` finds, including ones added
after this module was written. This module builds ``X``, ``y`` and the
per-record fit arguments an estimator's ``fit`` asks for (by the names the
package uses: ``sensitive_features``, ``public_mask``, ``silos``), and the
values a *protected* canary record takes for each of them.
"""

import inspect

import numpy as np
from sklearn.base import is_classifier, is_regressor

__all__ = ["UnsupportedFitArgument", "fit_arguments", "synthetic_inputs"]

# Fit arguments that define what the estimator does: always synthesized.
# Others (``silos``, which switches on federated training) only when required.
_ALWAYS = ("sensitive_features", "public_mask")


class UnsupportedFitArgument(LookupError):
    """``fit`` needs an argument this module cannot synthesize."""


def fit_arguments(estimator):
    """Names of ``fit``'s parameters besides ``X`` and ``y``.

    Parameters
    ----------
    estimator : estimator or class
        The estimator.

    Returns
    -------
    names : list of str
        Extra parameters of ``fit``, in signature order.
    """
    sig = inspect.signature(estimator.fit)
    return [
        name
        for name, p in sig.parameters.items()
        if name not in ("self", "X", "y")
        and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]


def _per_record(name, n):
    if name == "sensitive_features":
        # Two groups, both present, neither tiny.
        return np.arange(n) % 2
    if name == "public_mask":
        # A quarter public, interleaved so that every CV fold has both kinds.
        return np.arange(n) % 4 == 0
    if name == "silos":
        return np.arange(n) % 3
    raise UnsupportedFitArgument(name)


#: A canary is a protected record: private, in the first group/silo.
_CANARY_VALUES = {"sensitive_features": 0, "public_mask": False, "silos": 0}


def synthetic_inputs(estimator, *, n_samples=100, n_features=4, random_state=0):
    """``X``, ``y``, fit arguments and the canary's fit arguments.

    Parameters
    ----------
    estimator : estimator
        Classifier (binary labels 0/1) or regressor.
    n_samples, n_features : int
        Size of ``X``.
    random_state : int
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Standardized features.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1} or real targets.
    fit_params : dict
        Per-record fit arguments the estimator asks for.
    canary_fit_params : dict
        The values of a protected record for each of them.

    Raises
    ------
    UnsupportedFitArgument
        If ``fit`` requires an argument that cannot be synthesized.
    """
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n_samples, n_features))
    w = rng.normal(size=n_features)
    if is_classifier(estimator):
        y = (X @ w + 0.5 * rng.normal(size=n_samples) > 0).astype(int)
        y[:2] = [0, 1]  # both classes present whatever the seed
    elif is_regressor(estimator):
        y = X @ w + 0.1 * rng.normal(size=n_samples)
    else:
        raise UnsupportedFitArgument("neither a classifier nor a regressor")
    fit_params, canary_params = {}, {}
    sig = inspect.signature(estimator.fit)
    for name in fit_arguments(estimator):
        required = sig.parameters[name].default is inspect.Parameter.empty
        if not (required or name in _ALWAYS):
            continue
        try:
            fit_params[name] = _per_record(name, n_samples)
            canary_params[name] = _CANARY_VALUES[name]
        except UnsupportedFitArgument:
            if required:
                raise
    return X, y, fit_params, canary_params
