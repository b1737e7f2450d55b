# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""One instance of any public estimator, with public example arguments.

Several estimators have no instance without arguments: the preprocessing
transformers need the public ``bounds`` of the columns (there is no private
default a user could rely on), a pipeline needs its steps, a search its
estimator and grid, and a private metric frame its declared groups. The
package's own tests build every estimator that
:func:`~sklearn_dpfair.utils.all_estimators` finds through
:func:`construct_instance`, so a new estimator with a required argument is
checked the moment one example of it is written here (and a test fails until
it is).
"""

import inspect

__all__ = ["construct_instance"]

# Public column bounds wider than any synthetic or checking data set.
_EXAMPLE_BOUNDS = (-1e3, 1e3)


def _pipeline():
    from ..linear_model import DPLogisticRegression
    from ..pipeline import PrivatePipeline
    from ..preprocessing import DPStandardScaler

    return PrivatePipeline(
        [
            ("scale", DPStandardScaler(bounds=_EXAMPLE_BOUNDS)),
            ("model", DPLogisticRegression()),
        ]
    )


def _search():
    from ..linear_model import SemiDPLinearRegression
    from ..model_selection import PrivateHyperparameterSearch

    # A regressor: its private score needs only the public score_bound (a
    # classifier's search would also need its label set declared).
    return PrivateHyperparameterSearch(
        SemiDPLinearRegression(), {"alpha": [0.0, 0.1]}, score_bound=1e6
    )


# Class name -> the required arguments of an example instance (a callable
# where an argument is itself an estimator, so each instance owns its own).
_REQUIRED = {
    "DPKBinsDiscretizer": {"bounds": _EXAMPLE_BOUNDS},
    "DPQuantileTransformer": {"bounds": _EXAMPLE_BOUNDS},
    "DPSimpleImputer": {"bounds": _EXAMPLE_BOUNDS},
    "DPSplineTransformer": {"bounds": _EXAMPLE_BOUNDS},
    "DPStandardScaler": {"bounds": _EXAMPLE_BOUNDS},
    "PrivateMetricFrame": {"groups": [0, 1]},
    "PrivatePipeline": _pipeline,
    "PrivateHyperparameterSearch": _search,
}


def _needs_arguments(cls):
    """Whether ``cls()`` fails for lack of a required ``__init__`` argument."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    return any(
        p.default is inspect.Parameter.empty
        and p.name != "self"
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        for p in parameters
    )


def construct_instance(cls):
    """An instance of ``cls`` at its defaults, with example required arguments.

    Parameters
    ----------
    cls : type
        A public estimator class of the package.

    Returns
    -------
    estimator : estimator instance
        ``cls()`` where that works; otherwise an instance whose required
        arguments are public examples (see ``_REQUIRED``), every other
        parameter at its default.

    Raises
    ------
    LookupError
        If ``cls`` needs arguments and no example of them is written here.
    """
    if not _needs_arguments(cls):
        return cls()
    example = _REQUIRED.get(cls.__name__)
    if example is None:
        raise LookupError(
            f"{cls.__name__} needs arguments to be built: add an example of "
            "them to sklearn_dpfair/utils/_instance_generator.py"
        )
    return example() if callable(example) else cls(**example)
