# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private linear models."""

from ._fermi import DPFERMIClassifier, FERMIClassifier
from ._heavy_tail import HeavyTailDPRegressor
from ._logistic import DPLogisticRegression
from ._semi_dp import SemiDPLinearRegression
from ._semi_dp_tuning import semidp_hyperparameters
from ._semi_local_dp import SemiLocalDPLinearRegression

__all__ = [
    "DPFERMIClassifier",
    "DPLogisticRegression",
    "FERMIClassifier",
    "HeavyTailDPRegressor",
    "SemiDPLinearRegression",
    "SemiLocalDPLinearRegression",
    "semidp_hyperparameters",
]
