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

__all__ = ["gaussian_threshold", "select_partitions", "threshold_probability"]

#: The least per-partition probability a threshold is computed at, the
#: smallest normal float. Below it ``threshold_delta / max_partitions``
#: rounds by up to half its own size, or to 0, where ``Phi^-1`` is
#: ``-inf`` and the threshold ``+inf``: the union bound would no longer
#: hold as computed.
MIN_THRESHOLD_PROBABILITY = float(np.finfo(np.float64).tiny)


def threshold_probability(threshold_delta, max_partitions, delta=None):
    """The chance ``threshold_delta / max_partitions`` allowed to each partition.

    A public check, made by the fit and its plan alike before any data is
    read.

    Parameters
    ----------
    threshold_delta : float
        Probability allowed for releasing any category of one record.
    max_partitions : int
        Categories one record can hold (one per column).
    delta : float, default=None
        The user's delta ``threshold_delta`` is a share of, for the message.

    Returns
    -------
    p : float

    Raises
    ------
    ValueError
        If ``p`` is below the smallest normal float (``threshold_delta``
        too small a share of ``delta``): it cannot be computed to the
        precision the union bound needs.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._partition import threshold_probability
    >>> threshold_probability(1e-6, 2)
    5e-07
    """
    p = float(threshold_delta) / max_partitions
    # Also refuses NaN.
    if not p >= MIN_THRESHOLD_PROBABILITY:
        given = "" if delta is None else f"={float(delta):.3g}"
        raise ValueError(
            f"delta{given} is too small for category discovery: the "
            f"threshold's share of it ({float(threshold_delta):.3g}) over "
            f"{max_partitions} column(s) is below the smallest normal float "
            f"({MIN_THRESHOLD_PROBABILITY:.3g}); raise delta or declare "
            "categories."
        )
    return p


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
        Finite.

    Raises
    ------
    ValueError
        If the per-partition probability is too small
        (:func:`threshold_probability`), or the threshold not finite: an
        infinite one would not be the union bound's.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._partition import gaussian_threshold
    >>> round(gaussian_threshold(2.0, 1e-6, 1), 3)
    10.507
    """
    p = threshold_probability(threshold_delta, max_partitions)
    # Phi^-1(1 - p) = -Phi^-1(p): accurate for small p.
    tau = 1.0 + float(noise_std) * -float(ndtri(p))
    if not math.isfinite(tau):
        raise ValueError(
            "delta: the threshold of category discovery is not finite at "
            f"this noise (standard deviation {float(noise_std):.3g}); raise "
            "epsilon or delta, or declare categories."
        )
    return tau


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
        ``tau``; ``-inf`` keeps every partition present (no privacy). Any
        other threshold keeps the noisy counts above it (``+inf`` none).

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
    # Only -inf, the threshold without privacy, keeps what is present: a
    # +inf threshold (a probability that underflowed) must keep nothing.
    if threshold == -math.inf:
        return np.asarray(counts) > 0, noisy
    return noisy > threshold, noisy
