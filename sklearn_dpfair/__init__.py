# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private and fair estimators with a scikit-learn API."""

from .exceptions import PrivacyBudgetError, PrivacyLeakWarning
from .linear_model import (
    DPFERMIClassifier,
    DPLogisticRegression,
    FERMIClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
    SemiLocalDPLinearRegression,
)
from .model_selection import PrivateHyperparameterSearch
from .neural import DPMLPClassifier
from .pipeline import PrivatePipeline, make_private_pipeline
from .report import ModelReport, privacy_report

__version__ = "0.1.0"

__all__ = [
    "DPFERMIClassifier",
    "DPLogisticRegression",
    "DPMLPClassifier",
    "FERMIClassifier",
    "HeavyTailDPRegressor",
    "ModelReport",
    "PrivacyBudgetError",
    "PrivacyLeakWarning",
    "PrivateHyperparameterSearch",
    "PrivatePipeline",
    "SemiDPLinearRegression",
    "SemiLocalDPLinearRegression",
    "__version__",
    "make_private_pipeline",
    "privacy_report",
]
