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
