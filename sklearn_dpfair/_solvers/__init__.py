# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Solvers shared by the estimators. Private: interfaces may still change."""

from ._output_perturbation import certified_regularized_erm, output_perturbation
from ._sampling import poisson_batch
from ._sgd import NoisySGDResult, noisy_sgd

__all__ = [
    "NoisySGDResult",
    "certified_regularized_erm",
    "noisy_sgd",
    "output_perturbation",
    "poisson_batch",
]
