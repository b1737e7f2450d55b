# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The Gaussian mechanism on a clipped sum."""

from dataclasses import dataclass

import numpy as np

__all__ = ["GaussianMechanism"]


@dataclass(frozen=True)
class GaussianMechanism:
    """Add ``N(0, (noise_multiplier * clip_norm)^2 I)`` to a sum of clipped terms.

    With ``noise_multiplier == 0`` the mechanism is the identity (no privacy),
    which is how ``epsilon=inf`` runs the same code path as private fits.

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
        clipped_sum : ndarray
            Sum of per-example terms, each of norm at most ``clip_norm``.
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        noisy_sum : ndarray
            Same shape as ``clipped_sum``.
        """
        if self.noise_multiplier == 0:
            return clipped_sum
        noise = rng.normal(0.0, self.noise_std, size=np.shape(clipped_sum))
        return clipped_sum + noise
