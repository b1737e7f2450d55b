# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Find every public estimator of the package (as ``sklearn.utils.all_estimators``)."""

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

__all__ = ["all_estimators"]


def all_estimators():
    """Return ``(name, class)`` of every public estimator in :mod:`sklearn_dpfair`.

    Walks all modules of the package (skipping tests), so a new estimator is
    covered by the common checks the moment it exists. Classes whose name
    starts with an underscore are private and skipped. As in scikit-learn,
    classes that need arguments to be built are listed too: the
    preprocessing transformers (their public ``bounds``),
    :class:`~sklearn_dpfair.pipeline.PrivatePipeline` (its steps),
    :class:`~sklearn_dpfair.model_selection.PrivateHyperparameterSearch` (an
    estimator and a grid) and :class:`~sklearn_dpfair.metrics.PrivateMetricFrame`
    (its groups).

    Returns
    -------
    estimators : list of (str, type)
        Sorted by name.

    Examples
    --------
    >>> from sklearn_dpfair.utils import all_estimators
    >>> names = dict(all_estimators())
    >>> "DPLogisticRegression" in names, "PrivatePipeline" in names
    (True, True)
    """
    import sklearn_dpfair

    found = {}
    for info in pkgutil.walk_packages(
        sklearn_dpfair.__path__, prefix="sklearn_dpfair."
    ):
        parts = info.name.split(".")
        if "tests" in parts or parts[-1] in ("__main__", "_cli"):
            continue
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, BaseEstimator)
                and not name.startswith("_")
                and cls.__module__.startswith("sklearn_dpfair")
                and not inspect.isabstract(cls)
            ):
                found[name] = cls
    return sorted(found.items())

