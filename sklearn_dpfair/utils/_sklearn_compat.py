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

import math
import numbers
import sys

import numpy as np
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
    """scikit-learn's ``Interval``, read as the float64s the package computes.

    A Python int such as ``10**400`` is a :class:`numbers.Real` and an
    :class:`numbers.Integral` inside ``[1, inf)``, so scikit-learn's
    interval takes it; but every such parameter is computed with as a
    float (a clip norm, a step size, a count divided by ``n``), where it
    raises ``OverflowError`` without naming the parameter. Refusing it here
    makes parameter validation, run before any data is read, name it. A
    subclass whose ints are never floats (a seed) sets
    ``ints_are_floats = False``.

    A numpy float is compared with the bounds as the float64 it is computed
    with. scikit-learn compares it in its own dtype, in which a bound may
    round: ``1e-300`` is 0 in float32, so ``np.float32(0.0)`` passed the
    lower bound ``1e-300`` that ``0.0`` does not. A float16 or float32
    converts to float64 exactly, so the comparison is the value's own; a
    finite longdouble beyond the largest float64 is refused, as the ints
    are.

    A bool is refused: it is an :class:`numbers.Integral`, so scikit-learn's
    interval takes ``clip_norm=True`` as the clip norm 1 and ``max_iter=True``
    as one pass (recorded as ``n_iter_ = True``); a bool is a flag, and a
    parameter that takes one says so in its constraint (``"boolean"``).

    Any other real number (a :class:`fractions.Fraction`) is refused: the
    solvers compute with numpy ufuncs, which take no such object (numpy's
    ``isnan`` raised on it here, naming no parameter), so a value taken
    here would fail inside the fit instead. Pass ``float(value)``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from numbers import Real
    >>> import numpy as np
    >>> interval = Interval(Real, 1e-300, None, closed="left")
    >>> interval.is_satisfied_by(np.float32(0.0))
    False
    >>> interval.is_satisfied_by(np.float32(0.5))
    True
    >>> interval.is_satisfied_by(Fraction(1, 3))
    False
    >>> interval.is_satisfied_by(True)
    False
    """

    ints_are_floats = True

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        if isinstance(val, numbers.Integral):
            if self.ints_are_floats and abs(int(val)) > sys.float_info.max:
                return False
        elif isinstance(val, numbers.Real) and not isinstance(
            val, (float, np.floating)
        ):
            return False
        # The type is checked on the value as given (np.float32 is not a
        # RealNotInt), the range on its float64 (__contains__).
        return super().is_satisfied_by(val)

    def __contains__(self, val):
        if isinstance(val, np.floating):
            as_float = float(val)
            if math.isinf(as_float) and not np.isinf(val):
                # A finite longdouble beyond the largest float64.
                return False
            val = as_float
        return super().__contains__(val)
