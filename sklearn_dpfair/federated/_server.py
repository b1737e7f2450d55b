# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The untrusted server: average the silos' messages with public weights, step."""

import math

import numpy as np

from .._solvers._feature_scaling import proximal_l2_factors
from .._solvers._schedules import tail_start
from ._config import DivergedModelError, FederationConfig
from ._silo import SiloMessage
from ._silos import normalized_weights

__all__ = ["Server"]


class Server:
    """Aggregate ISRL-DP silo messages into a model.

    The server is untrusted: it sees the model it broadcasts and the
    messages it receives, nothing else. Each round it averages the messages
    of the silos that answered with their public weights ``p_i``
    (renormalized over the answering silos, the thesis's ``1/M_r`` mean) and
    takes one step ``w <- w - learning_rate * sum_i p_i m_i``. Everything it
    does is post-processing of differentially private messages, so it costs
    no privacy. The returned model is the average of the last
    ``tail_fraction`` of its iterates. With ``config.spider`` (ISRL-DP
    FedProx-SPIDER, Lowy's thesis, Alg. 4) the averaged message ``H_r``
    restarts the estimate ``h_r = H_r`` in anchor rounds and is added to
    it, ``h_r = h_{r-1} + H_r``, in the others; the step uses ``h_r``.
    With ``config.column_alpha`` the step is followed by the penalty's exact
    proximal map on the coefficient rows, ``w_j <- w_j / (1 + eta
    alpha_j)`` (see :class:`FederationConfig`).

    Parameters
    ----------
    n_features : int
        Number of features (the model has one more row, for the intercept).
    n_outputs : int
        Number of outputs (1 for binary problems, ``K`` for multinomial).
    config : FederationConfig
        The public schedule shared with the silos.
    weights : Mapping
        Silo id to positive public weight; normalized to sum to one.
    initial_model : ndarray, default=None
        The first model broadcast (public, data independent); None is the
        linear model's zeros of shape ``(n_features + 1, n_outputs)``. A
        network starts from its random initialization (zeros would leave
        its hidden units identical).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated import FederationConfig, Server, SiloMessage
    >>> config = FederationConfig(rounds=1, sampling_probability=0.1,
    ...                           learning_rate=1.0)
    >>> server = Server(2, 1, config=config, weights={"a": 1.0, "b": 3.0})
    >>> server.step([SiloMessage("a", 0, np.ones((3, 1))),
    ...              SiloMessage("b", 0, np.zeros((3, 1)))])
    >>> server.model.ravel()
    array([-0.25, -0.25, -0.25])
    """

    def __init__(self, n_features, n_outputs, *, config, weights, initial_model=None):
        if not isinstance(config, FederationConfig):
            raise TypeError(
                f"config must be a FederationConfig; got {type(config).__name__}."
            )
        if config.learning_rate == "auto":
            raise ValueError(
                "the server needs a numeric learning_rate; fit_federated "
                "resolves 'auto' from the silos' public noise levels."
            )
        if not weights or any(not 0 < float(w) < math.inf for w in weights.values()):
            raise ValueError("weights must give every silo a positive finite weight.")
        self._weights = normalized_weights(weights)
        self._config = config
        if initial_model is None:
            self._model = np.zeros((int(n_features) + 1, int(n_outputs)))
        else:
            self._model = np.array(initial_model, dtype=np.float64)
        self._shrink = None
        if config.column_alpha is not None:
            column_alpha = np.asarray(config.column_alpha, dtype=np.float64)
            if self._model.ndim != 2 or column_alpha.shape != (
                self._model.shape[0] - 1,
            ):
                raise ValueError(
                    "config.column_alpha needs one strength per coefficient row "
                    f"of the linear model; got {column_alpha.size} for a model "
                    f"of shape {self._model.shape}."
                )
            # 1 / (1 + eta * inf) = 0: that coefficient is held at 0.
            self._shrink = proximal_l2_factors(config.learning_rate, column_alpha)
        self._model_sum = np.zeros_like(self._model)
        self._n_averaged = 0
        self._tail_start = tail_start(config.rounds, config.tail_fraction)
        self._estimate = None  # SPIDER's h_r
        self.round_index = 0

    @property
    def weights(self):
        """Normalized public weight of each silo (a copy)."""
        return dict(self._weights)

    @property
    def model(self):
        """The model to broadcast this round (a copy)."""
        return self._model.copy()

    def step(self, messages):
        """Aggregate one round of messages and update the model.

        Parameters
        ----------
        messages : list of SiloMessage
            The answers of the silos that took part in this round (no
            amplification is credited for which silos answer: the server
            knows it).

        Raises
        ------
        ValueError
            If a message is unexpected, or if the step leaves the float
            range (a diverging ``learning_rate``); the server is then left
            as it was.
        """
        if self.round_index >= self._config.rounds:
            raise RuntimeError(
                f"the schedule has {self._config.rounds} rounds; all were run."
            )
        if not messages:
            raise ValueError(f"round {self.round_index}: no silo answered.")
        seen = set()
        for msg in messages:
            if not isinstance(msg, SiloMessage):
                raise TypeError(
                    f"the server only accepts SiloMessage; got {type(msg).__name__}."
                )
            if msg.silo_id not in self._weights or msg.silo_id in seen:
                raise ValueError(f"unexpected or repeated silo {msg.silo_id!r}.")
            if msg.round_index != self.round_index:
                raise ValueError(
                    f"silo {msg.silo_id!r} answered round {msg.round_index}, "
                    f"expected {self.round_index}."
                )
            if np.shape(msg.gradient) != self._model.shape:
                raise ValueError(
                    f"silo {msg.silo_id!r} sent shape {np.shape(msg.gradient)}, "
                    f"expected {self._model.shape}."
                )
            seen.add(msg.silo_id)
        # Sum in the server's fixed silo order, so the float result does not
        # depend on the order in which messages arrive (local vs Dask).
        by_silo = {msg.silo_id: msg.gradient for msg in messages}
        present = [s for s in self._weights if s in by_silo]
        if self._config.spider is not None and len(present) != len(self._weights):
            # h_r = h_(r-1) + H_r averages the same silos every round.
            raise ValueError(
                f"round {self.round_index}: SPIDER needs every silo's message."
            )
        mass = math.fsum(self._weights[s] for s in present)
        g = np.zeros_like(self._model)
        for s in present:
            g += (self._weights[s] / mass) * by_silo[s]
        spider = self._config.spider
        if spider is not None and not spider.is_anchor(self.round_index):
            g = self._estimate + g
        with np.errstate(over="ignore", invalid="ignore"):
            # An overflow is refused just below, with its cause.
            model = self._model - self._config.learning_rate * g
            if self._shrink is not None:
                # The penalty's proximal map after the messages' gradient
                # step: exact, so stable whatever eta * alpha_j.
                model[:-1] *= self._shrink
        if not np.isfinite(model).all():
            # A diverged step is refused here, with nothing updated: every
            # silo would refuse the model anyway, and the fit must not end on
            # a model of infs or NaNs. The model is post-processing of the
            # silos' noisy messages, so the check costs no privacy.
            raise DivergedModelError(
                f"round {self.round_index}: the server's step left the float "
                "range (the updated model is not finite): the iterates diverged; "
                "lower learning_rate (now "
                f"{self._config.learning_rate!r})."
            )
        if spider is not None:
            self._estimate = g
        self._model = model
        if self.round_index >= self._tail_start:
            self._model_sum += self._model
            self._n_averaged += 1
        self.round_index += 1

    def coefficients(self):
        """The tail-averaged model as ``(coef, intercept)``.

        Returns
        -------
        coef : ndarray of shape (n_outputs, n_features)
            Coefficients.
        intercept : ndarray of shape (n_outputs,)
            Intercepts (``s * w_0``; zeros without intercept).
        """
        avg = self.tail_average()
        return avg[:-1].T.copy(), self._config.intercept_scaling * avg[-1]

    def tail_average(self):
        """The average of the last ``tail_fraction`` of the models, as stepped.

        Returns
        -------
        model : ndarray
            The shape of the broadcast model.
        """
        if self._n_averaged == 0:
            raise RuntimeError("no round of the averaging tail has run yet.")
        return self._model_sum / self._n_averaged
