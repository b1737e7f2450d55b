# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The Laplace mechanism on a vector of bounded l1 sensitivity: pure epsilon-DP.

Adding i.i.d. ``Laplace(0, b)`` noise to every coordinate of a vector whose
l1 norm changes by at most ``Delta_1`` between neighbouring datasets is
``Delta_1 / b``-differentially private with ``delta = 0`` (Dwork, McSherry,
Nissim and Smith 2006, Proposition 1; Dwork and Roth 2014, Theorem 3.6).
Its event is dp-accounting's ``LaplaceDpEvent(b / Delta_1)``; a single
coordinate at distance ``Delta_1`` is its worst case, which is exactly the
event's one-dimensional Laplace.
"""

import math
from dataclasses import dataclass

from ..utils._array_api import from_host
from ._accounting import laplace_event
from ._mechanism import (
    check_mechanism_numbers,
    check_noise_scale,
    store_python_floats,
)
from ._releases import log_release

__all__ = ["LaplaceMechanism"]

# PrivacyBudget.laplace sets the noise multiplier to steps / epsilon, which
# overflows for an epsilon below about steps * 5.6e-309: there the budget's
# epsilon, not a noise multiplier the user chose, is at fault.
_BUDGET_HINT = (
    " (A mechanism from PrivacyBudget.laplace has noise_multiplier = steps / "
    "epsilon: the budget's epsilon is then too small; use a larger epsilon.)"
)


@dataclass(frozen=True)
class LaplaceMechanism:
    """Add ``Laplace(0, noise_multiplier * sensitivity)`` to every coordinate.

    Parameters
    ----------
    sensitivity : float or None
        The l1 sensitivity of the released vector, a number in ``[0, inf]``
        (``inf`` and None only without noise).
    noise_multiplier : float
        Noise scale ``b`` in units of ``sensitivity``; one release is
        ``1 / noise_multiplier``-DP (``delta = 0``). 0: no noise (no privacy).
        Finite and non-negative.

    Attributes
    ----------
    norm : str
        ``"l1"``: the norm the sensitivity is measured in.

    Raises
    ------
    TypeError
        If ``sensitivity`` or ``noise_multiplier`` is not a real number (a
        bool; ``sensitivity=None`` is taken without noise only).
    ValueError
        If either is NaN, negative or an int beyond the largest float. With
        noise (``noise_multiplier > 0``): for an infinite
        ``noise_multiplier``, a noise scale that overflows float64, or a
        finite positive ``sensitivity`` whose noise scale is below the
        smallest normal float64 (where the draws are quantized).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import LaplaceMechanism
    >>> mech = LaplaceMechanism(sensitivity=2.0, noise_multiplier=0.5)
    >>> mech.event()
    LaplaceDpEvent(noise_multiplier=0.5)
    >>> mech.privatize(np.zeros(3), np.random.default_rng(0)).shape
    (3,)
    """

    sensitivity: float
    noise_multiplier: float
    norm = "l1"

    def __post_init__(self):
        # Python floats, as GaussianMechanism's: the noise scale of a numpy
        # float16 sensitivity was computed, and overflowed, in float16.
        store_python_floats(self, ("sensitivity", "noise_multiplier"))
        check_mechanism_numbers(
            self.sensitivity, self.noise_multiplier, name="sensitivity"
        )
        check_noise_scale(
            self.noise_multiplier,
            self.sensitivity,
            noise="Laplace noise scale",
            hint=_BUDGET_HINT,
        )
        # A noise scale that overflows float64 (a huge sensitivity, or one
        # that already overflowed, times the multiplier) makes every noisy
        # release inf or NaN.
        if self.noise_multiplier > 0 and not math.isfinite(self.noise_scale):
            raise ValueError(
                "clip_norm is too large: the Laplace noise scale, the noise "
                f"multiplier times the sensitivity ({self.noise_multiplier:g} * "
                f"{self.sensitivity:g}), overflows float64. Use a clip norm of "
                "the size of the per-example terms, or a smaller noise "
                f"multiplier.{_BUDGET_HINT}"
            )

    @property
    def clip_norm(self):
        """The sensitivity (the name every mechanism of the package shares)."""
        return self.sensitivity

    @property
    def noise_scale(self):
        """The Laplace scale ``b`` of each coordinate."""
        return self.noise_multiplier * self.sensitivity

    def privatize(self, vector, rng):
        """Return ``vector`` plus i.i.d. Laplace noise drawn from ``rng``.

        Parameters
        ----------
        vector : array
            The released statistic (numpy or an array-API array).
        rng : numpy.random.Generator
            Source of the noise (drawn on the host in float64).

        Returns
        -------
        noisy : array
            Same shape, namespace and device as ``vector``.
        """
        if self.noise_multiplier == 0:
            return vector
        log_release("laplace", float(self.noise_multiplier))
        noise = rng.laplace(0.0, self.noise_scale, size=tuple(vector.shape))
        return vector + from_host(noise, vector)

    def event(self, *, sampling_probability=1.0, steps=1):
        """The ``DpEvent`` of ``steps`` releases.

        Parameters
        ----------
        sampling_probability : float, default=1.0
            Must be 1: every release reads the whole dataset (a pure-epsilon
            guarantee of Poisson-subsampled Laplace releases is not
            accounted here).
        steps : int, default=1
            Number of releases composed.

        Returns
        -------
        event : dp_accounting.DpEvent
            Laplace events, or the non-private event without noise.

        Raises
        ------
        ValueError
            If ``sampling_probability`` is not 1, or ``steps`` is not an
            integer >= 0.
        """
        # The same signature as the other mechanisms' events, so that
        # PrivacyBudget.account can ask any of them for its event.
        if sampling_probability != 1.0:
            raise ValueError(
                "The Laplace mechanism is not subsampled here: "
                "sampling_probability must be 1."
            )
        return laplace_event(self.noise_multiplier, steps)
