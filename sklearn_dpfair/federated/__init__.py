# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Federated cross-silo training with inter-silo record-level DP (ISRL-DP).

Silos (hospitals, banks, branches) that may not pool their records train one
linear model: every message a silo sends is differentially private with
respect to that silo's records, against an untrusted server (Lowy's thesis,
chapter 3). :class:`SiloWorker` and :class:`Server` are the two halves of the
protocol; :func:`fit_federated` runs them in this process or on a
``dask.distributed`` cluster, and is what
``DPLogisticRegression(...).fit(X, y, silos=...)`` uses;
``DPMLPClassifier(...).fit(X, y, silos=...)`` runs the same federation with
a network's silo step (``network=``).
"""

from ._accounting import SiloPrivacy, silo_privacy
from ._config import FederationConfig
from ._driver import fit_each_silo_alone, fit_federated
from ._result import FederatedFit
from ._server import Server
from ._silo import SiloMessage, SiloReport, SiloWorker

__all__ = [
    "FederatedFit",
    "FederationConfig",
    "SiloPrivacy",
    "Server",
    "SiloMessage",
    "SiloReport",
    "SiloWorker",
    "fit_each_silo_alone",
    "fit_federated",
    "silo_privacy",
]
