# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The only place that imports private scikit-learn API.

``_fit_context`` and the parameter-constraint classes are private in
scikit-learn but stable since 1.2 and used by most scikit-learn-contrib
projects. Importing them here means one file to fix if they ever move.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    StrOptions,
    validate_params,
)

__all__ = [
    "HasMethods",
    "Interval",
    "Options",
    "StrOptions",
    "_fit_context",
    "validate_params",
]
