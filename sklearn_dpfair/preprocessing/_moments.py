# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Noisy per-column counts, clipped sums and sums of squares: one Gaussian release.

Each column ``j`` is clipped to its public ``[lo_j, hi_j]``, centred at the
public midpoint ``m_j`` and divided by the public half-width ``r_j``, so a
record's value ``u_j`` lies in ``[-1, 1]`` (0 when missing). A record adds
``(w_0 o_j, w_1 u_j, w_2 u_j^2)_j`` to the stacked vector of counts, sums
and sums of squares, where ``o_j`` says whether ``x_j`` is observed and
``w_k = sqrt(share_k / d)``: its l2 norm is at most
``sqrt(sum_k share_k) = 1`` whatever the record holds (huge, missing or
constant values included). Adding or removing a record therefore moves the
stacked vector by at most 1 in l2 norm, and one Gaussian mechanism of
sensitivity 1 releases all of it (the bounded mean and variance of Dwork
and Roth, 2014, Section 3.5, and of Biswas, Dong, Kamath and Ullman, 2020,
with the count released rather than assumed public). Division happens after
the release (post-processing).
"""

import math

import numpy as np

from ..utils._numeric import constant_columns, power_of_two_magnitudes
from ._bounds import centre_and_half_width

__all__ = [
    "MOMENT_SHARES",
    "exact_moments",
    "mean_and_variance",
    "moment_noise_stds",
    "noisy_moments",
]

# Variance floor, as a fraction of the squared width: a near-constant private
# column must not be divided by noise (in units of the half-width: (2e-3)^2).
_RELATIVE_STD_FLOOR = 1e-3

#: Under privacy the variance is also floored at this many standard deviations
#: of its own noise. A released variance that the noise could have produced
#: from nothing says only that the column's variance is small; taking the
#: noise level for it errs towards a larger scale, which shrinks the column
#: (harmless to a downstream clipped gradient), where the absolute floor alone
#: divided by a near-zero scale and blew values up a thousandfold. Measured
#: on COMPAS's raw columns in a private pipeline (count columns, almost
#: always 0, at an epsilon target of 0.02-0.1 a step): see
#: benchmarks/bench_raw_pipeline.py.
NOISE_FLOOR_STDS = 2.0

#: Shares of the squared sensitivity given to (counts, sums, sums of
#: squares): the count matters least (it divides the other two, and is
#: large), the sums and squares equally.
MOMENT_SHARES = {1: (0.2, 0.8), 2: (0.1, 0.45, 0.45)}


def noisy_moments(X, lower, upper, mechanism, rng, *, order=2, weights=None):
    """Noisy counts and clipped moments of each column, in one release.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Private rows; NaN is missing.
    lower, upper : ndarray of shape (n_features,)
        Public bounds.
    mechanism : GaussianMechanism
        Of ``clip_norm=1`` (the stacked vector's sensitivity).
    rng : numpy.random.Generator
    order : {1, 2}, default=2
        Release sums only (1) or sums and sums of squares (2).
    weights : ndarray of shape (n_samples,) or None, default=None
        Public weight of each row's terms, at most 1 under privacy
        (:func:`~sklearn_dpfair.privacy._weights.counted_weights`): a
        record's stacked vector is then at most 1 in l2 norm, as an
        unweighted one. None counts each row once.

    Returns
    -------
    count, sum_u[, sum_u2] : ndarrays of shape (n_features,)
        Noisy (weighted) count of observed values, and noisy (weighted) sums
        of ``u`` (and ``u^2``), in units of the half-width around the
        midpoint.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.preprocessing._moments import noisy_moments
    >>> X = np.array([[0.0], [10.0], [np.nan]])
    >>> n, s1, s2 = noisy_moments(X, np.array([0.0]), np.array([10.0]),
    ...                           GaussianMechanism(1.0, 0.0), None)
    >>> n, s1, s2
    (array([2.]), array([0.]), array([2.]))
    """
    d = X.shape[1]
    block_weights = _block_weights(d, order)
    centre, half = centre_and_half_width(lower, upper)
    observed = ~np.isnan(X)
    # Missing values contribute 0 to the sums (and their observed flag 0).
    # The division rounds: with bounds a few ulps apart (1e8 and 1e8 + 3
    # ulps) (x - centre) / half can leave [-1, 1], and a record's stacked
    # vector then exceeds the sensitivity it is released at. Clipping u
    # itself bounds every record's term whatever the rounding.
    u = np.where(
        observed, np.clip((np.clip(X, lower, upper) - centre) / half, -1.0, 1.0), 0.0
    )
    if weights is None:
        parts = [observed.sum(axis=0, dtype=np.float64), u.sum(axis=0)]
        if order == 2:
            parts.append(np.square(u).sum(axis=0))
    else:
        parts = [weights @ observed, weights @ u]
        if order == 2:
            parts.append(weights @ np.square(u))
    stacked = np.concatenate([w * p for w, p in zip(block_weights, parts)])
    noisy = mechanism.privatize(stacked, rng)
    return tuple(
        noisy[k * d : (k + 1) * d] / block_weights[k] for k in range(len(parts))
    )


def moment_noise_stds(mechanism, n_features, *, order=2):
    """Noise standard deviations of the released count, sum and sum of squares.

    :func:`noisy_moments` divides each block of its release by its public
    weight ``sqrt(share_k / d)``, so block ``k`` carries noise of standard
    deviation ``noise_std / sqrt(share_k / d)``: a public quantity.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.preprocessing._moments import moment_noise_stds
    >>> [round(s, 2) for s in moment_noise_stds(GaussianMechanism(1.0, 2.0), 1)]
    [6.32, 2.98, 2.98]
    """
    return tuple(
        mechanism.noise_std / weight for weight in _block_weights(n_features, order)
    )


def _block_weights(n_features, order):
    """The public weights ``sqrt(share_k / d)`` of the released blocks."""
    return [math.sqrt(share / n_features) for share in MOMENT_SHARES[order]]


def mean_and_variance(count, sum_u, sum_u2=None, *, private, noise_stds=None):
    """Mean and variance in half-width units, from the released sums.

    Parameters
    ----------
    count, sum_u : ndarray of shape (n_features,)
        Released count of observed values and sum of ``u``
        (:func:`noisy_moments`).
    sum_u2 : ndarray of shape (n_features,) or None, default=None
        Released sum of ``u^2`` (None: no variance is wanted; the returned
        one is then meaningless).
    private : bool
        Whether the sums are noisy (then projected on what the true
        statistics can be).
    noise_stds : tuple of float or None, default=None
        The releases' noise standard deviations
        (:func:`moment_noise_stds`); under privacy the variance is then also
        floored at ``NOISE_FLOOR_STDS`` standard deviations of its noise
        (first order in the noise of the sums: ``sqrt(s2^2 + (2 mean
        s1)^2) / count``).

    Returns
    -------
    mean, var : ndarray of shape (n_features,)
        The mean in ``[-1, 1]`` (0 for a column with no observed value) and
        the variance (floored at ``(2e-3)^2``, and at its noise level when
        ``noise_stds`` is given, and at most 1 under privacy).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._moments import mean_and_variance
    >>> mean_and_variance(np.array([4.0]), np.array([2.0]), np.array([2.0]),
    ...                   private=True)
    (array([0.5]), array([0.25]))
    """
    if sum_u2 is None:
        sum_u2 = np.zeros_like(sum_u)
    if not private:
        # Exact (weighted) counts: any positive total divides, none is 0.
        n = np.where(count > 0, count, 1.0)
        mean = sum_u / n
        return mean, np.maximum(sum_u2 / n - np.square(mean), 0.0)
    # Post-processing of noisy releases: a mean outside the bounds and a
    # variance outside [floor, 1] are each impossible for the true
    # statistics, so projecting onto them only removes noise; a count below
    # one record (a weighted one included) is within the noise of none.
    n = np.maximum(count, 1.0)
    mean = np.clip(sum_u / n, -1.0, 1.0)
    var = sum_u2 / n - np.square(mean)
    floor = np.full_like(var, (2.0 * _RELATIVE_STD_FLOOR) ** 2)
    if noise_stds is not None and len(noise_stds) == 3:
        _, std_sum, std_squares = noise_stds
        # Post-processing of the released count and mean with public noise
        # levels: no further privacy cost.
        var_std = np.hypot(std_squares, 2.0 * np.abs(mean) * std_sum) / n
        floor = np.maximum(floor, NOISE_FLOOR_STDS * var_std)
    return mean, np.clip(var, np.minimum(floor, 1.0), 1.0)


def exact_moments(X, lower, upper, weights=None):
    """The (weighted) mean, variance and scale of the clipped columns (no privacy).

    Two passes, the mean and then the centred squares: the sums of squares
    the private release is made of lose a constant column's zero variance
    to rounding (``5.5e-13`` for twenty values of 5 in ``[0, 100]``, a
    scale of ``7e-7``); two passes keep it, and a variance within rounding
    of zero is zero, as in scikit-learn's ``StandardScaler``. Each column
    is first divided by a power of two that brings its largest value to
    order 1 (:func:`~sklearn_dpfair.utils._numeric.power_of_two_magnitudes`),
    exactly, so the moments round as the raw ones would but a spread beyond
    ``1e154`` does not overflow its squares (as the private fit's
    half-width units do not): its variance then reads ``inf``, its scale
    is finite. A spread whose square underflows to zero is constant, as
    scikit-learn finds it. The weights of each column's observed values
    are likewise divided by a power of two that brings their largest to
    ``[0.5, 1)``: weights near the largest float do not overflow their
    sums, and a column whose values all have tiny weights beside another
    column's (``1e-20`` beside ``1e308``) is still seen, as scikit-learn
    sees it.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Rows; NaN is missing.
    lower, upper : ndarray of shape (n_features,)
        The bounds the columns are clipped to.
    weights : ndarray of shape (n_samples,) or None, default=None
        Finite non-negative weights, as given (not rescaled: a row counts
        when its weight is positive); None weighs every row 1.

    Returns
    -------
    mean, var, scale : ndarray of shape (n_features,)
        NaN in a column with no observed (positively weighted) value.
    seen : ndarray of bool, shape (n_features,)
        Which columns have an observed value.
    """
    if weights is not None:
        X, weights = X[weights > 0], weights[weights > 0]
    observed = ~np.isnan(X)
    clipped = np.where(observed, np.clip(X, lower, upper), 0.0)
    count = observed.sum(axis=0)
    magnitude = power_of_two_magnitudes(np.max(np.abs(clipped), axis=0, initial=0.0))
    scaled = clipped / magnitude
    w = observed if weights is None else observed * weights[:, None]
    if weights is not None:
        # Exactly, column by column: the statistics are ratios of weighted
        # sums, and the largest weight of each column in [0.5, 1) neither
        # overflows a sum nor underflows the column's only weights.
        w = np.ldexp(w, -np.frexp(np.max(w, axis=0, initial=0.0))[1])
    total = w.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):  # all-NaN columns
        mean = (w * scaled).sum(axis=0) / total
        var = (w * np.square(scaled - mean)).sum(axis=0) / total
    # The test is homogeneous of degree 2 in the mean and the spread: it
    # reads the scaled moments.
    var = np.where(constant_columns(var, mean, count), 0.0, var)
    scale = np.sqrt(var) * magnitude
    with np.errstate(over="ignore"):
        var = var * magnitude * magnitude
    scale = np.where(var > 0, scale, 0.0)
    return mean * magnitude, var, scale, count > 0
