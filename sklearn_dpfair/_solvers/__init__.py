# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Solvers shared by the estimators. Private: interfaces may still change.

The linear-model layer (:mod:`._linear`) is what every linear solver, here
and in other packages, builds its predictions and clipped sums on.
"""

from ._linear import (
    LinearModel,
    augmented_row_norms,
    clipped_gradient_sum,
    raw_predictions,
)
from ._output_perturbation import certified_regularized_erm, output_perturbation
from ._sampling import poisson_batch
from ._sgd import NoisySGDResult, noisy_sgd

__all__ = [
    "LinearModel",
    "NoisySGDResult",
    "augmented_row_norms",
    "certified_regularized_erm",
    "clipped_gradient_sum",
    "noisy_sgd",
    "output_perturbation",
    "poisson_batch",
    "raw_predictions",
]
