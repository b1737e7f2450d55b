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
    starts with an underscore are private and skipped, and so are
    meta-estimators that cannot be built without arguments (such as
    :class:`~sklearn_dpfair.model_selection.PrivateHyperparameterSearch`,
    which needs an estimator and a grid); their tests build them.

    Returns
    -------
    estimators : list of (str, type)
        Sorted by name.

    Examples
    --------
    >>> from sklearn_dpfair.utils import all_estimators
    >>> "DPLogisticRegression" in dict(all_estimators())
    True
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
                and not _needs_arguments(cls)
            ):
                found[name] = cls
    return sorted(found.items())


def _needs_arguments(cls):
    """Whether ``cls()`` fails for lack of a required ``__init__`` argument."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    return any(
        p.default is inspect.Parameter.empty
        and p.name != "self"
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        for p in parameters
    )
