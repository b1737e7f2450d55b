# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Silo data and the federation set-up shared by the federated test modules."""

import numpy as np

from sklearn_dpfair._loss import BinaryLogisticLoss
from sklearn_dpfair.federated import FederationConfig

LOSS = BinaryLogisticLoss()
CONFIG = FederationConfig(rounds=40, sampling_probability=0.2, learning_rate=1.0)


def make_silos(sizes=(300, 500, 700), d=3, seed=0):
    """Heterogeneous binary silos ``{"s0": (X, y), ...}`` (silo j shifted by 0.3 j)."""
    rng = np.random.default_rng(seed)
    data = {}
    for j, n in enumerate(sizes):
        X = rng.normal(size=(n, d)) + 0.3 * j
        data[f"s{j}"] = (X, (X[:, 0] + 0.5 * X[:, 1] > 0.3 * j).astype(float))
    return data
