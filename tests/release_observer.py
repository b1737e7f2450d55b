# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""An audit observer that keeps every privatized sum with its noisy release."""

import numpy as np


class Releases:
    """Observer for ``observe_privatize``: ``seen`` holds ``(mechanism, exact, noisy)``."""

    def __init__(self):
        self.seen = []

    def before_noise(self, mechanism, clipped_sum):
        self.exact = np.array(clipped_sum, dtype=float)
        return clipped_sum

    def after_noise(self, mechanism, noisy_sum):
        self.seen.append((mechanism, self.exact, np.array(noisy_sum, dtype=float)))

    def assert_label_histograms(self, y, n_fits):
        """Each of ``n_fits`` fits released ``y``'s 2 label counts once, with the calibrated noise.

        One mechanism of sensitivity 1 and one noise multiplier ``z``; the
        errors over ``z`` are N(0, 1), so the sample sd of the ``2 n_fits``
        of them is 1 within 15% (above 4 standard errors for 200 fits) and
        their mean within 4 standard errors of 0.
        """
        assert len(self.seen) == n_fits
        z = {m.noise_multiplier for m, _, _ in self.seen}
        assert len(z) == 1 and {m.sensitivity for m, _, _ in self.seen} == {1.0}
        (z,) = z
        for _, exact, _ in self.seen:
            np.testing.assert_array_equal(exact, np.bincount(y, minlength=2))
        errors = np.concatenate([noisy - exact for _, exact, noisy in self.seen]) / z
        assert abs(errors.std() - 1.0) < 0.15
        assert abs(errors.mean()) < 4 / np.sqrt(errors.size)


def capture_mechanism_inputs(monkeypatch):
    """Record the exact input of every Gaussian and exponential release.

    Returns the list the patched mechanisms append to: ``("gaussian",
    value, clip_norm)`` or ``("exponential", utility, sensitivity)``, in
    release order; the releases themselves are unchanged.
    """
    from sklearn_dpfair.privacy import _exponential, _mechanism

    seen = []
    privatize = _mechanism.GaussianMechanism.privatize
    select = _exponential.ExponentialMechanism.select

    def gaussian(self, value, rng):
        seen.append(("gaussian", np.array(value, dtype=float), self.clip_norm))
        return privatize(self, value, rng)

    def exponential(self, utility, rng):
        seen.append(("exponential", np.array(utility, dtype=float), self.sensitivity))
        return select(self, utility, rng)

    monkeypatch.setattr(_mechanism.GaussianMechanism, "privatize", gaussian)
    monkeypatch.setattr(_exponential.ExponentialMechanism, "select", exponential)
    return seen
