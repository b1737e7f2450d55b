# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public, data-independent choices of batch size and number of steps.

Everything here is a function of ``n_samples`` and user parameters only.
``n_samples`` is treated as public, as in every DP-SGD implementation that
uses Poisson subsampling under add/remove adjacency (Opacus, TF Privacy).
"""

import math

__all__ = ["sgd_schedule"]

# Default expected batch size as a fraction of n, with a floor. Large batches
# are what DP-SGD wants: the noise on the mean gradient falls as 1/(q n) while
# the epsilon cost of an epoch grows only like sqrt(q). On UCI Adult
# (n ~ 30k) this gives batches of ~1500; see benchmarks/bench_dplogreg.py for
# the sweep that chose it.
AUTO_BATCH_FRACTION = 0.05
AUTO_BATCH_MIN = 256


def sgd_schedule(n_samples, batch_size, epochs):
    """Return ``(sampling_probability, n_steps)`` for a Poisson-sampled SGD run.

    Parameters
    ----------
    n_samples : int
        Number of training rows (treated as public).
    batch_size : int, "auto" or "full"
        Expected batch size ``q n``; "full" means ``q = 1`` (noisy GD).
    epochs : int
        Expected number of passes over the data; ``n_steps = ceil(epochs / q)``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import sgd_schedule
    >>> sgd_schedule(10_000, 500, 3)
    (0.05, 60)
    """
    if batch_size == "full":
        q = 1.0
    elif batch_size == "auto":
        b = max(AUTO_BATCH_MIN, AUTO_BATCH_FRACTION * n_samples)
        q = min(1.0, b / n_samples)
    else:
        q = min(1.0, batch_size / n_samples)
    return q, max(1, math.ceil(epochs / q - 1e-9))

# Default constant step size of DP-SGD. With per-example clipping every
# averaged gradient has norm <= clip_norm (+ noise), so a step of 1.0 moves
# the coefficients by at most clip_norm per step; tail averaging removes the
# resulting jitter. Chosen by the sweep in benchmarks/bench_dplogreg.py.
AUTO_LEARNING_RATE = 1.0
