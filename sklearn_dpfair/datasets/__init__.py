# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Datasets shipped with the package (usable offline)."""

from ._adult import load_adult
from ._adult_preprocessing import make_adult_preprocessor

__all__ = ["load_adult", "make_adult_preprocessor"]
