# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fairness metrics (ERMI, Rényi correlation, L-inf parity), routed scorers, private group metrics.

Predictions of every estimator here are plain numpy arrays, so fairlearn's
``MetricFrame``, ``demographic_parity_difference`` and
``equalized_odds_difference`` apply to them directly; on private evaluation
rows those are releases, which :class:`PrivateMetricFrame` makes private.
"""

from ._ermi import ermi_score, renyi_correlation
from ._frame import PrivateMetricFrame
from ._gaps import demographic_parity_linf
from ._scorers import make_fairness_scorer

__all__ = [
    "PrivateMetricFrame",
    "demographic_parity_linf",
    "ermi_score",
    "make_fairness_scorer",
    "renyi_correlation",
]
