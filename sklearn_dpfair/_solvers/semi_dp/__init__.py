# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-private linear regression: private solvers preconditioned and tuned on public rows."""

from ._fit import (
    SEMIDP_HYPERPARAMETERS,
    SEMIDP_SOLVERS,
    SENSITIVITY_FACTOR,
    SemiDPFit,
    SemiDPParams,
    fit_semidp,
    public_hyperparameters,
    semidp_noise_multiplier,
)

__all__ = [
    "SEMIDP_HYPERPARAMETERS",
    "SEMIDP_SOLVERS",
    "SENSITIVITY_FACTOR",
    "SemiDPFit",
    "SemiDPParams",
    "fit_semidp",
    "public_hyperparameters",
    "semidp_noise_multiplier",
]
