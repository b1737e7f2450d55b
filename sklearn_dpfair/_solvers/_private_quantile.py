# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A private quantile of positive scalars: the exponential mechanism on a log grid.

The heavy-tail estimator needs a robust private *scale* (the median
per-sample gradient norm, the median squared row norm). The exponential
mechanism (McSherry and Talwar, 2007) picks a point ``c`` of a public grid
with probability proportional to ``exp(eps u(c) / 2)``, where
``u(c) = -| #{i : v_i <= c} - q n |`` has replace-one sensitivity 1. It is
eps-DP and hence ``eps^2 / 2``-zCDP (Bun and Steinke, Prop. 1.4), so a zCDP
budget rho buys ``eps = sqrt(2 rho)``.

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

__all__ = ["LOG_GRID", "private_quantile", "quantile_utility"]

#: Public candidate values: 401 points from 1e-8 to 1e8, 25 per decade
#: (a relative resolution of about 10%, finer than the mechanism's noise).
LOG_GRID = np.geomspace(1e-8, 1e8, 401)


def quantile_utility(values, quantile, grid=LOG_GRID):
    """Utility ``u(c) = -| #{i : v_i <= c} - q n |`` of each grid point.

    Finite whatever the values; changing one value changes each count by at
    most 1 (and adding or removing one changes ``q n`` by at most
    ``max(q, 1 - q)`` besides), so the sensitivity is 1. Non-finite values
    are mapped to ``+inf`` first, a fixed point above every grid candidate.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._private_quantile import quantile_utility
    >>> quantile_utility(np.array([1.0, 3.0, np.nan]), 0.5, np.array([0.5, 2.0]))
    array([-1.5, -0.5])
    """
    values = np.asarray(values, dtype=np.float64)
    # A fixed, data-independent image for non-finite values: above the grid.
    values = np.where(np.isfinite(values), values, np.inf)
    counts = np.searchsorted(np.sort(values), grid, side="right")
    return -np.abs(counts - quantile * values.shape[0])


def private_quantile(values, quantile, rho, rng, grid=LOG_GRID):
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

    Returns
    -------
    value : float
        A grid point.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._private_quantile import private_quantile
    >>> v = np.random.default_rng(0).lognormal(size=20000)
    >>> m = private_quantile(v, 0.5, 0.01, np.random.default_rng(1))
    >>> 0.8 < m < 1.25
    True
    """
    utility = quantile_utility(values, quantile, grid)
    if math.isinf(rho):
        # Ties between grid points go to the middle of the best run.
        best = np.flatnonzero(utility == utility.max())
        return float(grid[best[best.size // 2]])
    eps = math.sqrt(2.0 * rho)
    logits = 0.5 * eps * utility
    # Gumbel-max sampling: exact draw from the softmax of the logits.
    return float(grid[np.argmax(logits + rng.gumbel(size=grid.shape))])
