# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pointwise losses of ``(y, raw_prediction)``: no X, no coefficients, no RNG."""

from ._pointwise import BinaryLogisticLoss, SoftmaxLoss, SquaredLoss

__all__ = ["BinaryLogisticLoss", "SoftmaxLoss", "SquaredLoss"]
