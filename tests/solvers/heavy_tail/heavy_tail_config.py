# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The heavy-tail solvers' configuration the tests start from (public defaults)."""

from sklearn_dpfair._solvers.heavy_tail._fit import HeavyTailConfig

DPSGD_DEFAULTS = {
    "loss_name": "squared_error",
    "solver": "dp-sgd",
    "clip_norm": "auto",
    "radius": None,
    "moment_order": 2.0,
    "moment_bound": None,
    "clip_ref": 300.0,
    "smoothness": "auto",
    "strong_convexity": "auto",
    "max_iter": "auto",
    "tuning_fraction": 0.1,
    "mode": "practical",
    "penalty": None,
    "alpha": 0.0,
    "l1_ratio": 0.15,
    "fit_intercept": True,
}


def dpsgd_config(**overrides):
    """A ``HeavyTailConfig`` of the ``"dp-sgd"`` solver with ``overrides``."""
    return HeavyTailConfig(**{**DPSGD_DEFAULTS, **overrides})
