# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-private linear regression: private solvers preconditioned and tuned on public rows."""

from . import _fit
from ._fit import (
    SEMIDP_HYPERPARAMETERS,
    SEMIDP_SOLVERS,
    SENSITIVITY_FACTOR,
    SemiDPFit,
    SemiDPParams,
    SemiDPSetup,
    fit_semidp,
    planned_record,
    public_hyperparameters,
    semidp_noise_multiplier,
    semidp_setup,
)

# The package exports what its fit module does.
__all__ = list(_fit.__all__)
