# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Multi-pass DP-SGD with a privately chosen clip: ``HeavyTailDPRegressor(solver="dp-sgd")``.

Order of calls in :func:`fit_heavy_tail_dpsgd`:

1. fix the schedule (Poisson rate ``q``, steps ``T``) from ``n`` only and
   split the zCDP budget ``rho`` in a
   :class:`~sklearn_dpfair.privacy._zcdp.ZCDPLedger` *before* reading data:
   ``tuning_fraction / 2`` for each private scale (the median per-sample
   gradient norm at the public start ``w = 0``, which sets the clip, and
   the median augmented row norm, which sets the step size), the rest for
   the optimizer;
2. the two private medians (exponential mechanism; its utility has
   sensitivity ``max(q, 1 - q) <= 1`` under add/remove as under
   replace-one, so each is ``rho``-zCDP under both);
3. calibrate the DP-SGD noise multiplier numerically so that the
   *composition* of the medians' ``ZCDpEvent`` and the Poisson-subsampled
   Gaussian steps meets the (epsilon, delta) target under the RDP
   accountant (no closed form);
4. run the shared DP-SGD loop :func:`~sklearn_dpfair._solvers._sgd.noisy_sgd`
   (Poisson batches, per-example clipping, noisy sums divided by the
   expected batch size, tail averaging), then project the average on the
   public ball of radius ``radius`` (post-processing);
5. describe the run: the composed event, under add/remove adjacency.

Why multi-pass DP-SGD next to the one-pass solvers: privacy amplification
by Poisson sampling plus RDP composition over several epochs buys far less
noise per step than one-pass zCDP under replace-one adjacency, which is
what the spec's benchmark (``benchmarks/bench_heavytail.py``) measures.
The ledger's "optimizer" entry is only the *share* of the zCDP budget
``rho(epsilon, delta)`` left to it when planning: the Poisson-subsampled
Gaussian steps are not a zCDP release of that rho (their noise is calibrated
on the composed event, under RDP). So the fit reports ``rho_spent`` for the
medians only, which are zCDP, and the optimizer's own (epsilon, delta) from
its dp-accounting event (``optimizer_epsilon``); the composed event is what
is certified at (epsilon, delta).
"""

import math
from dataclasses import dataclass

import numpy as np

from ..privacy._accounting import (
    composed_event,
    epsilon_of,
    noisy_sgd_event,
    non_private_event,
    zcdp_event,
)
from ..privacy._calibration import _calibrate
from ..privacy._mechanism import GaussianMechanism
from ..privacy._record import PrivacyRecord, check_budget
from ..privacy._zcdp import ZCDP_ACCOUNTANT, ZCDPLedger
from ._mean_oracle import gradient_norms_at_zero
from ._private_quantile import private_quantile
from ._projections import project_ball
from ._sgd import noisy_sgd

__all__ = [
    "DPSGD_SCHEDULE",
    "DPSGDPlan",
    "auto_clip_factor",
    "dpsgd_plan",
    "fit_heavy_tail_dpsgd",
]


@dataclass(frozen=True)
class DPSGDSchedule:
    """Public constants of the ``"dp-sgd"`` solver (see the comments below)."""

    batch_fraction: float
    batch_min: int
    epochs: int
    clip_factor: float
    clip_snr_ref: float
    step_scale: float
    step_max: float


# Chosen on the benchmark's data-generating processes with seeds 100..102,
# disjoint from the recorded seeds 0..4 (benchmarks/bench_heavytail.py
# --seed-offset 100):
# * expected batch max(256, n / 50) and 20 epochs: larger batches and more
#   passes cost little epsilon under Poisson amplification and RDP, and
#   the tail average needs steps to converge at n = 1e4;
# * clip = private median gradient norm at w = 0 times
#   2 * max(1, f / 5000)^(1/k), f = eps n / sqrt(d + 1) (auto_clip_factor):
#   the gradients shrink as the iterate approaches w*, so twice the median
#   at w = 0 clips few rows near the optimum but cuts the heavy tail; with
#   more signal per unit of noise (large n, eps) the thesis' f^(1/k) growth
#   removes the clipping bias that skewed noise otherwise leaves. On the dev
#   seeds, against the ground-truth-tuned DP-SGD: a constant factor 3 gave
#   1.75x in geometric mean and 21x at worst (skewed noise, n = 1e5);
#   (2, 2000) 1.53x / 7.2x; (2, 5000) 1.49x / 6.7x; (3, 5000) 1.65x / 6.5x;
# * step = 0.5 / m2 where m2 = median ||[x, 1]||^2 / (d + 1), the per
#   coordinate second moment, i.e. half the inverse curvature of the
#   squared loss for roughly isotropic features, capped at 1.
DPSGD_SCHEDULE = DPSGDSchedule(
    batch_fraction=0.02,
    batch_min=256,
    epochs=20,
    clip_factor=2.0,
    clip_snr_ref=5000.0,
    step_scale=0.5,
    step_max=1.0,
)


@dataclass(frozen=True)
class DPSGDPlan:
    """Public schedule of a run: Poisson rate and number of steps."""

    sampling_probability: float
    n_steps: int


def dpsgd_plan(n_samples, max_iter="auto", schedule=DPSGD_SCHEDULE):
    """Poisson rate and number of steps from ``n_samples`` and ``max_iter`` only.

    Parameters
    ----------
    n_samples : int
        Number of rows (public).
    max_iter : int or "auto", default="auto"
        Number of steps; "auto" takes ``schedule.epochs`` expected passes.
    schedule : DPSGDSchedule, default=DPSGD_SCHEDULE
        Public constants.

    Returns
    -------
    plan : DPSGDPlan

    Examples
    --------
    >>> from sklearn_dpfair._solvers._heavy_tail_dpsgd import dpsgd_plan
    >>> dpsgd_plan(100_000)
    DPSGDPlan(sampling_probability=0.02, n_steps=1000)
    """
    batch = max(schedule.batch_min, schedule.batch_fraction * n_samples)
    q = min(1.0, batch / n_samples)
    if max_iter == "auto":
        n_steps = max(1, math.ceil(schedule.epochs / q - 1e-9))
    else:
        n_steps = int(max_iter)
    return DPSGDPlan(sampling_probability=q, n_steps=n_steps)


def auto_clip_factor(
    epsilon, n_samples, n_params, moment_order, schedule=DPSGD_SCHEDULE
):
    """Multiple of the private median gradient norm used as the clip.

    ``clip_factor * max(1, f / clip_snr_ref) ** (1 / k)`` with the
    signal-to-noise factor ``f = epsilon n / sqrt(n_params)``: the thesis'
    clip rule (chapter 4) grows like ``f ** (1 / k)`` because the more
    signal there is per unit of noise, the less clipping bias is worth
    trading for less noise.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._heavy_tail_dpsgd import auto_clip_factor
    >>> auto_clip_factor(1.0, 10_000, 6, 2.0) >= 1.0
    True
    """
    snr = epsilon * n_samples / math.sqrt(n_params)
    growth = max(1.0, snr / schedule.clip_snr_ref) ** (1.0 / moment_order)
    return schedule.clip_factor * growth


@dataclass
class DPSGDFit:
    """What :func:`fit_heavy_tail_dpsgd` returns (fields as ``HeavyTailFit``)."""

    coef: np.ndarray
    intercept: float
    n_iter: int
    batch_size: float
    clip_threshold: float
    noise_std: float
    learning_rate: float
    rho_spent: dict
    record: PrivacyRecord
    optimizer_epsilon: float


def _private_scales(X, y, loss, s, ledger, needs_clip, rng):
    """The private medians: gradient norm at w = 0 and squared row norm.

    A squared row norm that overflows is ``inf``, and a gradient norm is
    computed without ``0 * inf`` (:func:`gradient_norms_at_zero`); the
    private quantile counts non-finite values as above its grid.
    """
    row_sq = np.einsum("ij,ij->i", X, X) + s**2
    clip_median = None
    if needs_clip:
        clip_median = private_quantile(
            gradient_norms_at_zero(X, y, loss, s),
            0.5,
            ledger.spent["clip_median"],
            rng,
        )
    row_median = private_quantile(row_sq, 0.5, ledger.spent["row_norm_median"], rng)
    return clip_median, row_median


def _non_private_step(X, s):
    """Half the inverse top eigenvalue of the rows' second moment (epsilon = inf)."""
    Xt = np.hstack([X, np.full((X.shape[0], 1), s)]) if s else X
    top = np.linalg.eigvalsh(Xt.T @ Xt / X.shape[0])[-1]
    return 1.0 / max(top, np.finfo(float).tiny)


def fit_heavy_tail_dpsgd(
    X,
    y,
    loss,
    *,
    rho,
    delta,
    epsilon_target,
    config,
    rng,
    l2=0.0,
    caveats=(),
    schedule=DPSGD_SCHEDULE,
):
    """Fit with multi-pass DP-SGD and a private clip (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        Pointwise loss with ``raw_gradient``.
    rho : float
        Total zCDP budget; ``inf`` is the non-private limit (no clipping, no
        noise, exact step size).
    delta : float
        Delta of the guarantee.
    epsilon_target : float or None
        Target epsilon; None means ``epsilon_of(rho-zCDP, delta)``.
    config : HeavyTailConfig
        Public hyperparameters (clip, radius, max_iter, tuning_fraction).
    rng : numpy.random.Generator
    l2 : float, default=0.0
        Ridge strength on the coefficients (data-independent).
    caveats : tuple of str, default=()
    schedule : DPSGDSchedule, default=DPSGD_SCHEDULE
        Public constants.

    Returns
    -------
    fit : DPSGDFit
    """
    # Floating-point events of one record (a huge row's prediction or norm
    # overflowing) are handled explicitly; they must not surface as
    # data-dependent warnings.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return _fit_heavy_tail_dpsgd(
            X, y, loss, rho, delta, epsilon_target, config, rng, l2, caveats, schedule
        )


def _fit_heavy_tail_dpsgd(
    X, y, loss, rho, delta, epsilon_target, config, rng, l2, caveats, schedule
):
    n, n_features = X.shape
    s = 1.0 if config.fit_intercept else 0.0
    private = not math.isinf(rho)
    plan = dpsgd_plan(n, config.max_iter, schedule)
    q, n_steps = plan.sampling_probability, plan.n_steps
    needs_clip = config.clip_threshold == "auto"
    if private and config.clip_threshold == "theory":
        raise ValueError(
            "clip_threshold='theory' belongs to the one-pass solvers; use "
            "'auto' or a float with solver='dp-sgd'."
        )

    # 1. Budget, planned before any data access.
    ledger = ZCDPLedger(rho)
    if private:
        if config.tuning_fraction <= 0:
            raise ValueError(
                "tuning_fraction must be positive with solver='dp-sgd': the "
                "step size (and the 'auto' clip) come from private medians."
            )
        n_estimates = 2 if needs_clip else 1
        share = config.tuning_fraction * rho / n_estimates
        if needs_clip:
            ledger.allocate("clip_median", share)
        ledger.allocate("row_norm_median", share)
    ledger.allocate_rest("optimizer")

    # 2. Private scales; 3. noise calibrated on the composed event.
    if private:
        tuning = composed_event([zcdp_event(r) for r in ledger.spent.values()][:-1])
        target = epsilon_target
        if target is None:
            target = epsilon_of(zcdp_event(rho), delta, ZCDP_ACCOUNTANT)

        def make_event(sigma):
            return composed_event([tuning, noisy_sgd_event(sigma, q, n_steps)])

        sigma = _calibrate(make_event, target, delta, ZCDP_ACCOUNTANT)
        clip_median, row_median = _private_scales(
            X, y, loss, s, ledger, needs_clip, rng
        )
        if needs_clip:
            clip = clip_median * auto_clip_factor(
                target, n, n_features + 1, config.moment_order, schedule
            )
        else:
            clip = float(config.clip_threshold)
        per_coordinate = row_median / (n_features + s**2)
        learning_rate = min(schedule.step_max, schedule.step_scale / per_coordinate)
        sgd_event = noisy_sgd_event(sigma, q, n_steps)
        event = make_event(sigma)
    else:
        target = math.inf
        sigma, clip = 0.0, math.inf
        if not needs_clip and config.clip_threshold != "theory":
            clip = float(config.clip_threshold)
        learning_rate = _non_private_step(X, s)
        event = sgd_event = non_private_event()

    result = noisy_sgd(
        X,
        y,
        loss,
        mechanism=GaussianMechanism(clip_norm=clip, noise_multiplier=sigma),
        sampling_probability=q,
        n_steps=n_steps,
        learning_rate=learning_rate,
        alpha=l2,
        intercept_scaling=s,
        rng=rng,
    )
    # Projection on the public ball: post-processing, no privacy cost.
    coef_full = np.append(result.coef[:, 0], result.intercept[0] / s if s else 0.0)
    coef_full = project_ball(coef_full, config.radius)

    # Only the medians are zCDP releases; the optimizer's entry of the
    # ledger was a planning share, not a zCDP bound of the subsampled steps.
    tuning_rho = {k: v for k, v in ledger.spent.items() if k != "optimizer"}
    record = PrivacyRecord.from_event(
        event,
        delta=delta,
        accountant=ZCDP_ACCOUNTANT,
        adjacency="add_remove",
        mechanism=(
            "DP-SGD (Poisson-subsampled Gaussian, per-example clipping; the "
            "recorded noise multiplier, clip, sampling rate and steps are its "
            "event's, accounted under RDP, not as zCDP) composed with private "
            "medians (exponential mechanism, rho-zCDP: "
            + (
                ", ".join(f"{k}={v:.4g}" for k, v in tuning_rho.items())
                or "none"
            )
            + ") setting the clip and the step size"
        ),
        noise_multiplier=sigma,
        clip_norm=clip,
        sampling_probability=q,
        steps=n_steps,
        caveats=tuple(caveats),
    )
    check_budget(record, target, calibrated=True)
    return DPSGDFit(
        coef=coef_full[:-1],
        intercept=float(s * coef_full[-1]),
        n_iter=n_steps,
        batch_size=q * n,
        clip_threshold=float(clip),
        noise_std=float(sigma * clip / (q * n)) if private else 0.0,
        learning_rate=float(learning_rate),
        rho_spent=tuning_rho,
        record=record,
        optimizer_epsilon=epsilon_of(sgd_event, delta, ZCDP_ACCOUNTANT),
    )
