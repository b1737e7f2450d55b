# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Choose the smallest noise multiplier that meets a target (epsilon, delta).

Calibration is a pure function of public inputs (budget, sampling rate,
number of steps), so it is memoized: refitting in ``GridSearchCV`` or across
seeds does not pay for it again. It never looks at data.
"""

import contextlib
import functools
import math

from scipy.special import log_ndtr, ndtr

from ._accounting import (
    _is_real,
    check_delta,
    composed_gaussian_scale,
    epsilon_of,
    gaussian_event,
    noisy_sgd_event,
    pld_gaussian_scale,
)

__all__ = [
    "calibrate_noise",
    "calibrate_noise_multiplier",
    "noise_multiplier_for_gaussian",
]

# Relative tolerance of the root search on log(sigma). The returned sigma is
# then nudged upwards until epsilon(sigma) <= target holds *exactly* as the
# accountant computes it, so the tolerance only costs a little utility.
_LOG_SIGMA_XTOL = 1e-4
# Search range for sigma. Below 0.1 a Gaussian step gives essentially no
# privacy (epsilon ~ 50 for a single step) and the PLD accountant's grid blows
# up; budgets that large get sigma = 0.1, which is conservative (the PLD
# calibration of unsampled Gaussians stops above it, at _PLD_FLOOR_SCALE).
# Above 1e5 the steps carry no signal.
_SIGMA_MIN, _SIGMA_MAX = 0.1, 1e5
# The search starts at sigma = 1 and moves by at most a factor e^3 per step.
_SIGMA_START, _MAX_LOG_STEP, _MAX_SECANT_STEPS = 1.0, 3.0, 12
# Smallest PLD Gaussian scale (pld_gaussian_scale) the PLD search computes:
# the old floor of sigma for one Gaussian (epsilon ~ 90 at delta = 1e-5,
# ~6 s and 0.8 GB of loss grid), now applied to the composed Gaussian that
# dp-accounting builds for T full-batch steps (sigma / sqrt(T)).
_PLD_MIN_SCALE = 0.1
# At or above this PLD scale at sigma = 1 (at most 11 full-batch steps; any
# Poisson-sampled step) the plain search from sigma = 1 is cheap.
_PLD_CHEAP_START_SCALE = 0.3
# Floor of the PLD calibration of unsampled Gaussian releases (one
# Gaussian, or full-batch steps), as a PLD scale: epsilon ~ 50 at delta =
# 1e-5 (42 at 1e-3, 64 at 1e-10); a larger budget gets this noise, which is
# conservative. dp-accounting builds the PLD of a Gaussian of scale 0.15 in
# ~2 s of CPU (1.7e6 loss points), of 0.1 in ~4-6 s (2.9e6, 0.8 GB), and the
# fit's plan and record account the calibrated noise again.
_PLD_FLOOR_SCALE = 0.15
# The search from sigma = 1 (or from the RDP bracket) keeps its path, hence
# its result to the last bit, while it probes PLD scales of at least this.
# Its first secant step probes the scale c * epsilon(c) / target (c: the
# scale at sigma = 1), or c * e^-3: at least 0.128 for epsilon <= 20 and
# delta <= 1e-3 (0.157 for c = 1). A probe below it means a budget beyond
# those, or a delta at which epsilon(1) = 0 (whose -inf step jumped to the
# floor): the search restarts from the analytic Gaussian instead.
_PLD_PROBE_SCALE = 0.12
# Range of the bisection that solves the analytic Gaussian for its scale.
_ANALYTIC_SCALE_RANGE = (1e-3, 1e8)


class UnreachableBudgetError(ValueError):
    """No noise multiplier up to the search's ceiling meets the budget.

    A ``ValueError``; its own type so that a caller that knows which of its
    parameters sets the steps can say so (``max_iter``).
    """


class _ProbeBelowScale(Exception):
    """The search asked for a PLD below ``_PLD_PROBE_SCALE``."""


def calibrate_noise(make_event, target_epsilon, delta, accountant="rdp"):
    """Smallest noise multiplier whose event meets ``(target_epsilon, delta)``.

    The one calibration entry point: every fit describes its mechanism as a
    function ``make_event(sigma) -> DpEvent`` of one noise multiplier (the
    other noise scales tied to it by public ratios) and gets back the
    smallest ``sigma`` (up to a relative tolerance of 1e-4) whose event the
    accountant certifies; the result is checked after the search, so it
    never overshoots. A budget so large that less noise would meet it gets
    the floor: ``sigma = 0.1``, or with ``accountant="pld"`` for releases
    that are unsampled Gaussians only (one Gaussian, full-batch steps) the
    sigma of PLD scale 0.15 (for one Gaussian, epsilon ~ 50 at delta =
    1e-5), whose PLD dp-accounting builds in ~2 s of CPU (~5 s and 0.8 GB
    at 0.1).

    Parameters
    ----------
    make_event : callable
        ``sigma -> dp_accounting.DpEvent``, monotone (more noise, less
        epsilon).
    target_epsilon : float
        Budget epsilon > 0; ``inf`` gives ``0.0`` (no noise).
    delta : float
        In (0, 1); 0 only for events with a pure epsilon (see
        :func:`~sklearn_dpfair.privacy.epsilon_of`).
    accountant : {"rdp", "pld"}, default="rdp"
        dp-accounting accountant used for the search and the check.

    Returns
    -------
    noise_multiplier : float
        The smallest certified noise standard deviation in units of the
        sensitivity (0 for an infinite budget).

    Raises
    ------
    ValueError
        If ``target_epsilon`` is not > 0 or ``delta`` not in [0, 1) (NaN
        included), or if the budget cannot be reached.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import calibrate_noise
    >>> from sklearn_dpfair.privacy._accounting import gaussian_event
    >>> round(calibrate_noise(gaussian_event, 1.0, 1e-5, "pld"), 2)
    3.73
    """
    # Written so that NaN fails: the search below would end at its floor
    # (sigma = 0.1, epsilon ~ 90) for a target it cannot compare with. Text
    # and booleans are refused as numbers outside the range, naming them.
    if not _is_real(target_epsilon) or not target_epsilon > 0:
        raise ValueError(
            f"target_epsilon must be > 0 (inf for no noise), got {target_epsilon!r}."
        )
    check_delta(delta)
    if math.isinf(target_epsilon):
        return 0.0
    # NumPy scalars compute as the Python floats they hold: NumPy 2 keeps a
    # np.float32's precision through arithmetic with Python floats (the
    # analytic Gaussian's start of the PLD search, below).
    target_epsilon, delta = float(target_epsilon), float(delta)

    if accountant == "pld":
        return _calibrate_pld(make_event, target_epsilon, delta)
    return _search(make_event, target_epsilon, delta, accountant, _SIGMA_START)


def _calibrate_pld(make_event, target_epsilon, delta):
    """The PLD calibration, bracketed by the RDP one and kept off huge grids.

    dp-accounting's PLD reads ``T`` full-batch Gaussian steps of noise
    ``sigma`` as one Gaussian of ``sigma / sqrt(T)``, whose loss grid grows
    as ``T / sigma^2``: a search started at ``sigma = 1`` builds grids of
    gigabytes. Where the PLD scale at ``sigma = 1`` is at least
    ``_PLD_CHEAP_START_SCALE`` that search is cheap and runs unchanged;
    otherwise three public facts keep it cheap:

    * RDP's epsilon upper-bounds PLD's at the same sigma (both are upper
      bounds, PLD the tighter one), so the RDP-calibrated sigma (~20 ms per
      RDP evaluation) is met or nearly met by PLD: the search starts there
      and only looks below it (or, if PLD's discretisation says otherwise,
      just above);
    * without it (RDP cannot certify epsilon below ~0.01) the search starts
      at the sigma whose Gaussians have PLD scale 1 (``sqrt(T)`` for a full
      batch), an estimate that scales with the steps;
    * sigmas whose PLD scale is below ``_PLD_MIN_SCALE`` are never computed:
      they are outside the search range (a smaller sigma only raises
      epsilon, so they would overshoot any budget below ~90).

    Where the releases are unsampled Gaussians only (one Gaussian, such as
    output perturbation, or full-batch steps), their exact epsilon is the
    analytic Gaussian's, and the answer's PLD scale is at least
    ``_PLD_FLOOR_SCALE`` (epsilon ~ 50 at delta = 1e-5). A budget whose
    analytic answer is at that floor, or a search that would probe below
    ``_PLD_PROBE_SCALE`` (a budget beyond ordinary ones, or a delta so large
    that epsilon(1) = 0, whose first step jumped to the floor), is
    calibrated from the analytic answer instead
    (:func:`_restart_from_analytic_gaussian`): grids of scale 0.1 took
    15-50 s at epsilon = 100 or delta = 0.5.
    """
    event_at_one = make_event(1.0)
    scale_per_sigma = pld_gaussian_scale(event_at_one)
    gaussian_scale = composed_gaussian_scale(event_at_one)
    if gaussian_scale is None:
        return _search_pld(make_event, target_epsilon, delta, scale_per_sigma)
    estimate = _analytic_gaussian_scale(target_epsilon, delta) / gaussian_scale
    if estimate * scale_per_sigma > _PLD_FLOOR_SCALE:
        with contextlib.suppress(_ProbeBelowScale):
            sigma = _search_pld(
                make_event, target_epsilon, delta, scale_per_sigma, _PLD_PROBE_SCALE
            )
            # The estimate assumes noise linear in sigma; whatever make_event
            # does, an answer below the floor is replaced by the floor's.
            scale = pld_gaussian_scale(make_event(sigma))
            if scale >= _PLD_FLOOR_SCALE * (1 - 1e-9):
                return sigma
    return _restart_from_analytic_gaussian(
        make_event, target_epsilon, delta, scale_per_sigma, estimate
    )


def _search_pld(make_event, target_epsilon, delta, scale_per_sigma, probe_scale=0.0):
    """The PLD search from sigma = 1, or from the RDP bracket (many steps)."""
    if not scale_per_sigma < _PLD_CHEAP_START_SCALE:
        # Sampled steps, or a few full-batch ones: the search from sigma = 1
        # builds small grids, and runs as it always has (the same sigma to
        # the last bit, so recorded fits and benchmarks do not move).
        return _search(
            make_event,
            target_epsilon,
            delta,
            "pld",
            _SIGMA_START,
            probe_scale=probe_scale,
        )
    floor = _SIGMA_MIN
    estimate = _SIGMA_START
    if math.isfinite(scale_per_sigma):
        floor = max(_SIGMA_MIN, _PLD_MIN_SCALE / scale_per_sigma)
        estimate = 1.0 / scale_per_sigma
        with contextlib.suppress(ValueError):
            estimate = _search(make_event, target_epsilon, delta, "rdp", estimate)
    start = min(_SIGMA_MAX, max(floor, estimate))
    return _search(
        make_event, target_epsilon, delta, "pld", start, floor, probe_scale=probe_scale
    )


def _restart_from_analytic_gaussian(
    make_event, target_epsilon, delta, scale_per_sigma, estimate
):
    """The PLD search of unsampled Gaussians, started at their exact answer.

    The releases of ``make_event(sigma)`` compose to one Gaussian of scale
    ``sigma`` times :func:`composed_gaussian_scale` of ``make_event(1)``,
    whose exact epsilon is the analytic Gaussian's (Balle and Wang 2018,
    Theorem 8); ``estimate`` is the sigma at which it meets the budget.
    dp-accounting's PLD is pessimistic (an upper bound on that epsilon), so
    its smallest certified sigma is at or just above ``estimate``.

    The search walks the lattice ``sigma = exp(k * _LOG_SIGMA_XTOL)`` from
    there: one step at a time, doubling, until the bracket holds a certified
    point and one that is not, then bisects. Near the answer that is two or
    three PLDs; calibrations of nearby budgets probe the same sigmas (the
    memoized accountant computes them once: a selection that lowers its
    runs' budget step by step at delta = 0.5 asks ~25 times for sigma
    ~0.74). The closed form only places the start; the sigma returned is a
    lattice point whose event the PLD accountant computed and found within
    the budget, within a relative ``_LOG_SIGMA_XTOL`` of the smallest one
    (as the search of :func:`_search`). Below ``_PLD_FLOOR_SCALE`` nothing
    is computed: a budget the floor meets gets the floor's first lattice
    point (one PLD, which the fit's record reads again).
    """
    step = _LOG_SIGMA_XTOL
    floor = max(_SIGMA_MIN, _PLD_FLOOR_SCALE / scale_per_sigma)
    k_min = math.ceil(math.log(floor) / step)
    k_max = math.floor(math.log(_SIGMA_MAX) / step)

    def meets(k):
        event = make_event(math.exp(k * step))
        if pld_gaussian_scale(event) < _PLD_FLOOR_SCALE * (1 - 1e-9):
            # Below the floor (a make_event not linear in sigma): never
            # built, counted as overshooting, which only adds noise.
            return False
        # Written so that a NaN epsilon certifies nothing.
        return epsilon_of(event, delta, "pld") <= target_epsilon

    start = min(k_max, max(k_min, math.ceil(math.log(estimate) / step)))
    width = 1
    if meets(start):
        good, bad = start, None
        while bad is None and good > k_min:
            probe = max(k_min, good - width)
            if meets(probe):
                good, width = probe, 2 * width
            else:
                bad = probe
        if bad is None:
            return math.exp(good * step)
    else:
        good, bad = None, start
        while good is None:
            if bad >= k_max:
                raise UnreachableBudgetError(
                    f"epsilon={target_epsilon} at delta={delta} cannot be "
                    f"reached with a noise multiplier <= {_SIGMA_MAX:g}; raise "
                    "epsilon or delta, or take fewer steps."
                )
            probe = min(k_max, bad + width)
            if meets(probe):
                good = probe
            else:
                bad, width = probe, 2 * width
    while good - bad > 1:
        mid = (good + bad) // 2
        if meets(mid):
            good = mid
        else:
            bad = mid
    return math.exp(good * step)


def _analytic_gaussian_delta(epsilon, scale):
    """Exact delta at ``epsilon`` of one Gaussian of noise ``scale`` x sensitivity.

    Balle and Wang (2018), Theorem 8: ``Phi(1/(2s) - eps s) - e^eps
    Phi(-1/(2s) - eps s)``, the second term in logs so that a large
    ``epsilon`` does not overflow.
    """
    a = 0.5 / scale
    b = epsilon * scale
    return float(ndtr(a - b) - math.exp(min(0.0, epsilon + log_ndtr(-a - b))))


def _analytic_gaussian_scale(target_epsilon, delta):
    """Smallest Gaussian scale whose exact epsilon at ``delta`` meets the target.

    Bisection on ``log(scale)`` within ``_ANALYTIC_SCALE_RANGE`` (its ends
    when the answer is outside it): delta decreases as the scale grows.
    """
    lo, hi = (math.log(x) for x in _ANALYTIC_SCALE_RANGE)
    if _analytic_gaussian_delta(target_epsilon, math.exp(lo)) <= delta:
        return math.exp(lo)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _analytic_gaussian_delta(target_epsilon, math.exp(mid)) <= delta:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def _search(
    make_event,
    target_epsilon,
    delta,
    accountant,
    start,
    floor=_SIGMA_MIN,
    *,
    probe_scale=0.0,
):
    """Smallest certified sigma in ``[floor, _SIGMA_MAX]``, searched from ``start``.

    The good end of the final bracket is returned: a sigma whose event the
    accountant computed and found within the budget. A PLD probe whose
    scale is below ``probe_scale`` raises ``_ProbeBelowScale`` before
    anything is computed.
    """

    # log(epsilon) is close to linear in log(sigma) (epsilon ~ 1/sigma for
    # large sigma), so a root search on the log-log scale needs only a few
    # accountant calls; each costs ~20 ms with the RDP accountant.
    def excess(log_sigma):
        event = make_event(math.exp(log_sigma))
        if accountant == "pld" and pld_gaussian_scale(event) < probe_scale:
            raise _ProbeBelowScale
        if accountant == "pld" and pld_gaussian_scale(event) < _PLD_MIN_SCALE * (
            1 - 1e-9
        ):
            # Below the range (a make_event not linear in sigma): never
            # built, counted as overshooting, which only adds noise.
            return math.inf
        eps = epsilon_of(event, delta, accountant)
        if math.isnan(eps):
            # A NaN certifies nothing: counted as overshooting, so that the
            # returned sigma is one whose epsilon was computed within budget.
            return math.inf
        return math.log(eps) - math.log(target_epsilon) if eps > 0 else -math.inf

    lo, hi = math.log(floor), math.log(_SIGMA_MAX)
    # Every evaluation tightens the bracket [bad, good]: bad overshoots the
    # budget, good meets it. The answer is the good end.
    bad, good = -math.inf, math.inf

    def evaluate(log_sigma):
        nonlocal bad, good
        value = excess(log_sigma)
        if value > 0:
            bad = max(bad, log_sigma)
        else:
            good = min(good, log_sigma)
        return value

    # Secant iterations on the log-log scale, started with the large-noise
    # slope -1 and kept inside [lo, hi].
    log_sigma, slope = max(lo, min(hi, math.log(start))), -1.0
    value = evaluate(log_sigma)
    for _ in range(_MAX_SECANT_STEPS):
        step = max(-_MAX_LOG_STEP, min(_MAX_LOG_STEP, -value / slope))
        new = max(lo, min(hi, log_sigma + step))
        new_value = evaluate(new)
        finite = math.isfinite(value) and math.isfinite(new_value)
        if new != log_sigma and new_value != value and finite:
            slope = min((new_value - value) / (new - log_sigma), -1e-3)
        moved = abs(new - log_sigma)
        log_sigma, value = new, new_value
        if log_sigma == hi and value > 0:
            hint = (
                " The RDP accountant's orders (up to 1024) cannot certify "
                "epsilon below about 0.01 whatever the noise: "
                "accountant='pld' can."
                if accountant == "rdp" and target_epsilon < 0.02
                else ""
            )
            raise UnreachableBudgetError(
                f"epsilon={target_epsilon} at delta={delta} cannot be reached "
                f"with a noise multiplier <= {_SIGMA_MAX:g}; raise epsilon or "
                f"delta, or take fewer steps.{hint}"
            )
        if (log_sigma == lo and value <= 0) or moved < _LOG_SIGMA_XTOL:
            break
    if good == lo:
        # The sigma the accountant evaluated (exp(log 0.1) is 1 ulp above 0.1).
        return math.exp(lo)
    # Make sure both ends exist, then bisect. The accountant's epsilon can be
    # a step function of sigma (RDP optimised over a grid of orders has
    # plateaus), where secant steps stall; bisection still finds the smallest
    # certified sigma to within the tolerance. Only the good end is returned
    # (check-after-calibrate; Opacus issue #346 is the bug this prevents).
    # After a converged secant the root is usually within a tolerance of the
    # last point, while the other end of the bracket may be far (or missing):
    # probe next to the last point first and widen geometrically, so the
    # bisection below starts from a tight bracket.
    width = _LOG_SIGMA_XTOL
    while good - bad > _LOG_SIGMA_XTOL:
        if value > 0:  # the last point overshoots: look just above it
            if bad >= hi:
                raise ValueError(f"epsilon={target_epsilon} cannot be reached.")
            probe = min(hi, bad + width)
            if probe >= good or evaluate(probe) <= 0:
                break
        else:  # the last point meets the budget: look just below it
            if good <= lo:
                return math.exp(lo)
            probe = max(lo, good - width)
            if probe <= bad or evaluate(probe) > 0:
                break
        width *= 8
    while good - bad > _LOG_SIGMA_XTOL:
        evaluate(0.5 * (good + bad))
    log_sigma = good
    return math.exp(log_sigma)


@functools.lru_cache(maxsize=4096, typed=True)
def calibrate_noise_multiplier(
    target_epsilon, delta, sampling_probability=1.0, steps=1, accountant="rdp"
):
    """Noise multiplier for noisy (sub)sampled gradient descent.

    Returns the smallest ``sigma`` (up to a relative tolerance of 1e-4) such
    that ``steps`` compositions of a Poisson-subsampled Gaussian mechanism
    with sampling probability ``sampling_probability`` and noise standard
    deviation ``sigma`` times the sensitivity are
    ``(target_epsilon, delta)``-DP according to dp-accounting. The result is
    verified with the accountant after the search: it never overshoots. A
    budget so large that less noise would still meet it gets the search's
    floor instead (``sigma = 0.1``, or more for full-batch steps with
    ``accountant="pld"``; see :func:`calibrate_noise`).

    Parameters
    ----------
    target_epsilon : float
        Budget epsilon > 0; ``inf`` gives ``0.0`` (no noise).
    delta : float
        Budget delta, in (0, 1).
    sampling_probability : float, default=1.0
        Poisson sampling probability ``q`` of each step; 1 is full batch.
    steps : int, default=1
        Number of noisy steps.
    accountant : {"rdp", "pld"}, default="rdp"
        dp-accounting accountant used for the search and the check.

    Returns
    -------
    noise_multiplier : float
        The smallest certified noise standard deviation in units of the
        sensitivity. Memoized: a pure function of these public inputs.

    Raises
    ------
    ValueError
        As :func:`calibrate_noise`: a ``target_epsilon`` not > 0, a
        ``delta`` outside (0, 1), an unknown ``accountant``, or a budget
        that cannot be reached.
    TypeError
        If an argument is unhashable (the results are cached).

    See Also
    --------
    noise_multiplier_for_gaussian : The same calibration for one Gaussian.
    calibrate_noise : Calibration of any mechanism given as a DP event.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import calibrate_noise_multiplier
    >>> sigma = calibrate_noise_multiplier(1.0, 1e-5, 0.01, 1000)
    >>> round(sigma, 2)
    1.51
    """
    make_event = functools.partial(
        _sgd_event, sampling_probability=sampling_probability, steps=steps
    )
    return calibrate_noise(make_event, target_epsilon, delta, accountant)


def _sgd_event(sigma, sampling_probability, steps):
    return noisy_sgd_event(sigma, sampling_probability, steps)


@functools.lru_cache(maxsize=1024, typed=True)
def noise_multiplier_for_gaussian(target_epsilon, delta, accountant="pld"):
    """Noise multiplier of a single Gaussian mechanism, calibrated exactly.

    Uses the PLD accountant by default, which is exact for one Gaussian (the
    analytic Gaussian mechanism); the classic ``sqrt(2 ln(1.25/delta))/eps``
    is loose and only valid for ``eps < 1``, so it is never used. Returns
    the smallest ``sigma`` (up to a relative tolerance of 1e-4) whose
    Gaussian the accountant certifies ``(target_epsilon, delta)``-DP. A
    budget so large that less noise would still meet it gets the search's
    floor instead (``sigma = 0.15`` with PLD, ``0.1`` with RDP).

    Parameters
    ----------
    target_epsilon : float
        Budget epsilon > 0; ``inf`` gives ``0.0`` (no noise).
    delta : float
        Budget delta, in (0, 1).
    accountant : {"pld", "rdp"}, default="pld"
        dp-accounting accountant used for the search and the check.

    Returns
    -------
    noise_multiplier : float
        The smallest certified noise standard deviation in units of the
        sensitivity. Memoized: a pure function of these public inputs.

    Raises
    ------
    ValueError
        As :func:`calibrate_noise`: a ``target_epsilon`` not > 0, a
        ``delta`` outside (0, 1), an unknown ``accountant``, or a budget
        that cannot be reached.
    TypeError
        If an argument is unhashable (the results are cached).

    See Also
    --------
    calibrate_noise_multiplier : The same calibration for noisy
        (sub)sampled gradient descent.
    calibrate_noise : Calibration of any mechanism given as a DP event.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import noise_multiplier_for_gaussian
    >>> round(noise_multiplier_for_gaussian(1.0, 1e-5), 2)
    3.73
    >>> noise_multiplier_for_gaussian(float("inf"), 1e-5)
    0.0
    """
    return calibrate_noise(gaussian_event, target_epsilon, delta, accountant)
