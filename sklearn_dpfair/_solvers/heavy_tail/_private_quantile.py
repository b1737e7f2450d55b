# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Quantiles and ranges read off a noisy histogram, and the scales' public edges.

The private releases themselves (the exponential-mechanism quantile and the
Gaussian histogram) live in :mod:`sklearn_dpfair.privacy._quantile`; this
module reads a released histogram (post-processing, no privacy cost), and
:func:`private_scale_median` draws the one-pass solvers' medians on the
same public edges as the "dp-sgd" solver's row-norm histogram.

Why a median and not the theory's extreme quantile: with eps ~ 0.05 the
exponential mechanism's rank error is about ``(2 / eps) ln(|G|)`` rows, a
few percent of n. That is harmless at the median but sends a 99.5% quantile
into the flat region beyond the sample maximum.
"""

import math

import numpy as np

from ...privacy._quantile import (
    POSITIVE_EDGES,
    SIGNED_DECADE_EDGES,
    SIGNED_EDGES,
    private_quantile,
)

__all__ = [
    "ROW_NORM_EDGES",
    "WIDE_DECADE_EDGES",
    "heaviest_run",
    "histogram_mode_run",
    "histogram_quantiles",
    "histogram_target_range",
    "private_scale_median",
]

#: Public signed decade edges of the heavy-tail scales' range histograms:
#: those of ``SIGNED_DECADE_EDGES`` (1e-8 .. 1e8) carried on to 1e20, so a
#: raw column whose bulk lies beyond 1e8 (Unix timestamps in seconds, 1.7e9;
#: in nanoseconds, 1.7e18; an income in cents) lands in a finite decade bin,
#: not in the outer bin. 24 more bins raise the chance that an empty bin's
#: noise passes 4 sigma (~3e-5 each) from about 0.1% of fits to 0.2%.
WIDE_DECADE_EDGES = np.concatenate(
    [[-np.inf], -np.logspace(-8, 20, 29)[::-1], np.logspace(-8, 20, 29), [np.inf]]
)
#: Public edges of the heavy-tail "dp-sgd" solver's histogram of squared
#: row norms: those of ``POSITIVE_EDGES`` (5 bins per decade, 1e-8 .. 1e8,
#: kept bit for bit) carried on at one bin per decade to 1e40, the squares
#: of the range histograms' 1e20. The step size is 0.35 (d + 1) over the
#: released median, so a median read too small diverges: with the top
#: finite edge at 1e8, columns in units of 1e6 (squared norms 1e12 and
#: more) were read as 1e8 (R^2 -4.6; -1e13 in units of 1e12, 5,000 rows,
#: epsilon = 1). A median beyond 1e40 is no reading at all (see
#: ``_private_row_scale``). The added bins lie above rows below 1e8: an
#: empty one that passes the threshold can only lengthen the median (a
#: shorter step). Where no bin reaches 4 sigma (tiny budgets) they are
#: read as the median of unit rows now and then; one bin per decade keeps
#: that rare. On 300 unit rows at epsilon = 0.5 (1,000 seeds) the share of
#: fits with R^2 below 0.1 is 2.3% (1.5% with the bins ending at 1e8; 5.0%
#: with 5 bins per decade above 1e8), and on 300 rows in units of 1e6
#: (CSR) none of 300 fits diverges at epsilon = 0.5 (100% before; 3.3% with
#: 5 bins per decade, whose finer bins split the rows' mass). (Measured
#: with the target's range read off its fullest run of bins; with the span
#: of every bin above the noise, 2.7% and 0.3%.)
ROW_NORM_EDGES = np.concatenate(
    [POSITIVE_EDGES[:-1], np.geomspace(1e8, 1e40, 33)[1:], [np.inf]]
)


def private_scale_median(values, rho, rng, weights=None):
    """Exponential-mechanism median of non-negative scales on ``ROW_NORM_EDGES``.

    The one-pass solvers' private scales (the per-example gradient norms at
    0 that set the clip, the squared row norms that set the curvature's row
    clip) are drawn among the bins of :data:`ROW_NORM_EDGES`, the "dp-sgd"
    solver's public edges, with :func:`~sklearn_dpfair.privacy.private_quantile`'s
    ``candidates="bins"``: the same exponential mechanism at the same cost
    (its privacy does not depend on the number of candidates). On the grid
    of points ``LOG_GRID`` (1e-8 .. 1e8) a column in raw units (a price in
    dollars on square feet: gradient norms ~1e9 to 1e11) put every value
    above every candidate, all candidates had the same utility and the draw
    was uniform over 16 decades (clips from 0.004 to 1.7e8 across seeds).
    The bins reach 1e40, and their open outer bins hold the values beyond:
    the bin that holds the median has the best utility wherever it lies.

    Returns the drawn bin's midpoint, with the bottom bin ``(-inf, 1e-8]``
    read as its finite edge 1e-8 (a larger clip bounds the same rows; a
    median below it is no hazard) and the top bin ``(1e40, inf)`` as
    ``inf``: it has no finite upper bound, so no clip or step size read
    off it is safe, and the caller releases its fallback model (a reading
    of the release, post-processing, as ``_private_row_scale``'s). Without
    privacy (``rho = inf``) the bin that holds the median.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Private non-negative scales; non-finite ones count above every edge.
    rho : float
        The release's zCDP budget (``inf``: exact).
    rng : numpy.random.Generator
    weights : ndarray of shape (n,) or None, default=None
        Public weights of the counts (capped at 1 under privacy).

    Returns
    -------
    median : float
        In ``[1e-8, 1e40)``, or ``inf``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
    ...     private_scale_median)
    >>> norms = np.random.default_rng(0).uniform(1e9, 1e11, size=2000)
    >>> m = private_scale_median(norms, 0.001, np.random.default_rng(1))
    >>> bool(1e9 < m < 1e11)
    True
    >>> private_scale_median(np.full(50, 1e45), np.inf, None)
    inf
    """
    median = private_quantile(
        values, 0.5, rho, rng, ROW_NORM_EDGES, weights, candidates="bins"
    )
    if math.isinf(median) and median > 0:
        return math.inf
    return max(median, float(ROW_NORM_EDGES[1]))


# An outer bin (beyond the last finite edge) is read as reaching this
# factor times its finite edge: a range of positive width, so the location
# and scale grids built on it are never degenerate.
_OUTER_BIN_REACH = 10.0

# noisy_histogram's threshold is this many noise standard deviations.
_KEEP_SIGMAS = 4.0
# Inside the support, a bin counts if it is above this many: dozens of empty
# bins (the signed grid's 16 decades around 0 sit between negative and
# positive data) then add ~0.02 sigma each, not the ~0.4 sigma of their
# clipped noise, while a bin thinner than this loses little mass.
_INNER_SIGMAS = 2.5
# histogram_mode_run accepts its fullest bin from this many.
_MODE_SIGMAS = 5.0
# histogram_mode_run drops the outer bins of its run that hold together at
# most this share of the run's (noisy) count on their side: a thin far tail
# (0.5% of the rows scaled by 100) otherwise stretches a column's range over
# two decades more, and the scale grid, a share of the range, with it.
_TAIL_SHARE = 0.01


def _finite_span(edges, first, last):
    """Finite range ``(low, high)`` of bins ``first..last``: ``low < high``.

    An outer bin is read as reaching ``_OUTER_BIN_REACH`` times as far from
    0 as its finite edge (``[1e20, inf)`` as ``[1e20, 1e21]``): read as its
    finite edge, a run made of that bin alone would have width 0 and give
    a scale of 0.
    """
    finite = edges[np.isfinite(edges)]
    reach = _OUTER_BIN_REACH - 1.0
    low, high = edges[first], edges[last + 1]
    if not np.isfinite(low):
        low = finite[0] - reach * abs(finite[0])
    if not np.isfinite(high):
        high = finite[-1] + reach * abs(finite[-1])
    return float(low), float(high)


def histogram_mode_run(counts, threshold, edges=SIGNED_DECADE_EDGES):
    """Finite range ``(low, high)`` of the (noisy) histogram's fullest bins.

    The bin with the largest count and the contiguous bins on either side
    that reach ``threshold`` (post-processing only); an outer bin is read as
    its finite edge. None when the largest count is below ``5 / 4`` of
    ``threshold`` (5 noise standard deviations: an empty bin reaches 4 with
    probability ~3e-5, so one of a few dozen does about once in a thousand
    columns, and a range read off it is decades off; 5 is ~100 times
    rarer). Unlike the span of every bin above the threshold, the fullest
    bin is found whatever the noise level
    (a report-noisy-max): a noisy bin far from the data does not stretch
    the range over decades. The run's outer bins that hold together at
    most 1% of its count on their side are then dropped (never the fullest
    bin): a few rows far out, which a large sample shows above the noise,
    do not stretch it either. A column of both signs leaves the decades
    near 0 between them empty, so the run stays on the side of its fullest
    bin (a standard normal column reads ``(-10, -0.1)``); its inner edge is
    a decade or more below its outer one, so the grids built on it, widened
    by a quarter of its width, reach past 0 (``-12.5 .. 2.4``). A column
    whose median lies beyond that, on the other side, is read off by up to
    its distance from the grid's end.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
    ...     histogram_mode_run)
    >>> from sklearn_dpfair.privacy._quantile import SIGNED_DECADE_EDGES
    >>> counts = np.zeros(len(SIGNED_DECADE_EDGES) - 1)
    >>> counts[[27, 28, 33]] = [120.0, 180.0, 150.0]  # [10, 100), [100, 1e3), far
    >>> histogram_mode_run(counts, 140.0)
    (100.0, 1000.0)
    >>> histogram_mode_run(counts, 100.0)
    (10.0, 1000.0)
    >>> histogram_mode_run(counts, 150.0) is None  # 180 < 5 sigma = 187.5
    True
    >>> counts[29] = 2.0  # [1e3, 1e4): 0.7% of the run, dropped
    >>> histogram_mode_run(counts, 1.0)
    (10.0, 1000.0)
    """
    top = int(np.argmax(counts))
    if not counts[top] >= threshold * _MODE_SIGMAS / _KEEP_SIGMAS:
        return None
    first = last = top
    while first > 0 and counts[first - 1] >= threshold:
        first -= 1
    while last < counts.size - 1 and counts[last + 1] >= threshold:
        last += 1
    run = counts[first : last + 1]
    tail = _TAIL_SHARE * run.sum()
    # Outer bins whose cumulative count from their end stays within the
    # tail share go; the fullest bin (top - first) always stays.
    dropped_low = int(np.searchsorted(np.cumsum(run), tail, side="right"))
    dropped_high = int(np.searchsorted(np.cumsum(run[::-1]), tail, side="right"))
    first += min(dropped_low, top - first)
    last -= min(dropped_high, last - top)
    return _finite_span(edges, first, last)


def histogram_target_range(counts, threshold, edges=WIDE_DECADE_EDGES):
    """Finite range ``(low, high)`` of a target's (noisy) histogram.

    :func:`histogram_mode_run`, unless its fullest bin is the one around 0
    (``[-1e-8, 1e-8)``, exact zeros): the decades next to it are empty, so
    the run is that bin alone, about ``2e-8`` wide, and grids on it would
    place a zero-inflated target's median and spread there (40% zeros, the
    other rows spread over decades about 100: the fit released the zero
    model). The range then spans that bin and the fullest run of the other
    bins (the non-zero values' bulk: the heaviest run of bins from 4
    noise standard deviations, if it sums to 5); a noise bin far out
    stretches it in ~2e-5 of draws.
    Post-processing only.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
    ...     WIDE_DECADE_EDGES, histogram_target_range)
    >>> counts = np.zeros(len(WIDE_DECADE_EDGES) - 1)
    >>> zero = int(np.searchsorted(WIDE_DECADE_EDGES, 0.0)) - 1
    >>> counts[zero] = 400.0                # exact zeros
    >>> counts[[zero + 10, zero + 11]] = [250.0, 200.0]  # [10, 100), [100, 1e3)
    >>> histogram_target_range(counts, 100.0)
    (-1e-08, 1000.0)
    >>> counts[zero + 10 : zero + 12] = 0.0
    >>> histogram_target_range(counts, 100.0)
    (-1e-08, 1e-08)
    """
    run = histogram_mode_run(counts, threshold, edges)
    zero = int(np.searchsorted(edges, 0.0, side="right")) - 1
    if run is None or int(np.argmax(counts)) != zero:
        return run
    others = np.array(counts, dtype=np.float64)
    others[zero] = -np.inf
    # The non-zero values may be spread over decades, none of whose bins
    # is 5 standard deviations high on a few hundred rows: their heaviest
    # run of bins from 4 counts if it sums to 5. Empty bins pass that in
    # ~2e-5 of draws (one at 5, ~3e-7 each; two neighbours at 4, ~1e-9
    # each); from 2.5, two neighbouring empty bins summed to 5 in 0.2% of
    # draws, and stretched the range to 1e21.
    bins = heaviest_run(others, threshold)
    if bins is None:
        return run
    first, last = bins
    if not others[first : last + 1].sum() >= threshold * _MODE_SIGMAS / _KEEP_SIGMAS:
        return run
    low, high = _finite_span(edges, first, last)
    return min(run[0], low), max(run[1], high)


def heaviest_run(counts, floor):
    """Bins ``first..last`` of the contiguous run of bins ``>= floor`` of largest sum.

    Post-processing of a (noisy) histogram. Data fill neighbouring bins,
    noise isolated ones: a run's total count tells them apart better than
    its fullest bin. None when no bin reaches ``floor``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import heaviest_run
    >>> heaviest_run(np.array([0.0, 3.0, 0.0, 2.5, 2.5, 0.0]), 2.0)
    (3, 4)
    >>> heaviest_run(np.zeros(4), 1.0) is None
    True
    """
    best, best_sum, first = None, -np.inf, None
    for i, count in enumerate(np.append(counts, -np.inf)):
        if count >= floor:
            first = i if first is None else first
            continue
        if first is not None:
            total = float(np.sum(counts[first:i]))
            if total > best_sum:
                best, best_sum = (first, i - 1), total
            first = None
    return best


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
    >>> from sklearn_dpfair.privacy import noisy_histogram
    >>> from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
    ...     histogram_quantiles)
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
