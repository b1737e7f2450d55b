# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The only module that imports :mod:`dp_accounting`.

Solvers *describe* what they did as a ``DpEvent``; this module *interprets*
events into (epsilon, delta). Keeping Google's accountant behind one module
means the dependency can be swapped without touching any solver.

Conventions
-----------
* A ``GaussianDpEvent(z)`` always means "Gaussian noise of standard deviation
  ``z`` times the sensitivity". We build every event so that the sensitivity
  of the released quantity, under the estimator's neighbouring relation, is
  already folded into ``z``. For a mechanism analysed under replace-one we
  therefore pass ``z = sigma / (2 C)`` and account the event under the
  add/remove relation. The reason: dp-accounting's two accountants disagree
  on what ``GaussianDpEvent`` means under ``REPLACE_ONE`` (the PLD accountant
  doubles the sensitivity, the RDP accountant does not; see
  ``tests/privacy/test_accounting.py::test_replace_one_is_folded_into_sensitivity``),
  so relying on the relation flag would make epsilon depend on the accountant.
* Poisson-subsampled events are only meaningful under add/remove adjacency
  (the standard analysis), which is what every subsampled solver here uses.
"""

import contextlib
import functools
import logging
import math
import numbers

import attr
import dp_accounting
import numpy as np
from dp_accounting import pld, rdp

from ._random_allocation import RandomAllocationDpEvent, allocation_epsilon

__all__ = [
    "ACCOUNTANTS",
    "ADJACENCIES",
    "RDP_ORDERS",
    "SINGLE_GAUSSIAN_ACCOUNTANT",
    "check_accountant",
    "check_composable",
    "check_delta",
    "check_dp_event",
    "check_noise_multiplier",
    "check_rho",
    "composed_event",
    "composed_gaussian_scale",
    "epsilon_of",
    "exponential_mechanism_event",
    "exponential_mechanism_rho",
    "gaussian_event",
    "holds",
    "no_op_event",
    "non_private_event",
    "noisy_sgd_event",
    "is_dp_event",
    "laplace_event",
    "pld_gaussian_scale",
    "pld_laplace_epsilon",
    "pure_epsilon",
    "zcdp_event",
    "zcdp_composition",
]

#: Names of the accountants a user may ask for.
ACCOUNTANTS = ("rdp", "pld")

#: Neighbouring relations an estimator may state in ``adjacency_``.
ADJACENCIES = ("add_remove", "replace_one")

#: The accountant of a release that is one Gaussian (output perturbation, the
#: intercept-only label histogram), whatever the fit's ``accountant``: PLD is
#: exact for it (the analytic Gaussian mechanism, Balle and Wang 2018), where
#: RDP's conversion overstates epsilon by ~10-20% and its finite orders cannot
#: certify epsilon below about 0.01.
SINGLE_GAUSSIAN_ACCOUNTANT = "pld"

# RDP orders (public as ``sklearn_dpfair.privacy.RDP_ORDERS``, so that a
# user recomputing an "rdp" record's epsilon with dp-accounting's
# ``RdpAccountant(orders=RDP_ORDERS)`` gets the recorded value; its default
# orders give a slightly larger, still valid, epsilon): dp-accounting's
# defaults (1.1 ... 1024) plus intermediate large orders. Small budgets
# (epsilon ~ 0.05) take the optimum at large orders (~256 for DP-SGD on
# Adult), where the default grid is sparse (128, 256,
# 512). Orders beyond 1024 cost O(order) each and were never optimal in our
# sweeps (epsilon >= 0.01), so they are left out.
_RDP_ORDERS = tuple(
    np.unique(
        np.concatenate(
            [
                1 + np.arange(1, 100) / 10.0,
                np.arange(12, 64),
                [80, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024],
            ]
        )
    ).tolist()
)
RDP_ORDERS = _RDP_ORDERS

# PLD discretisation. 1e-4 is dp-accounting's default; it makes the PLD
# estimate an upper bound (pessimistic discretisation), so it is safe.
_PLD_VALUE_DISCRETIZATION = 1e-4

# Smallest scale of an unsampled Gaussian PLD (pld_gaussian_scale) the PLD
# accountant is asked to build. Its loss grid grows as 1 / scale^2: at 0.05
# (epsilon ~ 280 at delta = 1e-5) it takes ~15 s and 1.4 GB, at 0.03 a
# minute and 2.7 GB, at 0.01 it runs out of memory. Below it epsilon_of
# refuses with a ValueError rather than exhaust the machine.
PLD_MIN_GAUSSIAN_SCALE = 0.05

# Largest total privacy loss of Laplace releases (pld_laplace_epsilon: the
# sum of count / b over them) whose PLD the PLD accountant is asked to build.
# A Laplace PLD is supported on [-1/b, 1/b], one grid point per
# discretisation interval (1e-4), and compositions add the supports: 100
# (2e6 points) took ~4 s and 0.5 GB beside a DP-SGD event, 300 ~17 s and
# 1.3 GB, 3000 runs out of memory. Above it, epsilon_of states Laplace
# releases by their pure epsilon where it can (alone, or beside the rest of
# a composition by basic composition) and refuses otherwise.
PLD_MAX_LAPLACE_EPSILON = 100.0


def check_accountant(accountant, name="accountant"):
    """``accountant`` if it is one of :data:`ACCOUNTANTS`, else a ``ValueError``.

    ``name`` is the parameter the message names (a ledger's ``kind``).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import check_accountant
    >>> check_accountant("pld")
    'pld'
    """
    if not (isinstance(accountant, str) and accountant in ACCOUNTANTS):
        raise ValueError(f"{name} must be one of {ACCOUNTANTS}, got {accountant!r}.")
    return accountant


def _make_accountant(accountant, event=None):
    if check_accountant(accountant) == "rdp":
        # The relation under which dp-accounting reads the event, as for PLD.
        return rdp.RdpAccountant(
            orders=_RDP_ORDERS, neighboring_relation=_pld_relation(event)
        )
    return pld.PLDAccountant(
        _pld_relation(event),
        value_discretization_interval=_PLD_VALUE_DISCRETIZATION,
    )


def _pld_relation(event):
    """Add/remove, unless ``event`` holds a local randomizer's message.

    A local randomizer (randomized response, or an ``epsilon``-DP
    randomizer accounted as the binary randomized response that dominates
    it) is private with respect to replacing the one input it randomizes;
    dp-accounting's PLD interprets ``RandomizedResponseDpEvent`` under
    replace-one only. Gaussian events composed with it are then read under
    replace-one too, which doubles their sensitivity: pessimistic, never
    optimistic.
    """
    relation = dp_accounting.NeighboringRelation
    local = _holds_randomized_response(event)
    return relation.REPLACE_ONE if local else relation.ADD_OR_REMOVE_ONE


def holds(event, kind):
    """Whether ``event`` is, composes or wraps an event of type ``kind``.

    Examples
    --------
    >>> import dp_accounting
    >>> from sklearn_dpfair.privacy._accounting import holds, noisy_sgd_event
    >>> holds(noisy_sgd_event(1.0, 0.1, 3), dp_accounting.GaussianDpEvent)
    True
    """
    if isinstance(event, kind):
        return True
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return any(holds(e, kind) for e in event.events)
    inner = getattr(event, "event", None)
    return inner is not None and holds(inner, kind)


def _holds_randomized_response(event):
    return holds(event, dp_accounting.RandomizedResponseDpEvent)


def _unrolled(event):
    """``event`` with every self-composition of randomized response written out.

    dp-accounting 0.6's PLD accountant ignores the count of a
    ``SelfComposedDpEvent`` around a ``RandomizedResponseDpEvent`` (it
    composes one); an explicit ``ComposedDpEvent`` is composed in full.
    """
    if isinstance(event, dp_accounting.SelfComposedDpEvent) and (
        _holds_randomized_response(event.event)
    ):
        return dp_accounting.ComposedDpEvent((_unrolled(event.event),) * event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return dp_accounting.ComposedDpEvent(tuple(_unrolled(e) for e in event.events))
    return event


def check_noise_multiplier(value, name="noise_multiplier"):
    """Raise unless ``value`` is a noise multiplier: a real number in [0, inf].

    ``0`` is a release without noise (dp-accounting reads a
    ``GaussianDpEvent(0)`` as non-private), ``inf`` one that releases
    nothing (its event is accounted as a no-op; no mechanism draws it, so
    :class:`~sklearn_dpfair.privacy.GaussianMechanism` and
    :class:`~sklearn_dpfair.privacy.LaplaceMechanism` refuse it). NaN and
    negative values are refused: dp-accounting's RDP accountant reads
    ``GaussianDpEvent(nan)`` as epsilon 0.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import check_noise_multiplier
    >>> check_noise_multiplier(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: noise_multiplier must be a number in [0, inf], got nan.
    """
    _check_in_range(value, name, "[0, inf]", lambda v: v >= 0)


def check_rho(value, name="rho"):
    """Raise unless ``value`` is a zCDP ``rho`` in [0, inf] (inf: non-private)."""
    _check_in_range(value, name, "[0, inf]", lambda v: v >= 0)


def check_delta(delta):
    """``delta`` as a Python float in [0, 1), or a ValueError naming it.

    Written so that NaN fails: dp-accounting answers a NaN or a delta >= 1
    with an epsilon (0 from RDP), which would certify any noise. Text and
    booleans are refused as numbers outside the range (``False`` would
    otherwise be read as 0, pure DP).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import check_delta
    >>> check_delta(1e-5)
    1e-05
    >>> check_delta(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: delta must be a number in [0, 1), got nan.
    """
    _check_in_range(delta, "delta", "[0, 1)", lambda d: 0 <= d < 1)
    return float(delta)


def _check_in_range(value, name, interval, inside):
    # Written so that NaN fails (every comparison with NaN is False).
    if not (_is_real(value) and inside(value)):
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}.")


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_count(value, name, minimum=0):
    if not (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
        and value >= minimum
    ):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")


def _check_probability(value, name):
    _check_in_range(value, name, "[0, 1]", lambda v: 0 <= v <= 1)


def _check_steps(value, name="steps"):
    # The number of releases an event composes: the count its
    # SelfComposedDpEvent holds (_check_count), checked before it is built,
    # since int() would truncate 0.99 steps to none and 2.9 to 2.
    _check_count(value, name)


def _check_sampling_probability(value, name="sampling_probability"):
    # The Poisson rate of a step that reads data: a rate of 0 samples no
    # record (a release that reads nothing is stated with steps=0), and NaN
    # or 1.5 would fail the "< 1" test and be read as a full batch.
    _check_in_range(value, name, "(0, 1]", lambda v: 0 < v <= 1)


def _check_positive_noise(value, name):
    # A Laplace scale of 0 divides by zero in pure_epsilon and in RDP; a
    # release without noise is a NonPrivateDpEvent.
    _check_in_range(value, name, "(0, inf]", lambda v: v > 0)


# What each parameter of an event must be. Every estimator builds its events
# from these types (RandomAllocationDpEvent is this package's own); the
# others of dp-accounting are checked where their fields are the same kinds.
_FIELD_CHECKS = {
    dp_accounting.GaussianDpEvent: {"noise_multiplier": check_noise_multiplier},
    dp_accounting.LaplaceDpEvent: {"noise_multiplier": _check_positive_noise},
    dp_accounting.ZCDpEvent: {"rho": check_rho, "xi": check_rho},
    dp_accounting.SelfComposedDpEvent: {"count": _check_count},
    dp_accounting.PoissonSampledDpEvent: {"sampling_probability": _check_probability},
    dp_accounting.SampledWithReplacementDpEvent: {
        "source_dataset_size": _check_count,
        "sample_size": _check_count,
    },
    dp_accounting.SampledWithoutReplacementDpEvent: {
        "source_dataset_size": _check_count,
        "sample_size": _check_count,
    },
    dp_accounting.RandomizedResponseDpEvent: {
        "noise_parameter": _check_probability,
        "num_buckets": functools.partial(_check_count, minimum=1),
    },
    RandomAllocationDpEvent: {
        "noise_multiplier": _check_positive_noise,
        "steps_per_epoch": functools.partial(_check_count, minimum=1),
        "epochs": functools.partial(_check_count, minimum=1),
    },
}


def check_dp_event(event):
    """Raise unless every parameter of ``event`` (recursively) is well formed.

    dp-accounting does not validate its events, and some malformed ones get
    an epsilon that certifies too much: ``GaussianDpEvent(nan)`` reads as
    epsilon 0 under RDP, a ``LaplaceDpEvent(-1)`` cancels a
    ``LaplaceDpEvent(1)`` in a pure sum, a ``SelfComposedDpEvent`` of count
    ``-9`` subtracts nine releases from a ledger's total. Every place that
    turns an event into an epsilon or a record calls this first
    (:func:`epsilon_of`, the ledgers, the budget).

    Noise multipliers are in [0, inf] (0: no noise, which dp-accounting
    reads as non-private; a Laplace scale must be > 0), ``rho`` and ``xi``
    in [0, inf], counts are integers >= 0 (>= 1 for buckets and epochs),
    sampling probabilities and randomized-response parameters in [0, 1].

    Parameters
    ----------
    event : dp_accounting.DpEvent

    Raises
    ------
    ValueError
        Naming the event type and the field that is malformed.

    Examples
    --------
    >>> import dp_accounting
    >>> from sklearn_dpfair.privacy._accounting import check_dp_event
    >>> check_dp_event(dp_accounting.SelfComposedDpEvent(
    ...     dp_accounting.GaussianDpEvent(1.0), -9))
    Traceback (most recent call last):
    ...
    ValueError: SelfComposedDpEvent.count must be an integer >= 0, got -9.
    """
    for kind, checks in _FIELD_CHECKS.items():
        if type(event) is kind:
            for field, check in checks.items():
                check(getattr(event, field), f"{kind.__name__}.{field}")
    if isinstance(event, dp_accounting.ComposedDpEvent):
        for inner in event.events:
            check_dp_event(inner)
        return
    inner = getattr(event, "event", None)
    if isinstance(inner, dp_accounting.DpEvent):
        check_dp_event(inner)


def is_dp_event(event):
    """Return True if ``event`` is a dp-accounting ``DpEvent``."""
    return isinstance(event, dp_accounting.DpEvent)


def gaussian_event(noise_multiplier):
    """Event of one Gaussian mechanism with noise ``noise_multiplier`` x sensitivity."""
    if noise_multiplier == 0:
        return dp_accounting.NonPrivateDpEvent()
    return dp_accounting.GaussianDpEvent(float(noise_multiplier))


def noisy_sgd_event(noise_multiplier, sampling_probability, steps):
    """Event of ``steps`` Poisson-subsampled Gaussian mechanisms (DP-SGD).

    With ``sampling_probability == 1`` (full batch) no subsampling is involved
    and the event is a plain self-composed Gaussian.

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation in units of the sensitivity (0: no noise).
    sampling_probability : float
        Poisson inclusion probability of each record in each step, in
        (0, 1].
    steps : int
        Number of steps, an integer >= 0.

    Returns
    -------
    event : dp_accounting.DpEvent

    Raises
    ------
    ValueError
        If ``steps`` is not an integer >= 0 (a fractional count, rounded,
        would account fewer releases than ran: 0.99 steps read as none) or
        ``sampling_probability`` is not in (0, 1] (NaN or 1.5 read as a
        full batch).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import noisy_sgd_event
    >>> noisy_sgd_event(1.0, 0.1, 2.5)
    Traceback (most recent call last):
    ...
    ValueError: steps must be an integer >= 0, got 2.5.
    """
    _check_steps(steps)
    _check_sampling_probability(sampling_probability)
    steps = int(steps)
    if noise_multiplier == 0:
        return dp_accounting.NonPrivateDpEvent()
    if steps == 0:
        return no_op_event()
    step = gaussian_event(noise_multiplier)
    if sampling_probability < 1.0:
        step = dp_accounting.PoissonSampledDpEvent(float(sampling_probability), step)
    return dp_accounting.SelfComposedDpEvent(step, steps)


def laplace_event(noise_multiplier, steps=1):
    """``steps`` Laplace releases of scale ``noise_multiplier`` x the l1 sensitivity.

    ``steps`` must be an integer >= 0 (a ValueError otherwise): a
    fractional count would be truncated to fewer releases than ran.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import epsilon_of, laplace_event
    >>> epsilon_of(laplace_event(0.5, steps=2), 0.0)
    4.0
    """
    _check_steps(steps)
    if noise_multiplier == 0:
        return non_private_event()
    event = dp_accounting.LaplaceDpEvent(float(noise_multiplier))
    return event if steps == 1 else dp_accounting.SelfComposedDpEvent(event, int(steps))


def pure_epsilon(event):
    """The epsilon of ``event`` at ``delta = 0``, or None if it has none.

    Only Laplace releases (and no-ops) are pure: their epsilons add up under
    composition, which is exact at ``delta = 0`` (Dwork and Roth 2014,
    Theorem 3.16, with equality for the worst-case pair of every Laplace
    release). dp-accounting does not state ``delta = 0`` guarantees (its
    PLD returns ``inf`` there), so this sum is the accountant of a pure fit;
    any other release (Gaussian, zCDP, sampled) has no pure epsilon. A
    non-private release is ``(inf, 0)``-DP, as every mechanism is, so a
    composition that holds one is ``inf`` whatever else it holds.

    Parameters
    ----------
    event : dp_accounting.DpEvent

    Returns
    -------
    epsilon : float or None

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import (
    ...     composed_event, laplace_event, non_private_event, pure_epsilon)
    >>> pure_epsilon(composed_event([laplace_event(1.0), non_private_event()]))
    inf
    """
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_accounting.NonPrivateDpEvent):
        return math.inf
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return 1.0 / event.noise_multiplier
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = pure_epsilon(event.event)
        if inner is None:
            return None
        # Zero releases spend nothing (and inf * 0 would be NaN).
        return 0.0 if event.count == 0 else inner * event.count
    if isinstance(event, dp_accounting.ComposedDpEvent):
        parts = [pure_epsilon(e) for e in event.events]
        if any(p == math.inf for p in parts):
            return math.inf
        return None if any(p is None for p in parts) else math.fsum(parts)
    return None


def composed_event(events):
    """Sequential composition of several events."""
    events = tuple(events)
    if len(events) == 1:
        return events[0]
    # A tuple (not dp-accounting's usual list) keeps the event hashable, so
    # epsilon_of can memoize it.
    return dp_accounting.ComposedDpEvent(events)


def no_op_event():
    """Event of a release that reads no private data (epsilon = 0)."""
    return dp_accounting.NoOpDpEvent()


def non_private_event():
    """Event of a release with no privacy guarantee (epsilon = inf)."""
    return dp_accounting.NonPrivateDpEvent()


def epsilon_of(event, delta, accountant="rdp"):
    """Epsilon spent by ``event`` at ``delta``, computed by dp-accounting.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        Description of the mechanism.
    delta : float
        Target delta in [0, 1); 0 (pure DP) for Laplace releases
        (:func:`pure_epsilon`) and for local randomizers' messages
        (``RandomizedResponseDpEvent``, whose PLD dp-accounting interprets
        at ``delta = 0`` under replace-one).
    accountant : {"rdp", "pld"}, default="rdp"
        Which dp-accounting accountant interprets the event.

    Returns
    -------
    epsilon : float
        ``inf`` for an event that holds a non-private release (at any
        ``delta``, 0 included), ``0`` for a no-op. A Gaussian or Laplace
        release of infinite noise releases nothing and is read as a no-op
        by both accountants. For an event of Laplace releases only (one
        with a :func:`pure_epsilon`) at ``delta > 0``: the smaller of its
        pure epsilon and the accountant's, since ``(epsilon, 0)``-DP implies
        ``(epsilon, delta)``-DP (RDP's conversion of a Laplace release is
        above its pure epsilon: 1.0028 for one of epsilon 1 at 1e-5), and
        the pure epsilon alone where the PLD accountant would build a grid
        too large (:data:`PLD_MAX_LAPLACE_EPSILON`). With
        ``accountant="pld"``, a composition whose Laplace releases exceed
        that limit is stated as the pure epsilon of its Laplace parts plus
        the PLD epsilon of the rest at ``delta`` (basic composition, Dwork
        and Roth 2014, Theorem 3.16: a valid bound, tight at such epsilons).
        Where the PLD accountant answers ``inf`` for a private add/remove
        event (below ``delta`` ~ 1e-16 its float64 probabilities leave mass
        at infinite loss whatever the noise), the RDP accountant's epsilon,
        also a valid bound.

    Raises
    ------
    ValueError
        If ``delta`` is not in [0, 1) (NaN included), or is 0 for an event
        with no pure epsilon, if a parameter of the event is malformed
        (:func:`check_dp_event`), if dp-accounting overflows on the event (a
        huge noise multiplier; one of 1e10 already gives epsilon 0), or, for
        ``accountant="pld"``, if a Gaussian's PLD scale is below
        ``PLD_MIN_GAUSSIAN_SCALE`` (its PLD would not fit in memory): the
        noise multiplier over the square root of the steps for full-batch
        steps, the noise multiplier itself for a Poisson-sampled step (a
        user's ``noise_multiplier=0.045`` with ``accountant="pld"`` took 69 s
        for epsilon 1805 before; ``accountant="rdp"`` accounts it), or if
        Laplace releases that cannot be split off as above (nested in a
        sampled or self-composed part) exceed :data:`PLD_MAX_LAPLACE_EPSILON`.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import epsilon_of, gaussian_event
    >>> round(epsilon_of(gaussian_event(1.0), 1e-5, accountant="pld"), 2)
    4.38
    >>> epsilon_of(gaussian_event(1.0), float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: delta must be a number in [0, 1), got nan.
    """
    delta = check_delta(delta)
    check_dp_event(event)
    event = _without_infinite_noise(event)
    if delta == 0 and not _holds_randomized_response(event):
        # inf when the event holds a non-private release, at any depth.
        epsilon = pure_epsilon(event)
        if epsilon is None:
            raise ValueError(
                "delta=0 (pure epsilon-DP) is stated for Laplace releases "
                f"only; {type(event).__name__} needs delta > 0."
            )
        return epsilon
    if isinstance(event, RandomAllocationDpEvent):
        # Balls-and-bins epochs: read by pld-accounting's random-allocation
        # PLD (its own module); dp-accounting has no such event.
        if accountant != "pld":
            raise ValueError(
                "A random-allocation (balls-and-bins) event is accounted with "
                f"its PLD; use accountant='pld', not {accountant!r}."
            )
        return allocation_epsilon(event, float(delta))
    pure = None if _holds_randomized_response(event) else pure_epsilon(event)
    too_wide = (
        accountant == "pld" and pld_laplace_epsilon(event) > PLD_MAX_LAPLACE_EPSILON
    )
    if pure is not None:
        # (epsilon, 0)-DP implies (epsilon, delta)-DP: the pure epsilon
        # bounds what the accountant states (RDP's is above it), and is
        # the answer where PLD's grid would not fit in memory.
        if math.isinf(pure) or too_wide:
            return pure
        return min(pure, _accountant_epsilon(event, delta, accountant))
    if too_wide and isinstance(event, dp_accounting.ComposedDpEvent):
        # Basic composition (Dwork and Roth 2014, Theorem 3.16): the
        # (epsilon_L, 0)-DP Laplace parts and the (epsilon_R, delta)-DP rest
        # are (epsilon_L + epsilon_R, delta)-DP together. At epsilon_L
        # above the limit PLD composition gains nothing on this.
        parts = [(pure_epsilon(e), e) for e in event.events]
        laplace = [p for p, _ in parts if p is not None]
        rest = [e for p, e in parts if p is None]
        if laplace:
            rest_epsilon = epsilon_of(composed_event(rest), delta, accountant)
            return math.fsum(laplace) + rest_epsilon
    return _accountant_epsilon(event, delta, accountant)


def _accountant_epsilon(event, delta, accountant):
    """dp-accounting's epsilon of ``event`` at ``delta`` (memoized)."""
    # A self-composition of one release is that release: both accountants
    # multiply the count through, so the answer is the same to the bit. One
    # cache entry serves both spellings, so that a calibration (which reads
    # noisy_sgd_event(sigma, 1.0, 1)) and the record of its one Gaussian
    # (gaussian_event(sigma)) build one PLD, not two (~2 s each at the
    # calibration's floor).
    while isinstance(event, dp_accounting.SelfComposedDpEvent) and event.count == 1:
        event = event.event
    try:
        return _epsilon_of_cached(event, float(delta), accountant)
    except TypeError:
        # Events that hold lists (ComposedDpEvent) are not hashable.
        return _epsilon_of_cached.__wrapped__(event, float(delta), accountant)


def _without_infinite_noise(event):
    """``event`` with every release of infinite noise written as a no-op.

    A Gaussian or Laplace release (or a random allocation of Gaussian
    steps) whose noise multiplier is ``inf`` releases nothing: its output
    does not depend on the data, so it is 0-DP and composes as a no-op.
    dp-accounting's RDP accountant already reads it as epsilon 0, but its
    PLD accountant builds the mechanism's loss grid from the noise scale and
    fails on it (NaN grid bounds for a Gaussian, an empty grid for a
    Laplace); rewriting such releases before either accountant reads them
    gives both the same answer. A sampled or self-composed no-op is a no-op
    (dp-accounting does not read a sampled ``NoOpDpEvent``), and a
    composition drops its no-ops. Other events are returned as they are.

    Examples
    --------
    >>> import dp_accounting
    >>> from sklearn_dpfair.privacy._accounting import _without_infinite_noise
    >>> _without_infinite_noise(dp_accounting.PoissonSampledDpEvent(
    ...     0.1, dp_accounting.GaussianDpEvent(float("inf"))))
    NoOpDpEvent()
    """
    noop = dp_accounting.NoOpDpEvent
    noisy = (
        dp_accounting.GaussianDpEvent,
        dp_accounting.LaplaceDpEvent,
        RandomAllocationDpEvent,
    )
    if isinstance(event, noisy):
        return noop() if math.isinf(event.noise_multiplier) else event
    if isinstance(event, dp_accounting.ComposedDpEvent):
        parts = [_without_infinite_noise(e) for e in event.events]
        if all(p is e for p, e in zip(parts, event.events)):
            return event
        kept = [p for p in parts if not isinstance(p, noop)]
        return composed_event(kept) if kept else noop()
    inner = getattr(event, "event", None)
    if isinstance(inner, dp_accounting.DpEvent):
        rewritten = _without_infinite_noise(inner)
        if rewritten is inner:
            return event
        if isinstance(rewritten, noop):
            return noop()
        return attr.evolve(event, event=rewritten)
    return event


# DpEvents are frozen attrs classes, hence hashable: memoizing makes the
# recomputation of epsilon in every fit of a grid search free.
@functools.lru_cache(maxsize=4096)
def _epsilon_of_cached(event, delta, accountant):
    if isinstance(event, dp_accounting.NonPrivateDpEvent):
        return math.inf
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return 0.0
    if accountant == "pld":
        _check_pld_grid(event)
    else:
        _check_rdp_multipliers(event)
    acc = _make_accountant(accountant, event)
    local = _holds_randomized_response(event)
    if local:
        event = _unrolled(event)
    if not acc.supports(event):
        raise ValueError(f"The {accountant!r} accountant cannot interpret {event!r}.")
    with _quiet_absl():
        try:
            acc.compose(event)
            epsilon = float(acc.get_epsilon(float(delta)))
            _check_answer(epsilon, event, accountant)
            if accountant == "pld" and math.isinf(epsilon) and not local:
                return _rdp_below_pld_floor(event, delta)
            return epsilon
        except OverflowError as exc:
            # dp-accounting squares the noise multiplier (RDP) or divides by
            # it (PLD) in floats: a huge but finite one overflows there. A
            # ValueError names the parameter; the noise is not capped, since
            # the recorded event must be the one the accountant read.
            raise ValueError(_overflow_message(event, accountant)) from exc
        except ZeroDivisionError as exc:
            # The subsampled-Gaussian RDP divides by sigma^2, which a tiny
            # but positive multiplier (1e-300) underflows to 0.
            raise ValueError(_tiny_multiplier_message(event, accountant)) from exc


def _rdp_below_pld_floor(event, delta):
    """RDP's epsilon of a private ``event`` whose PLD epsilon is ``inf``.

    dp-accounting's PLD holds its probabilities in float64, and a
    discretised Gaussian keeps about 1e-16 of its mass at infinite loss, so
    below ``delta`` ~ 1e-16 it answers ``inf`` for any noise (one Gaussian of
    multiplier 22,000 at 1e-20), where RDP certifies 0.906 for a multiplier
    of 10. Both are upper bounds on the event's epsilon at ``delta``, so the
    smaller, RDP's, is certified as well; ``inf`` stays where RDP cannot read
    the event either. Only for add/remove events: an event holding a local
    randomizer's message is read under replace-one, where dp-accounting's
    PLD doubles a Gaussian's sensitivity and its RDP does not, so the two
    would not bound the same mechanism.
    """
    try:
        return _epsilon_of_cached(event, delta, "rdp")
    except ValueError:
        return math.inf


# The least noise multiplier dp-accounting's RDP is asked to read. Its
# subsampled-Gaussian RDP divides terms up to (order^2 - order) ~ 1e6 by
# 2 sigma^2: below about 5e-152 these overflow to NaN inside, and it answered
# epsilon 0.0 for a release of almost no noise (a false claim); 1e-150 gives
# 5e301. A margin of ten decades: a multiplier this small releases the data
# (epsilon above 1e250) whatever the accountant says.
RDP_MIN_NOISE_MULTIPLIER = 1e-140


def _tiny_multiplier_message(event, accountant):
    return (
        "A noise multiplier (noise_multiplier, or a *_noise_multiplier) "
        f"of {min(_gaussian_multipliers(event), default=0.0):g} is too "
        f"small for dp-accounting's {accountant!r} accountant (it "
        "divides by its square): such noise gives no privacy; use 0 for a "
        "non-private release, or more noise."
    )


def _check_answer(epsilon, event, accountant):
    """Raise where dp-accounting's answer is NaN (an overflow inside it).

    A NaN would pass no budget check as written here, but nothing should
    read it as an epsilon either. (An answer of 0 can be right even for
    little noise: a record sampled with probability below delta.)
    """
    if math.isnan(epsilon):
        raise ValueError(_tiny_multiplier_message(event, accountant))


def _check_rdp_multipliers(event):
    """Raise where a Gaussian of ``event`` is below :data:`RDP_MIN_NOISE_MULTIPLIER`."""
    positive = [z for z in _gaussian_multipliers(event) if z > 0]
    if positive and min(positive) < RDP_MIN_NOISE_MULTIPLIER:
        raise ValueError(_tiny_multiplier_message(event, "rdp"))


def _check_pld_grid(event):
    """Raise where the PLD of ``event`` would need a loss grid of gigabytes.

    The scale is :func:`pld_gaussian_scale`: the noise multiplier of a
    sampled step, or over the square root of the steps for full-batch ones,
    which fits with many steps make tiny. A sampled step of scale just
    above the limit may still exhaust memory when composed many times
    (its composed grid grows with the steps): that case is not guarded.
    """
    laplace = pld_laplace_epsilon(event)
    if laplace > PLD_MAX_LAPLACE_EPSILON:
        raise ValueError(
            "The Laplace releases (a pure-DP fit's noise, or a Laplace "
            "noise_multiplier) are too little noise for accountant='pld' in "
            f"this composition: their privacy losses add up to {laplace:.3g}, "
            f"above {PLD_MAX_LAPLACE_EPSILON:g}, and dp-accounting's PLD grid "
            "over that range does not fit in memory. Use more Laplace noise "
            "(a smaller epsilon), or accountant='rdp'."
        )
    scale = pld_gaussian_scale(event)
    if scale < PLD_MIN_GAUSSIAN_SCALE:
        raise ValueError(
            "The noise multiplier (noise_multiplier, or a *_noise_multiplier) "
            "is too small for accountant='pld': dp-accounting builds the PLD "
            f"of a Gaussian of noise multiplier {scale:.3g} (sigma, or "
            "sigma/sqrt(steps) for full-batch steps, which compose into one "
            f"Gaussian), below {PLD_MIN_GAUSSIAN_SCALE}: its loss grid does not "
            "fit in memory, and epsilon there is in the hundreds. Use more "
            "noise or fewer steps, or accountant='rdp'."
        )


def pld_laplace_epsilon(event):
    """Total privacy loss of the Laplace releases in ``event``: sum of ``count / b``.

    dp-accounting's PLD of a Laplace release of parameter ``b`` (in units
    of the sensitivity) is supported on ``[-1/b, 1/b]`` with one point per
    value discretization interval, and a composition's support is the sum
    of its parts': this sum says, before anything is computed, how wide
    the Laplace part of the PLD of ``event`` is. A sampled Laplace counts
    as unsampled (its loss is at most ``1/b``). Releases of infinite noise
    count as none.

    Parameters
    ----------
    event : dp_accounting.DpEvent

    Returns
    -------
    epsilon : float
        0 when ``event`` holds no Laplace release.

    Examples
    --------
    >>> import dp_accounting
    >>> from sklearn_dpfair.privacy._accounting import (
    ...     composed_event, gaussian_event, laplace_event, pld_laplace_epsilon)
    >>> event = composed_event([laplace_event(0.5, 3), gaussian_event(1.0)])
    >>> pld_laplace_epsilon(event)
    6.0
    """
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        b = event.noise_multiplier
        return 0.0 if math.isinf(b) else 1.0 / b
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return math.fsum(pld_laplace_epsilon(e) for e in event.events)
    inner = getattr(event, "event", None)
    if not isinstance(inner, dp_accounting.DpEvent):
        return 0.0
    inner_epsilon = pld_laplace_epsilon(inner)
    count = getattr(event, "count", 1)
    # Zero releases spend nothing (and inf * 0 would be NaN).
    return 0.0 if count == 0 or inner_epsilon == 0 else inner_epsilon * count


def _gaussian_multipliers(event):
    """The noise multipliers of every Gaussian release in ``event``."""
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return [event.noise_multiplier]
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [z for e in event.events for z in _gaussian_multipliers(e)]
    inner = getattr(event, "event", None)
    return [] if inner is None else _gaussian_multipliers(inner)


def pld_gaussian_scale(event, *, sampled=True):
    """Smallest noise scale of the Gaussian PLDs dp-accounting builds for ``event``.

    dp-accounting's PLD accountant reads ``count`` self-compositions of an
    unsampled ``GaussianDpEvent(z)`` as *one* Gaussian of standard deviation
    ``z / sqrt(count)`` (its composition is exact), and a Poisson-sampled one
    as a subsampled Gaussian of scale ``z`` composed ``count`` times. The
    loss grid of a Gaussian PLD of scale ``s`` holds about ``1 / (2 s^2)``
    divided by the value discretization points, so this scale says, before
    anything is computed, how large (and slow) the PLD of ``event`` is.

    Parameters
    ----------
    event : dp_accounting.DpEvent
    sampled : bool, default=True
        Whether to include the Gaussians under a sampling event.

    Returns
    -------
    scale : float
        ``inf`` when ``event`` holds no (such) Gaussian.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import (
    ...     noisy_sgd_event, pld_gaussian_scale)
    >>> pld_gaussian_scale(noisy_sgd_event(2.0, 1.0, 100))
    0.2
    >>> pld_gaussian_scale(noisy_sgd_event(2.0, 0.1, 100))
    2.0
    >>> pld_gaussian_scale(noisy_sgd_event(2.0, 0.1, 100), sampled=False)
    inf
    """
    return _gaussian_scale(event, 1, sampled)


def _gaussian_scale(event, count, sampled):
    if isinstance(event, dp_accounting.GaussianDpEvent):
        if event.noise_multiplier == 0:  # non-private: no grid is built
            return math.inf
        return event.noise_multiplier / math.sqrt(count)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _gaussian_scale(event.event, count * event.count, sampled)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        scales = [_gaussian_scale(e, count, sampled) for e in event.events]
        return min(scales, default=math.inf)
    inner = getattr(event, "event", None)
    if inner is None or not sampled:
        return math.inf
    # Under sampling the PLD of one step is built, then self-composed.
    return _gaussian_scale(inner, 1, sampled)


def composed_gaussian_scale(event):
    """Scale of the one Gaussian that ``event`` composes to, or None.

    ``count`` releases of Gaussian noise ``z_i`` (in units of the
    sensitivity, read under add/remove, none of them sampled) are together
    exactly one Gaussian release of scale ``(sum 1 / z_i^2)^(-1/2)``: the
    privacy loss of each is Gaussian, and their sum is Gaussian (Dong, Roth
    and Su 2022, Corollary 3.3: ``mu``-GDP composes as
    ``sqrt(sum mu_i^2)``). For such an event the analytic Gaussian mechanism
    (Balle and Wang 2018) gives its exact epsilon, which dp-accounting's
    pessimistic PLD only bounds from above.

    Parameters
    ----------
    event : dp_accounting.DpEvent

    Returns
    -------
    scale : float or None
        None when ``event`` holds anything but Gaussian releases of finite
        positive noise (a sampled or non-private release, another
        mechanism, a local randomizer's message) or no release at all.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import (
    ...     composed_gaussian_scale, noisy_sgd_event)
    >>> composed_gaussian_scale(noisy_sgd_event(2.0, 1.0, 4))
    1.0
    >>> composed_gaussian_scale(noisy_sgd_event(2.0, 0.5, 4)) is None
    True
    """
    precision = _gaussian_precision(event)
    if precision is None or not 0 < precision < math.inf:
        return None
    return 1.0 / math.sqrt(precision)


def _gaussian_precision(event):
    """``sum count / z^2`` over the Gaussians of ``event``; None if it holds others."""
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_accounting.GaussianDpEvent):
        z = event.noise_multiplier
        # A product, not z**-2, which raises on over- and underflow.
        return (1.0 / z) * (1.0 / z) if z > 0 else None
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = _gaussian_precision(event.event)
        if inner is None or event.count == 0:
            return None if inner is None else 0.0
        # A count beyond the float range (float() would raise) reads as 2^1000.
        return inner * float(min(event.count, 2**1000))
    if isinstance(event, dp_accounting.ComposedDpEvent):
        parts = [_gaussian_precision(e) for e in event.events]
        return None if any(p is None for p in parts) else math.fsum(parts)
    return None


def _overflow_message(event, accountant):
    """Why the ``accountant`` overflowed on ``event``, naming the parameter.

    This layer does not know which estimator parameter set the noise, so
    the message names the noise-multiplier parameters (``noise_multiplier``
    and the ``*_noise_multiplier`` of the releases beside the steps, such as
    ``marginal_noise_multiplier``).
    """
    multipliers = _gaussian_multipliers(event)
    if not multipliers:
        return (
            f"The {accountant!r} accountant overflows on {event!r}: a noise "
            "parameter of this release is too large for it."
        )
    return (
        "A noise multiplier (noise_multiplier, or marginal_noise_multiplier "
        "and the other *_noise_multiplier) is too large: dp-accounting's "
        f"{accountant!r} accountant overflows on a Gaussian of noise "
        f"multiplier sigma={max(multipliers):g} (in units of the "
        "sensitivity). A noise multiplier of 1e10 already gives epsilon 0: "
        "use a smaller one."
    )


def check_composable(events, accountant):
    """Raise unless ``accountant`` can compose ``events`` (nothing is computed).

    What :func:`epsilon_of` of their composition would refuse, decided as it
    decides (one accountant, under the relation the whole composition is
    read with), without composing: a random-allocation event is read by its
    own PLD (pld-accounting), alone; any other event the accountant does
    not support (a zCDP release under PLD; a Poisson-sampled release beside
    a local randomizer's, which makes the composition replace-one) is not
    read at all. A ledger checks the releases of one adjacency before it
    records one more, so that no entry makes its total unreadable.

    Parameters
    ----------
    events : sequence of dp_accounting.DpEvent
        The events to compose.
    accountant : {"rdp", "pld"}

    Raises
    ------
    ValueError
        Naming the accountant and what it cannot read.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import (
    ...     check_composable, gaussian_event, zcdp_event)
    >>> check_composable([gaussian_event(1.0), zcdp_event(0.1)], "rdp")
    >>> check_composable([zcdp_event(0.1)], "pld")
    Traceback (most recent call last):
    ...
    ValueError: The 'pld' accountant cannot read these releases together...
    """
    events = list(events)
    if any(holds(e, RandomAllocationDpEvent) for e in events):
        alone = len(events) == 1 and isinstance(events[0], RandomAllocationDpEvent)
        if accountant != "pld" or not alone:
            raise ValueError(
                f"The {accountant!r} accountant cannot compose a random-allocation "
                "(balls-and-bins) event with other releases: it is read alone, "
                "by its own PLD (pld-accounting). Fit it without a ledger, or "
                "with batch_sampling='poisson'."
            )
        return
    # Support is decided node by node, so the rounds of a randomized response
    # need not be written out (_unrolled) to be checked.
    composed = dp_accounting.ComposedDpEvent(events)
    if not _make_accountant(accountant, composed).supports(composed):
        raise ValueError(
            f"The {accountant!r} accountant cannot read these releases together "
            f"(the last: {events[-1]!r}): record them in a ledger of the "
            "accountant their fits used (privacy_record_.accountant), or in "
            "separate ledgers."
        )


@contextlib.contextmanager
def _quiet_absl():
    """Silence dp-accounting's per-order convergence warnings.

    The RDP accountant logs (through absl) every fractional order whose series
    does not converge and then excludes that order, which is the safe choice;
    the log lines carry no information for our users.
    """
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def zcdp_event(rho):
    """Event of one ``rho``-zCDP mechanism (Bun and Steinke, 2016).

    dp-accounting's RDP accountant interprets it exactly: its Renyi
    divergence of order ``alpha`` is at most ``rho * alpha`` for every
    ``alpha > 1``. ``rho = inf`` is a non-private release and ``rho = 0`` a
    no-op. Sequential composition of zCDP events adds their ``rho``.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import epsilon_of, zcdp_event
    >>> round(epsilon_of(zcdp_event(0.5), 1e-5), 2)
    4.73
    """
    rho = float(rho)
    if math.isinf(rho):
        return dp_accounting.NonPrivateDpEvent()
    if rho == 0:
        return dp_accounting.NoOpDpEvent()
    return dp_accounting.ZCDpEvent(rho)


def zcdp_composition(rhos):
    """Sequential composition of ``rho``-zCDP mechanisms, one event per part.

    The parts are kept (rather than summed into one ``ZCDpEvent``) so that an
    auditor sees what each step of a fit spent; the RDP accountant adds
    them. The events are held in a tuple so the result is hashable (the
    memoized :func:`epsilon_of` hashes events).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import epsilon_of, zcdp_composition
    >>> epsilon_of(zcdp_composition([0.2, 0.3]), 1e-5) == epsilon_of(
    ...     zcdp_composition([0.5]), 1e-5)
    True
    """
    events = tuple(zcdp_event(rho) for rho in rhos if rho != 0)
    if not events:
        return dp_accounting.NoOpDpEvent()
    if len(events) == 1:
        return events[0]
    return dp_accounting.ComposedDpEvent(events)


def exponential_mechanism_rho(epsilon0):
    """zCDP ``rho`` of one exponential-mechanism selection with parameter ``epsilon0``.

    The exponential mechanism ``P(v) ~ exp(epsilon0 u(v) / (2 Delta))`` with
    ``Delta`` the sensitivity of every score is ``epsilon0``-bounded-range
    (the log-ratio of its probabilities on neighbours lies in an interval of
    width ``epsilon0``: Durfee and Rogers, 2019), and an ``epsilon0``-
    bounded-range mechanism is ``epsilon0^2 / 8``-zCDP (Cesar and Rogers,
    2021). This is 4x less than the ``epsilon0^2 / 2`` of the generic
    pure-DP-to-zCDP conversion, and holds for scores that are not monotone
    in the data.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import exponential_mechanism_rho
    >>> exponential_mechanism_rho(2.0)
    0.5
    """
    epsilon0 = float(epsilon0)
    return math.inf if math.isinf(epsilon0) else epsilon0**2 / 8.0


def exponential_mechanism_event(epsilon0, steps=1):
    """Event of ``steps`` adaptive exponential-mechanism selections at ``epsilon0``.

    dp-accounting has no exponential-mechanism event, so each selection is
    represented by the ``ZCDpEvent`` of its zCDP guarantee
    (:func:`exponential_mechanism_rho`), which the RDP accountant interprets
    exactly (Renyi divergence ``alpha * rho`` at every order), and the
    selections are self-composed. Use the RDP accountant. ``steps`` must be
    an integer >= 0 (a ValueError otherwise).

    Examples
    --------
    >>> from sklearn_dpfair.privacy._accounting import (
    ...     epsilon_of, exponential_mechanism_event, zcdp_event)
    >>> many = epsilon_of(exponential_mechanism_event(0.1, steps=100), 1e-5)
    >>> round(many, 6) == round(epsilon_of(zcdp_event(100 * 0.1**2 / 8), 1e-5), 6)
    True
    """
    _check_steps(steps)
    steps = int(steps)
    rho = exponential_mechanism_rho(epsilon0)
    if math.isinf(rho):
        return dp_accounting.NonPrivateDpEvent()
    if steps == 0 or rho == 0:
        return no_op_event()
    step = dp_accounting.ZCDpEvent(rho)
    return step if steps == 1 else dp_accounting.SelfComposedDpEvent(step, steps)
