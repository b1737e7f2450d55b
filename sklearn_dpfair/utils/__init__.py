# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Utilities: estimator discovery."""

from .discovery import all_estimators

__all__ = ["all_estimators"]
