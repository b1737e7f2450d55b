# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Budget, tune, plan, solve, describe: the private fit of ``HeavyTailDPRegressor``.

``solver="dp-sgd"`` (and ``"auto"`` without an l1/elastic-net penalty) is
handed to the multi-pass DP-SGD of :mod:`._dpsgd`, accounted
under add/remove adjacency. Both obtain their set-up from
:func:`heavy_tail_setup`, from public quantities only: the estimator's
privacy plan and its fit read the same :class:`HeavyTailSetup`. Order of
calls for the one-pass solvers in :func:`fit_heavy_tail`:

1. (the set-up) split the (epsilon, delta) budget with
   :meth:`~sklearn_dpfair.privacy.PrivacyBudget.split` *before* reading
   data: ``tuning_fraction / 2`` for each private auto estimate that is
   needed (the clip scale, the curvature), the rest for the optimizer; the
   parts compose in zCDP, the accountant's unit;
2. private auto estimates: the median per-sample gradient norm at the
   public start ``w_0 = 0`` (exponential mechanism on the bins of the
   public edges ``ROW_NORM_EDGES``, 1e-8 .. 1e40 with open outer bins, the
   "dp-sgd" solver's: :func:`~._private_quantile.private_scale_median`)
   and the extreme eigenvalues of the rows' second moment (Gaussian
   mechanism, its row clip from a median on the same bins); a median in
   the top bin, beyond 1e40, bounds no clip or step size, and the fit then
   releases the zero model with a warning (:func:`_beyond_edges_fit`);
3. resolve the solver, the number of steps ``T``, the batch size and the
   clip threshold ``C`` from public quantities and those estimates only;
4. run the one-pass solver on disjoint batches (MeanOracle1 per query);
5. describe the run: one ``ZCDpEvent`` per private estimate and the
   optimizer's own event, composed. The optimizer's queries read disjoint
   rows (parallel composition), so its event is what one record goes
   through: one Gaussian release of noise multiplier ``1 / sqrt(2 rho)``
   (at sensitivity ``2 C``, ``rho`` the optimizer part's) for "sgd",
   "acsa" and "prox"; the ``T_i``
   self-composed Gaussian steps of one phase for "localized". The record's
   ``noise_multiplier``, ``clip_norm`` and ``steps`` are that event's;
   :meth:`~sklearn_dpfair.privacy.PrivacyBudget.account` builds it and
   checks the (epsilon, delta) target.

Each one-pass solver is a row of :data:`ONE_PASS_SOLVERS`: what curvature it
needs, how many extra batches it reads, its number of steps and its update
rule for :func:`~._one_pass.one_pass_loop`.

The one-pass solvers are stated under replace-one adjacency (``n`` is public).

Whatever one record holds, every term that enters a noisy sum is finite and
within its clip bound (see :mod:`._mean_oracle`, :mod:`._private_quantile`
and :mod:`._private_curvature`), and no exception or warning after input
validation depends on the data: floating-point warnings are silenced for the
whole fit, since their results are handled explicitly.
"""

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ...exceptions import PrivacyAccountingError, PrivacyBudgetError
from ...privacy import PrivacyBudget, fit_weights
from ...privacy._accounting import (
    composed_event,
    epsilon_of,
    non_private_event,
    zcdp_event,
)
from ...privacy._exponential import ExponentialMechanism
from ...privacy._quantile import em_epsilon
from ...privacy._releases import expected_releases, forgo_release, parallel_parts
from ...privacy._zcdp import ZCDP_ACCOUNTANT
from ...utils._array_api import NUMPY_BACKEND
from ...utils._numeric import SQRT_SMALLEST_NORMAL
from .._non_private import minimize_regression, non_private_record
from ._disjoint_batches import disjoint_batches, disjoint_blocks
from ._dpsgd import DPSGDBudgetPlan, fit_heavy_tail_dpsgd, plan_dpsgd
from ._localized import (
    localized_event,
    localized_phase_events,
    localized_phase_steps,
    localized_plan,
    localized_subgradient,
    phase_mechanism,
    phase_noise_multiplier,
)
from ._mean_oracle import gradient_norms_at_zero
from ._one_pass import AcceleratedStep, ProximalStep, StichAveraging, one_pass_loop
from ._private_curvature import CURVATURE_SCALE_SHARE, private_curvature
from ._private_quantile import ROW_NORM_EDGES, private_scale_median
from ._projections import project_ball
from ._result import HeavyTailFit
from ._schedules import (
    acsa_saturation_eps,
    acsa_step_size,
    acsa_steps,
    clip_auto,
    clip_theory,
    mean_oracle_sigma,
    prox_steps,
    sgd_steps,
    sgd_steps_practical,
    snr_factor,
    step_cap,
    stich_schedule,
    zcdp_eps,
)
from ._smoothed_loss import smoothed_loss

__all__ = [
    "ONE_PASS_SOLVERS",
    "RHO_RANGE",
    "HeavyTailConfig",
    "HeavyTailFit",
    "HeavyTailSetup",
    "fit_heavy_tail",
    "heavy_tail_setup",
    "runs_dpsgd",
    "solver_runs_dpsgd",
    "zcdp_budget",
]

# Huber's population Hessian is E[1{|res| <= t} x~ x~^T]: its top eigenvalue
# is at most that of E x~ x~^T, its bottom one is that of the non-saturated
# rows only. 0.5 is a heuristic fraction of non-saturated residuals.
_CURVATURE_FACTORS = {"squared_error": (1.0, 1.0), "huber": (1.0, 0.5)}
_SMOOTH_LOSSES = frozenset(_CURVATURE_FACTORS)
# The piecewise-linear losses: with smoothness="auto" the one-pass solvers
# run them smoothed over the public width (_smoothed_loss), whose curvature
# is a public factor times lambda_max(E x~ x~^T).
_PIECEWISE_LINEAR_LOSSES = frozenset({"absolute_error", "quantile"})

_LOCALIZED_NAME = "localized noisy clipped subgradient method (Lowy's thesis, Alg. 7)"
# Algorithm 7 halves the rows at each of its log2(n) phases: two phases at
# least.
_LOCALIZED_MIN_SAMPLES = 4

# Solvers that ``solver="auto"`` never picks over "dp-sgd" unless a penalty
# needs them: multi-pass DP-SGD with the private clip beat the one-pass
# solvers in every cell of the benchmark grid on the dev seeds (see
# docs/benchmarks/heavytail.rst).
_NON_SMOOTH_PENALTIES = frozenset({"l1", "elasticnet"})


@dataclass(frozen=True)
class HeavyTailConfig:
    """The public hyperparameters of a heavy-tail fit (see ``HeavyTailDPRegressor``).

    The privacy budget is not among them: it travels in the fit's
    :class:`~sklearn_dpfair.privacy.PrivacyBudget` only.
    """

    loss_name: str
    solver: str
    clip_norm: object
    radius: float | None
    moment_order: float
    moment_bound: float | None
    clip_ref: float
    smoothness: object
    strong_convexity: object
    max_iter: object
    tuning_fraction: float
    mode: str
    penalty: str | None
    alpha: float
    l1_ratio: float
    fit_intercept: bool
    feature_bounds: object = "auto"
    #: Public half-width ``h`` (units of ``y``) of the smoothing of the
    #: absolute and quantile losses (:mod:`._smoothed_loss`).
    smoothing_width: float = 1.0


# The one-pass solvers project every iterate on a public ball and use its
# diameter in their step formulas: without a declared radius they take this
# one, in the units of the data.
ONE_PASS_RADIUS = 10.0


@dataclass(frozen=True)
class _Problem:
    """Public quantities a one-pass solver's schedule and rule read."""

    config: HeavyTailConfig
    n: int
    d: int
    eps: float
    beta: float | None
    mu: float | None
    scale: float


@dataclass(frozen=True)
class OnePassSolver:
    """One row of the one-pass solver table.

    ``n_steps(problem)`` is the uncapped number of queries ``T``;
    ``rule(problem, n_steps, clip, noise_std)`` the update rule of
    :func:`~._one_pass.one_pass_loop`; ``extra_batches`` the batches read
    beyond ``T`` (Algorithm 27 takes ``T + 1`` steps).
    """

    description: str
    needs_smoothness: bool
    needs_strong_convexity: bool
    extra_batches: int
    n_steps: Callable
    rule: Callable


def _sgd_steps(p):
    diameter = 2.0 * p.config.radius
    if p.config.mode == "theory":
        k = p.config.moment_order
        return sgd_steps(p.n, p.d, p.eps, k, p.mu, p.beta, diameter, p.scale)
    return sgd_steps_practical(p.n, p.d, p.eps, p.mu, p.beta, p.config.radius, p.scale)


def _sgd_rule(p, n_steps, clip, noise_std):
    step_sizes, weights = stich_schedule(n_steps, p.mu, p.beta)
    l2 = _penalty_parts(p.config)[1]
    return StichAveraging(step_sizes, weights, l2, p.config.radius)


def _acsa_steps(p):
    k, diameter = p.config.moment_order, 2.0 * p.config.radius
    return acsa_steps(p.n, p.d, p.eps, k, p.beta, diameter, p.scale)


def _acsa_rule(p, n_steps, clip, noise_std):
    diameter = 2.0 * p.config.radius
    eta = _acsa_eta(
        p.config, p.n, p.d, n_steps, p.beta, diameter, clip, noise_std, p.scale
    )
    return AcceleratedStep(eta, _penalty_parts(p.config)[1], p.config.radius)


def _prox_rule(p, n_steps, clip, noise_std):
    l1, l2 = _penalty_parts(p.config)
    # The piecewise-linear losses' mu is floored, not known: Algorithm 29's
    # last iterate has no error bound then (Prop. 177's 4 Sigma^2 / mu), and
    # the average of the last half of the iterates (post-processing) keeps
    # their batch noise from growing with T (see ProximalStep).
    average_from = None
    if p.config.loss_name in _PIECEWISE_LINEAR_LOSSES:
        average_from = n_steps // 2 + 1
    return ProximalStep(0.5 / p.beta, l1, l2, p.config.radius, average_from)


#: The one-pass solvers of Lowy's thesis, chapter 4, by name.
ONE_PASS_SOLVERS = {
    "sgd": OnePassSolver(
        "noisy clipped SGD (Lowy's thesis, Alg. 27)",
        True, True, 1, _sgd_steps, _sgd_rule,
    ),
    "acsa": OnePassSolver(
        "noisy clipped AC-SA (Lowy's thesis, Alg. 8)",
        True, False, 0, _acsa_steps, _acsa_rule,
    ),
    "prox": OnePassSolver(
        "noisy clipped proximal SGD (Lowy's thesis, Alg. 29)",
        True, True, 0, lambda p: prox_steps(p.n, p.mu, p.beta), _prox_rule,
    ),
}


def _penalty_parts(config):
    """``(l1, l2)`` strengths of the penalty on the coefficients."""
    if config.penalty is None:
        return 0.0, 0.0
    if config.penalty == "l2":
        return 0.0, config.alpha
    if config.penalty == "l1":
        return config.alpha, 0.0
    return config.alpha * config.l1_ratio, config.alpha * (1.0 - config.l1_ratio)


def _curvature_needs(config):
    """Which of smoothness / strong convexity the requested solver uses."""
    if config.solver == "localized":
        return False, False
    row = ONE_PASS_SOLVERS.get(config.solver)
    if row is None:
        # "auto" gets here only with an l1 or elastic-net penalty (else it
        # runs DP-SGD, planned apart), where it runs "prox".
        row = ONE_PASS_SOLVERS["prox"]
    return row.needs_smoothness, row.needs_strong_convexity


def smooths_loss(config):
    """Whether a one-pass fit runs the loss smoothed over ``smoothing_width``.

    The absolute and quantile losses have no public smoothness: with
    ``smoothness="auto"`` a solver that needs it ("sgd", "acsa", "prox")
    runs them smoothed (:mod:`._smoothed_loss`), whose smoothness is a
    public factor times the rows' largest second moment.
    """
    want_beta, _ = _curvature_needs(config)
    return bool(
        want_beta
        and config.smoothness == "auto"
        and config.loss_name in _PIECEWISE_LINEAR_LOSSES
    )


def _curvature_factors(config):
    """``(c_beta, c_mu)``: the risk's curvature per unit of ``E x~ x~^T``.

    The smoothed absolute and quantile losses: ``(a + b) / (2 h)`` (their
    largest curvature) and 0 (their smallest is the unknown noise density;
    the L2 penalty is added by :func:`_resolve_curvature`).
    """
    if config.loss_name in _CURVATURE_FACTORS:
        return _CURVATURE_FACTORS[config.loss_name]
    slopes = 2.0 if config.loss_name == "absolute_error" else 1.0
    return slopes / (2.0 * float(config.smoothing_width)), 0.0


def _plan_budget(config, tuning_share):
    """The auto estimates' shares of the budget, and which estimates run.

    Returns ``(shares, needs_median, needs_curvature)``: ``tuning_share``
    for the clip scale's median, the same split between the curvature's
    row-norm median and its noisy matrix; the optimizer's rest is added by
    the caller.
    """
    want_beta, want_mu = _curvature_needs(config)
    if config.loss_name in _SMOOTH_LOSSES:
        needs_curvature = (want_beta and config.smoothness == "auto") or (
            want_mu and config.strong_convexity == "auto"
        )
    else:
        # The smoothed absolute or quantile loss: its smoothness needs the
        # private lambda_max; its "auto" strong convexity is the penalty's
        # (public), so a declared smoothness needs no estimate.
        needs_curvature = smooths_loss(config)
    needs_median = config.clip_norm == "auto"
    if (needs_median or needs_curvature) and config.tuning_fraction <= 0:
        raise ValueError(
            "tuning_fraction must be positive when clip_norm, smoothness "
            "or strong_convexity is 'auto': each private estimate needs budget."
        )
    shares = {}
    if needs_median:
        shares["clip_median"] = tuning_share
    if needs_curvature:
        shares["curvature_scale"] = CURVATURE_SCALE_SHARE * tuning_share
        shares["curvature_matrix"] = (1 - CURVATURE_SCALE_SHARE) * tuning_share
    return shares, needs_median, needs_curvature


def _resolve_curvature(config, estimate):
    """User-given or private ``(beta, mu)``, with the ridge part added."""
    _, l2 = _penalty_parts(config)
    beta = config.smoothness if config.smoothness != "auto" else None
    mu = config.strong_convexity if config.strong_convexity != "auto" else None
    if mu is None and config.loss_name in _PIECEWISE_LINEAR_LOSSES:
        # No public (or estimable) curvature from below: the noise density
        # at the quantile. The penalty's is added below.
        mu = 0.0
    if estimate is not None:
        beta = estimate.smoothness if beta is None else beta
        mu = estimate.strong_convexity if mu is None else mu
    if beta is not None:
        beta = max(float(beta), np.finfo(float).tiny) + l2
    if mu is not None:
        mu = float(mu) + l2
        if beta is not None:
            beta = max(beta, mu)
    return beta, mu


# Squares of the clip, of its noise and of the gradient scale enter the
# step formulas (AC-SA's noise second moment, the step counts' r^2): each
# of these values must lie between the square roots of the smallest normal
# and of the largest float (about 1.5e-154 and 1.3e154).
_SQRT_MAX = math.sqrt(np.finfo(np.float64).max)
_SQRT_TINY = SQRT_SMALLEST_NORMAL
_TINY = float(np.finfo(np.float64).smallest_normal)


def _gradient_scale(config):
    """``(name, value)`` of the parameter the one-pass fit's gradient scale is.

    The scale standing for ``r_k`` in the step formulas, as
    :func:`fit_heavy_tail` picks it; ``(None, None)`` when it is the
    private median (the midpoint of a bin of the public edges
    ``ROW_NORM_EDGES``, in ``[1e-8, 1e40)``, within range).
    """
    if config.mode == "theory" or config.clip_norm == "theory":
        return "moment_bound", float(config.moment_bound)
    if config.clip_norm == "auto":
        return None, None
    if config.moment_bound is not None:
        return "moment_bound", float(config.moment_bound)
    return "clip_norm", float(config.clip_norm)


def _clip_range(config, n, d, eps):
    """Public bounds ``(low, high)`` of every clip a one-pass fit can run.

    A float clip is itself; the thesis' rule ``moment_bound f^(1/k)``
    (Thms 173/176/63/163) takes its signal-to-noise factor ``f`` between
    ``eps / sqrt(d max(1, ln n))`` (a localized phase of one row, or ``n``
    queries) and ``eps n / sqrt(d)`` (one query on all rows); the auto rule
    the private median (the midpoint of a finite bin of ``ROW_NORM_EDGES``,
    from 1e-8, the bottom bin's edge, to below 1e40: a median in the top bin
    runs no clip, see :func:`_beyond_edges_fit`) times
    ``max(1, f / clip_ref)^(1/k)``.
    """
    k = config.moment_order
    snr_low = eps / math.sqrt(d * max(1.0, math.log(n)))
    snr_high = eps * n / math.sqrt(d)
    if config.clip_norm == "theory":
        r = float(config.moment_bound)
        return r * min(1.0, snr_low) ** (1.0 / k), r * max(1.0, snr_high) ** (1.0 / k)
    if config.clip_norm == "auto":
        growth = max(1.0, snr_high / config.clip_ref) ** (1.0 / k)
        return float(ROW_NORM_EDGES[1]), float(ROW_NORM_EDGES[-2]) * growth
    clip = float(config.clip_norm)
    return clip, clip


def _within_square_range(value):
    # Whether value**2 is a normal float: compared with the square roots,
    # since a Python float square that overflows raises.
    return _SQRT_TINY <= value <= _SQRT_MAX


def check_public_magnitudes(config, n_samples, n_features, solver, budget):
    """Refuse ``clip_norm``, ``moment_bound`` values a one-pass fit overflows on.

    From public inputs only (the parameters, the counts and the
    optimizer's part of the budget), so that the fit and its privacy plan
    refuse alike, before any row is read, naming the parameter, instead of
    an ``OverflowError`` or ``ZeroDivisionError`` in a step formula, a NaN
    model, or an error raised after the private estimates. Checked: the
    gradient scale ``r`` and the largest clip ``C`` with their squares in
    float64's normal range; the noise standard deviation ``2 C sigma`` of
    the optimizer's Gaussian steps (``sigma = sqrt(T_i) / eps``) with
    ``d`` times its square finite (AC-SA's noise second moment); in theory
    mode AC-SA's bias bound ``r^k / ((k - 1) C^(k - 1))`` (Thm 173) with a
    finite square; and every step size of Algorithm 7's phases,
    ``eta / 4^i``, a normal float.

    Parameters
    ----------
    config : HeavyTailConfig
    n_samples, n_features : int
        Public counts.
    solver : str
        The one-pass solver the fit runs.
    budget : PrivacyBudget
        The optimizer's part of the fit's budget.

    Raises
    ------
    ValueError
        Naming ``clip_norm`` or ``moment_bound`` (and ``radius`` where
        Algorithm 7's steps leave the range).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._fit import (
    ...     HeavyTailConfig, check_public_magnitudes)
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> config = HeavyTailConfig("squared_error", "sgd", 1e300, None, 2.0, None,
    ...                          300.0, "auto", "auto", "auto", 0.1, "practical",
    ...                          None, 0.0, 0.0, True)
    >>> part = PrivacyBudget(1.0, 1e-5).split({"optimizer": 1.0})["optimizer"]
    >>> check_public_magnitudes(config, 1000, 2, "sgd", part)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: clip_norm is too large: ...
    """
    n = n_samples
    d = n_features + int(config.fit_intercept)
    k = config.moment_order
    eps = zcdp_eps(budget.rho)
    advice = (
        "Use a value of the size of the per-example gradient norms (in the "
        "units of the data)."
    )
    low, high = _clip_range(config, n, d, eps)
    steps = 1
    if solver == "localized":
        steps = max(T for _, T in localized_phase_steps(n, _max_steps(config)))
    noise = 2.0 * high * (math.sqrt(steps) / eps)
    if config.clip_norm != "auto" and not (
        high <= _SQRT_MAX and math.isfinite(d * noise * noise)
    ):
        described = (
            f"clip_norm={high:g}"
            if config.clip_norm != "theory"
            else "clip_norm='theory' (up to moment_bound * f^(1/k) = "
            f"{high:g}, moment_bound={float(config.moment_bound):g})"
        )
        raise ValueError(
            "clip_norm is too large: the noise standard deviation 2 C sigma "
            f"of the optimizer's steps (noise multiplier sigma = "
            f"{math.sqrt(steps) / eps:.4g}) or the clip C squared overflows "
            f"float64 for {described}. {advice}"
        )
    name, scale = _gradient_scale(config)
    if name is not None and not _within_square_range(scale):
        size = "large" if scale > 1.0 else "small"
        raise ValueError(
            f"{name} is too {size}: the one-pass solvers' step formulas use "
            f"the gradient scale r = {name} through r**2, which leaves "
            f"float64's normal range for {name}={scale:g}. {advice}"
        )
    if config.mode == "theory" and solver == "acsa":
        r = float(config.moment_bound)
        # log of r^k / ((k - 1) C^(k - 1)) at the smallest clip: its square
        # (and r^k itself) must be finite.
        log_bias = (
            k * math.log(r) - math.log(k - 1.0) - (k - 1.0) * math.log(low)
            if low > 0
            else math.inf
        )
        if not (
            k * math.log(r) < math.log(_SQRT_MAX) * 2.0
            and log_bias < math.log(_SQRT_MAX)
        ):
            raise ValueError(
                "moment_bound is too large for the clip: AC-SA's theory-mode "
                "bias bound r^k / ((k - 1) C^(k - 1)) (Thm 173) squared "
                f"overflows float64 for moment_bound={r:g}, "
                f"moment_order={k:g} and a clip down to {low:g}. {advice}"
            )
    if solver == "localized" and config.clip_norm != "auto":
        _check_localized_steps(config, n, d, eps, scale, advice)


def _check_localized_steps(config, n, d, eps, scale, advice):
    """Refuse parameters that make a step of Algorithm 7 zero or not normal.

    Its phases' constants (:func:`~._localized.localized_plan`) follow from
    public inputs when the clip is not the private median: the step
    ``eta_i = eta / 4^i`` (``eta`` proportional to ``D / C`` and
    ``D / r``) must be a normal float, its regularization
    ``1 / (eta_i n_i)`` and localization radius finite.
    """
    fixed_steps = _max_steps(config)
    n_used = 2 ** math.floor(math.log2(n))
    log_n = math.log(n_used)
    clips = [
        _clip_for(config, eps * n_i / math.sqrt(d * log_n), None)
        for n_i, _ in localized_phase_steps(n, fixed_steps)
    ]
    radius = config.radius if config.radius is not None else ONE_PASS_RADIUS
    try:
        plan = localized_plan(
            n_used, d, eps, config.moment_order, diameter=2.0 * radius,
            scale=scale, clips=clips, max_steps=fixed_steps,
        )
    except (OverflowError, ZeroDivisionError):
        plan = None
    if plan is None or not all(
        _TINY <= phase.step_size < math.inf
        and math.isfinite(phase.regularization)
        and math.isfinite(phase.local_radius)
        for phase in plan
    ):
        bound = (
            "" if config.moment_bound is None
            else f", moment_bound={float(config.moment_bound):g}"
        )
        raise ValueError(
            "clip_norm, moment_bound or radius out of range for "
            "solver='localized': the step size eta / 4^i of its phases "
            "(Lowy's thesis, Alg. 7) leaves float64's normal range for "
            f"clip_norm={config.clip_norm!r}{bound}, radius={radius:g}. "
            f"{advice}"
        )


def _clip_for(config, snr, scale_median):
    k = config.moment_order
    if config.clip_norm == "auto":
        return clip_auto(scale_median, snr, k, config.clip_ref)
    if config.clip_norm == "theory":
        return clip_theory(config.moment_bound, snr, k)
    return float(config.clip_norm)


def _cap_steps(n_steps, n, d, eps, config, n_extra_batches):
    """Apply the practical step cap (or only feasibility in theory mode)."""
    if config.mode == "practical":
        limit = step_cap(n, d, eps) + 1 - n_extra_batches
    else:
        limit = n - n_extra_batches
    return int(max(1, min(n_steps, limit)))


def solver_runs_dpsgd(solver, penalty):
    """Whether ``solver`` runs multi-pass DP-SGD ("auto" with a smooth ``penalty``).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._fit import solver_runs_dpsgd
    >>> solver_runs_dpsgd("auto", None), solver_runs_dpsgd("auto", "l1")
    (True, False)
    """
    return solver == "dp-sgd" or (
        solver == "auto" and penalty not in _NON_SMOOTH_PENALTIES
    )


def runs_dpsgd(config):
    """Whether ``config`` runs multi-pass DP-SGD (:func:`solver_runs_dpsgd`)."""
    return solver_runs_dpsgd(config.solver, config.penalty)


#: The finite zCDP budgets ``zcdp_budget`` takes (the deprecated ``rho=``).
#: Far outside it the quantities derived from rho leave float64: a part's
#: noise multiplier ``1 / sqrt(2 rho_part)`` (Bun and Steinke, Prop. 1.6)
#: has a square that overflows below rho ~ 1e-308, and dp-accounting's RDP
#: conversion of ``ZCDpEvent(rho)`` (``rho * alpha`` over its orders)
#: overflows above rho ~ 1e305. 1e-100 is epsilon ~ 1e-95 and 1e38 epsilon
#: ~ 2e37, both far beyond any meaningful budget, with every share of a
#: split still a normal float; 1e38 is below float32's largest value, so a
#: float32 rho is compared with it without an overflowing cast.
RHO_RANGE = (1e-100, 1e38)


def zcdp_budget(rho, delta, *, caveats=()):
    """The (epsilon, delta) budget that ``rho``-zCDP certifies, split in ``rho``.

    For the deprecated ``rho=`` of ``HeavyTailDPRegressor``: its epsilon is
    what dp-accounting's RDP accountant gives ``ZCDpEvent(rho)`` at
    ``delta``, and :meth:`~sklearn_dpfair.privacy.PrivacyBudget.split`
    hands out shares of ``rho`` itself (its accountant's unit), so a fit
    planned in ``rho`` is unchanged. ``rho = inf`` is the non-private
    budget; a finite ``rho`` outside :data:`RHO_RANGE` raises ValueError.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._fit import zcdp_budget
    >>> budget = zcdp_budget(0.05, 1e-5)
    >>> budget.split({"optimizer": 1.0})["optimizer"].rho
    0.05
    """
    if not (math.isinf(rho) or RHO_RANGE[0] <= rho <= RHO_RANGE[1]):
        raise ValueError(
            f"rho must be in [{RHO_RANGE[0]:g}, {RHO_RANGE[1]:g}] or inf, "
            f"got {rho!r}: the noise multipliers and the epsilon derived from "
            "it overflow float64 beyond that range."
        )
    if math.isinf(rho):
        return PrivacyBudget(
            math.inf, delta, ZCDP_ACCOUNTANT, caveats=tuple(caveats), rho=math.inf
        )
    epsilon = epsilon_of(zcdp_event(rho), delta, ZCDP_ACCOUNTANT)
    return PrivacyBudget(
        epsilon, delta, ZCDP_ACCOUNTANT, caveats=tuple(caveats), rho=float(rho)
    )


@dataclass(frozen=True)
class HeavyTailSetup:
    """Everything a heavy-tail fit fixes before it reads the data.

    Made by :func:`heavy_tail_setup` from public quantities only; the fit
    runs it and the estimator's privacy plan reads its ``event``.

    ``dpsgd`` is the plan of the "dp-sgd" solver (None for the one-pass
    solvers); ``parts`` the one-pass solvers' sub-budgets (the private
    estimates' and the optimizer's, from
    :meth:`~sklearn_dpfair.privacy.PrivacyBudget.split`; empty without
    privacy); ``event`` the ``DpEvent`` the fit will record (for the
    localized solver, from the phases' public step counts), and
    ``optimizer_event`` its one-pass optimizer's part (None without
    privacy and for "dp-sgd").
    """

    config: HeavyTailConfig
    budget: PrivacyBudget
    solver: str
    adjacency: str
    event: object
    dpsgd: DPSGDBudgetPlan | None = None
    parts: dict = field(default_factory=dict)
    needs_median: bool = False
    needs_curvature: bool = False
    optimizer_event: object = None

    @property
    def is_private(self):
        """Whether the fit releases anything private."""
        return self.budget.is_private

    def rho(self, name):
        """The zCDP ``rho`` of part ``name`` (``inf`` without privacy)."""
        part = self.parts.get(name)
        return math.inf if part is None else part.rho

    @property
    def spent(self):
        """The zCDP ``rho`` of every part, in planning order."""
        return {name: part.rho for name, part in self.parts.items()}

    @property
    def total_rho(self):
        """The zCDP ``rho`` the budget is split in (its accountant's unit)."""
        return self.budget.split({"total": 1.0})["total"].rho


def heavy_tail_setup(n_samples, n_features, config, budget, *, sparse=False):
    """The set-up of a heavy-tail fit on ``n_samples`` rows, from public inputs only.

    "dp-sgd": :func:`~._dpsgd.plan_dpsgd`'s plan (add/remove adjacency).
    One-pass solvers (replace-one adjacency): the split of ``budget``
    between the private estimates and the optimizer, and the event: the
    zCDP events of the estimates composed with the optimizer's one Gaussian
    release of noise multiplier ``1 / sqrt(2 rho_opt)`` (parallel
    composition over disjoint batches). Without privacy the non-private
    event. The localized solver's optimizer event is the self-composition of
    the steps of one phase (:func:`~._localized.localized_event`): the
    phases' step counts ``min(ceil(n_i ln n), max_iter)`` and per-step noise
    multipliers ``sqrt(T_i / (2 rho_opt))`` follow from ``n_samples``,
    ``max_iter`` and the budget only.

    Parameters
    ----------
    n_samples, n_features : int
        Public counts.
    config : HeavyTailConfig
        Public hyperparameters.
    budget : PrivacyBudget
        The fit's (epsilon, delta) budget, accountant and caveats.
    sparse : bool, default=False
        Whether ``X`` is sparse (its format is public).

    Returns
    -------
    setup : HeavyTailSetup

    Raises
    ------
    ValueError
        For public parameters the solver refuses.
    PrivacyBudgetError
        When the private estimates leave the optimizer no budget.
    """
    if runs_dpsgd(config):
        plan = plan_dpsgd(n_samples, n_features, config, budget, sparse=sparse)
        return HeavyTailSetup(
            config=config,
            budget=budget,
            solver="dp-sgd",
            adjacency="add_remove",
            event=plan.event,
            dpsgd=plan,
        )
    private = budget.is_private
    # The same refusals of public parameters with and without privacy.
    shares, needs_median, needs_curvature = _plan_budget(
        config, 0.5 * config.tuning_fraction
    )
    solver = config.solver if config.solver != "auto" else "prox"
    if not private:
        return HeavyTailSetup(
            config=config,
            budget=budget,
            solver=solver,
            adjacency="replace_one",
            event=non_private_event(),
        )
    shares["optimizer"] = max(0.0, 1.0 - math.fsum(shares.values()))
    parts = budget.split(shares)
    if not parts["optimizer"].rho > 0:
        raise PrivacyBudgetError("tuning_fraction leaves no budget for the optimizer.")
    if _is_infinite(config.clip_norm):
        raise ValueError("clip_norm=inf is only allowed without privacy.")
    tuning = [
        zcdp_event(part.rho) for name, part in parts.items() if name != "optimizer"
    ]
    # "auto" reaches here with an l1 penalty only ("prox").
    if config.solver == "localized":
        if n_samples < _LOCALIZED_MIN_SAMPLES:
            raise ValueError(
                "solver='localized' needs at least "
                f"{_LOCALIZED_MIN_SAMPLES} samples; got n_samples = {n_samples}."
            )
        # Algorithm 7's phases run T_i self-composed steps on disjoint
        # blocks: the event of its costliest phase, from public counts.
        optimizer = localized_event(n_samples, _max_steps(config), parts["optimizer"])
    else:
        optimizer = parts["optimizer"].gaussian(1.0).event(steps=1)
    # The fit and its plan refuse alike, before a row is read.
    check_public_magnitudes(config, n_samples, n_features, solver, parts["optimizer"])
    event = composed_event([*tuning, optimizer])
    return HeavyTailSetup(
        config=config,
        budget=budget,
        solver=solver,
        adjacency="replace_one",
        event=event,
        parts=parts,
        needs_median=needs_median,
        needs_curvature=needs_curvature,
        optimizer_event=optimizer,
    )


# One record's overflow (a huge row times w, inf - inf) must not show as a
# warning: its results are handled explicitly (non-finite terms contribute
# 0), and a warning that depends on one record is a leak.
@np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore")
def fit_heavy_tail(
    X, y, loss, setup, rng, sample_weight=None, *, backend=NUMPY_BACKEND, progress=None
):
    """Fit a heavy-tail-robust private linear model (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        Pointwise loss.
    setup : HeavyTailSetup
        :func:`heavy_tail_setup` for this ``X``: the public hyperparameters,
        the (epsilon, delta) budget checked after the fit and its split.
    rng : numpy.random.Generator
        Source of all randomness.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public weights: each record's gradient is weighted before it is
        clipped (every solver); uniform weights are the unweighted fit.
    backend : ArrayBackend, default=NUMPY_BACKEND
        Where the "dp-sgd" steps run (the one-pass solvers run on the host).
    progress : Progress or None, default=None
        Progress printer of the "dp-sgd" steps and the one-pass queries.

    Returns
    -------
    fit : HeavyTailFit
    """
    config, budget = setup.config, setup.budget
    if setup.dpsgd is not None:
        _, l2 = _penalty_parts(config)
        return fit_heavy_tail_dpsgd(
            X, y, loss, config, budget, rng, sample_weight=sample_weight, l2=l2,
            plan=setup.dpsgd, backend=backend, progress=progress,
        )
    if not setup.is_private:
        return _fit_non_private(X, y, loss, config, budget, sample_weight)
    if config.radius is None:
        config = replace(config, radius=ONE_PASS_RADIUS)
    n, n_features = X.shape
    s = 1.0 if config.fit_intercept else 0.0
    d = n_features + int(config.fit_intercept)
    # Public weights, as given under privacy (fit_weights: nothing is read
    # from them; None when all are 1). Each record's weighted gradient (and
    # second-moment term) is clipped; the private medians count a record at
    # most once.
    weights = fit_weights(sample_weight, n, private=True)
    if smooths_loss(config):
        # The absolute or quantile loss smoothed over the public width: the
        # objective of every private step below (and of the clip's median).
        loss = smoothed_loss(loss, config.smoothing_width)

    # 1. Budget, planned before any data access (the set-up).
    needs_median, needs_curvature = setup.needs_median, setup.needs_curvature
    optimizer_budget = setup.parts["optimizer"]
    rho_opt = optimizer_budget.rho
    eps = zcdp_eps(rho_opt)

    # 2. Private auto estimates (each spends its part of the budget).
    median = None
    if needs_median:
        # The n norms are not kept past the quantile (with few stored entries
        # per row they would weigh half a sparse X). The bins reach 1e40, so
        # raw columns (norms ~1e10 for a price in dollars on square feet)
        # fall in a finite bin, not above every candidate.
        median = private_scale_median(
            gradient_norms_at_zero(X, y, loss, s, sample_weight=weights),
            setup.rho("clip_median"),
            rng,
            # Capped at 1 there under privacy: a record counts at most once.
            weights=weights,
        )
    estimate = None
    if needs_curvature:
        c_beta, c_mu = _curvature_factors(config)
        estimate = private_curvature(
            X,
            s,
            setup.parts["curvature_scale"],
            setup.parts["curvature_matrix"],
            rng,
            c_beta=c_beta,
            c_mu=c_mu,
            sample_weight=weights,
        )
    if (median is not None and math.isinf(median)) or (
        estimate is not None and math.isinf(estimate.row_clip)
    ):
        return _beyond_edges_fit(setup, n_features, math.isinf(median or 0.0))
    beta, mu = _resolve_curvature(config, estimate)
    solver = setup.solver
    row = ONE_PASS_SOLVERS.get(solver)
    if row is not None:
        if (row.needs_smoothness and beta is None) or (
            row.needs_strong_convexity and mu is None
        ):
            needed = "smoothness and strong_convexity"
            raise ValueError(
                f"solver={solver!r} needs "
                + (needed if row.needs_strong_convexity else "smoothness")
                + "."
            )
        if row.needs_strong_convexity:
            # Thm 176 / 63 need kappa <= n / ln n: floor mu there.
            mu = max(mu, beta * math.log(n) / n)

    # The gradient-norm scale standing for r_k in the step formulas.
    if config.mode == "theory" or config.clip_norm == "theory":
        scale = config.moment_bound
    elif median is not None:
        scale = median
    elif config.moment_bound is not None:
        scale = config.moment_bound
    else:
        scale = float(config.clip_norm)
    if math.isinf(scale):
        scale = 1.0
    fixed_steps = _max_steps(config)

    # 3-4. Plan and run the solver.
    if row is None:
        coef_full, plan = _run_localized(
            X, y, loss, config, rng, d, eps, scale, median, optimizer_budget,
            fixed_steps, s, weights,
        )
        n_iter = sum(phase.n_steps for phase in plan)
        batch_size = plan[0].n_rows
        clip = plan[0].clip_norm
        noise_std = mean_oracle_sigma(clip, batch_size, eps) * math.sqrt(
            plan[0].n_steps
        )
        optimizer_event, index = localized_phase_events(plan, optimizer_budget)
        if optimizer_event != localized_event(n, fixed_steps, optimizer_budget):
            # The phases run are those the set-up planned from public counts
            # (a deterministic check: it never depends on the data).
            raise PrivacyAccountingError(
                "The localized solver ran phases other than those its plan "
                "accounts."
            )
        described = plan[index]
        mechanism = phase_mechanism(described, optimizer_budget)
        steps = described.n_steps
        mechanism_text = _localized_text(plan, index, optimizer_budget)
    else:
        problem = _Problem(config, n, d, eps, beta, mu, scale)
        n_steps = fixed_steps if fixed_steps is not None else row.n_steps(problem)
        n_steps = _cap_steps(n_steps, n, d, eps, config, row.extra_batches)
        n_batches = n_steps + row.extra_batches
        batch_size = n // n_batches
        if batch_size < 1:
            raise ValueError(
                f"{n_batches} disjoint batches need at least {n_batches} samples; "
                f"got n_samples = {n}."
            )
        # The clip and the step rule's noise are those of the budget
        # schedule_eps (AC-SA's saturation, see _schedule_eps): past it the
        # schedule is fixed and only the noise, the real budget's, shrinks.
        schedule_eps = _schedule_eps(solver, config, n, d, eps, n_steps)
        snr = snr_factor(solver, schedule_eps, n, d, n_steps)
        clip = _clip_for(config, snr, median)
        noise_std = mean_oracle_sigma(clip, batch_size, eps)
        rule_noise_std = mean_oracle_sigma(clip, batch_size, schedule_eps)
        # Replace-one sensitivity of a clipped sum: 2 C; one query per
        # record, so each gets the whole optimizer part (noise multiplier
        # 1 / sqrt(2 rho_opt)).
        mechanism = optimizer_budget.gaussian(2.0 * clip)
        batches = disjoint_batches(rng, n, n_batches, batch_size)
        # Each query reads its own batch: parallel composition.
        with parallel_parts() as parts:
            coef_full = one_pass_loop(
                X,
                y,
                loss,
                batches=batches,
                rule=row.rule(problem, n_steps, clip, rule_noise_std),
                clip_norm=clip,
                mechanism=mechanism,
                intercept_scaling=s,
                rng=rng,
                sample_weight=weights,
                parts=parts,
                progress=None if progress is None else progress.per(n_steps, n_steps),
            )
        n_iter = n_steps
        # Parallel composition: one record enters one query of the T, so
        # the optimizer's event is one Gaussian release.
        optimizer_event = mechanism.event(steps=1)
        steps = 1
        # The number of queries and their batch size may follow from the
        # private curvature estimate (post-processing, reported as n_iter_ and
        # batch_size_); the record names neither, so that it is the same on
        # neighbouring datasets, as the accounted event is.
        mechanism_text = (
            f"{row.description}: T noisy clipped-mean queries on "
            "disjoint batches (T = n_iter_), composed in parallel (each record "
            "enters one query), so the optimizer's event is one Gaussian "
            "release (the recorded noise multiplier, sensitivity 2 C, 1 step)"
        )

    # 5. Describe the run: the set-up's event (the private estimates' zCDP
    # events, then the optimizer's own event, which the record's fields
    # describe), planned before the data was read.
    event = setup.event
    record = budget.account(
        mechanism,
        description=f"{mechanism_text}; rho-zCDP budget {_format_ledger(setup.spent)}",
        adjacency="replace_one",
        steps=int(steps),
        dp_event=event,
    )
    return HeavyTailFit(
        coef=coef_full[:-1],
        intercept=float(s * coef_full[-1]),
        solver=solver,
        n_iter=int(n_iter),
        batch_size=int(batch_size),
        clip_norm=float(clip),
        noise_std=float(noise_std),
        smoothness=beta,
        strong_convexity=mu,
        rho_spent=setup.spent,
        record=record,
        optimizer_epsilon=epsilon_of(optimizer_event, budget.delta, budget.accountant),
    )


def _beyond_edges_fit(setup, n_features, clip_median):
    """The zero model, released when a private median lies beyond 1e40.

    The top bin of ``ROW_NORM_EDGES`` has no finite upper edge, so a median
    drawn there (``clip_median``: the gradient norms'; else the curvature's
    squared row norms') bounds no clip, smoothness or step size: the
    optimizer's queries do not run (their budget stays accounted, so the
    record is the planned one) and the fit releases its starting point
    ``w_0 = 0``, as the "dp-sgd" solver's steps release their initial model
    at step size 0 past the same edge. The decision and the warning read
    the released bin only (post-processing).
    """
    budget = setup.budget
    # The queries the event accounts and that do not run.
    for (kind, level), count in expected_releases(setup.optimizer_event).items():
        for _ in range(count):
            forgo_release(kind, level)
    name, what = (
        ("clip_median", "per-example gradient norm at 0")
        if clip_median
        else ("curvature_scale", "squared row norm")
    )
    edge = float(ROW_NORM_EDGES[-2])
    message = (
        f"the private median {what} lies beyond the top edge ({edge:.0e}) of "
        "its public bins, so it bounds no "
        + ("clip" if clip_median else "curvature, hence no step size")
        + f": solver={setup.solver!r} ran no query and the fit released "
        "the zero model (coef_ = 0, intercept_ = 0); divide the columns "
        + ("and the target " if clip_median else "")
        + "by public constants"
    )
    row = ONE_PASS_SOLVERS.get(setup.solver)
    record = budget.account(
        # The release that decided it: the median's exponential mechanism.
        ExponentialMechanism(sensitivity=1.0, epsilon=em_epsilon(setup.rho(name))),
        description=(
            (row.description if row is not None else _LOCALIZED_NAME)
            + ": no query ran (a private median beyond its public edges); "
            f"rho-zCDP budget {_format_ledger(setup.spent)}"
        ),
        adjacency="replace_one",
        steps=1,
        dp_event=setup.event,
    )
    return HeavyTailFit.without_steps(
        np.zeros(n_features),
        0.0,
        solver=setup.solver,
        record=record,
        fallback=message,
        rho_spent=setup.spent,
        optimizer_epsilon=epsilon_of(
            setup.optimizer_event, budget.delta, budget.accountant
        ),
    )


def _fit_non_private(X, y, loss, config, budget, sample_weight):
    """The one-pass solvers' non-private limit: their objective, minimized.

    Without privacy nothing is released, so the fit is the (weighted) loss
    plus the penalty minimized by the deterministic full-batch solver
    (:func:`~sklearn_dpfair._solvers._non_private.minimize_regression`:
    L-BFGS-B in standardized columns, or the quantile-regression linear
    program) instead of the one-pass loop, whose default radius (10), clip
    and step sizes assume data of unit scale: the least-squares, Huber or
    quantile solution on any columns, with a ``ConvergenceWarning`` if the
    solver stops short. A declared ``radius`` projects the solution on its
    ball (post-processing, as "dp-sgd" does); the default one binds nothing.
    """
    n = X.shape[0]
    s = 1.0 if config.fit_intercept else 0.0
    weights = fit_weights(sample_weight, n, private=False)
    l1, l2 = _penalty_parts(config)
    fit = minimize_regression(
        X, y, loss, alpha=l2, l1=l1, fit_intercept=bool(s), sample_weight=weights
    )
    coef = fit.coef[:, 0]
    intercept = float(fit.intercept[0]) if s else 0.0
    if config.radius is not None:
        full = project_ball(np.append(coef, intercept / s if s else 0.0), config.radius)
        coef, intercept = full[:-1], float(s * full[-1])
    solver = config.solver if config.solver != "auto" else "prox"
    row = ONE_PASS_SOLVERS.get(solver)
    name = row.description if row is not None else _LOCALIZED_NAME
    record = budget.account(
        # The non-private budget's mechanism: no noise, no clipping.
        budget.gaussian(math.inf),
        description=name,
        adjacency="replace_one",
        steps=1,
        dp_event=non_private_event(),
    )
    return HeavyTailFit(
        coef=coef,
        intercept=intercept,
        solver=solver,
        n_iter=int(fit.n_iter),
        batch_size=int(n),
        clip_norm=math.inf,
        noise_std=0.0,
        smoothness=None,
        strong_convexity=None,
        rho_spent={},
        record=non_private_record(record, fit.n_iter),
        optimizer_epsilon=math.inf,
    )


def _schedule_eps(solver, config, n, d, eps, n_steps):
    """The budget a one-pass fit's clip and step constant are computed at.

    ``eps`` itself, except for practical AC-SA beyond Thm 173's saturation
    budget (:func:`~._schedules.acsa_saturation_eps`): there every
    epsilon-dependent term of its bound (Lowy's thesis, eq. C.53) is below
    the statistical term ``r D / sqrt(n)``, so a larger clip buys nothing,
    while the practical step constant, which bounds the oracle's second
    moment by ``C^2``, grows with it and shrinks every step (the steps
    ``t / (2 eta)`` of Algorithm 8, line 7): the fit stalled as epsilon grew.
    The noise is the real budget's; public quantities only (``n``, ``d``,
    ``T``, ``k`` and epsilon).
    """
    if solver != "acsa" or config.mode != "practical":
        return eps
    return min(eps, acsa_saturation_eps(n, d, n_steps, config.moment_order))


def _acsa_eta(config, n, d, n_steps, beta, diameter, clip, noise_std, scale):
    """Step constant of Algorithm 8: theory (with the bias bound) or practical."""
    if config.mode == "theory":
        k = config.moment_order
        r = config.moment_bound
        bias = 0.0 if math.isinf(clip) else r**k / ((k - 1.0) * clip ** (k - 1.0))
        noise_sq = d * noise_std**2 + r**2 * n_steps / n
        return acsa_step_size(n_steps, beta, diameter, noise_sq, bias)
    # Practical AC-SA: the bias bound B of Thm 173 dropped, C^2 bounds E||g~||^2.
    second = clip if not math.isinf(clip) else scale
    noise_sq = d * noise_std**2 + second**2 * n_steps / n
    return acsa_step_size(n_steps, beta, diameter, noise_sq)


def _run_localized(
    X, y, loss, config, rng, d, eps, scale, median, budget, fixed_steps, s, weights
):
    # n >= _LOCALIZED_MIN_SAMPLES: checked by the set-up.
    n = X.shape[0]
    n_used = 2 ** math.floor(math.log2(n))
    log_n = math.log(n_used)
    clips = [
        _clip_for(config, eps * n_i / math.sqrt(d * log_n), median)
        for n_i, _ in localized_phase_steps(n, fixed_steps)
    ]
    plan = localized_plan(
        n_used,
        d,
        eps,
        config.moment_order,
        diameter=2.0 * config.radius,
        scale=scale,
        clips=clips,
        max_steps=fixed_steps,
    )
    blocks = disjoint_blocks(rng, n, [phase.n_rows for phase in plan])
    w = localized_subgradient(
        X,
        y,
        loss,
        phases=plan,
        blocks=blocks,
        budget=budget,
        radius=config.radius,
        intercept_scaling=s,
        rng=rng,
        sample_weight=weights,
    )
    return w, plan


def _max_steps(config):
    """The public cap on the steps of a phase or run (None: "auto")."""
    return config.max_iter if config.max_iter != "auto" else None


def _is_infinite(value):
    return not isinstance(value, str) and math.isinf(value)


def _localized_text(plan, index, budget):
    phases = "; ".join(
        f"{phase.n_rows} rows, {phase.n_steps} steps, noise multiplier "
        f"{phase_noise_multiplier(phase, budget):.4g}"
        for phase in plan
    )
    return (
        f"{_LOCALIZED_NAME}: {len(plan)} phases on disjoint "
        f"blocks of rows, composed in parallel (each record enters one phase); "
        f"phase i composes its T_i steps sequentially, each a Gaussian release "
        f"of noise multiplier sqrt(T_i / (2 rho)) at sensitivity 2 C_i, so "
        f"every phase is rho-zCDP ({phases}); the event and the recorded "
        f"noise multiplier, sensitivity and steps are those of phase "
        f"{index + 1}"
    )


def _format_ledger(spent):
    return ", ".join(f"{name}={rho:.4g}" for name, rho in spent.items())
