# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private quantiles and histograms of scalars: exponential and Gaussian mechanisms.

The heavy-tail estimator needs robust private *scales* (the median
per-sample gradient norm, the median squared row norm, the range, median
and spread of the target). Two mechanisms give them:

* :func:`private_quantile`, the exponential mechanism (McSherry and
  Talwar, 2007) on a public grid: it picks ``c`` with probability
  proportional to ``exp(eps u(c) / (2 Delta))``, where
  ``u(c) = -| #{i : v_i <= c} - q n |`` has sensitivity ``Delta`` = 1
  under replace-one adjacency and ``max(q, 1 - q)`` under add/remove
  (:func:`quantile_sensitivity`). It
  is eps-DP and, more usefully, eps-bounded-range (Durfee and Rogers, 2019),
  hence ``eps^2 / 8``-zCDP (Cesar and Rogers, 2021, Lemma 3.2): a zCDP
  budget rho buys ``eps = sqrt(8 rho)``, twice what the generic pure-DP
  conversion ``eps^2 / 2`` (Bun and Steinke, Prop. 1.4) would give. The
  draw is :class:`~sklearn_dpfair.privacy._exponential.ExponentialMechanism`'s.
  Where one value holds most rows (a one-hot column, a column that is 0
  for most people) and is not itself a grid point, every candidate on one
  side of it has the same utility, and the draw is uniform over that side
  of the grid (up to 1e8 away). ``candidates="bins"`` draws a *bin*
  ``(c_k, c_k+1]`` between neighbouring grid points instead, with utility
  ``-dist(q n, [#{v <= c_k}, #{v <= c_k+1}])`` (0 for the bin that holds the
  quantile, an atom's included), and returns its midpoint: the candidates
  of Smith (2011), the intervals between order statistics, restricted to a
  public grid. Its sensitivity is the points' (each endpoint term moves as
  ``u(c)`` does), so a draw costs the same.
* :func:`noisy_histogram`, counts in public bins released through the
  :class:`~sklearn_dpfair.privacy.GaussianMechanism` of sensitivity 1.

Weights: with public per-record weights ``a_i`` the counts become
``sum_i min(a_i, 1) 1{v_i <= c}`` and ``n`` becomes ``sum_i min(a_i, 1)``
under privacy: each weight is capped at 1 here, block by block (a record is
one person, whatever its weight), so one record still moves every count by
at most 1 and the sensitivity is unchanged whatever finite non-negative
weights the caller passes. A negative, infinite or NaN weight is refused
(ValueError) before any noise is drawn: the cap bounds a weight
from above only, and one record of weight -1000 would move a count by 1000.
Without privacy (``rho = inf``) the weights count as given.

Whatever one record holds, the utility and the counts are finite with
sensitivity 1: a value that is not finite (``inf`` from an overflowed norm,
``nan``) is mapped to ``+inf``, a fixed point above every grid candidate
and in the top bin, before it is counted.
"""

import math
import sys

import numpy as np

from ..utils._numeric import public_float
from ._exponential import ExponentialMechanism
from ._mechanism import GaussianMechanism

__all__ = [
    "LOG_GRID",
    "POSITIVE_EDGES",
    "SIGNED_DECADE_EDGES",
    "SIGNED_EDGES",
    "em_epsilon",
    "noisy_histogram",
    "private_quantile",
    "quantile_bin_utility",
    "quantile_sensitivity",
    "quantile_utility",
]

#: Public candidate values: 401 points from 1e-8 to 1e8, 25 per decade
#: (a relative resolution of about 10%, finer than the mechanism's noise).
LOG_GRID = np.geomspace(1e-8, 1e8, 401)


def em_epsilon(rho):
    """Parameter eps of an exponential mechanism that is ``rho``-zCDP.

    The exponential mechanism (sensitivity-1 utility, logits
    ``eps u / 2``) is eps-bounded-range, hence ``eps^2 / 8``-zCDP (Cesar
    and Rogers, 2021, Lemma 3.2).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._quantile import em_epsilon
    >>> em_epsilon(0.125)
    1.0
    """
    # In Python float: 8 * a numpy float16 rho is float16, inf from 8192 on.
    return math.sqrt(8.0 * float(rho))


def _check_rho(rho):
    """``rho`` as a Python float in ``(0, inf]``, or a TypeError or ValueError.

    A release's noise is derived from ``rho`` in Python float arithmetic:
    a numpy float16 rho kept it in float16, where ``2 * 65504`` overflowed
    to inf and the noise to 0 (exact counts under a finite budget). Bools
    and non-numbers are refused by :func:`public_float`, which also names
    an int beyond the largest float.
    """
    value = public_float(rho, "rho")
    if not value > 0:  # NaN fails too
        raise ValueError(
            f"rho must be a number in (0, inf] (inf: no privacy), got {rho!r}."
        )
    return value


def _check_quantile(quantile):
    """``quantile`` as a Python float in ``[0, 1]``, or a TypeError or ValueError."""
    value = public_float(quantile, "quantile")
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise ValueError(f"quantile must be a number in [0, 1], got {quantile!r}.")
    return value


def quantile_sensitivity(quantile, adjacency="replace_one"):
    """Sensitivity of :func:`quantile_utility` under ``adjacency``.

    Replacing one record moves each count ``#{i : v_i <= c}`` by at most 1
    and leaves ``q n`` alone: sensitivity 1. Adding (or removing) a record
    ``v`` of count weight ``a`` in ``[0, 1]`` moves the count by
    ``a 1{v <= c}`` *and* ``q n`` by ``a q`` together, so their difference
    moves by ``a (1{v <= c} - q)``, at most ``max(q, 1 - q)`` in absolute
    value: 1/2 for the median. The exponential mechanism divides its logits
    by the sensitivity, so under add/remove the same rho buys a median
    whose rank error is half as large, and whose chance of landing on a
    candidate beyond the data (utility ``-n / 2`` there) is the square of
    the replace-one chance, roughly.

    Parameters
    ----------
    quantile : float
        Target level in (0, 1).
    adjacency : {"replace_one", "add_remove"}, default="replace_one"
        The neighbouring relation the release is accounted under.

    Returns
    -------
    sensitivity : float

    Examples
    --------
    >>> from sklearn_dpfair.privacy._quantile import quantile_sensitivity
    >>> quantile_sensitivity(0.5), quantile_sensitivity(0.5, "add_remove")
    (1.0, 0.5)
    """
    if adjacency == "replace_one":
        return 1.0
    if adjacency == "add_remove":
        return float(max(quantile, 1.0 - quantile))
    raise ValueError(
        f"adjacency must be 'replace_one' or 'add_remove', got {adjacency!r}."
    )


def _grid_counts(values, grid, weights, weight_cap):
    """``(#{i : v_i <= c} for c in grid, n)``, both weighted; ``grid`` any order."""
    grid = np.asarray(grid, dtype=np.float64)
    order = np.argsort(grid, kind="stable")
    sorted_grid = grid[order]

    def first_grid_point_at_or_above(block):
        # #{k : c_k < v}: v <= c_k exactly for the grid points from there on.
        # A fixed, data-independent image for non-finite values: above the grid.
        block = np.where(np.isfinite(block), block, np.inf)
        return np.searchsorted(sorted_grid, block, side="left")

    per_bin, total = _blockwise_bincount(
        values, first_grid_point_at_or_above, grid.size + 1, weights, weight_cap
    )
    counts = np.empty(grid.size)
    counts[order] = np.cumsum(per_bin)[:-1]
    return counts, total


def quantile_utility(values, quantile, grid=LOG_GRID, weights=None, *, weight_cap=None):
    """Utility ``u(c) = -| #{i : v_i <= c} - q n |`` of each grid point.

    Finite whatever the values; replacing one value changes each count by at
    most 1 and adding or removing one changes ``count - q n`` by at most
    ``max(q, 1 - q)`` (:func:`quantile_sensitivity`). Non-finite values
    are mapped to ``+inf`` first, a fixed point above every grid candidate.
    ``weights`` (public, finite and non-negative: a ValueError otherwise)
    weight the counts, each capped at ``weight_cap`` (1 keeps the
    sensitivity that; None: as given); None counts every value once.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._quantile import quantile_utility
    >>> quantile_utility(np.array([1.0, 3.0, np.nan]), 0.5, np.array([0.5, 2.0]))
    array([-1.5, -0.5])
    """
    counts, total = _grid_counts(values, grid, weights, weight_cap)
    return -np.abs(counts - quantile * total)


def quantile_bin_utility(
    values, quantile, grid=LOG_GRID, weights=None, *, weight_cap=None
):
    """Utility of each bin ``(c_k, c_k+1]`` between neighbours of a sorted grid.

    ``u_k = -dist(q n, [#{v <= c_k}, #{v <= c_k+1}])``: 0 when the bin holds
    the ``q``-quantile (the counts below and at its top bracket ``q n``),
    else how many rows short of it the bin is. Each of ``#{v <= c} - q n``
    moves by at most the sensitivity of :func:`quantile_utility` when a
    record is added, removed or replaced, and ``dist(t, [a, b]) = max(a - t,
    0, t - b)`` moves by no more than its terms: the same sensitivity
    (:func:`quantile_sensitivity`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._quantile import quantile_bin_utility
    >>> v = np.array([0.3, 0.3, 0.3, 5.0])  # an atom between grid points
    >>> quantile_bin_utility(v, 0.25, np.array([-1.0, 0.0, 1.0, 10.0]))
    array([-1.,  0., -2.])
    """
    counts, total = _grid_counts(values, grid, weights, weight_cap)
    target = quantile * total
    below, at_top = counts[:-1], counts[1:]
    return np.minimum(np.minimum(target - below, 0.0), at_top - target)


def private_quantile(
    values,
    quantile,
    rho,
    rng,
    grid=LOG_GRID,
    weights=None,
    *,
    adjacency="replace_one",
    candidates="points",
):
    """Exponential-mechanism ``quantile`` of ``values`` on a public grid.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Private non-negative scalars, one per record. Non-finite values
        (``inf``, ``nan``) count as larger than every grid point.
    quantile : float
        Target level in [0, 1]; 0.5 is the median.
    rho : float
        The zCDP budget of the release, in (0, inf]; ``inf`` returns the grid
        point with the best utility (no privacy). A finite rho whose
        ``eps = sqrt(8 rho)`` overflows float64 (above about 2.2e307) is
        refused: the draw would be the best point, no noise at all.
    rng : numpy.random.Generator
        Source of the randomness.
    grid : ndarray, default=LOG_GRID
        Sorted public candidates.
    weights : ndarray of shape (n,), default=None
        Public weights of the counts, finite and non-negative, each capped
        at 1 when ``rho`` is finite (the sensitivity then stays 1); None
        counts each value once.
    adjacency : {"replace_one", "add_remove"}, default="replace_one"
        The neighbouring relation the caller accounts the release under; it
        sets the utility's sensitivity (:func:`quantile_sensitivity`: 1, or
        ``max(q, 1 - q)`` under add/remove).
    candidates : {"points", "bins"}, default="points"
        "points" draws a grid point (:func:`quantile_utility`); "bins" draws
        a bin between neighbouring points of the sorted grid
        (:func:`quantile_bin_utility`) and returns its midpoint, which
        stays next to a value that holds most rows. The same cost.

    Returns
    -------
    value : float
        A grid point, or the midpoint of two neighbouring ones.

    Raises
    ------
    TypeError
        If ``quantile`` or ``rho`` is not a real number (a bool, a string),
        or ``rng`` is not a :class:`numpy.random.Generator` while ``rho`` is
        finite.
    ValueError
        If ``quantile`` is outside [0, 1] or NaN, if ``rho`` is not in
        (0, inf] or is finite and too large (see ``rho``), if ``values`` is
        not 1-D, if ``grid`` holds no candidate, or if a weight is
        negative, infinite or NaN; all before anything is drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._quantile import private_quantile
    >>> v = np.random.default_rng(0).lognormal(size=20000)
    >>> m = private_quantile(v, 0.5, 0.01, np.random.default_rng(1))
    >>> 0.8 < m < 1.25
    True
    """
    quantile = _check_quantile(quantile)
    rho = _check_rho(rho)
    epsilon = math.inf if math.isinf(rho) else em_epsilon(rho)
    if math.isinf(epsilon) and not math.isinf(rho):
        # 8 rho overflowed: an exponential mechanism of infinite eps is the
        # argmax, while the caller accounts a finite rho.
        raise ValueError(
            f"rho={rho:g} is too large: the exponential mechanism's epsilon "
            "sqrt(8 rho) overflows float64, so the draw would be the best "
            "candidate exactly, no noise. Use a rho of at most "
            f"{sys.float_info.max / 8.0:.3g}, or rho=inf for no privacy."
        )
    _check_draw_inputs(values, rho, rng)
    sensitivity = quantile_sensitivity(quantile, adjacency)
    cap = None if math.isinf(rho) else 1.0
    if np.size(grid) < _MIN_GRID_POINTS.get(candidates, 0):
        raise ValueError(
            f"grid holds no candidate for candidates={candidates!r}: pass at "
            "least two points for 'bins' (one bin between each pair) and one "
            "for 'points'."
        )
    if candidates == "bins":
        grid = np.sort(np.asarray(grid, dtype=np.float64))
        utility = quantile_bin_utility(values, quantile, grid, weights, weight_cap=cap)
        with np.errstate(over="ignore"):
            candidate_values = 0.5 * (grid[:-1] + grid[1:])
        # Neighbours near the largest float overflow their sum: halved first.
        overflowed = ~np.isfinite(candidate_values)
        candidate_values[overflowed] = (
            0.5 * grid[:-1][overflowed] + 0.5 * grid[1:][overflowed]
        )
    elif candidates == "points":
        utility = quantile_utility(values, quantile, grid, weights, weight_cap=cap)
        candidate_values = grid
    else:
        raise ValueError(f"candidates must be 'points' or 'bins', got {candidates!r}.")
    if math.isinf(rho):
        # Ties go to the middle of the best run.
        best = np.flatnonzero(utility == utility.max())
        return float(candidate_values[best[best.size // 2]])
    # Logits eps u / (2 sensitivity) (Gumbel-max): eps-bounded-range, hence
    # rho-zCDP, under the caller's adjacency.
    mechanism = ExponentialMechanism(sensitivity=sensitivity, epsilon=epsilon)
    return float(candidate_values[mechanism.select(utility, rng)])


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
# Values binned at once by _blockwise_bincount: the temporaries of one
# block (about 40 bytes a value) stay far below the n values.
_COUNT_BLOCK = 1 << 12


# The grid points that make one candidate: one bin needs two edges.
_MIN_GRID_POINTS = {"bins": 2, "points": 1}


def _check_draw_inputs(values, rho, rng):
    # Before any count is formed: a scalar failed in the bincount with an
    # IndexError, and an int seed (natural beside random_state elsewhere)
    # with an AttributeError once the private counts were computed.
    if np.ndim(values) != 1:
        raise ValueError(
            f"values must be 1-D (one value per record); got {np.ndim(values)} "
            "dimensions."
        )
    if not math.isinf(rho) and not isinstance(rng, np.random.Generator):
        raise TypeError(
            "rng must be a numpy.random.Generator, such as "
            "check_noise_generator(random_state) gives; got "
            f"{type(rng).__name__}."
        )


def _check_weights_shape(weights, n):
    """Refuse weights that are not one per value (the message names no value)."""
    if np.ndim(weights) != 1 or np.shape(weights)[0] != n:
        raise ValueError("weights must hold one weight per value (a 1-d array).")


def _blockwise_bincount(values, to_bins, n_bins, weights=None, weight_cap=None):
    # (Weighted) counts of the bins ``to_bins(block)`` (indices in
    # [0, n_bins)) of the values and their total (n, or the sum of the
    # weights counted), block by block, so that no n-length temporary is
    # formed (with few stored entries per row, one would weigh as much as a
    # sparse X). Weights are capped at ``weight_cap`` (None: as given).
    # Unweighted counts are exact whatever the blocks.
    # Weights are refused unless finite and non-negative, block by block as
    # they are read, before any caller draws noise: the cap bounds a weight
    # from above only, so a negative one (or an infinite one without
    # privacy) would move a count by more than the sensitivity the release
    # is calibrated to, and NaN would poison every count.
    n = np.shape(values)[0]
    if weights is not None:
        _check_weights_shape(weights, n)
    counts = np.zeros(n_bins, dtype=np.float64)
    total = 0.0
    for start in range(0, n, _COUNT_BLOCK):
        block = np.asarray(values[start : start + _COUNT_BLOCK], dtype=np.float64)
        w = None
        if weights is not None:
            w = np.array(weights[start : start + _COUNT_BLOCK], dtype=np.float64)
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError("weights must be finite and non-negative.")
            if weight_cap is not None:
                np.minimum(w, weight_cap, out=w)
            total += float(np.sum(w))
        counts += np.bincount(to_bins(block), weights=w, minlength=n_bins)
    return counts, (n if weights is None else total)


def noisy_histogram(values, rho, rng, edges=SIGNED_EDGES, weights=None):
    """Counts of ``values`` in public bins plus Gaussian noise (rho-zCDP).

    Each record falls in exactly one bin (non-finite values in the top bin),
    so adding or removing one moves one count by its weight, at most 1: the
    histogram is the Gaussian mechanism of L2 sensitivity 1, rho-zCDP with
    noise std ``1 / sqrt(2 rho)`` (Bun and Steinke, 2016, Prop. 1.6).

    Parameters
    ----------
    values : ndarray of shape (n,)
        One private value per record; NaN counts in the last bin.
    rho : float
        The zCDP budget, in (0, inf]; ``inf`` returns the exact counts. A
        finite rho whose noise std ``1 / sqrt(2 rho)`` underflows to 0
        (above about 9e307) is refused: it would release the exact counts.
    rng : numpy.random.Generator
        The fit's generator (OS entropy unless seeded).
    edges : ndarray, default=SIGNED_EDGES
        Public increasing bin edges, ``-inf`` first and ``inf`` last.
    weights : ndarray of shape (n,), default=None
        Public count weights, finite and non-negative, each capped at 1
        under privacy (finite ``rho``: the sensitivity stays 1).

    Returns
    -------
    counts : ndarray of shape (len(edges) - 1,)
        Noisy count of each bin.
    threshold : float
        Counts below it are noise-dominated; without privacy the smallest
        positive float, so that exactly the non-empty bins reach it.

    Raises
    ------
    TypeError
        If ``rho`` is not a real number (a bool, a string), or ``rng`` is
        not a :class:`numpy.random.Generator` while ``rho`` is finite.
    ValueError
        If ``rho`` is not in (0, inf] or is finite and too large (see
        ``rho``), if ``values`` is not 1-D, or if a weight is negative,
        infinite or NaN; all before any noise is drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._quantile import noisy_histogram
    >>> counts, _ = noisy_histogram(np.array([1.0, 2.0, -3.0]), np.inf, None)
    >>> int(counts.sum())
    3
    """
    rho = _check_rho(rho)
    _check_draw_inputs(values, rho, rng)
    sigma = 0.0
    if not math.isinf(rho):
        # Bun and Steinke (2016), Prop. 1.6: rho-zCDP at sensitivity 1.
        sigma = 1.0 / math.sqrt(2.0 * rho)
        if not 0.0 < sigma < math.inf:
            # 2 rho overflowed to inf: a noise std of 0 releases the counts
            # exactly while the caller accounts a finite rho.
            raise ValueError(
                f"rho={rho:g} is too large: the histogram's noise standard "
                "deviation 1 / sqrt(2 rho) underflows to 0 in float64, which "
                "would release the counts exactly. Use a rho of at most "
                f"{sys.float_info.max / 2.0:.3g}, or rho=inf for the exact "
                "counts (no privacy)."
            )
    n_bins = len(edges) - 1

    def bin_of(block):
        block = np.where(np.isnan(block), np.inf, block)
        index = np.searchsorted(edges, block, side="right") - 1
        return np.clip(index, 0, n_bins - 1, out=index)

    counts, _ = _blockwise_bincount(
        np.asarray(values), bin_of, n_bins, weights,
        None if math.isinf(rho) else 1.0,
    )
    if math.isinf(rho):
        return counts, float(np.finfo(np.float64).tiny)
    mechanism = GaussianMechanism(clip_norm=1.0, noise_multiplier=sigma)
    return mechanism.privatize(counts, rng), _KEEP_SIGMAS * sigma
