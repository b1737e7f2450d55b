# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random-allocation ("balls and bins") accounting of DP-SGD epochs.

In every epoch each record is placed in exactly one of ``t`` steps, chosen
uniformly at random and independently of every other record (Chua et al.,
"Balls-and-Bins Sampling for DP-SGD", AISTATS 2025; the *random allocation*
of Feldman and Shenfeld, ICML 2026). Each step releases the Gaussian noisy
sum of its records' clipped gradients. Under add/remove adjacency the other
records' placements are independent of the added record's, so the privacy
loss is that of one record allocated to 1 of ``t`` Gaussian steps, composed
over the epochs.

That is *not* the analysis of a shuffle cut into fixed-size batches: in a
shuffle the records' places are dependent (a permutation), and no tight
upper bound is known for it (Chua et al., ICML 2024, give lower bounds
only). Nor is it Poisson subsampling: the same noise multiplier can give a
larger or a smaller epsilon. So the record states its own event,
:class:`RandomAllocationDpEvent`, which dp-accounting does not define.

How that event is read:

* epsilon: the optional package ``pld-accounting`` (Feldman and Shenfeld's
  reference implementation) builds the dominating privacy-loss distribution
  of the Gaussian random allocation (``gaussian_allocation_pld``, both
  directions, pessimistic rounding) as a dp-accounting PLD, and its
  ``get_epsilon_for_delta`` gives epsilon. The record's accountant is
  ``"pld"``; RDP has no reading of this event here and refuses it. Its
  grid (FFT convolution) shrinks with the steps per epoch, else it
  overstated epsilon by ~log 3 per epoch at 3000 steps; with thousands of
  steps and sigma below ~0.8 it still overstates (the linear grid cannot
  follow exp(loss)'s heavy tail): there the calibrated sigma can exceed
  Poisson's at rate ``1 / t`` by up to ~2x (measured in the scale
  benchmark's page). The package's geometric convolution follows that tail
  (0.985 at sigma 0.57, t = 3000, 1 epoch, delta 1e-5, against Poisson's
  1.0) but costs about a minute per epsilon without numba. With few steps
  the grid fails the same way below a sigma of ~0.65 (t = 2) to ~0.59
  (t = 10) at delta 1e-5, one epoch; epsilon is then the smaller of the
  PLD's and that of ``epochs`` full-batch Gaussian steps, also an upper
  bound (:func:`full_batch_epsilon`): at t = 2, sigma = 0.6, 8.00 against
  the geometric convolution's 7.31 (the PLD's grid stated 11.4), and
  epsilon drops where the PLD takes over (7.27 at sigma 0.65, 6.19 at 0.68).
* the run-time release check: ``t * epochs`` Gaussian releases of the
  event's noise multiplier, like a self-composed Gaussian.

Only this module imports ``PLD_accounting``, and only when such an event is
accounted: the library works without it.
"""

import functools
import math

import attr
import dp_accounting

__all__ = [
    "ALLOCATION_LOSS_DISCRETIZATION",
    "ALLOCATION_POINTS_PER_STEP",
    "ALLOCATION_TAIL_FRACTION",
    "RandomAllocationDpEvent",
    "allocation_epsilon",
    "allocation_loss_step",
    "calibrate_allocation_noise",
    "full_batch_epsilon",
    "random_allocation_event",
    "require_pld_accounting",
]

# Loss-grid step of the PLD (pld-accounting's FFT convolution) at noise
# multiplier sigma, t steps per epoch and E epochs: allocation_loss_step =
# ALLOCATION_LOSS_DISCRETIZATION * min(1, 2 / sigma) * min(1, 10 E / t)
# (pld-accounting divides the step by E for the epochs' composition, so a
# factor E here keeps one epoch's grid that of E = 1; without it, t = 3000,
# E = 5, sigma = 0.65 took 26 s and 0.8 GB for the same epsilon as 7 s).
# The result is an upper bound at any step (pessimistic discretization), but
# a coarse grid overstates epsilon:
# * the privacy loss of one step shrinks like 1 / sigma: at sigma = 60,
#   t = 20, 20 epochs, delta = 1e-5 a fixed 1e-3 gives 0.058, min(1, 2 /
#   sigma) 0.0483 and a 3x finer grid 0.0481;
# * the FFT route (Feldman and Shenfeld's Algorithm for the Gaussian
#   allocation) sums the t factors exp(loss_i) / t of one epoch on a
#   *linear* grid whose step is this loss step, each factor rounded up by up
#   to a step, so the sum (mean 1) is overstated by about t * step / 2 and
#   the loss by log(1 + t * step / 2). A fixed 1e-3 at t = 3000 rounds every
#   factor (~3e-4) up to 1e-3: the remove-direction loss sits at log 3 ~ 1.1
#   whatever sigma, epsilon 3.9 at sigma = 2 against Poisson's 0.028, and
#   epsilon was not monotone in sigma. Hence the step shrinks like 1 / t
#   past 10 E steps (t * step / E <= 1e-2): 0.0315 there, 0.0269 at a 10x
#   finer grid. Up to 10 E steps per epoch the step is as it was.
ALLOCATION_LOSS_DISCRETIZATION = 1e-3
# pld-accounting caps the FFT grid at max_grid_fft points, split over the t
# factors (its default 1e6 leaves 333 points per factor at t = 3000). When
# sigma is small exp(loss) is heavy-tailed (log-normal of shape 1 / sigma)
# and the cap, not the step asked for, sets the grid: at sigma = 0.8, t =
# 3000, 1 epoch, epsilon is 11.1 at 1e6 points, 1.03 at 1e8, 0.225 at 3e5
# points per factor (Poisson at rate 1 / t: 0.135). The tail truncation,
# mass moved to an infinite loss and so paid in delta (an upper bound still),
# is the other limit there: 1e-3 * delta instead of pld-accounting's 1e-12
# takes that 0.225 to 0.151. That tail holds at every t: with pld-accounting's
# 1e-12 at t = 2, 1 epoch, delta = 1e-5, epsilon was 11.5 at sigma = 0.7
# (5.96 at 1e-3 * delta, as the exact two-dimensional integral; 5.96 at a 4x
# finer loss step and grid) and the jump sat at sigma ~0.77, not ~0.67.
ALLOCATION_POINTS_PER_STEP = 300_000
ALLOCATION_TAIL_FRACTION = 1e-3
_STEPS_FULL_GRID = 10

# Noise multipliers the calibration searches. Below 0.3 the loss grid of a
# step becomes very wide; budgets that large get 0.3, which is conservative.
_SIGMA_MIN, _SIGMA_MAX = 0.3, 1e4
_LOG_SIGMA_XTOL = 1e-3
# The calibration's first search uses a 10x coarser grid (a looser bound).
_COARSE_FACTOR = 10.0

_INSTALL_HINT = (
    "batch_sampling='balls_and_bins' is accounted by random allocation, "
    "computed by the optional package pld-accounting (Feldman and Shenfeld, "
    "ICML 2026): pip install pld-accounting==2.0"
)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class RandomAllocationDpEvent(dp_accounting.DpEvent):
    """``epochs`` epochs of Gaussian steps, each record in 1 of ``steps_per_epoch``.

    In every epoch each record is allocated to exactly one of the epoch's
    ``steps_per_epoch`` steps, uniformly and independently of the other
    records; each step releases a Gaussian noisy sum whose noise standard
    deviation is ``noise_multiplier`` times the sensitivity. Interpreted
    under add/remove adjacency by :func:`allocation_epsilon`.
    """

    noise_multiplier: float
    steps_per_epoch: int
    epochs: int

    @property
    def n_releases(self):
        """Number of Gaussian releases: ``steps_per_epoch * epochs``."""
        return self.steps_per_epoch * self.epochs


def require_pld_accounting():
    """Import ``PLD_accounting``, or raise an ImportError that says why it is needed."""
    try:
        import PLD_accounting
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return PLD_accounting


def random_allocation_event(noise_multiplier, steps_per_epoch, epochs):
    """The event of a balls-and-bins DP-SGD run.

    ``noise_multiplier = 0`` is a non-private run. With one step per epoch
    every record is in every step: a plain self-composed Gaussian, which
    dp-accounting reads exactly.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._random_allocation import random_allocation_event
    >>> random_allocation_event(2.0, 20, 3).n_releases
    60
    >>> type(random_allocation_event(2.0, 1, 3)).__name__
    'SelfComposedDpEvent'
    """
    if noise_multiplier == 0:
        return dp_accounting.NonPrivateDpEvent()
    steps_per_epoch, epochs = int(steps_per_epoch), int(epochs)
    if steps_per_epoch < 1 or epochs < 1:
        raise ValueError(
            f"steps_per_epoch and epochs must be >= 1; got {steps_per_epoch}, {epochs}."
        )
    if steps_per_epoch == 1:
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(float(noise_multiplier)), epochs
        )
    return RandomAllocationDpEvent(float(noise_multiplier), steps_per_epoch, epochs)


def allocation_loss_step(noise_multiplier, steps_per_epoch, epochs=1):
    """Loss-grid step of the allocation PLD (see ALLOCATION_LOSS_DISCRETIZATION).

    A function of the event alone, so the record and its recomputation agree.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._random_allocation import allocation_loss_step
    >>> allocation_loss_step(2.0, 10), allocation_loss_step(2.0, 1000)
    (0.001, 1e-05)
    >>> allocation_loss_step(2.0, 1000, epochs=5)
    5e-05
    """
    return (
        ALLOCATION_LOSS_DISCRETIZATION
        * min(1.0, 2.0 / float(noise_multiplier))
        * min(1.0, _STEPS_FULL_GRID * int(epochs) / int(steps_per_epoch))
    )


@functools.lru_cache(maxsize=1024)
def allocation_epsilon(event, delta, coarse=False):
    """Epsilon of a :class:`RandomAllocationDpEvent` at ``delta`` (pld-accounting).

    The dominating PLD of the Gaussian random allocation, 1 of
    ``steps_per_epoch`` steps per epoch composed over ``epochs`` epochs
    (Feldman and Shenfeld, ICML 2026), add and remove directions both; an
    upper bound on the true epsilon (pessimistic rounding of the loss grid).
    The smaller of that and :func:`full_batch_epsilon` (also an upper
    bound) is returned: every reading of the event (the record's epsilon,
    its recomputation by ``epsilon_of``, the calibration) goes through
    here, so they agree. Memoized: a pure function of public inputs.

    Parameters
    ----------
    event : RandomAllocationDpEvent
    delta : float
        In (0, 1).
    coarse : bool, default=False
        A 10x coarser loss grid (a looser upper bound), for the
        calibration's first search only; records use the default grid.

    Returns
    -------
    epsilon : float

    Raises
    ------
    ImportError
        If ``pld-accounting`` is not installed.
    ValueError
        If ``delta`` is not in (0, 1), or if pld-accounting cannot compute
        the PLD or returns a NaN epsilon.
    """
    if not 0 < delta < 1:
        raise ValueError(
            f"A random-allocation event needs delta in (0, 1); got {delta!r}."
        )
    pld = _allocation_pld(event, coarse, ALLOCATION_TAIL_FRACTION * float(delta))
    epsilon = float(pld.get_epsilon_for_delta(float(delta)))
    if math.isnan(epsilon):
        # max(0.0, nan) is 0.0: a NaN would certify any noise, here and in
        # the calibration that compares it with the budget.
        raise ValueError(
            "pld-accounting returned a NaN epsilon for the random allocation of "
            f"noise_multiplier={float(event.noise_multiplier):.4g} over "
            f"steps_per_epoch={event.steps_per_epoch}, epochs={event.epochs}; "
            "use batch_sampling='poisson'."
        )
    # Where the allocation PLD's grid cannot follow the tail (small sigma),
    # the full-batch bound is the smaller of the two; both are upper bounds.
    return max(0.0, min(epsilon, full_batch_epsilon(event, delta)))


def full_batch_epsilon(event, delta):
    """Epsilon of ``event.epochs`` full-batch Gaussian steps of its noise multiplier.

    An upper bound on the random allocation's epsilon: in an epoch the
    record's step is drawn independently of the data, so the epoch's output
    distribution with the record is a mixture, over that step, of runs that
    differ from the run without it in that one step's Gaussian release
    (its sensitivity at most the clipping norm): each component is
    dominated by one Gaussian release, and the hockey-stick divergence is
    jointly convex, so the mixture is too, in both directions. The epochs
    compose as adaptive Gaussian releases (dp-accounting's PLD, pessimistic
    rounding).

    Returns ``inf`` where dp-accounting's PLD refuses that Gaussian (a scale
    ``noise_multiplier / sqrt(epochs)`` below ``PLD_MIN_GAUSSIAN_SCALE``):
    the allocation bound stands alone there.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._random_allocation import (
    ...     full_batch_epsilon, random_allocation_event)
    >>> round(full_batch_epsilon(random_allocation_event(1.0, 5, 1), 1e-5), 2)
    4.38
    """
    # Imported here: _accounting reads this module's event.
    from ._accounting import epsilon_of

    gaussian = dp_accounting.SelfComposedDpEvent(
        dp_accounting.GaussianDpEvent(float(event.noise_multiplier)), int(event.epochs)
    )
    try:
        return float(epsilon_of(gaussian, float(delta), "pld"))
    except ValueError:
        return math.inf


# Few kept: a PLD holds its loss grid (up to ~1e6 floats).
@functools.lru_cache(maxsize=8)
def _allocation_pld(event, coarse, tail_truncation):
    """The dominating PLD of ``event``, tail mass ``tail_truncation`` sent to an infinite loss."""
    pa = require_pld_accounting()
    params = pa.PrivacyParams(
        sigma=float(event.noise_multiplier),
        num_steps=int(event.steps_per_epoch),
        num_selected=1,
        num_epochs=int(event.epochs),
    )
    sigma = float(event.noise_multiplier)
    many_steps = event.steps_per_epoch > _STEPS_FULL_GRID
    config = pa.AllocationSchemeConfig(
        loss_discretization=allocation_loss_step(
            sigma, event.steps_per_epoch, event.epochs
        )
        * (_COARSE_FACTOR if coarse else 1.0),
        # Up to 10 steps per epoch, pld-accounting's own grid cap.
        max_grid_fft=ALLOCATION_POINTS_PER_STEP * int(event.steps_per_epoch)
        if many_steps
        else pa.types.DEFAULT_MAX_GRID_FFT,
        # At every number of steps: pld-accounting's 1e-12 left the grid to
        # span exp(loss)'s tail, which below sigma ~0.77 it could not.
        tail_truncation=max(pa.DEFAULT_TAIL_TRUNCATION, float(tail_truncation)),
        convolution_method=pa.ConvolutionMethod.FFT,
    )
    try:
        return pa.gaussian_allocation_pld(
            params=params, config=config, bound_type=pa.BoundType.DOMINATES
        )
    except ValueError as exc:
        # pld-accounting's grid can collapse (x_min == x_max) when the loss
        # step is coarse next to the loss range of one step (many steps per
        # epoch, large sigma). The coarse grid only speeds up the
        # calibration's first search: the record's grid takes over there.
        if coarse:
            return _allocation_pld(event, False, tail_truncation)
        raise ValueError(
            "pld-accounting cannot compute the random allocation of "
            f"noise_multiplier={sigma:.4g} over steps_per_epoch="
            f"{event.steps_per_epoch} ({exc}). Use batch_sampling='poisson', "
            "or a larger batch_size (fewer steps per epoch)."
        ) from exc


@functools.lru_cache(maxsize=256)
def calibrate_allocation_noise(target_epsilon, delta, steps_per_epoch, epochs):
    """Smallest noise multiplier whose random allocation meets ``(epsilon, delta)``.

    Each epsilon costs a PLD convolution (0.5 s to several seconds), so the
    search starts from the Poisson-subsampled calibration at rate
    ``1 / steps_per_epoch`` over as many steps (dp-accounting's PLD, a few
    milliseconds), which is within a few percent of the answer, and takes
    secant steps on ``log epsilon`` against ``log sigma`` from there, then
    bisects on a fixed grid of ``log sigma`` (step ``1e-3``), so that the
    answer does not increase with the budget where epsilon jumps. The
    returned sigma is one whose epsilon was computed and meets the target
    (check after calibrate); it is within a relative ``1e-3`` of the
    smallest that does. Memoized.

    Examples
    --------
    >>> import pytest
    >>> _ = pytest.importorskip("PLD_accounting")
    >>> from sklearn_dpfair.privacy._random_allocation import (
    ...     allocation_epsilon, calibrate_allocation_noise, random_allocation_event)
    >>> sigma = calibrate_allocation_noise(2.0, 1e-5, 10, 1)
    >>> allocation_epsilon(random_allocation_event(sigma, 10, 1), 1e-5) <= 2.0
    True
    """
    if math.isinf(target_epsilon):
        return 0.0
    from ._calibration import calibrate_noise_multiplier

    if steps_per_epoch == 1:
        # Every record in every step (random_allocation_event's plain
        # self-composed Gaussian): dp-accounting's PLD reads it exactly.
        return calibrate_noise_multiplier(target_epsilon, delta, 1.0, epochs, "pld")
    start = calibrate_noise_multiplier(
        target_epsilon, delta, 1.0 / steps_per_epoch, steps_per_epoch * epochs, "pld"
    )

    def excess(log_sigma, coarse=False):
        event = random_allocation_event(math.exp(log_sigma), steps_per_epoch, epochs)
        eps = allocation_epsilon(event, delta, coarse)
        return math.log(eps) - math.log(target_epsilon) if eps > 0 else -math.inf

    # A coarse grid (~10x cheaper, a looser bound) finds the neighbourhood,
    # the record's grid then needs two or three convolutions.
    x, slope, _ = _secant(
        lambda v: excess(v, coarse=True), math.log(start), -1.0
    )
    # The record's epsilon is computed at grid points of log sigma only
    # (step _LOG_SIGMA_XTOL), so the bisection reuses the secant's points.
    fine = {}
    k_min = math.ceil(math.log(_SIGMA_MIN) / _LOG_SIGMA_XTOL)

    def fine_excess(log_sigma):
        k = max(k_min, round(log_sigma / _LOG_SIGMA_XTOL))
        if k not in fine:
            fine[k] = excess(k * _LOG_SIGMA_XTOL)
        return fine[k]

    _secant(fine_excess, x, slope)
    return math.exp(_LOG_SIGMA_XTOL * _first_good_index(fine_excess, fine))


def _first_good_index(excess, seen):
    """Smallest ``k`` whose ``excess(k * _LOG_SIGMA_XTOL)`` is <= 0 (log sigma).

    Bisection over the grid's indices from the bracket the secant steps
    left (``seen``: index -> excess, one of them <= 0). Epsilon is not
    smooth in sigma (below some sigma the allocation PLD's grid stops
    following exp(loss)'s tail and the full-batch bound takes over: a jump),
    and secant steps near a jump land anywhere above it; the first grid
    point that meets the budget does not increase with the budget, and it
    is within a relative ``_LOG_SIGMA_XTOL`` of the smallest sigma that
    does (epsilon decreases with sigma). Its epsilon was computed.
    """
    k_min = math.ceil(math.log(_SIGMA_MIN) / _LOG_SIGMA_XTOL)
    k_good = min(k for k, f in seen.items() if f <= 0)
    bad = [k for k, f in seen.items() if f > 0 and k < k_good]
    k_bad = max(bad) if bad else None
    width = 1
    while k_bad is None:
        # No failing point below: step down, doubling, to one (or the floor).
        k = max(k_min, k_good - width)
        if k == k_good:
            return k_good
        if excess(k * _LOG_SIGMA_XTOL) > 0:
            k_bad = k
        else:
            k_good, width = k, 2 * width
    while k_good - k_bad > 1:
        k = (k_good + k_bad) // 2
        if excess(k * _LOG_SIGMA_XTOL) > 0:
            k_bad = k
        else:
            k_good = k
    return k_good


def _secant(excess, x, slope):
    """Secant steps on ``excess(log sigma)`` from ``x``; (last, slope, best good).

    "Good" points meet the budget (``excess <= 0``); the search ends when a
    step is shorter than the tolerance, then steps up from the last point
    until one is good, so the returned good point was computed, not guessed.
    """
    lo, hi = math.log(_SIGMA_MIN), math.log(_SIGMA_MAX)
    x = min(hi, max(lo, x))
    fx = excess(x)
    good = x if fx <= 0 else math.inf
    # At most 6 secant steps: where the computed epsilon is not smooth in
    # sigma (large budgets, sigma < 1) more would cost seconds each for
    # little; the best good point is returned whatever the path.
    for _ in range(6):
        step = max(-0.5, min(0.5, -fx / slope))
        new = min(hi, max(lo, x + step))
        if abs(new - x) < _LOG_SIGMA_XTOL:
            break
        f_new = excess(new)
        if f_new <= 0:
            good = min(good, new)
        slope = min(-1e-3, (f_new - fx) / (new - x)) if math.isfinite(f_new) else slope
        x, fx = new, f_new
    width = _LOG_SIGMA_XTOL
    while fx > 0:
        if x >= hi:
            raise ValueError(
                "The budget cannot be reached with a noise multiplier <= "
                f"{_SIGMA_MAX:g}."
            )
        x = min(hi, x + width)
        fx, width = excess(x), 2 * width
        if fx <= 0:
            good = min(good, x)
    return x, slope, good
