# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact binomial confidence bounds and the (epsilon, delta) hypothesis-test bound.

Any (epsilon, delta)-DP mechanism M and any test that guesses "the canary is
in" from one output satisfy, for its false-positive rate FPR and
false-negative rate FNR (Kairouz et al., 2015),

    FPR + e^epsilon FNR >= 1 - delta   and   FNR + e^epsilon FPR >= 1 - delta.

Upper confidence bounds on FPR and FNR therefore give a lower confidence bound
on epsilon (Jagielski et al., 2020; Nasr et al., 2021). Clopper-Pearson bounds
are exact (never anti-conservative) for every number of runs.
"""

import math
import numbers

import numpy as np
from scipy.stats import beta

from ..privacy._accounting import check_delta

__all__ = [
    "check_confidence",
    "check_count",
    "clopper_pearson",
    "epsilon_ceiling",
    "epsilon_from_error_bounds",
    "per_bound_confidence",
]


def check_confidence(confidence):
    """``confidence`` as a float in (0, 1), or a ValueError naming it.

    The audits split it between two one-sided bounds (see
    :func:`per_bound_confidence`); checking only the split value would pass
    a ``confidence`` in (-1, 0], whose "bounds" hold with no probability at
    all and flag correct mechanisms as violations, and would report a
    value the caller never gave.

    Parameters
    ----------
    confidence : float
        The confidence the caller asked for.

    Returns
    -------
    confidence : float
        The same value, as a float.

    Examples
    --------
    >>> from sklearn_dpfair.audit._bounds import check_confidence
    >>> check_confidence(0.95)
    0.95
    """
    valid = isinstance(confidence, numbers.Real) and not isinstance(confidence, bool)
    if not valid or math.isnan(confidence) or not 0 < confidence < 1:
        raise ValueError(
            f"confidence must be a number in (0, 1) (0.95 for 95%), got {confidence!r}."
        )
    return float(confidence)


def per_bound_confidence(confidence):
    """Confidence of each of two one-sided bounds that hold together at ``confidence``.

    A union bound: each fails with probability ``(1 - confidence) / 2``.

    Parameters
    ----------
    confidence : float
        Joint confidence, in (0, 1).

    Returns
    -------
    per_bound : float
        ``1 - (1 - confidence) / 2``.

    Examples
    --------
    >>> from sklearn_dpfair.audit._bounds import per_bound_confidence
    >>> per_bound_confidence(0.9)
    0.95
    """
    return 1.0 - (1.0 - check_confidence(confidence)) / 2.0


def clopper_pearson(k, n, *, confidence=0.95, side="two-sided"):
    """Clopper-Pearson confidence bounds on a binomial proportion.

    Parameters
    ----------
    k : int or array-like of int
        Number of successes, ``0 <= k <= n`` (whole numbers).
    n : int or array-like of int
        Number of trials, ``n >= 1`` (whole numbers).
    confidence : float, default=0.95
        Coverage probability of the bound(s), in (0, 1).
    side : {"two-sided", "upper", "lower"}, default="two-sided"
        "upper" gives a one-sided upper bound (the lower end is 0), "lower" a
        one-sided lower bound (the upper end is 1).

    Returns
    -------
    lower, upper : float or ndarray
        The bounds; ``k = 0`` gives lower 0 and ``k = n`` gives upper 1.

    Raises
    ------
    ValueError
        If ``confidence`` is not a number in (0, 1), ``side`` is unknown,
        ``k`` or ``n`` is not a whole number, or ``0 <= k <= n``, ``n >= 1``
        fails.

    Examples
    --------
    >>> from sklearn_dpfair.audit import clopper_pearson
    >>> lo, hi = clopper_pearson(0, 100, confidence=0.95, side="upper")
    >>> round(float(hi), 4)
    0.0295
    """
    confidence = check_confidence(confidence)
    if side not in ("two-sided", "upper", "lower"):
        raise ValueError(f"side must be 'two-sided', 'upper' or 'lower', got {side!r}.")
    k = _counts(k, "k")
    n = _counts(n, "n")
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("clopper_pearson needs 0 <= k <= n and n >= 1.")
    alpha = 1.0 - confidence
    tail = alpha / 2 if side == "two-sided" else alpha
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, beta.ppf(tail, k, n - k + 1), 0.0)
        upper = np.where(k < n, beta.ppf(1 - tail, k + 1, n - k), 1.0)
    if side == "upper":
        lower = np.zeros_like(upper)
    elif side == "lower":
        upper = np.ones_like(lower)
    if lower.ndim == 0:
        return float(lower), float(upper)
    return lower, upper


def _counts(values, name):
    """``values`` as a float array of whole numbers, or a ValueError naming ``name``.

    The Clopper-Pearson bounds are beta quantiles of a binomial count;
    ``beta.ppf`` evaluates at a fractional (or infinite) count too and
    returns a number that bounds no binomial proportion.
    """
    try:
        values = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        values = None
    whole = values is not None and np.all(
        np.isfinite(values) & (values == np.round(values))
    )
    if not whole:
        raise ValueError(
            f"{name} must be a whole number (a count) or an array of them."
        )
    return values


def _error_rates(values, name):
    """``values`` as a float array of rates in [0, 1], or a ValueError naming it."""
    try:
        rates = np.asarray(values)
        valid = rates.dtype.kind in "iuf"
        rates = rates.astype(float)
    except (TypeError, ValueError):
        valid = False
    if not valid or not np.all((rates >= 0) & (rates <= 1)):
        raise ValueError(f"{name} must be error rates in [0, 1].")
    return rates


def check_count(value, name, minimum):
    """``value`` as an int >= ``minimum``, or an error naming ``name``.

    Integral floats (``1e3``) are counts; NaN, infinities, fractions, text and
    booleans are not (a ``TypeError`` for what is no number, a ``ValueError``
    for a number that is no such count), refused before any run.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}.")
    if not math.isfinite(value) or value != int(value) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def epsilon_from_error_bounds(fpr_upper, fnr_upper, delta):
    """Smallest epsilon compatible with error rates below the given bounds.

    Parameters
    ----------
    fpr_upper, fnr_upper : float or ndarray
        Upper bounds on the false-positive and false-negative rates of a
        distinguishing test.
    delta : float
        The delta at which epsilon is bounded, in [0, 1).

    Returns
    -------
    epsilon : float or ndarray
        ``max(log((1 - delta - FNR) / FPR), log((1 - delta - FPR) / FNR), 0)``.

    Raises
    ------
    ValueError
        If a bound is not a rate in [0, 1], or ``delta`` is not in [0, 1).

    Examples
    --------
    >>> from sklearn_dpfair.audit import epsilon_from_error_bounds
    >>> round(float(epsilon_from_error_bounds(0.05, 0.5, 1e-5)), 3)
    2.303
    """
    delta = check_delta(delta)
    fpr = _error_rates(fpr_upper, "fpr_upper")
    fnr = _error_rates(fnr_upper, "fnr_upper")
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log((1.0 - delta - fnr) / fpr)
        b = np.log((1.0 - delta - fpr) / fnr)
    a = np.nan_to_num(a, nan=0.0, posinf=np.inf)
    b = np.nan_to_num(b, nan=0.0, posinf=np.inf)
    eps = np.fmax(np.fmax(a, b), 0.0)
    return float(eps) if eps.ndim == 0 else eps


def epsilon_ceiling(n_without, n_with, delta, *, confidence=0.95):
    """The largest epsilon lower bound an audit of this size can certify.

    A test with no error at all on ``n_without`` and ``n_with`` evaluation
    runs has error-rate upper bounds ``1 - ((1 - confidence) / 2) ** (1 / n)``
    (the one-sided Clopper-Pearson bounds of :func:`audit_scores`, each at
    ``1 - (1 - confidence) / 2``); no outcome of these runs gives a larger
    lower bound on epsilon at ``delta``. An audit whose ceiling is not above
    the claimed epsilon cannot refute the claim, whatever the mechanism does.

    Parameters
    ----------
    n_without, n_with : int
        Evaluation runs in each world, at least 1 each.
    delta : float
        Delta at which epsilon is bounded, in [0, 1).
    confidence : float, default=0.95
        Joint confidence of the two error bounds.

    Returns
    -------
    ceiling : float
        ``epsilon_from_error_bounds(u0, u1, delta)`` with ``u0, u1`` the
        zero-error bounds.

    Examples
    --------
    >>> from sklearn_dpfair.audit import epsilon_ceiling
    >>> round(epsilon_ceiling(25, 25, 1e-5), 3)  # 100 runs, half choosing
    1.839
    """
    n_without = check_count(n_without, "n_without", 1)
    n_with = check_count(n_with, "n_with", 1)
    per_bound = per_bound_confidence(confidence)
    _, u0 = clopper_pearson(0, n_without, confidence=per_bound, side="upper")
    _, u1 = clopper_pearson(0, n_with, confidence=per_bound, side="upper")
    return float(epsilon_from_error_bounds(u0, u1, delta))
