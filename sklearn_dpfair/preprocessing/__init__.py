# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private preprocessing transformers.

Each transformer reads the private rows under its own (``epsilon``,
``delta``), records its guarantee (``epsilon_``, ``delta_``, ``dp_event_``,
``privacy_record_``) and declares a public bound on what it outputs
(``output_bounds_``, ``output_norm_bound_``) for the next step to use.
"""

from ._discretizer import DPKBinsDiscretizer
from ._encoder import DPOneHotEncoder
from ._imputer import DPSimpleImputer
from ._quantile_transformer import DPQuantileTransformer
from ._scaler import DPStandardScaler
from ._spline import DPSplineTransformer

__all__ = [
    "DPKBinsDiscretizer",
    "DPOneHotEncoder",
    "DPQuantileTransformer",
    "DPSimpleImputer",
    "DPSplineTransformer",
    "DPStandardScaler",
]
