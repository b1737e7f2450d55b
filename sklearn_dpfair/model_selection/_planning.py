# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy event of a candidate fit, known before any data are read.

A private selection must be calibrated before it runs, so it needs the
``dp_event_`` that a candidate *will* record when trained with a budget
``t``. Every private estimator (and private pipeline) states it itself:
``privacy_plan(n_samples, n_features, **public_counts)`` is built from its
parameters and public counts by the same functions its fit builds its
record with. The search reads nothing else about a candidate, so any
private estimator can be searched, and still checks after each fit that the
fitted ``dp_event_`` equals the planned one: a drift is an error, never a
silent overspend.
"""

import math

from sklearn.base import clone

__all__ = ["CandidatePlan", "plan_candidate"]

#: Parameters the search sets itself on every candidate.
SEARCH_OWNED_PARAMS = ("epsilon", "delta", "accountant", "random_state")

# The selection is accounted with the RDP accountant (the only one that
# interprets RepeatAndSelectDpEvent), so every candidate calibrates with it.
_ACCOUNTANT = "rdp"


class CandidatePlan:
    """How one candidate's training event depends on its budget ``t``.

    Parameters
    ----------
    estimator : estimator
        The candidate (the search's estimator with one grid point set).
    n_train, n_features : int
        The shape of the training split (public).
    counts : dict
        The other public counts its plan takes (``n_groups``, ...).
    """

    def __init__(self, estimator, n_train, n_features, counts):
        self.estimator = estimator
        self.n_train = n_train
        self.n_features = n_features
        self.counts = dict(counts)
        self._events = {}

    def plan(self, t, delta):
        """The candidate's :class:`~sklearn_dpfair.privacy.PrivacyPlan` at budget ``t``."""
        est = clone(self.estimator).set_params(
            epsilon=float(t), delta=float(delta), accountant=_ACCOUNTANT
        )
        return est.privacy_plan(self.n_train, self.n_features, **self.counts)

    def event(self, t, delta):
        """The ``dp_event_`` of this candidate trained with ``epsilon=t``."""
        key = (float(t), float(delta))
        if key not in self._events:
            self._events[key] = self.plan(t, delta).dp_event
        return self._events[key]


def plan_candidate(estimator, n_train, n_features, counts, *, delta):
    """The :class:`CandidatePlan` of ``estimator`` trained on ``n_train`` rows.

    Checks, before any row is read, that the candidate can be planned: a
    private estimator (it has ``privacy_plan``), whose budget the search
    can set (no fixed ``noise_multiplier``), whose guarantee is stated
    under add/remove adjacency (the selection's), and whose plan can be made
    from counts.

    Parameters
    ----------
    estimator : estimator
        A candidate.
    n_train, n_features : int
        Shape of the training split.
    counts : dict
        Public counts available to the plan (``n_groups``, ``n_public``,
        ``n_classes``); those the estimator does not take are not passed.
    delta : float
        The search's delta (a plan is made at it, to check the candidate).

    Raises
    ------
    TypeError
        For a non-private estimator.
    ValueError
        For a private one the search cannot plan (the message says why).
    """
    name = type(estimator).__name__
    if not hasattr(estimator, "privacy_plan"):
        raise TypeError(
            f"{name} is not a differentially private estimator: a private "
            "search can only select among private candidates (estimators "
            "and pipelines with a privacy_plan)."
        )
    params = estimator.get_params()
    if params.get("noise_multiplier") is not None:
        raise ValueError(
            "The search sets each candidate's budget itself: leave "
            "noise_multiplier=None in the estimator and the grid."
        )
    accepted = getattr(estimator, "_plan_public_counts", None)
    if accepted is not None:
        counts = {k: v for k, v in counts.items() if k in accepted}
    plan = CandidatePlan(estimator, n_train, n_features, counts)
    try:
        # The adjacency and the public inputs a plan needs do not depend on
        # the budget; epsilon = inf cannot overspend.
        probe = plan.plan(math.inf, delta)
    except NotImplementedError as exc:
        raise ValueError(
            f"{name} cannot state its privacy plan yet, so the search cannot "
            "calibrate it."
        ) from exc
    except ValueError as exc:
        raise ValueError(
            f"The search cannot plan {name} before reading the data: {exc}"
        ) from exc
    if probe.adjacency != "add_remove":
        raise ValueError(
            f"{name} is private under {probe.adjacency} adjacency, but the "
            "private selection is accounted under add/remove: choose a "
            "solver or adjacency with add/remove guarantees (e.g. "
            "DPLogisticRegression(solver='dp-sgd'))."
        )
    return plan
