# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private per-column quantiles on public grids.

Each quantile is one exponential-mechanism draw
(:func:`~sklearn_dpfair.privacy.private_quantile`, Smith 2011) over a public
grid, with the utility sensitivity of add/remove adjacency
(``max(q, 1 - q)``): a record missing in a column is absent from that
column's counts, so adding or removing it moves each utility by at most
that much. The fences and the bounded quantiles draw a *bin* between
neighbouring grid points (``candidates="bins"``, the same cost): a column
whose value is the same in most rows (binary, one-hot, constant) gives
every grid point on one side of that value the same utility, and a point
drawn uniformly among them, whatever the budget (fences of a 0/1 column
near -2e6 and 3e6 at epsilon 1 and 10, and its median anywhere in
[0, 1)); the bin holding the value is the only one of utility 0.
Independent draws are simple and accounted exactly; JointExp (Gillenwater,
Joseph and Kulesza, 2021) would spend less for many quantiles of one
column.
"""

import math
from numbers import Real

import numpy as np

from ..privacy import private_quantile
from ._bounds import (
    AUTO_GRID,
    AUTO_RANGE,
    bounded_grid,
    bounds_linspace,
    centre_and_half_width,
)

__all__ = [
    "FENCE_DRAWS",
    "bounded_quantiles",
    "check_fence_levels",
    "column_edges",
    "column_quantiles",
    "private_fences",
]


def column_quantiles(
    X,
    levels,
    grids,
    rho,
    rng,
    adjacency="add_remove",
    candidates="points",
    weights=None,
    weighted_method="inverted_cdf",
):
    """Private ``levels``-quantiles of each column, on its grid.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Private rows; NaN is missing and ignored.
    levels : sequence of float
        Quantile levels in (0, 1).
    grids : list of ndarray
        Public sorted candidates of each column.
    rho : float
        zCDP budget of each draw; ``inf`` gives the exact quantile
        (``numpy.nanquantile``, linear interpolation), no grid.
    rng : numpy.random.Generator
    adjacency : {"add_remove", "replace_one"}, default="add_remove"
        The neighbouring relation the draws are accounted under (their
        utility sensitivity, :func:`~sklearn_dpfair.privacy._quantile.quantile_sensitivity`).
    candidates : {"points", "bins"}, default="points"
        What each draw picks
        (:func:`~sklearn_dpfair.privacy._quantile.private_quantile`).
    weights : ndarray of shape (n_samples,) or None, default=None
        Public weights of the rows' counts (capped at 1 by each draw under
        privacy; without privacy the quantiles are the weighted
        ``weighted_method``'s). None counts each row once.
    weighted_method : {"inverted_cdf", "averaged_inverted_cdf"}, \
            default="inverted_cdf"
        The weighted quantile without privacy (:func:`_weighted_quantiles`);
        unused under privacy or without weights.

    Returns
    -------
    quantiles : ndarray of shape (len(levels), n_features)
        Sorted along the first axis in each column (post-processing).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._quantiles import column_quantiles
    >>> X = np.arange(11.0)[:, None]
    >>> column_quantiles(X, [0.5], [np.linspace(0, 10, 11)], np.inf, None)
    array([[5.]])
    """
    n_features = X.shape[1]
    out = np.empty((len(levels), n_features))
    for j in range(n_features):
        rows = ~np.isnan(X[:, j])
        observed = X[rows, j]
        counted = None if weights is None else weights[rows]
        if math.isinf(rho):
            out[:, j] = _exact_quantiles(observed, levels, counted, weighted_method)
            continue
        for k, q in enumerate(levels):
            out[k, j] = private_quantile(
                observed, q, rho, rng, grid=grids[j], weights=counted,
                adjacency=adjacency, candidates=candidates,
            )
    return np.sort(out, axis=0)


def _exact_quantiles(values, levels, weights, weighted_method="inverted_cdf"):
    """Quantiles of ``values`` without privacy; NaN when there is none.

    Unweighted: numpy's linear interpolation (scikit-learn's choice).
    Weighted: scikit-learn's weighted percentile
    (:func:`_weighted_quantiles`); rows of weight 0 are not there.
    """
    if weights is not None:
        values = values[weights > 0]
        weights = weights[weights > 0]
    if not values.size:
        return np.nan
    # Interpolation (and the average of two values) takes the difference of
    # neighbouring values, which overflows for values of opposite sign near
    # the largest float (-1e308 and 1e308 gave a NaN quantile): such
    # columns are read in halves, exactly (short of subnormals, negligible
    # beside the largest value), and doubled back.
    halve = bool(np.max(np.abs(values)) > np.finfo(np.float64).max / 4)
    if halve:
        values = values / 2.0
    if weights is None:
        out = np.quantile(values, levels)
    else:
        out = _weighted_quantiles(
            values, weights, levels, average=weighted_method == "averaged_inverted_cdf"
        )
    return out * 2.0 if halve else out


def _weighted_quantiles(values, weights, levels, *, average):
    """Weighted ``levels``-quantiles, as ``sklearn.utils.stats._weighted_percentile``.

    The inverted CDF of the weights: the first value whose cumulative
    weight reaches ``q`` times the total; ``average`` (numpy's and
    scikit-learn's ``"averaged_inverted_cdf"``) takes the midpoint of it and
    the next value when the cumulative weight is on the target (within
    scikit-learn's tolerance). Both are definitions under which an integer
    weight ``k`` is ``k`` repeated rows (scikit-learn has no weighted
    linear interpolation). The arithmetic is scikit-learn's, so that exact
    ties (integer weights) are decided as it decides them.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Observed values (no NaN).
    weights : ndarray of shape (n,)
        Positive weights.
    levels : sequence of float
        Quantile levels in [0, 1].
    average : bool
        ``"averaged_inverted_cdf"`` rather than ``"inverted_cdf"``.

    Returns
    -------
    quantiles : ndarray of shape (len(levels),)
    """
    order = np.argsort(values, kind="stable")
    values = values[order]
    # Scaled by a power of two (exact, and so is every comparison below)
    # so that the cumulative weights do not overflow for weights near the
    # largest float; scikit-learn's absolute tolerance is scaled with them.
    exponent = np.frexp(np.max(weights))[1]
    cdf = np.cumsum(np.ldexp(weights[order], -exponent))
    tolerance = np.ldexp(np.finfo(np.float64).eps, -exponent)
    target = np.asarray(levels, dtype=np.float64) * cdf[-1]
    # As scikit-learn: the level 0 is the first value of positive weight.
    target = np.where(target == 0.0, np.nextafter(0.0, 1.0), target)
    last = values.size - 1
    low = np.minimum(np.searchsorted(cdf, target, side="left"), last)
    out = values[low]
    if average:
        high = values[np.minimum(low + 1, last)]
        on = (cdf[low] - target <= tolerance) & (high != out)
        out = np.where(on, centre_and_half_width(out, high)[0], out)
    return out


def bounded_quantiles(
    X, lower, upper, levels, rho, rng, *, weights=None, weighted_method="inverted_cdf"
):
    """Private ``levels``-quantiles of each column clipped to its public bounds.

    Each draw is on the public grid of the column's bounds
    (:func:`~sklearn_dpfair.preprocessing._bounds.bounded_grid`), fine in
    linear and log scale; without privacy (``rho=inf``) the quantiles are
    exact and no grid is built.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Private rows; NaN is missing and ignored.
    lower, upper : ndarray of shape (n_features,)
        Public bounds.
    levels : sequence of float
        Quantile levels in [0, 1] (in (0, 1) under privacy).
    rho : float
        zCDP budget of each draw.
    rng : numpy.random.Generator
    weights : ndarray of shape (n_samples,) or None, default=None
        Public weights of the rows' counts (:func:`column_quantiles`).
    weighted_method : {"inverted_cdf", "averaged_inverted_cdf"}, \
            default="inverted_cdf"
        The weighted quantile without privacy (:func:`column_quantiles`).

    Returns
    -------
    quantiles : ndarray of shape (len(levels), n_features)
        Sorted in each column; NaN for a column with no observed value at
        ``rho=inf``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._quantiles import bounded_quantiles
    >>> X = np.array([[-5.0], [1.0], [2.0], [30.0]])
    >>> bounded_quantiles(X, np.array([0.0]), np.array([10.0]), [0, 1], np.inf, None)
    array([[ 0.],
           [10.]])
    """
    if math.isinf(rho):
        return column_quantiles(
            np.clip(X, lower, upper), levels, None, rho, rng,
            weights=weights, weighted_method=weighted_method,
        )
    grids = [_with_bin_below(bounded_grid(lo, hi)) for lo, hi in zip(lower, upper)]
    quantiles = column_quantiles(
        np.clip(X, lower, upper), levels, grids, rho, rng,
        candidates="bins", weights=weights,
    )
    # The bin below the lower bound stands for it (post-processing).
    return np.clip(quantiles, lower, upper)


def _with_bin_below(grid):
    """``grid`` with a point one step below its first.

    The bins are ``(c_k, c_k+1]``: the rows at the lower bound (clipped
    there, or a 0 of a 0/1 column) would fall in none, and every bin would
    then score alike. The added bin holds them; its midpoint, below the
    bound, is clipped back to it.
    """
    # Halves: the step of a grid as wide as the floats overflows, and so
    # may the point below it (then the lowest float).
    half = 0.5 * grid[0] - (0.5 * grid[1] - 0.5 * grid[0])
    largest = np.finfo(np.float64).max
    below = 2.0 * half if half >= -largest / 2.0 else -largest
    return np.concatenate([[below], grid])


def column_edges(
    X,
    lower,
    upper,
    n_edges,
    rho,
    rng,
    *,
    quantile=True,
    weights=None,
    weighted_method="inverted_cdf",
    exact_levels=None,
):
    """Edges at levels ``0, 1/(n_edges - 1), ..., 1`` of each column, or uniform ones.

    With ``quantile``, under privacy the end points are the public bounds
    and the interior edges private quantiles of the clipped column
    (:func:`bounded_quantiles`, ``n_edges - 2`` draws per column, each of
    budget ``rho``); without privacy (``rho=inf``) they are the exact
    quantiles, the observed minimum and maximum included, as scikit-learn
    computes them (the bounds' uniform edges for a column with no observed
    value). Without ``quantile`` they cut the public bounds into equal
    widths and no private value is read.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Private rows; NaN is missing.
    lower, upper : ndarray of shape (n_features,)
        Public bounds.
    n_edges : int
        Number of edges, end points included (>= 2).
    rho : float
        zCDP budget of each interior draw (unused without ``quantile``).
    rng : numpy.random.Generator
    quantile : bool, default=True
        Quantile edges, or uniform edges of the bounds.
    weights : ndarray of shape (n_samples,) or None, default=None
        Public weights of the rows' counts (:func:`column_quantiles`);
        without privacy the end points are the range of the rows of positive
        weight. Unused without ``quantile``.
    weighted_method : {"inverted_cdf", "averaged_inverted_cdf"}, \
            default="inverted_cdf"
        The weighted quantile without privacy (:func:`column_quantiles`).
    exact_levels : ndarray of shape (n_edges,) or None, default=None
        The levels without privacy, as a scikit-learn counterpart rounds
        them (its percentiles over 100: ``np.linspace(0, 100, n) / 100`` is
        not ``np.linspace(0, 1, n)`` to the last bit, and a weighted
        quantile's ties turn on it); None: ``np.linspace(0, 1, n_edges)``.

    Returns
    -------
    edges : ndarray of shape (n_edges, n_features)
        Non-decreasing in each column, within the bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._quantiles import column_edges
    >>> X = np.arange(1.0, 10.0)[:, None]
    >>> lower, upper = np.array([0.0]), np.array([10.0])
    >>> column_edges(X, lower, upper, 3, np.inf, None)
    array([[1.],
           [5.],
           [9.]])
    >>> column_edges(X, lower, upper, 3, np.inf, None, quantile=False)
    array([[ 0.],
           [ 5.],
           [10.]])
    """
    uniform = bounds_linspace(lower, upper, n_edges)
    if not quantile:
        return uniform
    levels = np.linspace(0.0, 1.0, n_edges)
    counted = {"weights": weights, "weighted_method": weighted_method}
    if math.isinf(rho):
        if exact_levels is not None:
            levels = exact_levels
        edges = bounded_quantiles(X, lower, upper, levels, rho, rng, **counted)
        empty = np.isnan(edges).all(axis=0)
        edges[:, empty] = uniform[:, empty]
    else:
        inner = bounded_quantiles(X, lower, upper, levels[1:-1], rho, rng, **counted)
        edges = np.vstack([lower, inner, upper])
    return np.maximum.accumulate(edges, axis=0)


def _bin_edges_outside(grid, low_midpoints, high_midpoints):
    """Lower edges of the bins of ``low_midpoints``, upper of ``high_midpoints``.

    ``grid`` is sorted; each midpoint lies strictly inside the bin between
    two neighbouring grid points (``private_quantile``'s ``"bins"``).
    """
    last = grid.size - 1
    low = np.clip(np.searchsorted(grid, low_midpoints, side="right") - 1, 0, last)
    high = np.clip(np.searchsorted(grid, high_midpoints, side="left"), 0, last)
    return grid[low], grid[high]


def check_fence_levels(levels, name="auto_quantiles"):
    """Two increasing quantile levels in (0, 1), as floats (a public parameter)."""
    if (
        len(levels) != 2
        or not all(isinstance(q, Real) for q in levels)
        or not 0 < levels[0] < levels[1] < 1
    ):
        raise ValueError(
            f"{name} must be two increasing levels in (0, 1), got {levels!r}."
        )
    return [float(q) for q in levels]


#: Exponential-mechanism draws of :func:`private_fences`, per column.
FENCE_DRAWS = 2


def private_fences(X, levels, fence, rho, rng, *, weights=None):
    """Per-column bounds from two private quantiles (``bounds="auto"``).

    Tukey's fences: the quantiles ``levels = (a, b)`` of each column, drawn
    over the public grid of ``[-1e8, 1e8]`` (:data:`~._bounds.AUTO_GRID`),
    widened by ``fence`` times their distance on each side, so one outlier
    cannot move them far. Central quantiles rather than extreme ones: the
    exponential mechanism needs about ``q n epsilon0 >> log(#candidates)``
    to place the ``q``-quantile in the data rather than anywhere on the
    grid. Each draw is a bin between neighbouring grid points, and the
    fences start from the outer edges of the two drawn bins. The grid
    points are 5% apart in magnitude: two quantiles closer than that at the
    column's location (a year near 2000 with quartiles 7 apart) fall in the
    same bin, and the fences are that bin widened by ``fence`` times its
    width (about 1,800 and 2,280); such columns need declared bounds. (Reading
    the quartiles around a private median resolves them, but its extra
    draws cost more accuracy than they gain at the small budgets of a
    pipeline's preprocessing steps: ``benchmarks/bench_raw_pipeline.py``.)
    Without privacy (``rho=inf``) the bounds are the observed range of the
    rows of positive weight (no training value is clipped; values beyond it
    at ``transform`` are).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Private rows; NaN is missing and ignored.
    levels : sequence of two floats
        :func:`check_fence_levels`.
    fence : float
        Widening, in multiples of the quantiles' distance.
    rho : float
        zCDP budget of each of the ``2 n_features`` draws.
    rng : numpy.random.Generator
    weights : ndarray of shape (n_samples,) or None, default=None
        Public weights of the rows' counts (:func:`column_quantiles`);
        without privacy, rows of weight 0 are left out of the range.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
        Within ``AUTO_RANGE`` under privacy (the observed range, whatever
        it is, at ``rho=inf``), ``lower < upper`` (a constant column is
        widened by a margin).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._quantiles import private_fences
    >>> X = np.random.default_rng(0).normal(50.0, 10.0, size=(20000, 1))
    >>> lower, upper = private_fences(X, (0.25, 0.75), 2.0, 0.01,
    ...                               np.random.default_rng(1))
    >>> bool(5 < lower[0] < 30 and 70 < upper[0] < 95)
    True
    """
    if math.isinf(rho):
        # A column of NaN only has no extremes: it gets [-1, 1]. It is read
        # as zeros, so that numpy does not warn "All-NaN slice" (silencing
        # that with warnings.catch_warnings is not thread-safe).
        counted = X if weights is None else X[weights > 0]
        empty = np.all(np.isnan(counted), axis=0)
        counted = np.where(empty, 0.0, counted)
        lower, upper = np.nanmin(counted, axis=0), np.nanmax(counted, axis=0)
        lower, upper = np.where(empty, -1.0, lower), np.where(empty, 1.0, upper)
    else:
        grids = [AUTO_GRID] * X.shape[1]
        lower, upper = column_quantiles(
            X, levels, grids, rho, rng, candidates="bins", weights=weights
        )
        # Each draw is a bin's midpoint: the fences start from the outer
        # edges of the two bins (post-processing), so that they hold every
        # value of both bins (a constant 40 falls in the bin around 40.75,
        # within 2.5%, and its fences would otherwise miss it).
        lower, upper = _bin_edges_outside(AUTO_GRID, lower, upper)
        # A fence such as 1e308 widens past the largest float: the infinite
        # fences are clipped to AUTO_RANGE below, as any wider one is.
        with np.errstate(over="ignore"):
            spread = (upper - lower) * fence
            lower, upper = lower - spread, upper + spread
        # Under privacy the fences are kept within the public range of the
        # grid. Without privacy they are the observed range itself, which
        # the documentation promises clips nothing (a timestamp near 1.65e9
        # would otherwise be clipped to 1e8).
        lower, upper = np.clip(lower, *AUTO_RANGE), np.clip(upper, *AUTO_RANGE)
    # A released pair may coincide (a constant column): widen it by a
    # public margin so the column has a positive width.
    same = upper <= lower
    margin = np.maximum(np.abs(lower), 1.0) * 1e-3
    with np.errstate(over="ignore"):
        lower = np.where(same, lower - margin, lower)
        upper = np.where(same, upper + margin, upper)
    # An observed value near the largest float (rho=inf) must not widen to
    # an infinite bound; the other side's margin keeps lower < upper.
    largest = np.finfo(np.float64).max
    return np.clip(lower, -largest, largest), np.clip(upper, -largest, largest)
