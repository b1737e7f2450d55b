# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-group confusion counts: their release, the rates read from them, and intervals.

A binary classifier's group metrics are ratios of four counts per group,
``(TP, FP, TN, FN)``. Every record falls in exactly one of the ``4 G``
cells (its group, its true label, its prediction), so adding or removing a
record changes the count vector by one in one cell: L2 sensitivity 1 under
add/remove, ``sqrt(2)`` under replace-one (one cell down, another up). The
whole table is released by one Gaussian mechanism; every metric, overall
value, difference and interval is post-processing of the noisy table
(Dwork and Roth, 2014, Proposition 2.1).

Post-processing rules, all applied to released values only:

* a noisy cell is clamped at 0 before it enters a ratio, so every rate is in
  ``[0, 1]`` (its numerator is a sub-sum of its denominator);
* a rate whose unclamped noisy denominator is not above
  ``MIN_DENOMINATOR_SDS`` standard deviations of its own noise is NaN: such
  a denominator cannot be told from zero, and the ratio would be noise
  (without noise: NaN exactly when the denominator is 0);
* overall values come from the sums over groups of the unclamped noisy
  cells (unbiased, noise ``sqrt(G)`` times a cell's).

Intervals are a parametric bootstrap (Ferrando, Wang and Sheldon, 2022,
"Parametric Bootstrap for Differentially Private Confidence Intervals",
AISTATS): from the clamped noisy table plus half a count per cell, each
replicate draws every cell as Poisson (the sampling error of a test set
drawn from a population; conditional on a rate's denominator its numerator
is then binomial, as under multinomial sampling), adds fresh Gaussian noise
of the released standard deviation (the DP noise), and recomputes every
quantity; the overall replicate sums the groups' draws, with a half count
of its own, centred at the unclamped noisy total. The interval of a group's
or the overall value is the replicates' percentile interval; a comparison
of groups (minimum, maximum, difference, ratio) is bounded over
simultaneous percentile intervals of the values, pairwise differences or
pairwise ratios it is made of (:func:`compare_interval`; the max-statistic
bootstrap's intervals where the replicates are too few for Bonferroni's).
In the replicates a rate is computed whenever its clamped denominator is
positive (the NaN rule above is for the reported value: a ratio of tiny
noisy counts is spread over the whole range, and so widens the interval as
it should); a comparison of groups leaves out, in every replicate, the
groups whose reported value is NaN, as its reported value does (``skip`` of
:func:`compare`). A quantity that is still NaN in a replicate counts as the
lowest value of its range for the lower bound and the highest for the upper
bound.
"""

import itertools
import math

import numpy as np

__all__ = [
    "CELLS",
    "JEFFREYS_COUNT",
    "METRICS",
    "MIN_DENOMINATOR_SDS",
    "bonferroni_replicates",
    "bootstrap_tables",
    "compare",
    "compare_interval",
    "confusion_table",
    "metric_values",
    "percentile_interval",
    "simultaneous_intervals",
]

#: Column order of a confusion table.
CELLS = ("TP", "FP", "TN", "FN")

#: Metric name -> (numerator cells, denominator cells) as indices into CELLS;
#: ``count`` has no denominator.
_DEFINITIONS = {
    "accuracy": ((0, 2), (0, 1, 2, 3)),
    "selection_rate": ((0, 1), (0, 1, 2, 3)),
    "true_positive_rate": ((0,), (0, 3)),
    "false_positive_rate": ((1,), (1, 2)),
    "count": ((0, 1, 2, 3), None),
}

#: Metrics a frame can compute, in the order they are listed.
METRICS = tuple(_DEFINITIONS)

#: Pseudo-count added to every clamped cell before the bootstrap resamples it.
JEFFREYS_COUNT = 0.5

#: A rate is NaN when its unclamped noisy denominator is at most this many
#: standard deviations of the denominator's noise: 2 is the two-sided 95%
#: point of a normal (1.96) rounded up, so a denominator that is truly 0
#: passes the cut less than 2.3% of the time (the normal tail beyond 2).
MIN_DENOMINATOR_SDS = 2.0


def confusion_table(group_codes, true_positive, pred_positive, n_groups):
    """Exact per-group counts ``(TP, FP, TN, FN)`` of binary predictions.

    Parameters
    ----------
    group_codes : ndarray of shape (n_samples,)
        Group index of every row in ``0 .. n_groups - 1``.
    true_positive, pred_positive : ndarray of bool, shape (n_samples,)
        Whether the true label, and the prediction, is the positive class.
    n_groups : int
        Number of declared groups (groups without rows get zero counts).

    Returns
    -------
    table : ndarray of shape (n_groups, 4), float64
        Integer-valued counts; every row adds one to exactly one cell.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.metrics._confusion import confusion_table
    >>> confusion_table(np.array([0, 0, 1]), np.array([True, False, True]),
    ...                 np.array([True, True, False]), 3)
    array([[1., 1., 0., 0.],
           [0., 0., 0., 1.],
           [0., 0., 0., 0.]])
    """
    # TP = 0, FP = 1, TN = 2, FN = 3 (the order of CELLS).
    cell = np.where(
        true_positive, np.where(pred_positive, 0, 3), np.where(pred_positive, 1, 2)
    )
    flat = np.bincount(
        np.asarray(group_codes, dtype=np.intp) * 4 + cell, minlength=4 * n_groups
    )
    return flat.reshape(n_groups, 4).astype(np.float64)


def _with_overall(tables):
    """Append the overall row (sum of the unclamped cells over groups)."""
    return np.concatenate([tables, tables.sum(axis=-2, keepdims=True)], axis=-2)


def metric_values(
    tables, metric, cell_std, min_sds=MIN_DENOMINATOR_SDS, *, overall_row=False
):
    """One metric for every group and overall, from (noisy) tables.

    Parameters
    ----------
    tables : ndarray of shape (..., n_groups, 4)
        Noisy (or exact) confusion tables; leading axes are replicates.
    metric : str
        One of :data:`METRICS`.
    cell_std : float
        Standard deviation of the noise of one group's cell (0: exact).
    min_sds : float, default=MIN_DENOMINATOR_SDS
        A rate is NaN unless its unclamped noisy denominator is above this
        many standard deviations of the denominator's noise. 0: no test, a
        rate is NaN only when its clamped denominator is 0 (the replicates).
    overall_row : bool, default=False
        Whether the last row of ``tables`` is already the overall one (the
        replicates of :func:`bootstrap_tables`); otherwise the overall row
        is the sum of the groups' unclamped cells.

    Returns
    -------
    values : ndarray of shape (..., n_groups + 1)
        The groups' values, then the overall value (last).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.metrics._confusion import metric_values
    >>> table = np.array([[3.0, 1.0, 4.0, 2.0], [0.0, 0.0, 5.0, 0.0]])
    >>> metric_values(table, "true_positive_rate", 0.0)
    array([0.6, nan, 0.6])
    """
    numerator, denominator = _DEFINITIONS[metric]
    full = np.asarray(tables, dtype=np.float64)
    if not overall_row:
        full = _with_overall(full)
    n_groups = full.shape[-2] - 1
    # The overall cells sum n_groups independent noises.
    std = np.full(n_groups + 1, float(cell_std))
    std[-1] *= np.sqrt(n_groups)
    clamped = np.maximum(full, 0.0)
    top = clamped[..., list(numerator)].sum(axis=-1)
    if denominator is None:
        return top
    bottom = clamped[..., list(denominator)].sum(axis=-1)
    measurable = bottom > 0
    if min_sds > 0:
        # The test reads the unclamped sum, normal around the true
        # denominator: a sum of clamped cells is biased upwards, and would let
        # an empty group through 3.7% of the time instead of 2.3%.
        noisy_bottom = full[..., list(denominator)].sum(axis=-1)
        threshold = min_sds * std * np.sqrt(len(denominator))
        measurable &= noisy_bottom > threshold
    return np.divide(top, bottom, out=np.full(top.shape, np.nan), where=measurable)


def compare(values, how, skip=None):
    """Group minimum, maximum, difference or ratio, as fairlearn defines them.

    NaN groups are skipped (as pandas' ``max`` and ``min`` skip them in
    fairlearn's ``MetricFrame``); the result is NaN when every group is NaN.

    Parameters
    ----------
    values : ndarray of shape (..., n_groups + 1)
        Groups then overall (:func:`metric_values`).
    how : {"group_min", "group_max", "difference_between_groups",
           "difference_to_overall", "ratio_between_groups", "ratio_to_overall"}
    skip : ndarray of bool of shape (n_groups + 1,), default=None
        Values treated as NaN in every row of ``values``. For bootstrap
        replicates, pass where the reported values are NaN: the replicates
        then compare the groups the reported comparison compares, and the
        interval is that of the reported quantity (otherwise a group too
        small to report, whose replicates are computed, enters them alone).

    Returns
    -------
    result : ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.metrics._confusion import compare
    >>> values = np.array([0.2, 0.5, np.nan, 0.4])
    >>> float(compare(values, "difference_between_groups"))
    0.3
    >>> float(compare(values, "ratio_to_overall"))
    0.5
    >>> float(compare(values, "group_max", skip=np.array([0, 1, 0, 0], bool)))
    0.2
    """
    if skip is not None:
        values = np.where(skip, np.nan, values)
    groups, overall = values[..., :-1], values[..., -1:]
    # fmin / fmax skip NaN without the all-NaN warning of nanmin / nanmax.
    low, high = np.fmin.reduce(groups, axis=-1), np.fmax.reduce(groups, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if how == "group_min":
            return low
        if how == "group_max":
            return high
        if how == "difference_between_groups":
            return high - low
        if how == "difference_to_overall":
            return np.fmax.reduce(np.abs(groups - overall), axis=-1)
        if how == "ratio_between_groups":
            return np.where(high == 0, np.where(low == 0, np.nan, 0.0), low / high)
        if how == "ratio_to_overall":
            ratios = groups / overall
            # fairlearn's convention: the ratio below 1 of each pair, as
            # 1 / (group / overall), which can differ from overall / group in
            # the last bit.
            below_one = np.where(ratios > 1, 1 / ratios, ratios)
            return np.fmin.reduce(below_one, axis=-1)
    raise ValueError(f"Unknown comparison {how!r}.")


def bootstrap_tables(noisy, cell_std, n_boot, rng):
    """Parametric-bootstrap replicates of a released table, and of its total.

    Each cell of each group's replicate is
    ``Poisson(max(noisy, 0)) + Poisson(1/2) + N(0, cell_std^2)``:
    the sampling error of the rows (with half a count), then the DP noise
    again. The overall row is a replicate of the overall count the frame
    reports, the unclamped sum ``S`` of the groups' noisy cells: the sum of
    the groups' rows and noises (so that a comparison of a group with the
    overall keeps their dependence), with one half count of its own instead
    of the groups', and shifted by ``sum(max(noisy, 0)) - max(S, 0)`` so
    that it is centred at ``max(S, 0) + 1/2``. Summing the groups'
    replicates instead gave the overall cell ``2 G`` phantom rows of ``G``
    declared groups, and the clamped noise of empty groups besides: with 40
    declared groups of which one held all 100 rows, the 95% interval of the
    overall accuracy was ``[0.69, 0.81]`` without any noise, around an exact
    0.95. Post-processing of the release (no private value is read), so no
    privacy is spent; the simulated noise is not a release and does not go
    through a mechanism.

    Parameters
    ----------
    noisy : ndarray of shape (n_groups, 4)
        The released table.
    cell_std : float
        Standard deviation of the released noise of one cell.
    n_boot : int
        Number of replicates.
    rng : numpy.random.Generator

    Returns
    -------
    replicates : ndarray of shape (n_boot, n_groups + 1, 4)
        The groups' replicates, then the overall one (last), as
        :func:`metric_values` reads them with ``overall_row=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.metrics._confusion import bootstrap_tables
    >>> reps = bootstrap_tables(np.array([[5.0, -1.0, 3.0, 0.0]]), 1.0, 10,
    ...                         np.random.default_rng(0))
    >>> reps.shape
    (10, 2, 4)
    """
    noisy = np.asarray(noisy, dtype=np.float64)
    clamped = np.maximum(noisy, 0.0)
    n_groups = noisy.shape[0]
    replicates = np.empty((int(n_boot), n_groups + 1, noisy.shape[1]))
    groups = replicates[:, :n_groups]
    groups[...] = rng.poisson(clamped, size=groups.shape)
    if cell_std > 0:
        groups += rng.normal(0.0, cell_std, size=groups.shape)
    shift = clamped.sum(axis=0) - np.maximum(noisy.sum(axis=0), 0.0)
    replicates[:, n_groups] = groups.sum(axis=1) - shift
    # Half a count per cell (the Jeffreys prior's Beta(1/2, 1/2) for a
    # binomial rate): without it a cell released at 0 would never vary, and
    # a small group's interval would collapse (coverage 0.72 instead of 0.99
    # for the accuracy of 5 rows without noise, in our simulations). Each
    # group, and the overall row, draws its own.
    replicates += rng.poisson(JEFFREYS_COUNT, size=replicates.shape)
    return replicates


def percentile_interval(replicates, confidence_level, value_range, method="linear"):
    """Percentile interval of bootstrap replicates; NaN counts as either end.

    Parameters
    ----------
    replicates : ndarray of shape (n_boot, ...)
    confidence_level : float
        In (0, 1).
    value_range : tuple of float
        ``(lowest, highest)`` value the quantity can take; a NaN replicate
        counts as ``lowest`` for the lower bound and ``highest`` for the
        upper bound.
    method : str, default="linear"
        How ``numpy.quantile`` reads a percentile between replicates.

    Returns
    -------
    lower, upper : ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.metrics._confusion import percentile_interval
    >>> reps = np.array([[0.1], [0.2], [np.nan], [0.3]])
    >>> lower, upper = percentile_interval(reps, 0.5, (0.0, 1.0))
    >>> round(float(lower[0]), 3), round(float(upper[0]), 3)
    (0.075, 0.475)
    """
    alpha = 1.0 - float(confidence_level)
    missing = np.isnan(replicates)
    lowest, highest = value_range
    low_ends = np.where(missing, lowest, replicates)
    high_ends = np.where(missing, highest, replicates)
    lower = np.quantile(low_ends, alpha / 2, axis=0, method=method)
    upper = np.quantile(high_ends, 1 - alpha / 2, axis=0, method=method)
    return lower, upper


def bonferroni_replicates(n_quantities, confidence_level):
    """Fewest replicates whose Bonferroni tails hold a replicate each.

    The Bonferroni tail of each of ``k`` quantities is ``(1 -
    confidence_level) / (2 k)``, and the smallest of ``n`` replicates is
    read as their ``1 / (n + 1)`` quantile (``"weibull"``): a tail is
    resolved when ``n + 1 >= 2 k / (1 - confidence_level)``. Below it the
    percentile stops at the extreme replicate, and the ``k`` intervals miss
    together more often than ``1 - confidence_level`` (20 equal groups,
    1,000 replicates: the 95% difference missed 0 in 23% of simulations).

    Parameters
    ----------
    n_quantities : int
        Number of quantities ``k`` given simultaneous intervals.
    confidence_level : float
        In (0, 1): the joint level.

    Returns
    -------
    n_boot : int

    Examples
    --------
    >>> from sklearn_dpfair.metrics._confusion import bonferroni_replicates
    >>> bonferroni_replicates(3, 0.95), bonferroni_replicates(190, 0.95)
    (119, 7599)
    """
    tails = 2.0 * n_quantities / (1.0 - float(confidence_level))
    # Rounding can put 2 k / alpha a few ulps above an integer.
    return max(int(math.ceil(tails * (1.0 - 1e-12))) - 1, 1)


def simultaneous_intervals(replicates, confidence_level, value_range):
    """Percentile intervals of several quantities that hold all at once.

    Bonferroni's adjustment: each of the ``k`` quantities (the last axis)
    gets a percentile interval at level ``1 - (1 - confidence_level) / k``,
    so all ``k`` hold together with probability at least
    ``confidence_level`` when each holds at its own level. With fewer
    replicates than :func:`bonferroni_replicates` asks, whose tails cannot
    be read, the intervals are the max-statistic bootstrap's instead
    (:func:`_max_statistic_intervals`).

    Parameters
    ----------
    replicates : ndarray of shape (n_boot, k)
    confidence_level : float
        In (0, 1): the joint level.
    value_range : tuple of float
        As in :func:`percentile_interval`.

    Returns
    -------
    lower, upper : ndarray of shape (k,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.metrics._confusion import simultaneous_intervals
    >>> reps = np.random.default_rng(0).normal(size=(4000, 2))
    >>> lower, upper = simultaneous_intervals(reps, 0.95, (-np.inf, np.inf))
    >>> bool(np.all(np.abs(upper - 2.24) < 0.15))
    True
    """
    return _simultaneous_blocks(
        [replicates], replicates.shape[-1], confidence_level, value_range
    )


def _simultaneous_blocks(blocks, n_quantities, confidence_level, value_range):
    """:func:`simultaneous_intervals` of quantities given in column blocks.

    ``blocks`` is an iterable of arrays ``(n_boot, m)`` whose columns are
    the ``n_quantities`` quantities, read once; one block is held at a time, so
    the ``k(k - 1) / 2`` pairs of ``k`` groups take ``O(n_boot k)`` memory.
    """
    blocks = iter(blocks)
    first = next(blocks)
    n_boot = first.shape[0]
    blocks = itertools.chain([first], blocks)
    # The choice reads n_boot, the level and the number of quantities (the
    # compared groups: declared, less those the release reports as NaN), all
    # public or released. Bonferroni's intervals are kept whenever their
    # tails can be read, so that few groups get the intervals they had.
    if n_boot < bonferroni_replicates(n_quantities, confidence_level):
        return _max_statistic_intervals(blocks, n_boot, confidence_level, value_range)
    level = 1.0 - (1.0 - float(confidence_level)) / n_quantities
    # The adjusted tails are small (0.2% for 12 quantities at 95%), a few
    # replicates deep: "weibull" reads the k-th smallest of n replicates as
    # the k / (n + 1) quantile, its expected coverage, where numpy's default
    # reads it as (k - 1) / (n - 1) and misses twice as often in a tail one
    # or two replicates deep (Hyndman and Fan, 1996, definition 6).
    bounds = [
        percentile_interval(block, level, value_range, method="weibull")
        for block in blocks
    ]
    return tuple(np.concatenate(ends) for ends in zip(*bounds))


def _max_statistic_intervals(blocks, n_boot, confidence_level, value_range):
    """Simultaneous intervals from the bootstrap of the largest |t|.

    The single-step max-T method (Westfall and Young, 1993,
    "Resampling-Based Multiple Testing"; Romano and Wolf, 2005, JASA
    100:94): each quantity ``q`` is standardized by its replicates' mean
    ``m_q`` and standard deviation ``s_q``; ``c`` is the
    ``confidence_level`` quantile of the largest ``|x_q - m_q| / s_q`` over
    all quantities in a replicate, and the intervals ``[m_q - c s_q, m_q +
    c s_q]`` hold together about as often. One quantile of one statistic,
    read at ``confidence_level`` itself: a few dozen replicates resolve it
    whatever the number of quantities, where Bonferroni's tails need ``2 k /
    (1 - confidence_level)`` of them; and it accounts for the dependence of
    the pairs that share a group, which Bonferroni's bound ignores.
    Standardizing keeps a noisy pair (a small group) from widening the
    intervals of the precise ones.

    ``c`` is the ``ceil((n_boot + 1) confidence_level)``-th smallest of the
    ``n_boot`` largest deviations (infinite beyond ``n_boot``): were the
    observed deviation exchangeable with the replicates', it would exceed
    that order statistic with probability at most ``1 - confidence_level``
    (the critical value of a Monte Carlo test; Davison and Hinkley, 1997,
    "Bootstrap Methods and their Application", chapter 4).

    NaN replicates, which :func:`percentile_interval` counts as the far
    ends of the range: a quantity NaN in more than ``(1 - confidence_level)
    / 2`` of the replicates gets the whole range (as its own percentile
    interval would) and leaves the statistic, so that one undefined pair
    does not take every other pair's interval with it; in the others' a
    NaN is a deviation beyond any bound. Intervals are clipped to
    ``value_range``.
    """
    lowest, highest = value_range
    most_missing = (1.0 - float(confidence_level)) / 2 * n_boot
    largest = np.zeros(n_boot)
    centres, scales, whole = [], [], []
    for block in blocks:
        finite = ~np.isnan(block)
        n_finite = finite.sum(axis=0)
        # nanmean and nanstd, without their warning for an all-NaN column.
        with np.errstate(invalid="ignore", divide="ignore"):
            centre = np.where(finite, block, 0.0).sum(axis=0) / n_finite
            spread = np.where(finite, block - centre, 0.0)
            scale = np.sqrt(np.square(spread).sum(axis=0) / n_finite)
            deviation = np.abs(spread) / scale
        unbounded = n_boot - n_finite > most_missing
        # A constant quantity (scale 0) never deviates; a NaN one always,
        # unless its interval is the whole range anyway.
        deviation = np.where(scale > 0, deviation, 0.0)
        deviation = np.where(finite | unbounded, deviation, np.inf)
        deviation[:, unbounded] = 0.0
        if deviation.shape[1]:
            np.maximum(largest, deviation.max(axis=1), out=largest)
        centres.append(centre)
        scales.append(scale)
        whole.append(unbounded)
    centre, scale = np.concatenate(centres), np.concatenate(scales)
    rank = int(math.ceil((n_boot + 1) * float(confidence_level) * (1.0 - 1e-12)))
    critical = np.partition(largest, rank - 1)[rank - 1] if rank <= n_boot else np.inf
    known = np.isfinite(critical) & ~np.concatenate(whole)
    with np.errstate(invalid="ignore"):
        lower = np.where(known, np.maximum(centre - critical * scale, lowest), lowest)
        upper = np.where(known, np.minimum(centre + critical * scale, highest), highest)
    return lower, upper


def compare_interval(replicates, how, confidence_level, value_range, skip=None):
    """Confidence bounds of ``compare(values, how)`` from bootstrap replicates.

    A minimum, maximum, largest gap or smallest ratio of replicates is
    biased, and bounded at its no-gap value (the largest of two equal
    groups' replicates is above their common value more often than not; a
    difference ``max - min`` is never below 0), so its percentile interval
    misses an equal-groups population value most of the time. Instead, the
    quantities the comparison is made of get simultaneous intervals
    (:func:`simultaneous_intervals`): the groups' values for the group
    minimum and maximum, the signed differences ``r_i - r_j`` of every pair
    of groups (or ``r_i - overall``) for the differences, and the shares
    ``r_i / (r_i + r_j)`` (or with the overall value) for the ratios, a
    monotone map of ``r_i / r_j`` without its infinite values. The
    comparison is monotone in each, so the box of intervals maps to bounds
    that hold whenever every interval does: the bounds are conservative.
    With fewer replicates than Bonferroni's tails need
    (:func:`bonferroni_replicates`; 7,599 for the 190 pairs of 20 groups at
    95%) the simultaneous intervals are the max-statistic bootstrap's
    (:func:`_max_statistic_intervals`). The pairs' replicates are formed one
    group at a time, never all at once: memory ``O(n_boot n_groups)``.

    Parameters
    ----------
    replicates : ndarray of shape (n_boot, n_groups + 1)
        Bootstrap values of one metric, groups then overall.
    how : str
        As in :func:`compare`.
    confidence_level : float
        In (0, 1).
    value_range : tuple of float
        ``(lowest, highest)`` value of the metric; a NaN replicate of a
        quantity counts as the far end of that quantity's range.
    skip : ndarray of bool of shape (n_groups + 1,), default=None
        Values left out, as in :func:`compare`.

    Returns
    -------
    lower, upper : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.metrics._confusion import compare_interval
    >>> rng = np.random.default_rng(0)
    >>> reps = rng.normal([0.5, 0.5, 0.5], 0.01, size=(2000, 3))
    >>> lower, upper = compare_interval(
    ...     reps, "difference_between_groups", 0.95, (0.0, 1.0))
    >>> lower, bool(0.02 < upper < 0.04)
    (0.0, True)
    """
    keep = np.ones(replicates.shape[-1], bool) if skip is None else ~skip
    groups = replicates[..., :-1][..., keep[:-1]]
    n_kept = groups.shape[-1]
    to_overall = how.endswith("to_overall")
    if n_kept == 0 or (to_overall and not keep[-1]) or (
        how.endswith("between_groups") and n_kept < 2
    ):
        # Undefined (NaN) or constant (one group): reducing the replicates
        # is exact here.
        reduced_range = (0.0, 1.0) if how.startswith("ratio") else value_range
        return _reduced_interval(
            compare(replicates, how, skip), confidence_level, reduced_range
        )
    if how in ("group_min", "group_max"):
        lower, upper = simultaneous_intervals(groups, confidence_level, value_range)
        pick = np.min if how == "group_min" else np.max
        return float(pick(lower)), float(pick(upper))
    if how.startswith("difference"):
        span = value_range[1] - value_range[0]
        quantity, quantity_range = np.subtract, (-span, span)
        bounds = _largest_distance_bounds
    elif how.startswith("ratio"):
        quantity, quantity_range, bounds = _share, (0.0, 1.0), _smallest_ratio_bounds
    else:
        raise ValueError(f"Unknown comparison {how!r}.")
    if to_overall:
        blocks, n_quantities = [quantity(groups, replicates[..., -1:])], n_kept
    else:
        # Every pair (i, j > i), one group i at a time: the k(k - 1) / 2
        # pairs' replicates are never held at once (300 groups and 1,000
        # replicates: 0.36 GB an array, a peak near 1 GB), only n_boot * k
        # values a block.
        blocks = _pair_blocks(groups, quantity)
        n_quantities = n_kept * (n_kept - 1) // 2
    lower, upper = _simultaneous_blocks(
        blocks, n_quantities, confidence_level, quantity_range
    )
    return bounds(lower, upper)


def _share(first, second):
    """``first / (first + second)``: a monotone map of a ratio, in [0, 1]."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return first / (first + second)


def _pair_blocks(groups, quantity):
    """``quantity(r_i, r_j)`` of every pair ``i < j``, one ``i`` a block.

    The columns come in the order of ``numpy.triu_indices``.
    """
    for i in range(groups.shape[-1] - 1):
        yield quantity(groups[..., i : i + 1], groups[..., i + 1 :])


def _reduced_interval(reduced, confidence_level, value_range):
    lower, upper = percentile_interval(reduced, confidence_level, value_range)
    return float(lower), float(upper)


def _largest_distance_bounds(lower, upper):
    """Bounds of ``max_k |d_k|`` when each ``d_k`` is in ``[lower_k, upper_k]``.

    ``|d_k|`` is at least the distance of its interval from 0 (0 when the
    interval holds 0) and at most the larger of its ends' magnitudes.
    """
    nearest = np.maximum(np.maximum(lower, -upper), 0.0)
    farthest = np.maximum(np.abs(lower), np.abs(upper))
    return float(nearest.max()), float(farthest.max())


def _smallest_ratio_bounds(lower, upper):
    """Bounds of ``min_k s(u_k)`` when each share ``u_k`` is in its interval.

    ``s(u) = min(u, 1 - u) / max(u, 1 - u)`` is the ratio below 1 of the
    pair whose share is ``u = a / (a + b)`` (``min(a/b, b/a)``): rising up
    to ``u = 1/2`` (equal values, ratio 1), falling after it.
    """

    def below_one(share):
        return np.minimum(share, 1 - share) / np.maximum(share, 1 - share)

    at_lower, at_upper = below_one(lower), below_one(upper)
    holds_equal = (lower <= 0.5) & (upper >= 0.5)
    smallest = np.minimum(at_lower, at_upper)
    largest = np.where(holds_equal, 1.0, np.maximum(at_lower, at_upper))
    return float(smallest.min()), float(largest.min())
