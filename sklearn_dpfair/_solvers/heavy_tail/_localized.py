# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Algorithm 7 of Lowy's thesis: localized noisy clipped subgradient method (experimental).

For convex, possibly nonsmooth losses (Thm 48/50/163): the rows (rounded
down to ``2^l``) are split into disjoint phases of ``n/2, n/4, ..., 1`` rows.
Phase ``i`` runs Algorithm 6, ``T_i`` steps of full-batch noisy clipped
subgradient descent on the phase's rows, regularized towards the previous
phase's output ``w_{i-1}`` with a weight ``lambda_i`` that grows
geometrically, inside the ball ``W_i = W ∩ B(w_{i-1}, 2 L / lambda_i)``. The
steps of a phase compose sequentially (each gets ``rho / T_i``); the phases
compose in parallel, so the run is ``rho``-zCDP.

Constants are those of the proof of Thm 163 with ``p = 1``. The a-priori
Lipschitz bound ``L`` is taken as the largest clip threshold: clipped
subgradients are ``C_1``-bounded, which is all the localization radius
needs. Cost is about ``n^2 ln(n) / 3`` row-gradients, so this is for small
``n`` only; the thesis' own constants make slow progress below n ~ 1e5.
"""

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ...privacy._accounting import noisy_sgd_event, non_private_event
from ...privacy._releases import parallel_parts
from ._one_pass import LocalizedStep, one_pass_loop

__all__ = [
    "LocalizedPhase",
    "localized_event",
    "localized_phase_events",
    "localized_phase_steps",
    "localized_plan",
    "localized_subgradient",
    "phase_mechanism",
    "phase_noise_multiplier",
]

# Exponent p of the thesis (n^p >= n (L/R)^2, proof of Thm 163); p = 1 is
# the cheapest, hence the practical variant.
_P = 1.0


@dataclass(frozen=True)
class LocalizedPhase:
    """Public constants of one phase of Algorithm 7."""

    n_rows: int
    n_steps: int
    step_size: float
    regularization: float
    local_radius: float
    clip_norm: float


def localized_phase_steps(n_samples, max_steps=None):
    """Rows and steps ``(n_i, T_i)`` of each phase of Algorithm 7, from public counts.

    The rows used are ``n = 2^floor(log2 n_samples)``; phase ``i`` (from 1
    to ``log2 n``) reads ``n_i = n / 2^i`` of them in ``T_i = ceil(n_i^p ln
    n)`` steps (the proof of Thm 163, ``p = 1``; at least 1), at most
    ``max_steps``. Nothing else enters: neither the clip nor the scale,
    which may be private, so the run's event (:func:`localized_event`) is
    known before the data is read.

    Parameters
    ----------
    n_samples : int
        Number of rows (public), at least 2.
    max_steps : int or None, default=None
        Optional cap on the steps of a phase.

    Returns
    -------
    phases : list of tuple of int
        ``(n_i, T_i)`` for each phase, first to last.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._localized import localized_phase_steps
    >>> localized_phase_steps(10)
    [(4, 9), (2, 5), (1, 3)]
    >>> localized_phase_steps(10, max_steps=4)
    [(4, 4), (2, 4), (1, 3)]
    """
    levels = math.floor(math.log2(n_samples))
    n_used = 2**levels
    log_n = math.log(n_used)
    phases = []
    for i in range(1, levels + 1):
        n_i = n_used // 2**i
        n_steps = max(1, math.ceil(n_i**_P * log_n))
        if max_steps is not None:
            n_steps = min(n_steps, int(max_steps))
        phases.append((n_i, n_steps))
    return phases


def localized_plan(n_used, d, eps, k, *, diameter, scale, clips, max_steps=None):
    """Phases of Algorithm 7 for ``n_used = 2^l`` rows.

    Parameters
    ----------
    n_used : int
        Number of rows used, a power of two.
    d : int
        Number of parameters.
    eps : float
        The thesis' ``sqrt(2 rho)``.
    k : float
        Moment order.
    diameter : float
        Diameter ``D`` of the constraint ball.
    scale : float
        Gradient-norm scale standing for ``r``, ``R_2k`` and ``L_F``.
    clips : sequence of float
        Clip threshold of each phase (``l`` values).
    max_steps : int, default=None
        Optional cap on the steps of a phase.

    Returns
    -------
    phases : list of LocalizedPhase

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._localized import localized_plan
    >>> plan = localized_plan(8, 2, 1.0, 2.0, diameter=2.0, scale=1.0,
    ...                       clips=[1.0, 1.0, 1.0])
    >>> [ph.n_rows for ph in plan], [ph.n_steps for ph in plan]
    ([4, 2, 1], [9, 5, 3])
    """
    n = n_used
    log_n = math.log(n)
    lipschitz = max(clips) if not math.isinf(max(clips)) else scale
    privacy_term = (math.sqrt(d * log_n) / (eps * n)) ** ((k - 1) / k)
    rate = 1.0 / math.sqrt(n) + privacy_term
    inv_privacy = (eps * n / math.sqrt(d * log_n)) ** ((k - 1) / k)
    eta = (diameter / n ** (_P / 2)) * min(
        1.0 / (scale * n ** ((_P - 1) / 2)),
        1.0 / lipschitz,
        inv_privacy / (scale * n ** (_P / 2)),
    )
    # eta_A of the proof of Thm 163 (n^2 in the numerator); rarely binding.
    eta_a = (
        (scale * diameter * n**2 / scale)
        * rate
        * min(1.0 / lipschitz, (eps / math.sqrt(d)) ** ((k - 1) / k) / scale)
    )
    eta = min(eta, eta_a)
    phases = []
    # The rows and steps of the run's event (localized_event): public.
    sizes = zip(localized_phase_steps(n, max_steps), clips, strict=True)
    for i, ((n_i, n_steps), clip) in enumerate(sizes, start=1):
        eta_i = eta / 4**i
        reg = 1.0 / (eta_i * n_i**_P)
        phases.append(
            LocalizedPhase(n_i, n_steps, eta_i, reg, 2.0 * lipschitz / reg, clip)
        )
    return phases


def phase_mechanism(phase, budget):
    """The Gaussian mechanism of each step of a phase, from the run's budget.

    Each of the phase's ``T_i`` steps is a Gaussian release of its clipped
    sum (replace-one sensitivity ``2 C_i``) and gets ``rho / T_i`` of the
    budget's zCDP ``rho`` by sequential composition
    (:meth:`~sklearn_dpfair.privacy.PrivacyBudget.gaussian` with ``T_i``
    steps: noise multiplier ``sqrt(T_i / (2 rho))``), so the phase is
    ``rho``-zCDP. No noise when the budget is not private.
    """
    return budget.gaussian(2.0 * phase.clip_norm, steps=phase.n_steps)


def phase_noise_multiplier(phase, budget):
    """Noise multiplier of each step of a phase: ``sqrt(T_i / (2 rho))``.

    That of :func:`phase_mechanism`.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._localized import (
    ...     LocalizedPhase, phase_noise_multiplier)
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> part = PrivacyBudget(8.0, 1e-5).split({"optimizer": 1.0})["optimizer"]
    >>> phase = LocalizedPhase(4, 8, 1.0, 1.0, 1.0, 1.0)
    >>> round(phase_noise_multiplier(phase, part) ** 2 * 2 * part.rho, 9)
    8.0
    """
    return phase_mechanism(phase, budget).noise_multiplier


def localized_phase_events(phases, budget):
    """The accounting event of Algorithm 7 and the phase it describes.

    The phases read disjoint blocks of rows, so one record takes part in one
    phase only (parallel composition): the run's privacy is that of its worst
    phase, ``T_i`` self-composed Gaussian steps of noise multiplier
    :func:`phase_noise_multiplier`. Every phase is ``rho``-zCDP by
    construction; the phase with the largest ``T_i / (2 sigma_i^2)`` (the
    first on ties) is returned so that float round-off never favours the
    record.

    Parameters
    ----------
    phases : list of LocalizedPhase
    budget : PrivacyBudget
        The run's part of the fit's budget (each phase gets all of it).

    Returns
    -------
    event : dp_accounting.DpEvent
        ``T_j`` self-composed ``GaussianDpEvent(sigma_j)`` of the chosen
        phase ``j``.
    index : int
        The chosen phase ``j``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._localized import (
    ...     localized_phase_events, localized_plan)
    >>> plan = localized_plan(8, 2, 1.0, 2.0, diameter=2.0, scale=1.0,
    ...                       clips=[1.0, 1.0, 1.0])
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> part = PrivacyBudget(1.0, 1e-5).split({"optimizer": 0.9})["optimizer"]
    >>> event, j = localized_phase_events(plan, part)
    >>> event.count == plan[j].n_steps
    True
    """
    return _worst_phase([phase.n_steps for phase in phases], budget)


def localized_event(n_samples, max_steps, budget):
    """The optimizer's event of Algorithm 7 on ``n_samples`` rows, from public inputs.

    :func:`localized_phase_events` of the phases a fit on ``n_samples``
    rows runs: their steps (:func:`localized_phase_steps`) and the
    per-step noise multipliers ``sqrt(T_i / (2 rho))`` depend on
    ``n_samples``, ``max_steps`` and the budget only, not on the (private)
    clip or scale, so the event is planned before the data is read and
    equals the one the fit records.

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    max_steps : int or None
        Cap on the steps of a phase (``max_iter``; None: none).
    budget : PrivacyBudget
        The run's part of the fit's budget (each phase gets all of it).

    Returns
    -------
    event : dp_accounting.DpEvent

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._localized import (
    ...     localized_event, localized_phase_events, localized_plan)
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> part = PrivacyBudget(1.0, 1e-5).split({"optimizer": 0.9})["optimizer"]
    >>> plan = localized_plan(8, 2, 1.0, 2.0, diameter=2.0, scale=1.0,
    ...                       clips=[1.0, 1.0, 1.0])
    >>> localized_event(8, None, part) == localized_phase_events(plan, part)[0]
    True
    """
    steps = [n_steps for _, n_steps in localized_phase_steps(n_samples, max_steps)]
    return _worst_phase(steps, budget)[0]


def _worst_phase(steps, budget):
    """``(event, index)`` of the phase of ``steps`` that costs the most.

    The phases' noise multipliers come from their step counts and the
    budget only (:func:`phase_mechanism`, whose clip does not enter the
    multiplier).
    """
    multipliers = [budget.gaussian(1.0, steps=t).noise_multiplier for t in steps]
    if multipliers[0] == 0:
        return non_private_event(), 0
    losses = [t / (2.0 * sigma**2) for t, sigma in zip(steps, multipliers)]
    index = int(np.argmax(losses))
    event = noisy_sgd_event(multipliers[index], 1.0, steps[index])
    return event, index


def localized_subgradient(
    X,
    y,
    loss,
    *,
    phases,
    blocks,
    budget,
    radius,
    intercept_scaling,
    rng,
    sample_weight=None,
):
    """Run Algorithm 7 and return the last phase's last iterate.

    Parameters
    ----------
    X, y, loss, radius, intercept_scaling, rng, sample_weight
        See :func:`~._one_pass.one_pass_loop`.
    phases : list of LocalizedPhase
        From :func:`localized_plan`.
    blocks : list of ndarray
        Disjoint row indices, one block per phase.
    budget : PrivacyBudget
        The run's part of the fit's budget (each phase gets all of it, by
        parallel composition; each step ``rho / T_i`` of its zCDP ``rho``:
        :func:`phase_mechanism`).

    Returns
    -------
    w : ndarray of shape (n_features + 1,)
    """
    w_prev = np.zeros(X.shape[1] + 1)
    # The phases read disjoint blocks: parallel composition across phases,
    # accounted as the phase localized_phase_events describes.
    _, accounted = localized_phase_events(phases, budget)
    with parallel_parts(accounted) as parts:
        for i, (phase, idx) in enumerate(zip(phases, blocks)):
            with parts.part(i):
                w_prev = _phase(
                    X, y, loss, phase, idx, w_prev, budget, radius,
                    intercept_scaling, rng, sample_weight,
                )
    return w_prev


def _phase(
    X, y, loss, phase, idx, w_prev, budget, radius, intercept_scaling, rng,
    sample_weight,
):
    """One phase of Algorithm 7 on its block of rows; its last iterate."""
    # Sequential composition inside the phase: rho / T_i per step, each on
    # the whole block (read once).
    mechanism = phase_mechanism(phase, budget)
    return one_pass_loop(
        X[idx],
        y[idx],
        loss,
        # Lazily: a list of the T_i steps (about 4.5 per row in the first
        # phase) would weigh twice a sparse X of one entry per row.
        batches=itertools.repeat(None, phase.n_steps),
        rule=LocalizedStep(phase, w_prev, radius),
        clip_norm=phase.clip_norm,
        mechanism=mechanism,
        intercept_scaling=intercept_scaling,
        rng=rng,
        start=w_prev,
        sample_weight=None if sample_weight is None else sample_weight[idx],
    )
