# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Set-up of DP-SGD with balls-and-bins batches (random-allocation accounting).

The alternative to Poisson batches that ``batch_sampling="balls_and_bins"``
selects: every epoch places each record in exactly one of its ``t`` steps,
uniformly and independently (:func:`~._sampling.balls_and_bins_epoch`), and
the run is accounted as a Gaussian random allocation over its epochs
(:mod:`sklearn_dpfair.privacy._random_allocation`, Feldman and Shenfeld,
ICML 2026; Chua et al., AISTATS 2025). Everything here is public: ``t`` and
the number of epochs come from the same schedule as the Poisson fit, the
noise from the budget, the step size from the same rule.
"""

import math

from ..privacy import GaussianMechanism
from ..privacy._random_allocation import (
    calibrate_allocation_noise,
    random_allocation_event,
    require_pld_accounting,
)
from ..privacy._record import WEIGHTS_CAVEAT
from ._private_fit import DPSGDSetup, resolved_learning_rate, with_scaling
from ._schedules import resolve_epochs, sgd_schedule

__all__ = ["balls_and_bins_schedule", "balls_and_bins_setup"]

#: The record's accountant: the event is read as a PLD (pld-accounting).
ACCOUNTANT = "pld"


def balls_and_bins_schedule(n_samples, batch_size, epochs):
    """``(steps_per_epoch, epochs)`` of a balls-and-bins run, from public inputs.

    ``steps_per_epoch = round(1 / q)`` for the Poisson schedule's rate ``q``
    (:func:`~._schedules.sgd_schedule`), so the expected batch
    ``n / steps_per_epoch`` is the Poisson fit's up to rounding; the epochs
    are whole (each is one allocation), rounded up.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._balls_and_bins import balls_and_bins_schedule
    >>> balls_and_bins_schedule(100_000, "auto", 3)
    (20, 3)
    >>> balls_and_bins_schedule(10_000, 3_000, 2.5)
    (3, 3)
    """
    q, _ = sgd_schedule(n_samples, batch_size, 1)
    steps_per_epoch = max(1, round(1.0 / q))
    n_epochs = max(1, math.ceil(resolve_epochs(epochs, n_samples) - 1e-9))
    return steps_per_epoch, n_epochs


def balls_and_bins_setup(
    n_samples, n_features, n_outputs, params, budget, *, weighted, prior=None
):
    """Schedule, mechanism, step size and record of a balls-and-bins DP-SGD fit.

    The counterpart of :func:`~._private_fit.dp_sgd_setup` for
    ``params.batch_sampling == "balls_and_bins"``; it returns the same
    :class:`~._private_fit.DPSGDSetup`, with ``batches_per_epoch`` set and
    ``sampling_probability = 1 / batches_per_epoch`` (the sums are divided
    by the public expected batch ``n / t``). The record's event is a
    :class:`~sklearn_dpfair.privacy._random_allocation.RandomAllocationDpEvent`
    accounted with its PLD (accountant ``"pld"``), never a Poisson event;
    with one step per epoch, the self-composed Gaussian (dp-accounting's
    PLD, no ``pld-accounting`` needed).

    With thousands of steps per epoch the calibration costs seconds to tens
    of seconds (memoized), and below a noise multiplier of ~0.8 (large
    budgets, few epochs) it can state more noise than Poisson batches at
    rate ``1 / t`` (t = 3000, 5 epochs, epsilon = 1, delta = 1e-5: 0.725
    against 0.611); see the scale benchmark's page.

    Raises
    ------
    ImportError
        If the optional ``pld-accounting`` is missing (a private fit of more
        than one step per epoch needs it to state epsilon).
    ValueError
        With private feature scales (their zCDP releases would have to be
        composed with the allocation's PLD, which is not implemented) or a
        part of a split budget (zCDP, no amplification by sampling).
    """
    steps_per_epoch, n_epochs = balls_and_bins_schedule(
        n_samples, params.batch_size, params.epochs
    )
    if prior is not None and prior.event is not None:
        raise ValueError(
            "batch_sampling='balls_and_bins' does not compose with private "
            "feature scales; pass feature_bounds or use batch_sampling='poisson'."
        )
    if budget.rho is not None:
        raise ValueError(
            "batch_sampling='balls_and_bins' cannot run on a part of a split "
            "(zCDP) budget; use batch_sampling='poisson'."
        )
    if not budget.is_private:
        mechanism = GaussianMechanism(clip_norm=math.inf, noise_multiplier=0.0)
    else:
        if steps_per_epoch > 1:
            # One batch per epoch is the self-composed Gaussian, which
            # dp-accounting reads itself.
            require_pld_accounting()
        sigma = (
            float(budget.noise_multiplier)
            if budget.noise_multiplier is not None
            else calibrate_allocation_noise(
                float(budget.epsilon), float(budget.delta), steps_per_epoch, n_epochs
            )
        )
        mechanism = GaussianMechanism(params.clip_norm, sigma)
    q = 1.0 / steps_per_epoch
    n_steps = steps_per_epoch * n_epochs
    learning_rate = resolved_learning_rate(
        params, mechanism, q, n_samples, n_features, n_outputs
    )
    description = with_scaling(
        "DP-SGD (balls-and-bins batches: each record in exactly one of "
        f"{steps_per_epoch} steps per epoch, {n_epochs} epochs; per-example "
        "clipping; random-allocation PLD from pld-accounting, Feldman and "
        "Shenfeld 2026)"
        if steps_per_epoch > 1
        else "DP-SGD (balls-and-bins batches of one step per epoch: every "
        f"record in each of the {n_epochs} full-batch steps; per-example "
        "clipping; the self-composed Gaussian, dp-accounting PLD)",
        prior,
    )
    record = budget.account(
        mechanism,
        description=description,
        adjacency="add_remove",
        # Not a Poisson rate: the record states no sampling probability.
        sampling_probability=None,
        steps=n_steps,
        caveats=(WEIGHTS_CAVEAT,) if weighted else (),
        dp_event=random_allocation_event(
            mechanism.noise_multiplier, steps_per_epoch, n_epochs
        ),
        accountant=ACCOUNTANT,
    )
    return DPSGDSetup(
        q,
        n_steps,
        mechanism,
        learning_rate,
        record,
        n_samples=n_samples,
        n_features=n_features,
        params=params,
        budget=budget,
        scaling=prior,
        batches_per_epoch=steps_per_epoch,
    )
