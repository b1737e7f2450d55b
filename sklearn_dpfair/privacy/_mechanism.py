# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The Gaussian mechanism on a clipped sum."""

from dataclasses import dataclass

from ..utils._array_api import from_host

__all__ = ["GaussianMechanism"]


@dataclass(frozen=True)
class GaussianMechanism:
    """Add ``N(0, (noise_multiplier * clip_norm)^2 I)`` to a sum of clipped terms.

    With ``noise_multiplier == 0`` the mechanism is the identity (no privacy),
    which is how ``epsilon=inf`` runs the same code path as private fits.

    The noise is always drawn on the host, in float64, from the fit's numpy
    generator and then copied to the namespace and device of the sum (numpy,
    or torch on a GPU): one random stream for every backend, seeded from OS
    entropy when the fit is unseeded, never from a device generator.

    Parameters
    ----------
    clip_norm : float
        Sensitivity of the sum (per-example clip threshold).
    noise_multiplier : float
        Noise standard deviation in units of ``clip_norm``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=0.0)
    >>> mech.privatize(np.ones(3), np.random.default_rng(0))
    array([1., 1., 1.])
    """

    clip_norm: float
    noise_multiplier: float

    @property
    def noise_std(self):
        """Standard deviation of each noise coordinate."""
        return self.noise_multiplier * self.clip_norm

    def privatize(self, clipped_sum, rng):
        """Return ``clipped_sum`` plus Gaussian noise drawn from ``rng``.

        Parameters
        ----------
        clipped_sum : array
            Sum of per-example terms, each of norm at most ``clip_norm``;
            numpy or any array-API array (e.g. a torch tensor on a GPU).
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        noisy_sum : array
            Same shape, namespace and device as ``clipped_sum``; float64
            (float32 sums are promoted by the float64 noise).
        """
        if self.noise_multiplier == 0:
            return clipped_sum
        noise = rng.normal(0.0, self.noise_std, size=tuple(clipped_sum.shape))
        return clipped_sum + from_host(noise, clipped_sum)
