# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a fit will release, known before it reads a single row.

A :class:`PrivacyPlan` is made from an estimator's parameters and public
counts only (the number of rows and columns, and where an estimator needs
them the number of declared groups, classes or public rows). It holds the
``DpEvent`` the fit will record, the accountant that interprets it and the
epsilon that accountant gives, so that anything that composes fits (a
private search, a pipeline's budget, a ledger) can reason about a fit
before running it, and check after it ran that the fitted ``dp_event_`` is
the planned one. Every private estimator builds its plan with the same
functions its ``fit`` builds its record with, so the two cannot disagree.
"""

import math
from dataclasses import dataclass, field
from numbers import Integral

import dp_accounting
import numpy as np

from ..exceptions import PrivacyAccountingError
from ._accounting import epsilon_of
from ._record import NON_PRIVATE_LIMIT

__all__ = ["PrivacyPlan", "check_public_count", "check_public_layout"]


def check_public_count(value, name, *, minimum=1):
    """``value`` as an int >= ``minimum``, or a ``ValueError`` naming ``name``.

    Parameters
    ----------
    value : int
        A public count.
    name : str
        Its parameter name, for the error message.
    minimum : int, default=1
        The smallest allowed value.

    Returns
    -------
    value : int
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int; got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}.")
    return int(value)


def check_public_layout(sparse):
    """``sparse`` (whether ``X`` is a sparse matrix) as a bool, or a ``TypeError``.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._plan import check_public_layout
    >>> check_public_layout(False)
    False
    """
    if not isinstance(sparse, (bool, np.bool_)):
        raise TypeError(f"sparse must be a bool; got {type(sparse).__name__}.")
    return bool(sparse)



def _planned_mechanism(record):
    """What the planned fit runs, in words.

    A set-up record at the non-private limit (``epsilon=inf`` without a
    noise multiplier) may still describe the private mechanism, which the
    fit does not run: it computes the same quantities exactly, and its
    record says how (a full-batch solver and its steps, known only then).
    """
    mechanism = record.mechanism
    non_private = isinstance(record.dp_event, dp_accounting.NonPrivateDpEvent)
    if not non_private or "non-private" in mechanism:
        # Already the description of what the fit runs.
        return mechanism
    return (
        f"{NON_PRIVATE_LIMIT}nothing is released privately, and no noise is "
        "added; the fit computes exactly what the private mechanism estimates "
        f"(its record says how), the private mechanism being: {mechanism}"
    )

@dataclass(frozen=True)
class PrivacyPlan:
    """The privacy event of a fit, made from public quantities before it runs.

    Obtained from ``estimator.privacy_plan(n_samples, n_features, ...)``.
    The plan is what the fit *will* record: for a fit on ``n_samples`` rows
    with the same parameters, ``plan.dp_event == estimator.dp_event_`` and
    ``plan.epsilon == estimator.epsilon_``.

    Parameters
    ----------
    estimator : str
        Name of the planned estimator (or pipeline).
    dp_event : dp_accounting.DpEvent
        The event the fit will be accounted by.
    delta : float
        The delta at which ``epsilon`` is stated.
    accountant : {"rdp", "pld"}
        The dp-accounting accountant that interprets ``dp_event``.
    adjacency : {"add_remove", "replace_one"}
        The neighbouring relation of the guarantee.
    mechanism : str
        Human-readable description of the releases.
    public : tuple of (str, object) pairs
        The public inputs the plan was made from (``n_samples``,
        ``n_features`` and any declared count).
    steps : tuple of (str, PrivacyPlan) pairs, default=()
        The plans of the parts of a composite fit (a pipeline's private
        steps), in order; empty for a single estimator.
    additional_delta : float, default=0.0
        Delta spent outside ``dp_event`` and added by the union bound (the
        threshold of a partition selection); the fit is then
        ``(epsilon, delta + additional_delta)``-DP.

    Attributes
    ----------
    epsilon : float
        What ``accountant`` gives for ``dp_event`` at ``delta``.

    Examples
    --------
    >>> from sklearn_dpfair.linear_model import DPLogisticRegression
    >>> plan = DPLogisticRegression(epsilon=1.0).privacy_plan(1000, 5)
    >>> plan.epsilon <= 1.0
    True
    >>> plan.adjacency
    'add_remove'
    """

    estimator: str
    dp_event: object
    delta: float
    accountant: str
    adjacency: str
    mechanism: str
    public: tuple = ()
    steps: tuple = ()
    additional_delta: float = 0.0
    epsilon: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(
            self, "epsilon", epsilon_of(self.dp_event, self.delta, self.accountant)
        )

    @property
    def total_delta(self):
        """``delta + additional_delta``: the delta of the whole guarantee."""
        return self.delta + self.additional_delta

    @classmethod
    def from_record(cls, record, *, estimator, public=(), additional_delta=0.0):
        """The plan of a fit whose (planned) record is ``record``.

        Parameters
        ----------
        record : PrivacyRecord
            A record built from public quantities (the fit's own set-up).
        estimator : str
            Name of the estimator.
        public : tuple of (str, object) pairs, default=()
            The public inputs of the plan.
        additional_delta : float, default=0.0
            Delta spent outside the record's event.

        Returns
        -------
        plan : PrivacyPlan
        """
        return cls(
            estimator=estimator,
            dp_event=record.dp_event,
            delta=record.delta,
            accountant=record.accountant,
            adjacency=record.adjacency,
            mechanism=_planned_mechanism(record),
            public=tuple(public),
            additional_delta=float(additional_delta),
        )

    @property
    def is_private(self):
        """False for a non-private plan (``epsilon = inf``)."""
        return not math.isinf(self.epsilon)

    def check_fitted(self, estimator):
        """Raise unless ``estimator`` was fitted exactly as planned.

        Parameters
        ----------
        estimator : fitted private estimator
            The estimator this plan was made for, fitted on the planned
            number of rows.

        Raises
        ------
        PrivacyAccountingError
            If its ``dp_event_`` or ``adjacency_`` differ from the plan's.
        """
        fitted = getattr(estimator, "dp_event_", None)
        if fitted != self.dp_event or getattr(estimator, "adjacency_", None) != (
            self.adjacency
        ):
            raise PrivacyAccountingError(
                f"{self.estimator} was planned to release {self.dp_event!r} "
                f"under {self.adjacency} adjacency, but its fit recorded "
                f"{fitted!r} under {getattr(estimator, 'adjacency_', None)}. "
                "This is a bug: please report it."
            )

    def __str__(self):
        public = ", ".join(f"{name}={value}" for name, value in self.public)
        if self.is_private:
            head = f"({self.epsilon:.4g}, {self.total_delta:.3g})-DP ({self.adjacency})"
        else:
            head = "not private (epsilon = inf)"
        lines = [f"Plan of {self.estimator}({public}): {head}, {self.accountant.upper()}."]
        lines.append(f"Releases: {self.mechanism}.")
        for name, step in self.steps:
            lines.append(f"  step {name!r}: {step.epsilon:.4g} -- {step.mechanism}")
        return "\n".join(lines)
