# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Zero-concentrated differential privacy (zCDP): conversions and a budget ledger.

Under rho-zCDP (Bun and Steinke, 2016) sequential composition adds the rho
of the parts, and a Gaussian mechanism of l2-sensitivity ``Delta`` and noise
standard deviation ``sigma`` is *exactly* ``Delta^2 / (2 sigma^2)``-zCDP (its
Renyi divergence of order alpha is ``alpha Delta^2 / (2 sigma^2)``). An
estimator that splits one budget between several private steps therefore
plans the split in rho with a :class:`ZCDPLedger`, and the whole fit is
described by one dp-accounting ``ZCDpEvent`` per step (see
:func:`~sklearn_dpfair.privacy._accounting.zcdp_event`).

Converting a user's (epsilon, delta) target into rho is a calibration like
any other: :func:`rho_for_epsilon` searches the largest rho whose epsilon, as
computed by dp-accounting's RDP accountant, meets the target. The closed form
of Bun and Steinke (Prop. 1.3), ``rho = (sqrt(ln(1/delta) + eps) -
sqrt(ln(1/delta)))^2``, is valid but loose (about 30% less rho at eps = 1);
it is kept as :func:`rho_for_epsilon_simple` for reference and to
parameterize the noise of the private search's scores (whose epsilon the
accountant then computes from the event).
"""

import functools
import math

from ..exceptions import PrivacyBudgetError
from ._accounting import check_rho, epsilon_of, zcdp_composition, zcdp_event

__all__ = [
    "ZCDPLedger",
    "gaussian_noise_std",
    "rho_for_epsilon",
    "rho_for_epsilon_simple",
]

# Bisection on log(rho): 1e-6 relative tolerance is far below anything that
# matters for utility, and the result is always the certified (lower) end.
_LOG_RHO_XTOL = 1e-6
# Search range of rho. 1e-14 is epsilon ~ 1e-6 at delta = 1e-5; 1e6 is
# epsilon ~ 1e6, far beyond any meaningful budget.
_RHO_MIN, _RHO_MAX = 1e-14, 1e6
# zCDP is converted with the RDP accountant, which interprets ZCDpEvent exactly.
ZCDP_ACCOUNTANT = "rdp"


def rho_for_epsilon_simple(epsilon, delta):
    """Largest rho that Bun and Steinke's closed form certifies as (epsilon, delta)-DP.

    rho-zCDP implies ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP; solving
    for rho gives ``(sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2``.

    Parameters
    ----------
    epsilon : float
        Target epsilon > 0 (``inf`` gives ``inf``).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from sklearn_dpfair.privacy._zcdp import rho_for_epsilon_simple
    >>> round(rho_for_epsilon_simple(1.0, 1e-5), 7)
    0.0208199
    """
    if math.isinf(epsilon):
        return math.inf
    inverse = 1.0 / delta
    # -log(delta) where 1 / delta overflows (a subnormal delta): the same,
    # finite term, where log(inf) would make the difference below inf - inf.
    log_term = math.log(inverse) if math.isfinite(inverse) else -math.log(delta)
    return (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2


@functools.lru_cache(maxsize=1024)
def rho_for_epsilon(epsilon, delta):
    """Largest rho whose zCDP guarantee dp-accounting certifies as (epsilon, delta)-DP.

    Bisection on ``log(rho)`` against dp-accounting's RDP accountant applied
    to ``ZCDpEvent(rho)``; the returned rho is always on the certified side
    (``epsilon_of(zcdp_event(rho), delta) <= epsilon``). Pure function of
    public inputs, memoized.

    Parameters
    ----------
    epsilon : float
        Target epsilon > 0 (``inf`` gives ``inf``).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from sklearn_dpfair.privacy._zcdp import rho_for_epsilon
    >>> round(rho_for_epsilon(1.0, 1e-5), 4)
    0.0306
    """
    if math.isinf(epsilon):
        return math.inf

    def meets(log_rho):
        eps = epsilon_of(zcdp_event(math.exp(log_rho)), delta, ZCDP_ACCOUNTANT)
        return eps <= epsilon

    good, bad = math.log(_RHO_MIN), math.log(_RHO_MAX)
    if not meets(good):
        # The floor is the accountant's, not rho's: RDP's largest order
        # (1024) bounds the (epsilon, delta) conversion of even a vanishing
        # rho below by about log(1 / delta) / 1023.
        floor = epsilon_of(zcdp_event(_RHO_MIN), delta, ZCDP_ACCOUNTANT)
        raise PrivacyBudgetError(
            f"epsilon={epsilon} at delta={delta} is below what the RDP "
            f"accountant can certify for a zCDP release at this delta (about "
            f"{floor:.3g}: its largest order is 1024). Raise epsilon or delta."
        )
    if meets(bad):
        return _RHO_MAX
    while bad - good > _LOG_RHO_XTOL:
        mid = 0.5 * (good + bad)
        if meets(mid):
            good = mid
        else:
            bad = mid
    return math.exp(good)


def gaussian_noise_std(sensitivity, rho):
    """Noise standard deviation that makes a Gaussian mechanism exactly rho-zCDP.

    ``sigma = sensitivity / sqrt(2 rho)`` (Bun and Steinke, Prop. 1.6: the
    Renyi divergence of order alpha between the two Gaussians is
    ``alpha sensitivity^2 / (2 sigma^2)``, an identity, not a bound).

    Parameters
    ----------
    sensitivity : float
        l2-sensitivity of the released quantity.
    rho : float
        zCDP budget of the release; ``inf`` gives 0 (no noise).

    Returns
    -------
    sigma : float

    Examples
    --------
    >>> from sklearn_dpfair.privacy._zcdp import gaussian_noise_std
    >>> gaussian_noise_std(2.0, 0.5)
    2.0
    """
    if math.isinf(rho):
        return 0.0
    if rho <= 0:
        raise ValueError(f"rho must be positive, got {rho!r}.")
    return float(sensitivity) / math.sqrt(2.0 * rho)


class ZCDPLedger:
    """Split a rho-zCDP budget between named private steps; the parts sum to it.

    Each step takes its share with :meth:`allocate` *before* it reads the
    data; :meth:`allocate_rest` gives what is left to the last step, so that
    :attr:`spent` sums to the budget exactly. Sequential composition (Bun
    and Steinke, Lemma 2.3) then makes the fit ``budget``-zCDP.

    Parameters
    ----------
    budget : float
        Total rho (``inf`` for a non-private fit).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._zcdp import ZCDPLedger
    >>> ledger = ZCDPLedger(1.0)
    >>> ledger.allocate("clip_median", 0.05)
    0.05
    >>> ledger.allocate_rest("optimizer")
    0.95
    >>> ledger.spent
    {'clip_median': 0.05, 'optimizer': 0.95}
    """

    def __init__(self, budget):
        check_rho(budget, "budget")
        self.budget = float(budget)
        self._spent = {}

    @property
    def spent(self):
        """Dict of rho per step, in allocation order."""
        return dict(self._spent)

    @property
    def remaining(self):
        """Budget not yet allocated."""
        if math.isinf(self.budget):
            return math.inf
        return self.budget - sum(self._spent.values())

    def allocate(self, name, rho):
        """Reserve ``rho`` for the step ``name`` and return it.

        Parameters
        ----------
        name : str
            Name of the step (unique within the ledger).
        rho : float
            Its share; must not exceed :attr:`remaining`.

        Returns
        -------
        rho : float

        Raises
        ------
        ValueError
            If ``name`` already has a budget or ``rho`` is not a number in
            [0, inf] (NaN included).
        PrivacyBudgetError
            If ``rho`` exceeds :attr:`remaining`.
        """
        if name in self._spent:
            raise ValueError(f"The step {name!r} already has a budget.")
        # NaN passes both comparisons below and would make every later
        # remaining (and the fit's zCDP event) NaN.
        check_rho(rho)
        rho = float(rho)
        if not math.isinf(self.budget) and rho > self.remaining:
            raise PrivacyBudgetError(
                f"Step {name!r} asks for rho={rho:g}, but only "
                f"{self.remaining:g} of rho={self.budget:g} is left."
            )
        self._spent[name] = rho
        return rho

    def allocate_rest(self, name):
        """Give everything not yet allocated to the step ``name`` and return it.

        Parameters
        ----------
        name : str
            Name of the last step.

        Returns
        -------
        rho : float
        """
        rest = self.remaining
        if not math.isinf(rest):
            # The rest is budget - sum(others), so the parts add up exactly
            # (up to one rounding); clamp a negative rounding error to 0.
            rest = max(rest, 0.0)
        return self.allocate(name, rest)

    def dp_event(self):
        """dp-accounting event of the fit: one ``ZCDpEvent`` per step, composed.

        Returns
        -------
        event : dp_accounting.DpEvent
        """
        return zcdp_composition(self._spent.values())
