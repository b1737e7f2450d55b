# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Hyperparameter search with a privacy guarantee for the whole search."""

from ._search import PrivateHyperparameterSearch

__all__ = ["PrivateHyperparameterSearch"]
