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
  ``"pld"``; RDP has no reading of this event here and refuses it.
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
    "RandomAllocationDpEvent",
    "allocation_epsilon",
    "calibrate_allocation_noise",
    "random_allocation_event",
    "require_pld_accounting",
]

# Loss-grid step of the PLD (pld-accounting's FFT convolution) at noise
# multiplier sigma: ALLOCATION_LOSS_DISCRETIZATION * min(1, 2 / sigma). The
# result is an upper bound at any step (pessimistic discretization), but a
# coarse grid overstates small epsilons (the privacy loss of one step
# shrinks like 1 / sigma): at sigma = 60, t = 20, 20 epochs, delta = 1e-5 a
# fixed 1e-3 gives 0.058, this rule 0.0483 and a 3x finer grid 0.0481. At
# sigma = 2, t = 20, 2 epochs it is within 0.005 of the package's tightest
# (geometric) convolution (0.618 vs 0.613) for 0.5 s instead of 30 s; a
# 20-epoch epsilon costs 2-3 s. A function of the event alone, so the record
# and its recomputation agree.
ALLOCATION_LOSS_DISCRETIZATION = 1e-3

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


@functools.lru_cache(maxsize=1024)
def allocation_epsilon(event, delta, coarse=False):
    """Epsilon of a :class:`RandomAllocationDpEvent` at ``delta`` (pld-accounting).

    The dominating PLD of the Gaussian random allocation, 1 of
    ``steps_per_epoch`` steps per epoch composed over ``epochs`` epochs
    (Feldman and Shenfeld, ICML 2026), add and remove directions both; an
    upper bound on the true epsilon (pessimistic rounding of the loss grid).
    Memoized: a pure function of public inputs.

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
    """
    if not 0 < delta < 1:
        raise ValueError(
            f"A random-allocation event needs delta in (0, 1); got {delta!r}."
        )
    pld = _allocation_pld(event, coarse)
    return max(0.0, float(pld.get_epsilon_for_delta(float(delta))))


# Few kept: a PLD holds its loss grid (up to ~1e6 floats).
@functools.lru_cache(maxsize=8)
def _allocation_pld(event, coarse):
    """The dominating PLD of ``event`` (one convolution; every delta reads it)."""
    pa = require_pld_accounting()
    params = pa.PrivacyParams(
        sigma=float(event.noise_multiplier),
        num_steps=int(event.steps_per_epoch),
        num_selected=1,
        num_epochs=int(event.epochs),
    )
    sigma = float(event.noise_multiplier)
    step = ALLOCATION_LOSS_DISCRETIZATION * min(1.0, 2.0 / sigma)
    config = pa.AllocationSchemeConfig(
        loss_discretization=step * (_COARSE_FACTOR if coarse else 1.0),
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
            return _allocation_pld(event, False)
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
    secant steps on ``log epsilon`` against ``log sigma`` from there. The
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
    _, _, good = _secant(excess, x, slope)
    return math.exp(good)


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
