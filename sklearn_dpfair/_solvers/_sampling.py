# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Minibatch sampling that matches the privacy analysis."""

import math

import numpy as np

from ..utils._array_api import from_host

__all__ = ["BallsAndBinsBatches", "balls_and_bins_epoch", "poisson_batch"]


def poisson_batch(rng, n_samples, sampling_probability, *, like=None):
    """Indices of a Poisson-subsampled batch.

    Every row is included independently with probability
    ``sampling_probability``, which is exactly the sampling that
    ``PoissonSampledDpEvent`` assumes. Shuffle-and-slice or fixed-size batches
    would not be covered by that analysis (Chua et al., ICML 2024). The batch
    size is random; callers divide by the *expected* size ``q * n``.

    The mask is drawn on the host from the fit's numpy generator, whatever
    the backend, so a seed gives the same batches on numpy and on a GPU, and
    an unseeded fit samples from OS entropy (never from a device generator).
    Only the indices are copied to the device.

    The inclusions are drawn through their gaps, not one uniform per row: in
    a sequence of independent Bernoulli(q) trials the gaps between
    successive successes are independent Geometric(q) variables on
    ``{1, 2, ...}``, so the cumulative sums of geometric draws are exactly
    (in distribution) the included rows. This costs ``O(q n)`` draws instead
    of ``n`` (a 5x shorter step for DP-SGD on Adult with ``q ~ 1/30``).

    Parameters
    ----------
    rng : numpy.random.Generator
        The fit's generator.
    n_samples : int
        Number of rows.
    sampling_probability : float
        Inclusion probability ``q``; ``q >= 1`` returns every row.
    like : array, default=None
        If given, the indices are returned in its namespace and on its device
        (e.g. a torch tensor on the GPU that holds the data).

    Returns
    -------
    indices : array of shape (batch_size,)
        Sorted row indices, numpy unless ``like`` says otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers import poisson_batch
    >>> idx = poisson_batch(np.random.default_rng(0), 10_000, 0.1)
    >>> 900 < idx.size < 1100
    True
    """
    if sampling_probability >= 1.0:
        indices = np.arange(n_samples)
    else:
        indices = _bernoulli_successes(rng, n_samples, sampling_probability)
    return indices if like is None else from_host(indices, like)


def _bernoulli_successes(rng, n_trials, probability):
    """Positions (sorted) of the successes among ``n_trials`` Bernoulli trials."""
    expected = probability * n_trials
    # Enough gaps for all the successes but with probability ~1e-9 (six
    # standard deviations over the mean); the loop draws more otherwise.
    chunk = int(expected + 6.0 * math.sqrt(expected) + 16)
    positions = np.cumsum(rng.geometric(probability, size=chunk)) - 1
    while positions[-1] < n_trials:
        more = positions[-1] + np.cumsum(rng.geometric(probability, size=chunk))
        positions = np.concatenate([positions, more])
    return positions[: np.searchsorted(positions, n_trials)]


def balls_and_bins_epoch(rng, n_samples, n_batches):
    """One epoch of balls-and-bins batches: every row in exactly one of them.

    Each row is placed in one of ``n_batches`` batches uniformly at random,
    independently of every other row: the *random allocation* that
    :class:`~sklearn_dpfair.privacy._random_allocation.RandomAllocationDpEvent`
    accounts (Chua et al., AISTATS 2025; Feldman and Shenfeld, ICML 2026).
    Batch sizes are random (multinomial), so callers divide by the
    *expected* size ``n / n_batches``. Not a shuffle cut into fixed-size
    batches: there the rows' places are dependent, and that sampling has no
    known tight analysis.

    The placements are drawn on the host from the fit's generator (one
    integer per row per epoch); a stable sort groups the rows by batch, in
    increasing row order within each.

    Parameters
    ----------
    rng : numpy.random.Generator
        The fit's generator.
    n_samples : int
        Number of rows.
    n_batches : int
        Batches (steps) per epoch, >= 1.

    Returns
    -------
    order : ndarray of shape (n_samples,)
        The row indices grouped by batch.
    bounds : ndarray of shape (n_batches + 1,)
        Batch ``j`` is ``order[bounds[j]:bounds[j + 1]]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._sampling import balls_and_bins_epoch
    >>> order, bounds = balls_and_bins_epoch(np.random.default_rng(0), 1000, 4)
    >>> sorted(order.tolist()) == list(range(1000)), int(bounds[-1])
    (True, 1000)
    """
    # 16-bit labels make numpy's stable sort a radix sort: O(n) per epoch.
    dtype = np.uint16 if n_batches <= np.iinfo(np.uint16).max else np.int64
    batch_of = rng.integers(n_batches, size=n_samples, dtype=dtype)
    order = np.argsort(batch_of, kind="stable")
    bounds = np.zeros(n_batches + 1, dtype=np.int64)
    np.cumsum(np.bincount(batch_of, minlength=n_batches), out=bounds[1:])
    return order, bounds


class BallsAndBinsBatches:
    """The batch of step ``t`` of a balls-and-bins run.

    Step ``t`` is batch ``t % n_batches`` of epoch ``t // n_batches``; an
    epoch's placements are drawn (:func:`balls_and_bins_epoch`) when its
    first step asks, so every draw happens before that step's noise, as in
    the Poisson loop.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._sampling import BallsAndBinsBatches
    >>> batches = BallsAndBinsBatches(100, 5)
    >>> rng = np.random.default_rng(0)
    >>> epoch = np.concatenate([batches(rng, t) for t in range(5)])
    >>> np.array_equal(np.sort(epoch), np.arange(100))
    True
    """

    def __init__(self, n_samples, n_batches):
        self.n_samples = int(n_samples)
        self.n_batches = int(n_batches)
        self._order = self._bounds = None

    def __call__(self, rng, t, *, like=None):
        j = t % self.n_batches
        if j == 0 or self._order is None:
            self._order, self._bounds = balls_and_bins_epoch(
                rng, self.n_samples, self.n_batches
            )
        indices = self._order[self._bounds[j] : self._bounds[j + 1]]
        return indices if like is None else from_host(indices, like)
