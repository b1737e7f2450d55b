# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a federated fit returns: the model, each silo's report, the records."""

from dataclasses import dataclass, field

import numpy as np

from ..privacy import PrivacyRecord

__all__ = ["FederatedFit"]


@dataclass
class FederatedFit:
    """The outcome of :func:`fit_federated`.

    Parameters
    ----------
    coef : ndarray of shape (n_outputs, n_features) or None
        Tail-averaged coefficients (None for a network).
    intercept : ndarray of shape (n_outputs,) or None
        Intercepts (None for a network).
    rounds : int
        Rounds run by the server.
    silo_reports : dict
        Silo id to its :class:`SiloReport`.
    server_weights : dict
        Silo id to its normalized public weight.
    privacy_record : PrivacyRecord
        Record-level guarantee of the released model for a record of any
        silo (the worst silo's event at the largest silo delta).
    central_record : PrivacyRecord or None
        Central guarantee conditional on secure aggregation, when asked for.
    execution : str
        "local" or "dask".
    transcript : list of SiloMessage or None
        Everything the server received, when asked for.
    shuffle_record : ShuffleRecord or None
        With ``shuffle=True``: the central guarantee conditional on a
        trusted shuffler (beside ``privacy_record``, the ISRL-DP one).
    parameters : ndarray or None
        With ``network=``: the tail-averaged parameters, in the network's
        layout (its ``parameter_shape``).
    scaling : FeatureScaling or None
        The column map every silo applied (an estimator's federated fit):
        ``coef`` and ``intercept`` are in the user's units, ``parameters``
        in the mapped ones.

    Examples
    --------
    A federation of one silo, ``"a"``:

    >>> import numpy as np
    >>> from sklearn_dpfair import federated
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> X = np.random.default_rng(0).normal(size=(1000, 2))
    >>> fit = federated.fit_federated({"a": (X, (X[:, 0] > 0).astype(float))},
    ...     loss=BinaryLogisticLoss(), silo_epsilon=1.0, silo_delta=1e-5,
    ...     config=federated.FederationConfig(rounds=20, sampling_probability=0.2))
    >>> isinstance(fit, federated.FederatedFit), fit.silo_rounds, fit.n_steps
    (True, {'a': 20}, 20)
    """

    coef: np.ndarray
    intercept: np.ndarray
    rounds: int
    silo_reports: dict
    server_weights: dict
    privacy_record: PrivacyRecord
    central_record: PrivacyRecord | None = None
    execution: str = "local"
    transcript: list | None = field(default=None, repr=False)
    shuffle_record: object | None = None
    parameters: np.ndarray | None = None
    scaling: object = None

    @property
    def silo_epsilon(self):
        """Epsilon each silo spent, at its own delta (dict)."""
        return {s: r.privacy_record.epsilon for s, r in self.silo_reports.items()}

    @property
    def silo_delta(self):
        """Delta of each silo's guarantee (dict)."""
        return {s: r.privacy_record.delta for s, r in self.silo_reports.items()}

    @property
    def silo_noise_multiplier(self):
        """Noise multiplier of each silo (dict)."""
        return {s: r.noise_multiplier for s, r in self.silo_reports.items()}

    @property
    def silo_rounds(self):
        """Messages each silo sent (dict)."""
        return {s: r.rounds_used for s, r in self.silo_reports.items()}

    # The names of a central ``LinearFit``, so estimators treat both alike.
    @property
    def record(self):
        """Alias of ``privacy_record``."""
        return self.privacy_record

    @property
    def n_steps(self):
        """Alias of ``rounds``."""
        return self.rounds
