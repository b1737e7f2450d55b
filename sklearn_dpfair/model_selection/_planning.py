# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy event of a candidate fit, known before any data are read.

A private selection must be calibrated before it runs, so it needs the
``dp_event_`` that a candidate *will* record when trained with a budget
``t``. The events depend on public quantities only (the number of training
rows, the schedule, the declared group set), and the plan is made by the
functions the fits themselves build their events with: DP-SGD's budget
calibration and mechanism event
(:meth:`~sklearn_dpfair.privacy.PrivacyBudget.gaussian`), DP-FERMI's
release plan (:func:`sklearn_dpfair._solvers.fermi._plan.plan_from_key`,
on the key the estimator computes with its own fit's parameter mapping).
The search still checks after each fit that the fitted ``dp_event_``
equals the planned one, so a drift is an error, never a silent overspend.
"""

from dataclasses import dataclass

from .._solvers._schedules import sgd_schedule
from .._solvers.fermi._plan import plan_from_key
from ..linear_model import DPFERMIClassifier, DPLogisticRegression
from ..privacy import PrivacyBudget

__all__ = ["CandidatePlan", "plan_candidate"]

#: Parameters the search sets itself on every candidate.
SEARCH_OWNED_PARAMS = ("epsilon", "delta", "accountant", "random_state")

# The selection is accounted with the RDP accountant (the only one that
# interprets RepeatAndSelectDpEvent), so every candidate calibrates with it.
_ACCOUNTANT = "rdp"


@dataclass(frozen=True)
class CandidatePlan:
    """How one candidate's training event depends on its budget ``t``.

    ``signature`` names the public quantities the event depends on besides
    ``t``: candidates with equal signatures have equal events at every
    ``t`` (a grid over ``alpha`` or ``clip_norm`` has one signature).
    """

    signature: tuple
    kind: str

    def event(self, t, delta):
        """The ``dp_event_`` of this candidate trained with ``epsilon=t``."""
        budget = PrivacyBudget(float(t), delta, _ACCOUNTANT)
        if self.kind == "dp-sgd":
            _, q, steps = self.signature
            # The fit's own calibration and event (dp_sgd_setup).
            mechanism = budget.gaussian(1.0, sampling_probability=q, steps=steps)
            return mechanism.event(sampling_probability=q, steps=steps)
        _, key = self.signature
        return plan_from_key(key, budget).event


def plan_candidate(estimator, n_train, n_groups):
    """The :class:`CandidatePlan` of ``estimator`` trained on ``n_train`` rows.

    Parameters
    ----------
    estimator : estimator
        A candidate (the search's estimator with one grid point set).
    n_train : int
        Number of training rows (public, as in every fit of this package).
    n_groups : int
        Number of declared groups routed to the fit (1 if none).

    Raises
    ------
    TypeError
        For a non-private estimator, or a private one the search cannot plan.
    ValueError
        For a private estimator whose budget the search cannot set.
    """
    if isinstance(estimator, (DPLogisticRegression, DPFERMIClassifier)):
        if estimator.noise_multiplier is not None:
            raise ValueError(
                "The search sets each candidate's budget itself: leave "
                "noise_multiplier=None in the estimator and the grid."
            )
    if isinstance(estimator, DPLogisticRegression):
        if estimator.solver != "dp-sgd":
            raise ValueError(
                "PrivateHyperparameterSearch supports DPLogisticRegression with "
                "solver='dp-sgd' (add/remove adjacency) only."
            )
        q, steps = sgd_schedule(n_train, estimator.batch_size, estimator.max_iter)
        return CandidatePlan(("dp-sgd", q, steps), "dp-sgd")
    if isinstance(estimator, DPFERMIClassifier):
        # The fit's own key: every public input of its event but the budget
        # (the schedule, the weight-selection stages, the noise ratios, the
        # marginals), so equal keys are equal events at every budget.
        key = estimator._privacy_plan_key(n_train, n_groups)
        return CandidatePlan(("fermi", key), "fermi")
    if hasattr(estimator, "_set_privacy_record"):
        raise TypeError(
            f"PrivateHyperparameterSearch cannot plan the privacy cost of "
            f"{type(estimator).__name__} yet; it supports DPLogisticRegression "
            "and DPFERMIClassifier."
        )
    raise TypeError(
        f"{type(estimator).__name__} is not a differentially private estimator: "
        "a private search can only select among private candidates "
        "(DPLogisticRegression, DPFERMIClassifier)."
    )

