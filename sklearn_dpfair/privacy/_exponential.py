# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The exponential mechanism over a finite set, sampled exactly by Gumbel-max.

Selecting ``v`` with probability proportional to
``exp(epsilon0 u(v) / (2 Delta))``, where every score ``u(v)`` changes by at
most ``Delta`` between neighbouring datasets, is ``epsilon0``-DP (McSherry
and Talwar, 2007) and ``epsilon0^2 / 8``-zCDP (bounded range; see
:func:`~sklearn_dpfair.privacy._accounting.exponential_mechanism_rho`). The
Gumbel-max trick samples it exactly: ``argmax_v [epsilon0 u(v) / (2 Delta) +
G_v]`` with ``G_v`` i.i.d. standard Gumbel has exactly that distribution.
Solvers compute the scores; this module draws the noise.
"""

import math
from dataclasses import dataclass

import numpy as np

from ._accounting import exponential_mechanism_event, exponential_mechanism_rho
from ._mechanism import MIN_NOISE_SCALE
from ._releases import log_release

__all__ = [
    "ExponentialMechanism",
    "epsilon_per_selection",
    "least_sensitivity",
    "selection_scale_problem",
]

_MAX_FLOAT = float(np.finfo(np.float64).max)


def epsilon_per_selection(rho, n_selections):
    """Largest ``epsilon0`` whose ``n_selections`` selections spend at most ``rho``.

    Each selection is ``epsilon0^2 / 8``-zCDP and zCDP adds up under
    adaptive composition, so ``epsilon0 = sqrt(8 rho / n_selections)``
    (shrunk by one part in 1e12 so that float round-off never overspends).

    Parameters
    ----------
    rho : float
        zCDP budget of all the selections (``inf``: no noise).
    n_selections : int
        Number of adaptive selections, >= 1.

    Returns
    -------
    epsilon0 : float

    Examples
    --------
    >>> from sklearn_dpfair.privacy._exponential import epsilon_per_selection
    >>> round(epsilon_per_selection(0.5, 4), 6)
    1.0
    """
    if n_selections < 1:
        raise ValueError(f"n_selections must be >= 1, got {n_selections!r}.")
    if math.isinf(rho):
        return math.inf
    return math.sqrt(8.0 * rho / n_selections) * (1.0 - 1e-12)


def selection_scale_problem(sensitivity, epsilon):
    """Why a selection of these parameters would not draw as accounted, or None.

    The Gumbel-max draw computes the logits ``u(v) * epsilon0 / (2 Delta)``
    in float64. Below the smallest normal float64
    (:data:`~sklearn_dpfair.privacy._mechanism.MIN_NOISE_SCALE`) a
    sensitivity, and the scores it bounds, are subnormal numbers, rounded
    to a grid of multiples of 5e-324, and the factor
    ``epsilon0 / (2 Delta)`` overflows for the smaller ones: the logits are
    then ``+-inf`` or NaN, the Gumbel noise no longer moves the argmax, and
    the selection is deterministic (epsilon infinite) while the event
    states ``epsilon0``. A finite factor keeps every logit finite for the
    scores a sensitivity bounds (their ratio to it is at most about the
    number of records). Only a finite ``epsilon0`` and a finite positive
    sensitivity are checked; the rest is the mechanism's validation.

    Parameters
    ----------
    sensitivity : float
        The score sensitivity ``Delta``.
    epsilon : float
        ``epsilon0`` of one selection.

    Returns
    -------
    problem : str or None
        A sentence (public values only) for the caller's message, or None.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._exponential import selection_scale_problem
    >>> selection_scale_problem(1.0, 2.0) is None
    True
    >>> selection_scale_problem(1e-310, 1.0)[:40]
    'the score sensitivity 1e-310 is below th'
    """
    if math.isinf(epsilon) or not epsilon > 0 or not 0 < sensitivity < math.inf:
        return None
    if sensitivity < MIN_NOISE_SCALE:
        return (
            f"the score sensitivity {sensitivity:g} is below the smallest "
            f"normal float64 ({MIN_NOISE_SCALE:g}), where scores are rounded "
            "to a grid of subnormal numbers and the logit factor epsilon0 / "
            "(2 * sensitivity) overflows for the smaller ones: the selection "
            "would not be the exponential mechanism it is accounted as"
        )
    if not epsilon / (2.0 * sensitivity) <= _MAX_FLOAT:
        return (
            f"epsilon0 / (2 * sensitivity) = {epsilon:g} / (2 * "
            f"{sensitivity:g}) overflows float64: every logit would be inf or "
            "NaN and the Gumbel noise would not randomize the selection"
        )
    return None


def least_sensitivity(epsilon):
    """The least score sensitivity a selection at ``epsilon`` can use.

    The least ``Delta`` for which :func:`selection_scale_problem` finds
    nothing: the smallest normal float64, or more where
    ``epsilon / (2 Delta)`` would overflow. 0 for ``epsilon = inf`` (no
    noise, nothing to compute).

    Parameters
    ----------
    epsilon : float
        ``epsilon0`` of the selection (the largest of several).

    Returns
    -------
    sensitivity : float

    Examples
    --------
    >>> from sklearn_dpfair.privacy._exponential import least_sensitivity
    >>> least_sensitivity(1.0)
    2.2250738585072014e-308
    >>> least_sensitivity(2000.0) > 5e-306
    True
    """
    if math.isinf(epsilon):
        return 0.0
    # (2 * _MAX_FLOAT would overflow.)
    least = max(MIN_NOISE_SCALE, epsilon / 2.0 / _MAX_FLOAT)
    while selection_scale_problem(least, epsilon) is not None:
        least = math.nextafter(least, math.inf)  # round-off of the / and *
    return least


@dataclass(frozen=True)
class ExponentialMechanism:
    """Select the index of a high score privately (exponential mechanism).

    Parameters
    ----------
    sensitivity : float
        Bound ``Delta > 0`` on the change of *every* score between
        neighbouring datasets (the caller's adjacency). With a finite
        ``epsilon``, at least the smallest normal float64, and such that
        ``epsilon / (2 * sensitivity)`` is finite
        (:func:`selection_scale_problem`): a ValueError otherwise.
    epsilon : float
        ``epsilon0`` of one selection; ``inf`` selects the best score
        (no privacy).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._exponential import ExponentialMechanism
    >>> mech = ExponentialMechanism(sensitivity=1.0, epsilon=np.inf)
    >>> int(mech.select(np.array([0.0, 3.0, 1.0]), np.random.default_rng(0)))
    1
    >>> ExponentialMechanism(sensitivity=1.0, epsilon=2.0).rho
    0.5
    """

    sensitivity: float
    epsilon: float

    def __post_init__(self):
        if not self.sensitivity > 0 or math.isinf(self.sensitivity):
            raise ValueError(
                f"sensitivity must be positive and finite, got {self.sensitivity!r}."
            )
        if not self.epsilon > 0:
            raise ValueError(f"epsilon must be positive, got {self.epsilon!r}.")
        problem = selection_scale_problem(self.sensitivity, self.epsilon)
        if problem is not None:
            raise ValueError(
                f"sensitivity is too small: {problem}. Compute the scores on a "
                "scale where their sensitivity is a normal float64 and "
                "epsilon / (2 * sensitivity) is finite."
            )

    @property
    def rho(self):
        """zCDP cost of one selection, ``epsilon0^2 / 8``."""
        return exponential_mechanism_rho(self.epsilon)

    @property
    def noise_multiplier(self):
        """Gumbel scale ``2 / epsilon0`` in units of the score sensitivity."""
        return 0.0 if math.isinf(self.epsilon) else 2.0 / self.epsilon

    #: The sensitivity bounds every candidate's score change (sup norm).
    norm = "linf"

    @property
    def clip_norm(self):
        """The score sensitivity (the name the privacy record uses)."""
        return self.sensitivity

    def event(self, *, sampling_probability=1.0, steps=1):
        """The ``DpEvent`` of ``steps`` selections (``epsilon0^2 / 8``-zCDP each).

        Parameters
        ----------
        sampling_probability : float, default=1.0
            Must be 1: selections read the whole dataset.
        steps : int, default=1
            Number of selections composed.

        Returns
        -------
        event : dp_accounting.DpEvent
        """
        if sampling_probability != 1.0:
            raise ValueError("The exponential mechanism is not subsampled here.")
        return exponential_mechanism_event(self.epsilon, steps)

    @property
    def gumbel_scale(self):
        """Scale ``2 Delta / epsilon0`` of the Gumbel noise in score units."""
        return 2.0 * self.sensitivity / self.epsilon

    def select(self, scores, rng):
        """Draw ``v`` with probability proportional to ``exp(epsilon0 u(v) / (2 Delta))``.

        Parameters
        ----------
        scores : ndarray of shape (n_candidates,)
            Finite scores ``u(v)`` (higher is better), each of sensitivity at
            most ``sensitivity``.
        rng : numpy.random.Generator
            The fit's generator (OS entropy unless seeded).

        Returns
        -------
        index : int
        """
        scores = np.asarray(scores, dtype=np.float64)
        if math.isinf(self.epsilon):
            return int(np.argmax(scores))
        # Accounted as its zCDP guarantee (exponential_mechanism_event).
        log_release("zcdp", exponential_mechanism_rho(self.epsilon))
        # Gumbel-max: one standard Gumbel per candidate, in O(n_candidates).
        logits = scores * (self.epsilon / (2.0 * self.sensitivity))
        logits += rng.gumbel(size=scores.shape[0])
        return int(np.argmax(logits))
