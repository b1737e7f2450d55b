# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The only place that imports private scikit-learn API.

``_fit_context`` and the parameter-constraint classes are private in
scikit-learn but stable since 1.2 and used by most scikit-learn-contrib
projects; the indexing, sample-counting, routing and sample-weight helpers
are private too, and stable since 1.4. Importing them here, and nowhere
else, means one file to fix if they ever move; the rest of the package
imports the public names below.
"""

import numbers
import sys

from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing as safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Options,
    StrOptions,
    validate_params,
)
from sklearn.utils._param_validation import Interval as _Interval
from sklearn.utils.metadata_routing import _routing_enabled as routing_enabled
from sklearn.utils.validation import _check_sample_weight as check_sample_weight
from sklearn.utils.validation import _num_samples as num_samples

__all__ = [
    "HasMethods",
    "Interval",
    "Options",
    "StrOptions",
    "_fit_context",
    "check_sample_weight",
    "num_samples",
    "routing_enabled",
    "safe_indexing",
    "validate_params",
]


class Interval(_Interval):
    """scikit-learn's ``Interval``, refusing an int beyond the largest float.

    A Python int such as ``10**400`` is a :class:`numbers.Real` and an
    :class:`numbers.Integral` inside ``[1, inf)``, so scikit-learn's
    interval takes it; but every such parameter is computed with as a
    float (a clip norm, a step size, a count divided by ``n``), where it
    raises ``OverflowError`` without naming the parameter. Refusing it here
    makes parameter validation, run before any data is read, name it. A
    subclass whose ints are never floats (a seed) sets
    ``ints_are_floats = False``.
    """

    ints_are_floats = True

    def is_satisfied_by(self, val):
        if (
            self.ints_are_floats
            and isinstance(val, numbers.Integral)
            and abs(int(val)) > sys.float_info.max
        ):
            return False
        return super().is_satisfied_by(val)
