# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy event of a candidate fit, known before any data are read.

A private selection must be calibrated before it runs, so it needs the
``dp_event_`` that a candidate *will* record when trained with a budget
``t``. The events depend on public quantities only (the number of training
rows, the schedule, the declared group set), and the solvers compute them
with the same calibration functions called here. The search checks after
each fit that the fitted ``dp_event_`` equals the planned one, so a drift
between this module and a solver is an error, never a silent overspend.
"""

from dataclasses import dataclass

from .._solvers.fermi._fit import calibrate_fermi_noise, fermi_event, histogram_noise
from .._solvers._schedules import sgd_schedule
from ..linear_model import DPFERMIClassifier, DPLogisticRegression
from ..privacy._accounting import noisy_sgd_event
from ..privacy import PrivacyBudget
from ..privacy._calibration import calibrate_noise_multiplier

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
        if self.kind == "dp-sgd":
            _, q, steps = self.signature
            sigma = calibrate_noise_multiplier(float(t), delta, q, steps, _ACCOUNTANT)
            return noisy_sgd_event(sigma, q, steps)
        _, q, steps, active, dual_ratio, marginal_noise, public = self.signature
        z_marg = 0.0
        if active and not public:
            budget = PrivacyBudget(float(t), delta, _ACCOUNTANT)
            z_marg = histogram_noise(budget, marginal_noise)
        sigma_eff = calibrate_fermi_noise(
            float(t), delta, q, steps, z_marg, _ACCOUNTANT
        )
        return fermi_event(sigma_eff, q, steps, z_marg)


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
        q, steps = sgd_schedule(n_train, estimator.batch_size, estimator.max_iter)
        active = estimator.fairness_weight > 0 and n_groups > 1
        marginal = estimator.marginal_noise_multiplier
        signature = (
            "fermi",
            q,
            steps,
            active,
            float(estimator.dual_noise_ratio),
            None if marginal == "auto" else float(marginal),
            not isinstance(estimator.group_marginals, str),
        )
        return CandidatePlan(signature, "fermi")
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

