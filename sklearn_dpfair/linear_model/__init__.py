# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private linear models."""

from ._fermi import DPFERMIClassifier, FERMIClassifier
from ._heavy_tail import HeavyTailDPRegressor
from ._logistic import DPLogisticRegression

__all__ = [
    "DPFERMIClassifier",
    "DPLogisticRegression",
    "FERMIClassifier",
    "HeavyTailDPRegressor",
]
