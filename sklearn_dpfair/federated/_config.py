# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The public training schedule that the server and every silo agree on."""

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._solvers._schedules import check_penalty_step
from ..exceptions import DivergedModelError
from ..privacy._accounting import check_accountant
from ._spider import SpiderSchedule

__all__ = ["DivergedModelError", "FederationConfig"]


@dataclass(frozen=True)
class FederationConfig:
    """Public, data-independent schedule of a federated ISRL-DP run.

    Every field is fixed before any silo reads its records, and every party
    (server and silos) knows all of them: they are part of the public
    protocol, not of anyone's private data.

    One round is: the server broadcasts the model; each silo takes
    ``local_steps`` noisy clipped gradient steps on Poisson batches of its own
    records (sampling rate ``sampling_probability``, the same for every silo
    as in Lowy's thesis, Alg. 19) and sends back the average of its noisy
    gradients; the server averages the messages with public weights and
    steps. ``local_steps=1`` is Noisy ISRL-DP minibatch SGD (Lowy's thesis,
    Alg. 14), the recommended algorithm; ``local_steps > 1`` is the ISRL-DP
    Local SGD baseline (noisy FedAvg).

    Parameters
    ----------
    rounds : int
        Number of communication rounds ``R``; each silo sends at most this
        many messages.
    sampling_probability : float
        Poisson sampling rate ``q`` in (0, 1] of each local step, in every
        silo.
    clip_norm : float, default=1.0
        Per-record gradient clip threshold ``C`` (``inf`` only for
        non-private runs).
    learning_rate : float or "auto", default="auto"
        Server step size on the averaged message. "auto" is the DP-SGD rule
        of the central solver (``auto_learning_rate``) applied to the noise
        of the aggregate, ``sqrt(sum_i (p_i sigma_i / (q n_i))^2)``: public
        quantities, resolved by :func:`fit_federated` before the first round.
    alpha : float, default=0.0
        L2 penalty ``alpha/2 ||w||^2`` on the coefficients (not the
        intercept); data independent, so free of privacy cost. Every silo
        adds its gradient ``alpha w`` to its message.
    fit_intercept : bool, default=True
        Fit an intercept through a constant feature of value 1.
    local_steps : int, default=1
        Noisy steps per round inside each silo (1 for minibatch SGD).
    local_learning_rate : float, default=None
        Step size of the local steps; None is ``learning_rate /
        local_steps``, which makes the server step exactly FedAvg (the new
        model is the weighted average of the silos' local models).
    tail_fraction : float, default=0.5
        The returned model is the average of this fraction of the last
        server iterates.
    accountant : {"rdp", "pld"}, default="rdp"
        dp-accounting accountant each silo uses for its own budget.
    spider : SpiderSchedule or None, default=None
        Run ISRL-DP FedProx-SPIDER (Lowy's thesis, Alg. 4) with this phase
        length and smoothness instead of minibatch SGD: a network's
        federation only, ``local_steps=1``.
    column_alpha : sequence of float or None, default=None
        Per-coefficient L2 strengths ``alpha_j >= 0`` (``inf`` allowed), in
        place of ``alpha`` (which must then be 0): the penalty ``sum_j
        (alpha_j / 2) ||w_j||^2`` on the coefficient rows, taken by the
        server's exact proximal step after its gradient step, ``w_j <-
        (w_j - eta g_j) / (1 + eta alpha_j)`` (proximal gradient descent,
        Parikh and Boyd, *Proximal Algorithms*, 2014, Sec. 4.2): stable for
        any ``eta alpha_j`` (``inf`` holds ``w_j`` at 0), so no step-size cap
        comes with it, and the silos add no penalty to their messages. The
        linear model's federation without privacy on mapped columns, whose
        documented penalty ``alpha/2 ||w||^2`` is on the coefficients in the
        user's units (:func:`~sklearn_dpfair.federated._fit.fit_silos`).
        Minibatch SGD (``local_steps=1``, no ``spider``) only.

    Examples
    --------
    >>> from sklearn_dpfair.federated import FederationConfig
    >>> config = FederationConfig(rounds=100, sampling_probability=0.05)
    >>> config.noisy_steps, config.intercept_scaling
    (100, 1.0)
    """

    rounds: int
    sampling_probability: float
    clip_norm: float = 1.0
    learning_rate: float | str = "auto"
    alpha: float = 0.0
    fit_intercept: bool = True
    local_steps: int = 1
    local_learning_rate: float | None = None
    tail_fraction: float = 0.5
    accountant: str = "rdp"
    spider: SpiderSchedule | None = None
    column_alpha: tuple | None = None

    def __post_init__(self):
        _positive_int("rounds", self.rounds)
        _positive_int("local_steps", self.local_steps)
        for name in ("sampling_probability", "clip_norm", "alpha", "tail_fraction"):
            _real(name, getattr(self, name))
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(
                f"fit_intercept must be a bool; got {self.fit_intercept!r}."
            )
        if not 0.0 < self.sampling_probability <= 1.0:
            raise ValueError(
                "sampling_probability must be in (0, 1]; got "
                f"{self.sampling_probability!r}."
            )
        if not self.clip_norm > 0:
            raise ValueError(f"clip_norm must be > 0; got {self.clip_norm!r}.")
        for name in ("learning_rate", "local_learning_rate"):
            value = getattr(self, name)
            if name == "learning_rate" and value == "auto":
                continue
            if value is not None and (not _is_real(value) or not 0 < value < math.inf):
                raise ValueError(f"{name} must be a positive float; got {value!r}.")
        if not (0 <= self.alpha < math.inf):
            raise ValueError(f"alpha must be >= 0; got {self.alpha!r}.")
        for rate in (self.learning_rate, self.local_learning_rate):
            if rate is not None and rate != "auto":
                check_penalty_step(rate, self.alpha)
        if not 0.0 < self.tail_fraction <= 1.0:
            raise ValueError(
                f"tail_fraction must be in (0, 1]; got {self.tail_fraction!r}."
            )
        if self.spider is not None and (
            not isinstance(self.spider, SpiderSchedule) or self.local_steps != 1
        ):
            raise ValueError(
                "spider must be a SpiderSchedule, with local_steps=1 (one "
                f"release per round); got {self.spider!r}, local_steps="
                f"{self.local_steps}."
            )
        if self.column_alpha is not None:
            self._check_column_alpha()
        check_accountant(self.accountant)

    def _check_column_alpha(self):
        try:
            values = tuple(float(a) for a in self.column_alpha)
        except (TypeError, ValueError):
            values = None
        if values is None or not all(a >= 0 for a in values):
            raise ValueError(
                "column_alpha must be a sequence of floats >= 0 (inf allowed); "
                f"got {self.column_alpha!r}."
            )
        if self.alpha != 0 or self.local_steps != 1 or self.spider is not None:
            # The server's proximal step replaces the silos' penalty term;
            # local steps and SPIDER's estimate would need their own.
            raise ValueError(
                "column_alpha replaces alpha in minibatch SGD: pass alpha=0, "
                f"local_steps=1 and no spider; got alpha={self.alpha!r}, "
                f"local_steps={self.local_steps!r}, spider={self.spider!r}."
            )
        # A tuple of floats: the frozen config stays hashable and comparable.
        object.__setattr__(self, "column_alpha", values)

    @property
    def noisy_steps(self):
        """Noisy releases a silo composes over the whole run (``R * K``)."""
        return self.rounds * self.local_steps

    @property
    def intercept_scaling(self):
        """Constant appended to each row: 1 with an intercept, else 0."""
        return 1.0 if self.fit_intercept else 0.0

    @property
    def step_size_local(self):
        """Step size of the local steps (see ``local_learning_rate``)."""
        if self.local_learning_rate is not None:
            return float(self.local_learning_rate)
        if self.learning_rate == "auto":
            raise ValueError(
                "learning_rate='auto' must be resolved (fit_federated does it) "
                "before the local step size is known."
            )
        return float(self.learning_rate) / self.local_steps


def _is_real(value):
    # Checked before the range checks, whose comparisons raise a bare
    # TypeError on a string or None and read True as 1.
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _real(name, value):
    if not _is_real(value):
        raise ValueError(f"{name} must be a real number; got {value!r}.")


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}.")
