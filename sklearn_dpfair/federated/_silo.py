# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""One silo: its records, its own accountant and its own noise.

A :class:`SiloWorker` is the only object that ever holds a silo's rows. The
same class runs in-process (``execution="local"``) and as a Dask actor on
the worker that holds the silo's data (``execution="dask"``); in a real
deployment it would run inside the silo. Everything it returns is either a
:class:`SiloMessage` (a noisy, clipped mean gradient, differentially private
in the silo's records) or a :class:`SiloReport` (public metadata: size,
noise multiplier, rounds answered, privacy record).
"""

import math
from dataclasses import dataclass

import numpy as np

from .._solvers._linear import augmented_row_norms, clipped_gradient_sum
from .._solvers._sampling import poisson_batch
from ..exceptions import PrivacyBudgetError
from ..privacy._accounting import noisy_sgd_event, non_private_event
from ..privacy._calibration import calibrate_noise_multiplier
from ..privacy._mechanism import GaussianMechanism
from ..privacy._random import check_noise_generator
from ..privacy._record import PrivacyRecord, check_budget
from ..utils._array_api import finite_linear_scores
from ._config import FederationConfig
from ._silos import check_silo_size

__all__ = ["SiloMessage", "SiloReport", "SiloWorker", "silo_noise_multiplier"]

ISRL_MECHANISM = (
    "ISRL-DP noisy minibatch SGD: each silo's messages are a Poisson-subsampled "
    "Gaussian mechanism in that silo's own records (untrusted server)"
)


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
    >>> from sklearn_dpfair.federated import FederationConfig, SiloWorker
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> rng = np.random.default_rng(0)
    >>> silo = SiloWorker(rng.normal(size=(500, 2)), rng.integers(0, 2, 500),
    ...     loss=BinaryLogisticLoss(), epsilon=1.0, delta=1e-5,
    ...     config=FederationConfig(rounds=10, sampling_probability=0.1))
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

    The silo calibrates its own noise with its own accountant from its own
    budget ``(epsilon, delta)`` and the public schedule ``config``: the
    noise multiplier is the smallest one for which ``config.noisy_steps``
    Poisson-subsampled Gaussian releases are ``(epsilon, delta)``-DP
    (dp-accounting). It then answers at most ``config.rounds`` calls of
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
    epsilon : float
        The silo's budget; ``inf`` runs without noise or clipping.
    delta : float
        The silo's delta in (0, 1), below ``1 / n_samples``.
    config : FederationConfig
        The public schedule shared by all parties.
    noise_multiplier : float, default=None
        Use this noise multiplier instead of calibrating one; it must still
        fit the budget, otherwise :class:`PrivacyBudgetError` is raised.
    silo_id : object, default=None
        Name of the silo, copied into its messages.
    random_state : int, Generator or None, default=None
        Source of the silo's batches and noise; None uses OS entropy.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated import FederationConfig, SiloWorker
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(1000, 3)), rng.integers(0, 2, 1000)
    >>> config = FederationConfig(rounds=20, sampling_probability=0.1)
    >>> silo = SiloWorker(X, y, loss=BinaryLogisticLoss(), epsilon=1.0,
    ...                   delta=1e-5, config=config, silo_id="a", random_state=0)
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
        epsilon,
        delta,
        config,
        noise_multiplier=None,
        silo_id=None,
        random_state=None,
    ):
        if not isinstance(config, FederationConfig):
            raise TypeError(
                f"config must be a FederationConfig; got {type(config).__name__}."
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
        check_silo_size(silo_id, X.shape[0], delta, config.sampling_probability)
        if config.local_steps > 1 and config.local_learning_rate is None:
            if config.learning_rate == "auto":
                raise ValueError(
                    "local steps need a numeric step size: set learning_rate or "
                    "local_learning_rate, or let fit_federated resolve 'auto'."
                )

        q, steps = config.sampling_probability, config.noisy_steps
        sigma = silo_noise_multiplier(epsilon, delta, config, noise_multiplier)
        # The non-private limit shares the code path: no noise, no clipping.
        clip = math.inf if sigma == 0 and noise_multiplier is None else config.clip_norm
        event = noisy_sgd_event(sigma, q, steps) if sigma > 0 else non_private_event()
        record = PrivacyRecord.from_event(
            event,
            delta=float(delta),
            accountant=config.accountant,
            adjacency="add_remove",
            mechanism=ISRL_MECHANISM,
            noise_multiplier=sigma,
            clip_norm=clip,
            sampling_probability=q,
            steps=steps,
        )
        check_budget(record, epsilon, calibrated=False)

        self.silo_id = silo_id
        self._X = X
        self._y = y
        self._loss = loss
        self._config = config
        self._record = record
        self._mechanism = GaussianMechanism(clip_norm=clip, noise_multiplier=sigma)
        self._rng = check_noise_generator(random_state)
        self._row_norms = augmented_row_norms(X, config.intercept_scaling)
        self._rounds_used = 0
        self._last_round = -1

    def message(self, model, round_index):
        """Answer one round: the silo's noisy clipped gradient at ``model``.

        Parameters
        ----------
        model : array-like of shape (n_features + 1, n_outputs)
            The server's current model (coefficient rows, then the scaled
            intercept row); public.
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
        n_features, k = self._X.shape[1], self._loss.n_outputs
        w = np.array(model, dtype=np.float64)
        if w.shape != (n_features + 1, k) or not np.isfinite(w).all():
            raise ValueError(
                f"silo {self.silo_id!r}: the model must be a finite array of "
                f"shape {(n_features + 1, k)}; got {w.shape}."
            )
        steps = self._config.local_steps
        total = np.zeros_like(w)
        for _ in range(steps):
            g = self._noisy_gradient(w)
            total += g
            if steps > 1:
                # Local steps update a private copy; only the average noisy
                # gradient leaves the silo (post-processing of the releases).
                w -= self._config.step_size_local * g
        self._rounds_used += 1
        self._last_round = round_index
        return SiloMessage(self.silo_id, int(round_index), total / steps)

    def _noisy_gradient(self, w):
        """One Poisson batch, clipped sum, Gaussian noise, divide by ``q n``."""
        config = self._config
        n = self._X.shape[0]
        s = config.intercept_scaling
        q = config.sampling_probability
        idx = poisson_batch(self._rng, n, q)
        Xb = self._X[idx]
        # Finite predictions whatever a record holds: overflowing rows are
        # recomputed scaled and saturated, without a (data-dependent) numpy
        # warning; clipping gives any still non-finite gradient 0.
        with np.errstate(over="ignore", invalid="ignore"):
            raw = Xb @ w[:-1] + s * w[-1]
        raw = finite_linear_scores(raw, Xb, w[:-1], s * w[-1])
        raw_grad = self._loss.raw_gradient(self._y[idx], raw)
        g_coef, g_w0 = clipped_gradient_sum(
            Xb, raw_grad, self._row_norms[idx], self._mechanism.clip_norm, s
        )
        clipped_sum = np.vstack([g_coef, g_w0[None, :]])
        # The stacked (d + 1) x K sum has sensitivity clip_norm; noise is drawn
        # for all of it at once. Divide by the expected batch size q n, a
        # public constant (the realized |B| would leak under add/remove).
        g = np.asarray(self._mechanism.privatize(clipped_sum, self._rng)) / (q * n)
        if not s:
            g[-1] = 0.0  # no intercept: its (noisy) gradient is discarded
        g[:-1] += config.alpha * w[:-1]
        return g

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


def silo_noise_multiplier(epsilon, delta, config, noise_multiplier=None):
    """The noise multiplier a silo uses: calibrated by its own accountant.

    A pure function of public inputs (memoized by the core calibration), so
    the driver can also evaluate it, for example to choose a step size,
    and get exactly what the silo computes.

    Parameters
    ----------
    epsilon, delta : float
        The silo's budget; ``epsilon = inf`` means no noise.
    config : FederationConfig
        The public schedule (sampling rate, noisy steps, accountant).
    noise_multiplier : float, default=None
        A forced value, returned as is.

    Returns
    -------
    noise_multiplier : float
    """
    if noise_multiplier is not None:
        return float(noise_multiplier)
    if math.isinf(epsilon):
        return 0.0
    return calibrate_noise_multiplier(
        float(epsilon),
        float(delta),
        config.sampling_probability,
        config.noisy_steps,
        config.accountant,
    )
