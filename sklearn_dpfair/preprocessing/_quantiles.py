# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private per-column quantiles on public grids.

Each quantile is one exponential-mechanism draw
(:func:`~sklearn_dpfair.privacy.private_quantile`, Smith 2011) over a public
grid, with the utility sensitivity of add/remove adjacency
(``max(q, 1 - q)``): a record missing in a column is absent from that
column's counts, so adding or removing it moves each utility by at most
that much. Independent draws are simple and accounted exactly; JointExp
(Gillenwater, Joseph and Kulesza, 2021) would spend less for many
quantiles of one column.
"""

import math

import numpy as np

from ..privacy import private_quantile

__all__ = ["column_quantiles"]


def column_quantiles(X, levels, grids, rho, rng):
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
        column = X[:, j]
        if math.isinf(rho):
            observed = column[~np.isnan(column)]
            out[:, j] = np.quantile(observed, levels) if observed.size else np.nan
            continue
        observed = column[~np.isnan(column)]
        for k, q in enumerate(levels):
            out[k, j] = private_quantile(
                observed, q, rho, rng, grid=grids[j], adjacency="add_remove"
            )
    return np.sort(out, axis=0)


def quantile_edges(X, lower, upper, n_edges, rho, rng):
    """Edges at levels ``0, 1/(n_edges - 1), ..., 1`` of each column.

    Under privacy the end points are the public bounds and the interior
    edges private quantiles of the clipped column (``n_edges - 2`` draws per
    column, each of budget ``rho``), on a grid of the bounds
    (:func:`~sklearn_dpfair.preprocessing._bounds.bounded_grid`). Without
    privacy (``rho=inf``) they are the exact quantiles, the observed minimum
    and maximum included, as scikit-learn computes them (the bounds'
    uniform edges for a column with no observed value).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Private rows; NaN is missing.
    lower, upper : ndarray of shape (n_features,)
        Public bounds.
    n_edges : int
        Number of edges, end points included (>= 2).
    rho : float
        zCDP budget of each interior draw.
    rng : numpy.random.Generator

    Returns
    -------
    edges : ndarray of shape (n_edges, n_features)
        Non-decreasing in each column, within the bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._quantiles import quantile_edges
    >>> X = np.arange(1.0, 10.0)[:, None]
    >>> quantile_edges(X, np.array([0.0]), np.array([10.0]), 3, np.inf, None)
    array([[1.],
           [5.],
           [9.]])
    """
    from ._bounds import bounded_grid

    levels = np.linspace(0.0, 1.0, n_edges)
    clipped = np.clip(X, lower, upper)
    if math.isinf(rho):
        edges = column_quantiles(clipped, levels, None, math.inf, None)
        empty = np.isnan(edges).all(axis=0)
        edges[:, empty] = np.linspace(lower, upper, n_edges)[:, empty]
    else:
        grids = [bounded_grid(lo, hi) for lo, hi in zip(lower, upper)]
        inner = column_quantiles(clipped, levels[1:-1], grids, rho, rng)
        edges = np.vstack([lower, inner, upper])
    return np.maximum.accumulate(edges, axis=0)
