# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private partition selection by Gaussian thresholding.

To release *which* categories a column holds, count the records of each
category present in the data, add Gaussian noise and keep the categories
whose noisy count exceeds a threshold (Korolova, Kenthapadi, Mishra and
Ntoulas, 2009; Gopi et al., 2020; Desfontaines, Voss, Gipson and Mundra,
"Differentially private partition selection", PoPETs 2022; Google's
``GaussianPartitionSelection``, which PipelineDP uses).

A record holds one category of each of the ``d`` columns, so adding or
removing it changes ``d`` counts by 1 (l2 sensitivity ``sqrt(d)``), and
creates at most ``d`` categories absent from the neighbour. The counts of
categories present in both datasets are a Gaussian mechanism, accounted
by dp-accounting at ``noise_delta``. A category present in only one of them
holds one record, and is released only if ``1 + N(0, sigma^2)`` exceeds the
threshold ``tau``; with ``tau = 1 + sigma Phi^-1(1 - threshold_delta / d)``
the chance that any of the ``d`` is released is at most
``threshold_delta`` (union bound), which is added to the delta: the
selection is ``(epsilon, noise_delta + threshold_delta)``-DP (Google's
``Delta_For_Thresholding`` note; Wilkins, Kifer, Zhang and Karrer, 2024,
give the exact, slightly smaller delta).
"""

import math

import numpy as np
from scipy.special import ndtri

__all__ = ["gaussian_threshold", "select_partitions"]


def gaussian_threshold(noise_std, threshold_delta, max_partitions):
    """Threshold ``1 + sigma Phi^-1(1 - threshold_delta / max_partitions)``.

    Parameters
    ----------
    noise_std : float
        Standard deviation of the noise on each count.
    threshold_delta : float
        Probability allowed for releasing any category of one record.
    max_partitions : int
        Categories one record can hold (one per column).

    Returns
    -------
    tau : float

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._partition import gaussian_threshold
    >>> round(gaussian_threshold(2.0, 1e-6, 1), 3)
    10.507
    """
    # Phi^-1(1 - p) = -Phi^-1(p): accurate for small p.
    return 1.0 + noise_std * -float(ndtri(threshold_delta / max_partitions))


def select_partitions(counts, mechanism, rng, threshold):
    """Release the noisy counts that exceed ``threshold``, and which they are.

    Parameters
    ----------
    counts : ndarray of shape (n_partitions,)
        Exact counts of the partitions present in the data, in a canonical
        order (sorted by column and category, never by count).
    mechanism : GaussianMechanism
        Its ``clip_norm`` is the l2 sensitivity of ``counts``.
    rng : numpy.random.Generator
    threshold : float
        ``tau``; ``-inf`` keeps every partition present (no privacy).

    Returns
    -------
    kept : ndarray of bool
    noisy : ndarray
        The noisy counts (released for the kept partitions only).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.preprocessing._partition import select_partitions
    >>> kept, _ = select_partitions(np.array([1.0, 50.0]),
    ...     GaussianMechanism(1.0, 0.0), None, 10.0)
    >>> kept
    array([False,  True])
    """
    noisy = mechanism.privatize(np.asarray(counts, dtype=np.float64), rng)
    if math.isinf(threshold):
        return np.asarray(counts) > 0, noisy
    return noisy > threshold, noisy
