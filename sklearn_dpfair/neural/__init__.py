# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private neural networks (DP-SGD on dense networks)."""

from ._mlp import DPMLPClassifier

__all__ = ["DPMLPClassifier"]
