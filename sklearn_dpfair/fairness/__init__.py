# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fairness notions and sensitive-feature handling for the FERMI estimators."""

from ._constraints import (
    DemographicParity,
    EqualizedOdds,
    EqualOpportunity,
    make_constraint,
)
from ._sensitive import SensitiveEncoding, encode_sensitive_features

__all__ = [
    "DemographicParity",
    "EqualOpportunity",
    "EqualizedOdds",
    "SensitiveEncoding",
    "encode_sensitive_features",
    "make_constraint",
]
