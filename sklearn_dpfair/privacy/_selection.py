# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private selection with a random number of runs (Papernot and Steinke, 2022).

A mechanism ``Q`` is run ``K`` times independently, ``K`` drawn from a
truncated negative binomial distribution ``D_{eta, gamma}`` on ``{1, 2, ...}``
(eta = 0: logarithmic, eta = 1: geometric), and only the run with the best
score is released. Theorem 2 of Papernot and Steinke, "Hyperparameter Tuning
with Renyi Differential Privacy" (ICLR 2022) bounds the Renyi DP of the
selection by that of one run plus ``log(E[K]) / (lambda - 1)`` and a term in
``(1 + eta)`` times the run's RDP at another order. dp-accounting's RDP
accountant implements the theorem for ``RepeatAndSelectDpEvent``, so the
selection is composed as an ordinary event and its epsilon can be recomputed
from the recorded event. The guarantee needs ``K`` to stay secret: only the
best run is released, never how many runs there were.

This module holds everything about the theorem: the distribution's parameter,
sampling ``K``, the event, and the calibration of one run's budget so that
the whole selection meets a target epsilon. It never looks at data.
"""

import math
import sys

import dp_accounting
import numpy as np
from dp_accounting.dp_event import RepeatAndSelectDpEvent

from ._accounting import epsilon_of

__all__ = [
    "RUN_DISTRIBUTIONS",
    "calibrate_selection",
    "check_number_of_runs",
    "repeat_and_select_event",
    "sample_number_of_runs",
    "truncated_negative_binomial_gamma",
]

#: Named shapes ``eta`` of the truncated negative binomial.
RUN_DISTRIBUTIONS = {"logarithmic": 0.0, "geometric": 1.0}

# The calibrated selection spends between (1 - _RTOL) and 1 times its target;
# the search stops when the bracket on log(per-run budget) is _LOG_XTOL wide.
_RTOL, _LOG_XTOL, _MAX_EVALUATIONS = 0.01, 1e-4, 40

# dp-accounting's RDP accountant reads RepeatAndSelectDpEvent by solving for
# gamma from the mean to this relative accuracy (its conservative end); a
# sampler whose gamma is further off samples K from a distribution the
# accounting does not state.
_GAMMA_RTOL = 1e-9


def _shape_over_acceptance(shape, log_gamma):
    """``eta / (1 - gamma^eta)`` without underflow, for a tiny ``eta`` (or gamma).

    With ``x = eta log(gamma)`` it is ``(x / expm1(x)) / -log(gamma)``,
    which tends to the logarithmic distribution's ``1 / -log(gamma)`` as
    ``eta -> 0``, where ``1 - gamma^eta`` (and ``eta``) underflow.
    """
    x = shape * log_gamma
    ratio = 1.0 if x == 0 else x / math.expm1(x)
    return ratio / -log_gamma


def _mean_of(gamma, shape):
    """Mean of ``D_{eta, gamma}`` (Papernot and Steinke 2022, Section 2)."""
    if shape == 0:
        return (1 - gamma) / (gamma * -math.log(gamma))
    log_gamma = math.log(gamma)
    denominator = gamma * -math.expm1(shape * log_gamma)
    if denominator >= sys.float_info.min:
        return shape * (1 - gamma) / denominator
    # A tiny eta (or gamma) underflows gamma (1 - gamma^eta) to 0 (a
    # subnormal first).
    return (1 - gamma) / gamma * _shape_over_acceptance(shape, log_gamma)


def truncated_negative_binomial_gamma(mean, shape):
    """Parameter ``gamma`` of ``D_{eta, gamma}`` whose mean is ``mean``.

    For ``eta > 0`` the mean is ``eta (1 - gamma) / (gamma (1 - gamma^eta))``;
    for ``eta = 0`` (logarithmic) it is ``(1 - gamma) / (gamma log(1/gamma))``
    (Papernot and Steinke, Section 2). Both decrease from ``+inf`` to 1 as
    ``gamma`` goes from 0 to 1, so the root is found by bisection on
    ``log(gamma)``.

    Parameters
    ----------
    mean : float
        Expected number of runs, >= 1.
    shape : float
        ``eta >= 0``.

    Returns
    -------
    gamma : float
        In (0, 1]; 1 when ``mean == 1`` (exactly one run).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._selection import (
    ...     truncated_negative_binomial_gamma)
    >>> round(truncated_negative_binomial_gamma(4.0, 1.0), 6)  # geometric: 1/mean
    0.25
    """
    mean, shape = float(mean), float(shape)
    if not mean >= 1 or math.isinf(mean):
        raise ValueError(f"The mean number of runs must be >= 1, got {mean!r}.")
    if not shape >= 0 or math.isinf(shape):
        raise ValueError(f"The shape eta must be finite and >= 0, got {shape!r}.")
    if mean == 1:
        return 1.0

    def mean_of(gamma):
        return _mean_of(gamma, shape)

    lo, hi = -745.0, 0.0  # log(gamma) in (lo, hi); mean_of decreases in gamma
    while hi - lo > 1e-13 * max(1.0, abs(lo)):
        mid = 0.5 * (lo + hi)
        if mid == hi or mid == lo:
            break
        if mean_of(math.exp(mid)) > mean:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


def check_number_of_runs(mean, shape, *, names=("mean", "shape")):
    """``gamma`` of ``D_{eta, gamma}``, where ``K`` can be sampled as accounted.

    The accountant reads the selection's event from ``mean`` and ``shape``
    (it solves for gamma itself, to a relative :data:`_GAMMA_RTOL`); the
    runs are drawn with :func:`truncated_negative_binomial_gamma`'s gamma.
    Refused, from these public parameters alone (before any row is read):
    a gamma that float64 cannot resolve to that mean (an extreme ``eta``),
    a logarithmic distribution whose sampler's parameter ``1 - gamma``
    can round gamma by more than that tolerance (means above about 5.7e5),
    and a negative binomial that numpy's sampler refuses.

    Parameters
    ----------
    mean : float
        Expected number of runs, >= 1.
    shape : float
        ``eta >= 0``.
    names : tuple of str, default=("mean", "shape")
        How the messages name ``mean`` and ``shape`` (a caller's parameters).

    Returns
    -------
    gamma : float
        As :func:`truncated_negative_binomial_gamma` returns it.

    Raises
    ------
    ValueError
        Naming both parameters, where ``K`` cannot be drawn from the
        distribution the accounting states.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._selection import check_number_of_runs
    >>> round(check_number_of_runs(4.0, 1.0), 6)
    0.25
    >>> check_number_of_runs(1e15, 0.0, names=("n_runs", "runs_distribution"))
    Traceback (most recent call last):
    ...
    ValueError: n_runs=1e+15 with runs_distribution=0: ...
    """
    mean_name, shape_name = names
    given = f"{mean_name}={float(mean):g} with {shape_name}={float(shape):g}"
    try:
        gamma = truncated_negative_binomial_gamma(mean, shape)
    except ValueError as exc:
        raise ValueError(f"{given}: {exc}") from None
    mean, shape = float(mean), float(shape)
    if gamma == 1.0:
        return gamma
    if not math.isclose(_mean_of(gamma, shape), mean, rel_tol=_GAMMA_RTOL):
        raise ValueError(
            f"{given}: no float64 gamma gives this mean number of runs, so the "
            "runs could not be drawn from the distribution the selection is "
            f"accounted with; use a moderate {shape_name} (0, logarithmic, to "
            f"1, geometric) or a smaller {mean_name}."
        )
    if shape == 0:
        # numpy's logarithmic series takes 1 - gamma, whose rounding samples
        # gamma' = 1 - fl(1 - gamma), off by up to 2**-53 (half an ulp of
        # 1): a distribution of another mean (or none: 1 - gamma == 1).
        # Refused wherever that can exceed the tolerance (a monotone cut,
        # not the luck of one mean's rounding): means above about 5.7e5.
        if gamma < 2.0**-53 / _GAMMA_RTOL:
            raise ValueError(
                f"{given}: so many runs on average cannot be drawn from the "
                "logarithmic distribution the selection is accounted with (its "
                "parameter is within float64 rounding of 1); use a smaller "
                f"{mean_name}."
            )
        return gamma
    accept = -math.expm1(shape * math.log(gamma))
    if mean * accept >= 1.0:
        # The rejection sampler's negative binomial: numpy refuses parameters
        # whose Poisson rate could overflow (checked on the parameters, so a
        # draw from a throwaway generator tells, and reads nothing secret).
        try:
            np.random.default_rng(0).negative_binomial(shape, gamma)
        except ValueError:
            raise ValueError(
                f"{given}: numpy's negative binomial sampler cannot draw the "
                "number of runs from these parameters; use a smaller "
                f"{mean_name} or {shape_name}."
            ) from None
    return gamma


def sample_number_of_runs(mean, shape, rng):
    """Draw the number of runs ``K >= 1`` from ``D_{eta, gamma}``.

    ``P(K = k)`` is proportional to ``(1 - gamma)^k C(k + eta - 1, k)`` for
    ``eta > 0`` (a negative binomial conditioned on ``K >= 1``, sampled by
    rejection, or by inversion where rejection would rarely accept) and to
    ``(1 - gamma)^k / k`` for ``eta = 0`` (numpy's logarithmic series).

    Parameters
    ----------
    mean : float
        Expected number of runs, >= 1.
    shape : float
        ``eta >= 0``.
    rng : numpy.random.Generator
        Source of randomness (secret: ``K`` must not be released).

    Returns
    -------
    k : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._selection import sample_number_of_runs
    >>> rng = np.random.default_rng(0)
    >>> min(sample_number_of_runs(3.0, 0.0, rng) for _ in range(100)) >= 1
    True
    """
    gamma = check_number_of_runs(mean, shape)
    if gamma == 1.0:
        return 1
    if shape == 0:
        return int(rng.logseries(1.0 - gamma))
    # Rejection accepts a negative binomial draw with probability
    # 1 - gamma^eta (1 / accept draws expected), which vanishes as the mean
    # tends to 1 or eta to 0 (a mean of 1 + 1e-8 takes ~1e8 draws);
    # inversion takes about E[K] = mean steps. The cheaper one runs.
    accept = -math.expm1(shape * math.log(gamma))
    if float(mean) * accept < 1.0:
        return _inverted_number_of_runs(shape, gamma, accept, rng)
    while True:
        k = int(rng.negative_binomial(shape, gamma))
        if k >= 1:
            return k


def _inverted_number_of_runs(shape, gamma, accept, rng):
    # Sequential inversion of P(K = k), k >= 1: P(K = 1) is
    # eta (1 - gamma) gamma^eta / (1 - gamma^eta), and consecutive
    # probabilities have the ratio (1 - gamma) (k + eta) / (k + 1). About
    # E[K] steps, used where that is fewer than rejection's 1 / accept.
    u = rng.random()
    k = 1
    x = shape * math.log(gamma)
    tiny = sys.float_info.min
    if accept >= tiny and shape * (1.0 - gamma) >= tiny:
        p = shape * (1.0 - gamma) * math.exp(x) / accept
    else:
        # A tiny eta makes accept = 1 - gamma^eta (and eta (1 - gamma))
        # subnormal or 0: P(K = 1) tends to the logarithmic distribution's.
        p = (
            (1.0 - gamma)
            * math.exp(x)
            * _shape_over_acceptance(shape, math.log(gamma))
        )
    cdf = p
    while u > cdf:
        p *= (1.0 - gamma) * (k + shape) / (k + 1)
        if cdf + p == cdf:  # the rounding left of the tail: its first value
            break
        cdf += p
        k += 1
    return k


def repeat_and_select_event(run_event, mean, shape):
    """Event of releasing the best of ``K ~ D_{eta, gamma}`` runs of ``run_event``.

    Only dp-accounting's RDP accountant interprets it (Theorem 2 of Papernot
    and Steinke); the PLD accountant refuses it.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import epsilon_of, gaussian_event
    >>> from sklearn_dpfair.privacy._selection import repeat_and_select_event
    >>> one = epsilon_of(gaussian_event(5.0), 1e-5)
    >>> best_of_many = epsilon_of(
    ...     repeat_and_select_event(gaussian_event(5.0), 10.0, 1.0), 1e-5)
    >>> one < best_of_many < 10 * one
    True
    """
    return RepeatAndSelectDpEvent(run_event, float(mean), float(shape))


def selection_floor(mean, shape, delta):
    """Epsilon of the selection when every run spends nothing.

    The ``log(E[K]) / (lambda - 1)`` and ``log(gamma)`` terms of the theorem
    remain; a target below this floor cannot be met by any run.
    """
    event = repeat_and_select_event(dp_accounting.NoOpDpEvent(), mean, shape)
    return epsilon_of(event, delta, "rdp")


def calibrate_selection(make_run_event, target_epsilon, delta, mean, shape, *, hi):
    """Largest per-run budget ``t <= hi`` whose selection meets the target.

    ``make_run_event(t)`` builds the event of one run given its parameter
    ``t`` (here: the epsilon each candidate is trained with); the selection's
    epsilon, computed by dp-accounting's RDP accountant, increases with
    ``t``. A bracketing root search on ``log t`` returns the good end of its
    bracket: where the run's event varies continuously with ``t`` its
    selection spends between 99% and 100% of the target; where the event
    jumps (a run whose plan changes form at some ``t``: one Gaussian below,
    a composition above) it can spend less, the most that stays within the
    target. In every case
    ``epsilon(repeat_and_select_event(make_run_event(t))) <= target_epsilon``
    holds as the accountant computes it (check after calibrate).

    ``make_run_event`` may raise ``ValueError`` for a ``t`` too small for the
    run's own calibration; such ``t`` count as unusable.

    Parameters
    ----------
    make_run_event : callable
        ``t -> DpEvent`` of one run.
    target_epsilon, delta : float
        The whole selection's budget.
    mean, shape : float
        Mean and shape ``eta`` of the number of runs.
    hi : float
        Upper end of the search (a run never gets more than this).

    Returns
    -------
    t : float
        The per-run parameter.
    event : dp_accounting.DpEvent
        The selection's event at ``t``.

    Raises
    ------
    ValueError
        If no ``t`` in the search range meets the target.
    """
    floor = selection_floor(mean, shape, delta)
    if floor >= target_epsilon:
        raise ValueError(
            f"epsilon={target_epsilon:g} is below the cost of the random selection "
            f"alone ({floor:.3g} for a mean of {mean:g} runs at delta={delta:g}): "
            "raise epsilon or lower the number of runs."
        )

    def evaluate(log_t):
        try:
            run = make_run_event(math.exp(log_t))
            event = repeat_and_select_event(run, mean, shape)
        except ValueError:
            return None, None
        return epsilon_of(event, delta, "rdp"), event

    # log(epsilon) is close to linear in log(t) with slope ~1, so a
    # regula falsi on the log-log scale (Illinois variant) lands in the
    # accepted band [target (1 - rtol), target] in a few evaluations; each
    # costs one calibration of every distinct candidate.
    log_target = math.log(target_epsilon)
    aim = log_target + math.log1p(-_RTOL / 2)
    x_bad, eps = math.log(hi), None
    eps, event = evaluate(x_bad)
    if eps is not None and eps <= target_epsilon:
        return hi, event
    f_bad = math.inf if eps is None else math.log(eps) - aim
    x_good = f_good = good_event = None
    x_fail = -math.inf  # largest log t known to be unusable (too small)
    x = x_bad - (f_bad if math.isfinite(f_bad) else math.log(4.0))
    for _ in range(_MAX_EVALUATIONS):
        eps, event = evaluate(x)
        if eps is None:
            x_fail = max(x_fail, x)
            if x_good is not None:
                break  # cannot happen for a monotone run; keep what works
            x = 0.5 * (x + x_bad) if x_bad - x > _LOG_XTOL else x_bad
            if x_bad - x_fail <= _LOG_XTOL:
                break
            continue
        f = math.log(eps) - aim
        if eps <= target_epsilon:
            x_good, f_good, good_event = x, f, event
            if math.log(eps) >= log_target + math.log1p(-_RTOL):
                break
        else:
            x_bad, f_bad = x, f
        if x_good is None:
            x = max(x - f, 0.5 * (x_fail + x) if math.isfinite(x_fail) else -math.inf)
            continue
        if x_bad - x_good <= _LOG_XTOL:
            break
        # Secant between the bracket ends, kept strictly inside the bracket.
        if math.isfinite(f_bad):
            x = x_good - f_good * (x_bad - x_good) / (f_bad - f_good)
        else:
            x = 0.5 * (x_good + x_bad)
        width = x_bad - x_good
        x = min(max(x, x_good + 0.05 * width), x_bad - 0.05 * width)
    if x_good is None:
        raise ValueError(
            f"epsilon={target_epsilon:g} at delta={delta:g} is too small for this "
            f"search: the candidates cannot be trained with a per-run budget "
            f"small enough for {mean:g} expected runs. Raise epsilon, or use "
            "fewer runs or fewer candidates with distinct privacy costs."
        )
    return math.exp(x_good), good_event
