# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy core: clipping, the Gaussian mechanism, accounting and calibration.

Knows nothing about losses, estimators or solvers. ``RDP_ORDERS`` is the
tuple of Renyi orders every ``"rdp"`` record is computed at: dp-accounting's
``RdpAccountant(orders=RDP_ORDERS)`` recomputes a recorded epsilon exactly
(its default orders give a slightly larger, still valid, epsilon).
"""

from ._accounting import RDP_ORDERS, epsilon_of
from ._budget import PrivacyBudget
from ._calibration import (
    calibrate_noise,
    calibrate_noise_multiplier,
    noise_multiplier_for_gaussian,
)
from ._laplace import LaplaceMechanism
from ._ledger import LedgerEntry, PrivacyLedger
from ._mechanism import GaussianMechanism
from ._plan import PrivacyPlan
from ._quantile import noisy_histogram, private_quantile
from ._random import check_noise_generator
from ._record import PrivacyRecord
from ._weights import capped_weights, fit_weights

__all__ = [
    "RDP_ORDERS",
    "GaussianMechanism",
    "LaplaceMechanism",
    "LedgerEntry",
    "PrivacyLedger",
    "PrivacyBudget",
    "PrivacyPlan",
    "PrivacyRecord",
    "calibrate_noise",
    "calibrate_noise_multiplier",
    "capped_weights",
    "check_noise_generator",
    "epsilon_of",
    "fit_weights",
    "noisy_histogram",
    "noise_multiplier_for_gaussian",
    "private_quantile",
]
