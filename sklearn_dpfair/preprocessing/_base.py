# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What every private transformer shares: parameters, bookkeeping, output bounds."""

import numpy as np

from .._base import PRIVACY_PARAMETER_CONSTRAINTS, PrivateEstimatorMixin
from ..privacy._random import check_noise_generator
from ..utils._validation import check_delta_for_n

__all__ = ["PrivateTransformerMixin"]


class PrivateTransformerMixin(PrivateEstimatorMixin):
    """Private fit bookkeeping of a transformer, and its declared output bound.

    Subclasses set ``output_bounds_`` (shape ``(n_features_out, 2)``) in
    ``fit``; ``output_norm_bound_`` is the l2 norm of the largest absolute
    bound of each output column, a public bound on the norm of every
    transformed row (without missing values), for a downstream estimator's
    clip or ``feature_norm_bound``.
    """

    _privacy_constraints = {
        name: PRIVACY_PARAMETER_CONSTRAINTS[name]
        for name in ("epsilon", "delta", "accountant", "random_state")
    }

    def _start_fit(self, n_samples, uses_delta):
        """The fit's generator; warns when ``delta >= 1 / n_samples``."""
        if uses_delta and np.isfinite(self.epsilon):
            check_delta_for_n(self.delta, n_samples)
        return check_noise_generator(self.random_state)

    def _set_output_bounds(self, lower, upper):
        self.output_bounds_ = np.column_stack([lower, upper]).astype(np.float64)
        largest = np.max(np.abs(self.output_bounds_), axis=1)
        self.output_norm_bound_ = float(np.sqrt(np.sum(np.square(largest))))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
