# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A private quantile of positive scalars: the exponential mechanism on a log grid.

The heavy-tail estimator needs a robust private *scale* (the median
per-sample gradient norm, the median squared row norm). The exponential
mechanism (McSherry and Talwar, 2007) picks a point ``c`` of a public grid
with probability proportional to ``exp(eps u(c) / 2)``, where
``u(c) = -| #{i : v_i <= c} - q n |`` has replace-one sensitivity 1. It is
eps-DP and, more usefully, eps-bounded-range (Durfee and Rogers, 2019:
the log-ratio of its output probabilities between neighbours varies by at
most ``eps / 2 * 2 * 1`` over the outputs), hence ``eps^2 / 8``-zCDP (Cesar
and Rogers, 2021, Lemma 3.2). A zCDP budget rho therefore buys
``eps = sqrt(8 rho)``, twice what the generic pure-DP conversion
``eps^2 / 2`` (Bun and Steinke, Prop. 1.4) would give.

Weights: with public per-record weights ``a_i`` in ``[0, 1]`` the counts
become ``sum_i a_i 1{v_i <= c}`` and ``n`` becomes ``sum_i a_i``; one record
still moves every count by at most 1, so the sensitivity is unchanged.
Callers clip each record's weight at 1 *after* normalizing (a record is one
person, whatever its weight).

Why a median and not the theory's extreme quantile: with eps ~ 0.05 the
mechanism's rank error is about ``(2 / eps) ln(|G|)`` rows, a few percent of
n. That is harmless at the median but sends a 99.5% quantile into the flat
region beyond the sample maximum (spec section 4.4, item 2).

Whatever one record holds, the utility is finite and has sensitivity 1: a
value that is not finite (``inf`` from an overflowed norm, ``nan``) is
mapped to ``+inf``, a fixed point above every grid candidate, before it is
counted, so such a record only ever counts as "larger than the grid".
"""

import math

import numpy as np

__all__ = [
    "LOG_GRID",
    "POSITIVE_EDGES",
    "SIGNED_DECADE_EDGES",
    "SIGNED_EDGES",
    "SIGNED_LOG_GRID",
    "em_epsilon",
    "histogram_quantiles",
    "histogram_support",
    "noisy_histogram",
    "private_quantile",
    "quantile_utility",
]

#: Public candidate values: 401 points from 1e-8 to 1e8, 25 per decade
#: (a relative resolution of about 10%, finer than the mechanism's noise).
LOG_GRID = np.geomspace(1e-8, 1e8, 401)

#: Public candidates for a quantile of signed values (a location): the
#: mirror image of ``LOG_GRID``, 0, and ``LOG_GRID``.
SIGNED_LOG_GRID = np.concatenate([-LOG_GRID[::-1], [0.0], LOG_GRID])


def em_epsilon(rho):
    """Parameter eps of an exponential mechanism that is ``rho``-zCDP.

    The exponential mechanism (sensitivity-1 utility, logits
    ``eps u / 2``) is eps-bounded-range, hence ``eps^2 / 8``-zCDP (Cesar
    and Rogers, 2021, Lemma 3.2).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import em_epsilon
    >>> em_epsilon(0.125)
    1.0
    """
    return math.sqrt(8.0 * rho)


def quantile_utility(values, quantile, grid=LOG_GRID, weights=None):
    """Utility ``u(c) = -| #{i : v_i <= c} - q n |`` of each grid point.

    Finite whatever the values; changing one value changes each count by at
    most 1 (and adding or removing one changes ``q n`` by at most
    ``max(q, 1 - q)`` besides), so the sensitivity is 1. Non-finite values
    are mapped to ``+inf`` first, a fixed point above every grid candidate.
    ``weights`` (public, each in ``[0, 1]`` for the sensitivity to stay 1;
    the caller's business) weight the counts; None counts every value once.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import quantile_utility
    >>> quantile_utility(np.array([1.0, 3.0, np.nan]), 0.5, np.array([0.5, 2.0]))
    array([-1.5, -0.5])
    """
    values = np.asarray(values, dtype=np.float64)
    # A fixed, data-independent image for non-finite values: above the grid.
    values = np.where(np.isfinite(values), values, np.inf)
    if weights is None:
        counts = np.searchsorted(np.sort(values), grid, side="right")
        return -np.abs(counts - quantile * values.shape[0])
    weights = np.asarray(weights, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    cumulative = np.concatenate([[0.0], np.cumsum(weights[order])])
    counts = cumulative[np.searchsorted(values[order], grid, side="right")]
    return -np.abs(counts - quantile * cumulative[-1])


def private_quantile(values, quantile, rho, rng, grid=LOG_GRID, weights=None):
    """Exponential-mechanism ``quantile`` of ``values`` on a public grid.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Private non-negative scalars, one per record. Non-finite values
        (``inf``, ``nan``) count as larger than every grid point.
    quantile : float
        Target level in (0, 1); 0.5 is the median.
    rho : float
        zCDP budget of the release; ``inf`` returns the grid point with
        the best utility (no privacy).
    rng : numpy.random.Generator
        Source of the randomness.
    grid : ndarray, default=LOG_GRID
        Sorted public candidates.
    weights : ndarray of shape (n,), default=None
        Public weights of the counts, each in ``[0, 1]`` when ``rho`` is
        finite (the sensitivity then stays 1); None counts each value once.

    Returns
    -------
    value : float
        A grid point.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import private_quantile
    >>> v = np.random.default_rng(0).lognormal(size=20000)
    >>> m = private_quantile(v, 0.5, 0.01, np.random.default_rng(1))
    >>> 0.8 < m < 1.25
    True
    """
    utility = quantile_utility(values, quantile, grid, weights)
    if math.isinf(rho):
        # Ties between grid points go to the middle of the best run.
        best = np.flatnonzero(utility == utility.max())
        return float(grid[best[best.size // 2]])
    logits = 0.5 * em_epsilon(rho) * utility
    # Gumbel-max sampling: exact draw from the softmax of the logits.
    return float(grid[np.argmax(logits + rng.gumbel(size=grid.shape))])


#: Public bin edges of :func:`noisy_histogram` for positive values: 5 bins
#: per decade from 1e-8 to 1e8, plus a bin below and one above.
POSITIVE_EDGES = np.concatenate([[-np.inf], np.geomspace(1e-8, 1e8, 81), [np.inf]])

#: Public bin edges for signed values: the mirror image of the positive
#: edges, one bin for ``[-1e-8, 1e-8)`` and the outer bins.
SIGNED_EDGES = np.concatenate(
    [
        [-np.inf],
        -np.geomspace(1e-8, 1e8, 81)[::-1],
        np.geomspace(1e-8, 1e8, 81),
        [np.inf],
    ]
)

#: Coarse public bin edges for signed values: one bin per decade.
SIGNED_DECADE_EDGES = np.concatenate(
    [[-np.inf], -np.logspace(-8, 8, 17)[::-1], np.logspace(-8, 8, 17), [np.inf]]
)

# The support of a noisy histogram spans the bins above this many noise
# standard deviations: an empty bin passes with probability ~3e-5, so a few
# hundred empty bins rarely widen it.
_KEEP_SIGMAS = 4.0
# Inside the support, a bin counts if it is above this many: dozens of empty
# bins (the signed grid's 16 decades around 0 sit between negative and
# positive data) then add ~0.02 sigma each, not the ~0.4 sigma of their
# clipped noise, while a bin thinner than this loses little mass.
_INNER_SIGMAS = 2.5


def noisy_histogram(values, rho, rng, edges=SIGNED_EDGES, weights=None):
    """Counts of ``values`` in public bins plus Gaussian noise (rho-zCDP).

    Each record falls in exactly one bin (non-finite values in the top bin),
    so adding or removing one moves one count by its weight, at most 1: the
    histogram is the Gaussian mechanism of L2 sensitivity 1, rho-zCDP with
    noise std ``1 / sqrt(2 rho)`` (Bun and Steinke, 2016, Prop. 1.6).

    Parameters
    ----------
    values : ndarray of shape (n,)
    rho : float
        zCDP budget; ``inf`` returns the exact counts.
    rng : numpy.random.Generator
    edges : ndarray, default=SIGNED_EDGES
        Public increasing bin edges, ``-inf`` first and ``inf`` last.
    weights : ndarray of shape (n,), default=None
        Public count weights, each in ``[0, 1]`` under privacy.

    Returns
    -------
    counts : ndarray of shape (len(edges) - 1,)
    threshold : float
        Counts below it are noise-dominated; without privacy the smallest
        positive float, so that exactly the non-empty bins reach it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import noisy_histogram
    >>> counts, _ = noisy_histogram(np.array([1.0, 2.0, -3.0]), np.inf, None)
    >>> int(counts.sum())
    3
    """
    values = np.asarray(values, dtype=np.float64)
    values = np.where(np.isnan(values), np.inf, values)
    index = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    counts = np.bincount(index, weights=weights, minlength=len(edges) - 1)
    counts = counts.astype(np.float64)
    if math.isinf(rho):
        return counts, float(np.finfo(np.float64).tiny)
    sigma = 1.0 / math.sqrt(2.0 * rho)
    return counts + sigma * rng.standard_normal(counts.shape), _KEEP_SIGMAS * sigma


def histogram_support(counts, threshold, edges=SIGNED_DECADE_EDGES):
    """Finite range ``(low, high)`` of the bins a (noisy) histogram shows data in.

    The span from the first to the last bin whose count reaches
    ``threshold`` (post-processing only); an outer bin is read as its finite
    edge. None when no bin reaches the threshold.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
    ...     histogram_support, noisy_histogram)
    >>> y = np.random.default_rng(0).normal(150.0, 75.0, size=300)
    >>> counts, threshold = noisy_histogram(
    ...     y, 0.003, np.random.default_rng(1), edges=SIGNED_DECADE_EDGES)
    >>> histogram_support(counts, threshold)
    (10.0, 1000.0)
    """
    above = np.flatnonzero(counts >= threshold)
    if above.size == 0:
        return None
    finite = edges[np.isfinite(edges)]
    low = edges[above[0]] if np.isfinite(edges[above[0]]) else finite[0]
    high = edges[above[-1] + 1] if np.isfinite(edges[above[-1] + 1]) else finite[-1]
    return float(low), float(high)


def histogram_quantiles(counts, threshold, levels, edges=SIGNED_EDGES):
    """Quantiles read off a (noisy) histogram: post-processing only.

    The support is the span from the first to the last bin whose count
    reaches ``threshold`` (bins outside it are noise-dominated and dropped);
    inside it a bin keeps its count if it reaches
    ``threshold * 2.5 / 4``, so a thinly filled bin between two full ones is
    rarely lost, and the many empty bins around 0 add little. Within a bin
    the quantile is interpolated geometrically (linearly in the bin around 0), and the outer
    bins are read as their finite edge. Returns None when no bin reaches the
    threshold (too little data for the budget).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
    ...     histogram_quantiles, noisy_histogram)
    >>> y = np.random.default_rng(0).normal(100.0, 10.0, size=5000)
    >>> counts, threshold = noisy_histogram(y, 0.01, np.random.default_rng(1))
    >>> q25, q50, q75 = histogram_quantiles(counts, threshold, [0.25, 0.5, 0.75])
    >>> bool(90 < q50 < 110)
    True
    """
    above = np.flatnonzero(counts >= threshold)
    if above.size == 0:
        return None
    kept = np.zeros_like(counts)
    span = slice(above[0], above[-1] + 1)
    inner = threshold * _INNER_SIGMAS / _KEEP_SIGMAS
    kept[span] = np.where(counts[span] >= inner, counts[span], 0.0)
    total = kept.sum()
    if not total > 0:
        return None
    cumulative = np.concatenate([[0.0], np.cumsum(kept)])
    out = []
    for level in levels:
        rank = level * total
        b = np.searchsorted(cumulative, rank, side="left") - 1
        b = int(np.clip(b, 0, kept.size - 1))
        frac = (rank - cumulative[b]) / kept[b] if kept[b] > 0 else 0.5
        frac = float(np.clip(frac, 0.0, 1.0))
        lo, hi = edges[b], edges[b + 1]
        if not np.isfinite(lo):
            out.append(float(hi))
        elif not np.isfinite(hi):
            out.append(float(lo))
        elif lo > 0:
            out.append(float(lo * (hi / lo) ** frac))
        elif hi < 0:
            out.append(float(hi * (lo / hi) ** (1.0 - frac)))
        else:
            out.append(float(lo + (hi - lo) * frac))
    return out
