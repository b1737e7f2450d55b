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
            out[:, j] = (
                np.quantile(observed, levels) if observed.size else np.nan
            )
            continue
        observed = column[~np.isnan(column)]
        for k, q in enumerate(levels):
            out[k, j] = private_quantile(
                observed, q, rho, rng, grid=grids[j], adjacency="add_remove"
            )
    return np.sort(out, axis=0)
