# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Utilities: estimator discovery, and the common checks expected to fail."""

from .discovery import all_estimators
from .estimator_checks import expected_failed_checks

__all__ = ["all_estimators", "expected_failed_checks"]
