# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy plan of a transformer's fit, made before the data is read.

A transformer releases at most two kinds of statistics: one joint Gaussian
sum (counts, clipped sums and sums of squares of every column, stacked,
sensitivity 1 by construction: :mod:`._moments`, :mod:`._partition`) and a
number of private quantiles (exponential mechanism, :mod:`._quantiles`).
:func:`plan_releases` turns the budget and these public counts into the
mechanisms and the ``DpEvent`` the fit will be accounted by:

* a Gaussian sum alone is calibrated by the user's accountant
  (:meth:`~sklearn_dpfair.privacy.PrivacyBudget.gaussian`; PLD is exact
  for one Gaussian);
* with quantiles the budget is planned in zCDP (Bun and Steinke, 2016):
  the largest rho dp-accounting certifies for (epsilon, delta)
  (:func:`~sklearn_dpfair.privacy._zcdp.rho_for_epsilon`) is split, a share
  for the quantiles in equal parts and the rest for the Gaussian sum, whose
  noise multiplier ``1 / sqrt(2 rho_gauss)`` makes it exactly
  ``rho_gauss``-zCDP. The composed event is interpreted by the RDP
  accountant, which is exact for both parts.
"""

import math
from dataclasses import dataclass, replace

import dp_accounting

from ..privacy import GaussianMechanism, PrivacyBudget, PrivacyRecord
from ..privacy._accounting import (
    composed_event,
    exponential_mechanism_event,
    exponential_mechanism_rho,
    gaussian_event,
    no_op_event,
    non_private_event,
)
from ..privacy._quantile import em_epsilon
from ..privacy._zcdp import ZCDP_ACCOUNTANT
from ..utils._numeric import public_float

__all__ = ["ReleasePlan", "plan_releases"]


@dataclass(frozen=True)
class ReleasePlan:
    """What a fit will release, and how it is accounted.

    Attributes
    ----------
    gaussian : GaussianMechanism or None
        The mechanism of the one joint Gaussian sum (sensitivity 1), or None.
    quantile_rho : float
        zCDP budget of each private quantile (``inf``: exact quantiles).
    n_quantiles : int
        How many quantiles are released.
    dp_event : dp_accounting.DpEvent
        The composed event of all of them.
    accountant : {"rdp", "pld"}
        The accountant that interprets ``dp_event``.
    budget : PrivacyBudget
        The budget the plan was made for.
    """

    gaussian: GaussianMechanism | None
    quantile_rho: float
    n_quantiles: int
    dp_event: object
    accountant: str
    budget: PrivacyBudget

    @property
    def is_private(self):
        """False at ``epsilon=inf``."""
        return self.budget.is_private

    def record(self, description, *, caveats=(), mechanism=None):
        """The :class:`~sklearn_dpfair.privacy.PrivacyRecord` of the fit.

        Parameters
        ----------
        description : str
            The mechanism, in words.
        caveats : tuple of str, default=()
        mechanism : GaussianMechanism or None, default=None
            The Gaussian mechanism the fit ran, when its sensitivity is not
            the plan's 1 (same noise multiplier); None: the plan's.

        Returns
        -------
        record : PrivacyRecord
            Accounted under add/remove adjacency; raises
            :class:`~sklearn_dpfair.exceptions.PrivacyBudgetError` on an
            overspend (a bug).
        """
        mechanism = (
            mechanism
            or self.gaussian
            or GaussianMechanism(clip_norm=1.0, noise_multiplier=0.0)
        )
        budget = PrivacyBudget(self.budget.epsilon, self.budget.delta, self.accountant)
        if isinstance(self.dp_event, dp_accounting.NoOpDpEvent):
            # Nothing released from the rows: (0, 0)-DP, whatever the target.
            return PrivacyRecord.from_event(
                self.dp_event,
                delta=0.0,
                accountant=self.accountant,
                adjacency="add_remove",
                mechanism=description,
                noise_multiplier=0.0,
                caveats=tuple(caveats),
            )
        record = budget.account(
            mechanism,
            description=description,
            adjacency="add_remove",
            dp_event=self.dp_event,
            caveats=tuple(caveats),
        )
        if self.gaussian is None and budget.is_private:
            # Only the quantiles' exponential mechanism ran: it has no noise
            # multiplier, and the placeholder's 0 would read as "no noise".
            return replace(record, noise_multiplier=None)
        return record


def plan_releases(
    epsilon, delta, accountant, *, gaussian, n_quantiles=0, quantile_share=0.0
):
    """Plan a fit's releases from public quantities only.

    Parameters
    ----------
    epsilon, delta : float
        The budget (``epsilon=inf``: no noise, exact statistics).
    accountant : {"rdp", "pld"}
        The user's accountant; quantiles need "rdp" (their zCDP events).
    gaussian : bool
        Whether the fit releases one joint Gaussian sum.
    n_quantiles : int, default=0
        Number of private quantiles.
    quantile_share : float, default=0.0
        Share of rho spent on the quantiles when there is a Gaussian sum too
        (all of it otherwise).

    Returns
    -------
    plan : ReleasePlan

    Raises
    ------
    ValueError
        If quantiles are planned with ``accountant="pld"``.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._plan import plan_releases
    >>> plan = plan_releases(1.0, 1e-5, "rdp", gaussian=True, n_quantiles=4,
    ...                      quantile_share=0.2)
    >>> plan.record("example").epsilon <= 1.0
    True
    >>> plan_releases(1.0, 1e-5, "pld", gaussian=False).dp_event
    NoOpDpEvent()
    """
    budget = PrivacyBudget(
        public_float(epsilon, "epsilon"), public_float(delta, "delta"), accountant
    )
    if not budget.is_private:
        mechanism = GaussianMechanism(clip_norm=1.0, noise_multiplier=0.0)
        event = non_private_event() if (gaussian or n_quantiles) else no_op_event()
        return ReleasePlan(
            mechanism if gaussian else None,
            math.inf,
            n_quantiles,
            event,
            accountant,
            budget,
        )
    if not gaussian and not n_quantiles:
        return ReleasePlan(None, math.inf, 0, no_op_event(), accountant, budget)
    if not n_quantiles:
        mechanism = budget.gaussian(1.0)
        return ReleasePlan(
            mechanism,
            math.inf,
            0,
            gaussian_event(mechanism.noise_multiplier),
            accountant,
            budget,
        )
    if accountant != ZCDP_ACCOUNTANT:
        raise ValueError(
            "accountant='pld' cannot interpret the zCDP events of private "
            "quantiles; use accountant='rdp' (exact for these releases)."
        )
    share = float(quantile_share) if gaussian else 1.0
    parts = budget.split(
        {"quantiles": share, **({"moments": 1.0 - share} if gaussian else {})}
    )
    quantile_rho = parts["quantiles"].rho / n_quantiles
    # The exponential mechanism is parameterized by epsilon0; its rho is
    # recomputed from it so that the event is exactly what the draw logs.
    epsilon0 = em_epsilon(quantile_rho)
    events = [exponential_mechanism_event(epsilon0, steps=n_quantiles)]
    mechanism = None
    if gaussian:
        mechanism = parts["moments"].gaussian(1.0)
        events.append(gaussian_event(mechanism.noise_multiplier))
    return ReleasePlan(
        mechanism,
        exponential_mechanism_rho(epsilon0),
        n_quantiles,
        composed_event(events),
        ZCDP_ACCOUNTANT,
        budget,
    )
