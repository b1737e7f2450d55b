# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Minibatch sampling that matches the privacy analysis."""

import numpy as np

__all__ = ["poisson_batch"]


def poisson_batch(rng, n_samples, sampling_probability):
    """Indices of a Poisson-subsampled batch.

    Every row is included independently with probability
    ``sampling_probability``, which is exactly the sampling that
    ``PoissonSampledDpEvent`` assumes. Shuffle-and-slice or fixed-size batches
    would not be covered by that analysis (Chua et al., ICML 2024). The batch
    size is random; callers divide by the *expected* size ``q * n``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers import poisson_batch
    >>> idx = poisson_batch(np.random.default_rng(0), 10_000, 0.1)
    >>> 900 < idx.size < 1100
    True
    """
    if sampling_probability >= 1.0:
        return np.arange(n_samples)
    return np.flatnonzero(rng.random(n_samples) < sampling_probability)
