# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pointwise losses of ``(y, raw_prediction)``: no X, no coefficients, no RNG."""

from ._pointwise import (
    AbsoluteLoss,
    BinaryLogisticLoss,
    HuberLoss,
    PinballLoss,
    SoftmaxLoss,
    SquaredLoss,
)

__all__ = [
    "AbsoluteLoss",
    "BinaryLogisticLoss",
    "HuberLoss",
    "PinballLoss",
    "SoftmaxLoss",
    "SquaredLoss",
]
