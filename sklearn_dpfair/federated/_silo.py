# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""One silo: its records and its noise, under the set-up resolved for it.

A :class:`SiloWorker` is the only object that ever holds a silo's rows. The
same class runs in-process (``execution="local"``) and as a Dask actor on
the worker that holds the silo's data (``execution="dask"``); in a real
deployment it would run inside the silo. Everything it returns is either a
:class:`SiloMessage` (a noisy, clipped mean gradient, differentially private
in the silo's records) or a :class:`SiloReport` (public metadata: size,
noise multiplier, rounds answered, privacy record).
"""

from dataclasses import dataclass

import numpy as np

from .._solvers._linear import LinearModel
from .._solvers._sampling import poisson_batch
from ..exceptions import PrivacyBudgetError
from ..privacy import PrivacyRecord, check_noise_generator
from ..privacy._releases import ReleaseLog, check_releases, logged_releases
from ._accounting import SiloPrivacy
from ._config import DivergedModelError, FederationConfig
from ._spider import SpiderRounds

__all__ = ["SiloMessage", "SiloReport", "SiloWorker"]


@dataclass(frozen=True)
class SiloMessage:
    """What a silo sends the server in one round: nothing but a noisy gradient.

    Parameters
    ----------
    silo_id : object
        The sender.
    round_index : int
        The round the message answers.
    gradient : ndarray of shape (n_features + 1, n_outputs)
        Average of the silo's noisy clipped mean gradients of this round
        (coefficient rows, then the intercept row in the scaled
        parametrization ``b = s * w_0``). ISRL-DP in the silo's records.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated import SiloMessage
    >>> SiloMessage("a", 0, np.zeros((3, 1))).gradient.shape
    (3, 1)
    """

    silo_id: object
    round_index: int
    gradient: np.ndarray


@dataclass(frozen=True)
class SiloReport:
    """Public metadata a silo reports about its own run.

    Parameters
    ----------
    silo_id : object
        The silo.
    n_samples : int
        Number of records (treated as public, like ``n`` in central DP-SGD).
    noise_multiplier : float
        The silo's noise standard deviation in units of the clip norm.
    rounds_used : int
        Messages the silo has sent.
    privacy_record : PrivacyRecord
        The silo's ISRL-DP guarantee for its whole message budget.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated import (
    ...     FederationConfig, SiloWorker, silo_privacy)
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> rng = np.random.default_rng(0)
    >>> config = FederationConfig(rounds=10, sampling_probability=0.1)
    >>> silo = SiloWorker(rng.normal(size=(500, 2)), rng.integers(0, 2, 500),
    ...     loss=BinaryLogisticLoss(), config=config,
    ...     privacy=silo_privacy(500, 1.0, 1e-5, config))
    >>> silo.report().rounds_used
    0
    """

    silo_id: object
    n_samples: int
    noise_multiplier: float
    rounds_used: int
    privacy_record: PrivacyRecord


class SiloWorker:
    """A silo that answers the server with ISRL-DP noisy gradients.

    The silo's privacy set-up ``privacy`` is resolved beforehand from public
    inputs only (:func:`silo_privacy`, run once on the driver): the noise
    multiplier is the smallest one for which ``config.noisy_steps``
    Poisson-subsampled Gaussian releases are ``(epsilon, delta)``-DP for the
    silo's own accountant (dp-accounting), or the user's, checked against
    the budget. The silo answers at most ``config.rounds`` calls of
    :meth:`message` and refuses any further one, so the whole transcript of
    what it sends is ``(epsilon, delta)``-DP with respect to adding or
    removing one of its records, whatever the server and the other silos do
    (inter-silo record-level DP, Lowy's thesis Def. 32 and 139).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The silo's features (never leave this object).
    y : array-like of shape (n_samples,)
        The silo's encoded targets, as ``loss`` expects them.
    loss : object
        Pointwise loss in raw-prediction space with ``n_outputs`` and
        ``raw_gradient`` (for example ``BinaryLogisticLoss``).
    config : FederationConfig
        The public schedule shared by all parties.
    privacy : SiloPrivacy
        The silo's resolved privacy set-up, for ``n_samples`` records and
        the sampling rate and noisy steps of ``config``.
    silo_id : object, default=None
        Name of the silo, copied into its messages.
    random_state : int, Generator or None, default=None
        Source of the silo's batches and noise; None uses OS entropy.
    network : object, default=None
        A non-linear model's silo step instead of the linear model's: an
        object with ``parameter_shape`` (the shape of the model the server
        broadcasts) and ``noisy_gradient(X, y, w, *, mechanism, denominator,
        alpha, rng)`` returning the noisy clipped mean gradient of the rows
        ``X`` at ``w`` (each record's full gradient clipped to
        ``mechanism.clip_norm``, one Gaussian release of the stacked sum),
        e.g. :class:`~sklearn_dpfair.neural._federated.NetworkSiloModel`.
        The batches, the message budget and the release checks are the
        same. With ``config.spider`` it also needs ``noisy_difference``
        (ISRL-DP FedProx-SPIDER's difference rounds,
        :class:`~sklearn_dpfair.federated._spider.SpiderRounds`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated import (
    ...     FederationConfig, SiloWorker, silo_privacy)
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(1000, 3)), rng.integers(0, 2, 1000)
    >>> config = FederationConfig(rounds=20, sampling_probability=0.1)
    >>> silo = SiloWorker(X, y, loss=BinaryLogisticLoss(), config=config,
    ...                   privacy=silo_privacy(1000, 1.0, 1e-5, config),
    ...                   silo_id="a", random_state=0)
    >>> msg = silo.message(np.zeros((4, 1)), round_index=0)
    >>> msg.gradient.shape
    (4, 1)
    >>> silo.report().privacy_record.epsilon <= 1.0
    True
    """

    def __init__(
        self,
        X,
        y,
        *,
        loss,
        config,
        privacy,
        silo_id=None,
        random_state=None,
        network=None,
    ):
        if not isinstance(config, FederationConfig):
            raise TypeError(
                f"config must be a FederationConfig; got {type(config).__name__}."
            )
        if not isinstance(privacy, SiloPrivacy):
            raise TypeError(
                f"privacy must be a SiloPrivacy; got {type(privacy).__name__}."
            )
        X = np.asarray(X)
        y = np.asarray(y)
        if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
            raise ValueError(
                f"silo {silo_id!r}: X must be 2-d and y 1-d with as many rows; "
                f"got shapes {X.shape} and {y.shape}."
            )
        if X.dtype.kind not in "fiu" or not np.isfinite(X).all():
            raise ValueError(f"silo {silo_id!r}: X must be finite numbers.")
        if X.dtype.kind in "iu":
            # Integer features are read as float64 (as ShuffledSilo reads
            # every X): the row norms and the clipped gradients are floats.
            X = X.astype(np.float64)
        record = privacy.record
        accounted = (privacy.n_samples, record.sampling_probability, record.steps)
        if accounted != (X.shape[0], config.sampling_probability, config.noisy_steps):
            # The guarantee holds for the rows, rate and steps it was resolved
            # for; a silo must not run under a set-up made for another one.
            raise ValueError(
                f"silo {silo_id!r}: its privacy set-up was resolved for (rows, "
                f"sampling rate, noisy steps) = {accounted}, not for "
                f"{(X.shape[0], config.sampling_probability, config.noisy_steps)}."
            )
        if config.spider is not None and network is None:
            raise ValueError(
                "SPIDER rounds (config.spider) need a network's silo step "
                "(network=...); a linear model runs minibatch SGD."
            )
        if config.column_alpha is not None and network is not None:
            raise ValueError(
                "config.column_alpha is the linear model's per-coefficient "
                "penalty; a network's silo step takes config.alpha."
            )
        if config.local_steps > 1 and config.local_learning_rate is None:
            if config.learning_rate == "auto":
                raise ValueError(
                    "local steps need a numeric step size: set learning_rate or "
                    "local_learning_rate, or let fit_federated resolve 'auto'."
                )

        self.silo_id = silo_id
        self._X = X
        self._y = y
        self._loss = loss
        self._config = config
        self._record = record
        self._mechanism = privacy.mechanism
        self._network = network
        self._spider = (
            None
            if config.spider is None
            else SpiderRounds(config.spider, privacy.mechanism)
        )
        self._rng = check_noise_generator(random_state)
        if network is None:
            self._model = LinearModel(loss.n_outputs, config.intercept_scaling)
            self._row_norms = self._model.row_norms(X)
            self._shape = (X.shape[1] + 1, loss.n_outputs)
        else:
            self._shape = tuple(network.parameter_shape)
        self._rounds_used = 0
        self._last_round = -1
        # The silo's own releases, checked against its own record (ISRL-DP
        # is a guarantee per silo): never passed on to the driver's log.
        self._releases = ReleaseLog()

    def message(self, model, round_index):
        """Answer one round: the silo's noisy clipped gradient at ``model``.

        Parameters
        ----------
        model : array-like of shape (n_features + 1, n_outputs)
            The server's current model (coefficient rows, then the scaled
            intercept row; a network's ``parameter_shape``); public.
        round_index : int
            The round being answered; must increase from call to call.

        Returns
        -------
        message : SiloMessage
            The only thing that leaves the silo.

        Raises
        ------
        PrivacyBudgetError
            If the silo has already sent ``config.rounds`` messages.
        """
        if self._rounds_used >= self._config.rounds:
            raise PrivacyBudgetError(
                f"silo {self.silo_id!r} has sent all {self._config.rounds} "
                "messages its budget covers and refuses to answer more."
            )
        if round_index <= self._last_round:
            raise ValueError(
                f"silo {self.silo_id!r}: round {round_index} is not after the "
                f"last round answered ({self._last_round})."
            )
        w = np.array(model, dtype=np.float64)
        if w.shape != self._shape:
            raise ValueError(
                f"silo {self.silo_id!r}: the model must be an array of shape "
                f"{self._shape}; got shape {w.shape}."
            )
        if not np.isfinite(w).all():
            # The broadcast model is public: saying it diverged reveals nothing.
            raise DivergedModelError(
                f"silo {self.silo_id!r}: the broadcast model is not finite (the "
                "server's step diverged); lower learning_rate."
            )
        steps = self._config.local_steps
        total = np.zeros_like(w)
        with logged_releases(self._releases, propagate=False):
            for _ in range(steps):
                g = self._noisy_gradient(w, round_index)
                total += g
                if steps > 1:
                    # Local steps update a private copy; only the average
                    # noisy gradient leaves the silo (post-processing).
                    w -= self._config.step_size_local * g
        # Never more releases than the silo's record accounts.
        check_releases(
            self._releases, self._record.dp_event, what=f"silo {self.silo_id!r}",
            at_most=True,
        )
        self._rounds_used += 1
        self._last_round = round_index
        return SiloMessage(self.silo_id, int(round_index), total / steps)

    def _noisy_gradient(self, w, round_index):
        """One noisy clipped gradient of the stacked parameters ``w``.

        A Poisson batch of rate ``q``, the clipped sum of its per-example
        gradients and the silo's Gaussian noise (the linear layer's noisy
        step, the same as central DP-SGD's), divided by the expected batch
        size ``q n`` (a public constant: the realized ``|B|`` would leak
        under add/remove adjacency), plus the data-independent L2 term
        (none with ``config.column_alpha``: the server's proximal step
        takes that penalty).
        """
        config = self._config
        n = self._X.shape[0]
        idx = poisson_batch(self._rng, n, config.sampling_probability)
        if self._spider is not None:
            # An anchor or a difference round of SPIDER (Lowy, Alg. 4).
            return self._spider.release(
                self._network,
                self._X[idx],
                self._y[idx],
                w,
                round_index,
                denominator=config.sampling_probability * n,
                alpha=config.alpha,
                rng=self._rng,
            )
        if self._network is not None:
            return self._network.noisy_gradient(
                self._X[idx],
                self._y[idx],
                w,
                mechanism=self._mechanism,
                denominator=config.sampling_probability * n,
                alpha=config.alpha,
                rng=self._rng,
            )
        model = self._model
        Xb = self._X[idx]
        coef, w0 = model.split(w)
        raw_grad = self._loss.raw_gradient(
            self._y[idx], model.raw_predictions(Xb, coef, w0)
        )
        g_coef, g_w0 = model.noisy_gradient(
            Xb,
            raw_grad,
            self._row_norms[idx],
            mechanism=self._mechanism,
            denominator=config.sampling_probability * n,
            rng=self._rng,
        )
        return model.stack(g_coef + model.penalty_gradient(coef, config.alpha), g_w0)

    def report(self):
        """Public metadata of this silo (no record, no statistic of its data).

        Returns
        -------
        report : SiloReport
            Size, noise multiplier, rounds answered and privacy record.
        """
        return SiloReport(
            silo_id=self.silo_id,
            n_samples=int(self._X.shape[0]),
            noise_multiplier=self._record.noise_multiplier,
            rounds_used=self._rounds_used,
            privacy_record=self._record,
        )
