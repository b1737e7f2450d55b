# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Budget, tune, plan, solve, describe: the private fit of ``HeavyTailDPRegressor``.

``solver="dp-sgd"`` (and ``"auto"`` without an l1/elastic-net penalty) is
handed to the multi-pass DP-SGD of :mod:`._dpsgd`, accounted
under add/remove adjacency. Order of calls for the one-pass solvers in
:func:`fit_heavy_tail`:

1. split the rho-zCDP budget ``config.rho`` in a
   :class:`~sklearn_dpfair.privacy._zcdp.ZCDPLedger`
   *before* reading data: ``tuning_fraction / 2`` for each private auto
   estimate that is needed (the clip scale, the curvature), the rest for the
   optimizer;
2. private auto estimates: the median per-sample gradient norm at the
   public start ``w_0 = 0`` (exponential mechanism) and the extreme
   eigenvalues of the rows' second moment (Gaussian mechanism);
3. resolve the solver, the number of steps ``T``, the batch size and the
   clip threshold ``C`` from public quantities and those estimates only;
4. run the one-pass solver on disjoint batches (MeanOracle1 per query);
5. describe the run: one ``ZCDpEvent`` per private estimate and the
   optimizer's own event, composed. The optimizer's queries read disjoint
   rows (parallel composition), so its event is what one record goes
   through: one Gaussian release of noise multiplier ``1 / sqrt(2 rho)``
   (at sensitivity ``2 C``) for "sgd", "acsa" and "prox"; the ``T_i``
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
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from ...exceptions import PrivacyBudgetError
from ...privacy import GaussianMechanism, fit_weights, private_quantile
from ...privacy._accounting import (
    composed_event,
    epsilon_of,
    non_private_event,
    zcdp_event,
)
from ...privacy._releases import parallel_parts
from ...privacy._zcdp import ZCDPLedger
from ._disjoint_batches import disjoint_batches, disjoint_blocks
from .._non_private import minimize_regression, non_private_record
from ._dpsgd import fit_heavy_tail_dpsgd, plan_dpsgd
from ._localized import (
    localized_phase_events,
    localized_plan,
    localized_subgradient,
    phase_noise_multiplier,
)
from ._mean_oracle import gradient_norms_at_zero
from ._result import HeavyTailFit
from ._projections import project_ball
from ._one_pass import AcceleratedStep, ProximalStep, StichAveraging, one_pass_loop
from ._private_curvature import CURVATURE_SCALE_SHARE, private_curvature
from ._schedules import (
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

__all__ = [
    "ONE_PASS_SOLVERS",
    "HeavyTailConfig",
    "HeavyTailFit",
    "fit_heavy_tail",
    "planned_event",
    "runs_dpsgd",
]

# Huber's population Hessian is E[1{|res| <= t} x~ x~^T]: its top eigenvalue
# is at most that of E x~ x~^T, its bottom one is that of the non-saturated
# rows only. 0.5 is a heuristic fraction of non-saturated residuals.
_CURVATURE_FACTORS = {"squared_error": (1.0, 1.0), "huber": (1.0, 0.5)}
_SMOOTH_LOSSES = frozenset(_CURVATURE_FACTORS)

_LOCALIZED_NAME = "localized noisy clipped subgradient method (Lowy's thesis, Alg. 7)"

# Solvers that ``solver="auto"`` never picks over "dp-sgd" unless a penalty
# needs them: multi-pass DP-SGD with the private clip beat the one-pass
# solvers in every cell of the benchmark grid on the dev seeds (see
# docs/benchmarks/heavytail.rst).
_NON_SMOOTH_PENALTIES = frozenset({"l1", "elasticnet"})


@dataclass(frozen=True)
class HeavyTailConfig:
    """The public hyperparameters of a heavy-tail fit (see ``HeavyTailDPRegressor``).

    ``rho`` is the zCDP budget the fit is planned in (``inf``: non-private);
    the (epsilon, delta) target travels in the fit's
    :class:`~sklearn_dpfair.privacy.PrivacyBudget`.
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
    rho: float = math.inf
    feature_bounds: object = "auto"


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
    return ProximalStep(0.5 / p.beta, l1, l2, p.config.radius)


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
    if config.solver in ONE_PASS_SOLVERS:
        row = ONE_PASS_SOLVERS[config.solver]
        return row.needs_smoothness, row.needs_strong_convexity
    # "auto" decides with both.
    return True, True


def _plan_budget(ledger, config, tuning_rho):
    """Reserve the auto estimates' shares; return which estimates run."""
    want_beta, want_mu = _curvature_needs(config)
    needs_curvature = (want_beta and config.smoothness == "auto") or (
        want_mu and config.strong_convexity == "auto"
    )
    if needs_curvature and config.loss_name not in _SMOOTH_LOSSES:
        if config.solver != "auto":
            raise ValueError(
                f"smoothness='auto' and strong_convexity='auto' are only "
                f"available for the squared_error and huber losses, not "
                f"loss={config.loss_name!r}, whose population curvature depends "
                "on the unknown noise density. Pass smoothness and "
                "strong_convexity, or use solver='localized'."
            )
        # solver="auto" falls back to the localized method.
        needs_curvature = False
    needs_median = config.clip_norm == "auto"
    if (needs_median or needs_curvature) and config.tuning_fraction <= 0:
        raise ValueError(
            "tuning_fraction must be positive when clip_norm, smoothness "
            "or strong_convexity is 'auto': each private estimate needs budget."
        )
    if needs_median:
        ledger.allocate("clip_median", tuning_rho)
    if needs_curvature:
        ledger.allocate("curvature_scale", CURVATURE_SCALE_SHARE * tuning_rho)
        ledger.allocate("curvature_matrix", (1 - CURVATURE_SCALE_SHARE) * tuning_rho)
    return needs_median, needs_curvature


def _resolve_curvature(config, estimate):
    """User-given or private ``(beta, mu)``, with the ridge part added."""
    _, l2 = _penalty_parts(config)
    beta = config.smoothness if config.smoothness != "auto" else None
    mu = config.strong_convexity if config.strong_convexity != "auto" else None
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


def _resolve_solver(config, beta, mu, n):
    if config.solver != "auto":
        return config.solver
    if config.penalty in _NON_SMOOTH_PENALTIES:
        return "prox"
    if beta is None:
        return "localized"
    # Thm 176 needs kappa <= n / ln n.
    if mu is not None and mu > beta * math.log(n) / n:
        return "sgd"
    return "acsa"


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


def runs_dpsgd(config):
    """Whether ``config`` runs multi-pass DP-SGD ("auto" with a smooth penalty)."""
    return config.solver == "dp-sgd" or (
        config.solver == "auto" and config.penalty not in _NON_SMOOTH_PENALTIES
    )


def planned_event(n_samples, n_features, config, budget, *, sparse=False):
    """The ``DpEvent`` a fit on ``n_samples`` rows will record, from public inputs.

    "dp-sgd": :func:`~._dpsgd.plan_dpsgd`'s event, the plan the fit runs.
    One-pass solvers: the zCDP events of the ledger's private estimates and
    the optimizer's one Gaussian release of noise multiplier
    ``1 / sqrt(2 rho_opt)`` (parallel composition over disjoint batches).
    Without privacy the non-private event. The localized solver is not
    covered: its recorded event is the self-composition of the steps of
    one phase, whose count follows from a private scale (its epsilon does
    not, each phase being ``rho_opt``-zCDP).

    Returns
    -------
    event : dp_accounting.DpEvent
    """
    if runs_dpsgd(config):
        return plan_dpsgd(n_samples, n_features, config, budget, sparse=sparse).event
    if math.isinf(config.rho):
        return non_private_event()
    ledger = ZCDPLedger(config.rho)
    _plan_budget(ledger, config, 0.5 * config.tuning_fraction * config.rho)
    rho_opt = ledger.allocate_rest("optimizer")
    # The solver the fit resolves: "auto" reaches here with an l1 penalty
    # only ("prox"); the localized one is the fallback of "auto" without a
    # curvature, or asked for.
    if config.solver == "localized":
        raise NotImplementedError(
            "The localized solver's recorded event (the steps of one phase) "
            "depends on a private scale; its plan is not computed in advance."
        )
    tuning = [zcdp_event(r) for name, r in ledger.spent.items() if name != "optimizer"]
    optimizer = GaussianMechanism(1.0, 1.0 / math.sqrt(2.0 * rho_opt)).event(steps=1)
    return composed_event([*tuning, optimizer])


# One record's overflow (a huge row times w, inf - inf) must not show as a
# warning: its results are handled explicitly (non-finite terms contribute
# 0), and a warning that depends on one record is a leak.
@np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore")
def fit_heavy_tail(X, y, loss, config, budget, rng, sample_weight=None):
    """Fit a heavy-tail-robust private linear model (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        Pointwise loss.
    config : HeavyTailConfig
        Public hyperparameters, the zCDP budget ``rho`` included.
    budget : PrivacyBudget
        The (epsilon, delta) target checked after the fit (``epsilon=inf``
        when ``rho`` was given directly), the accountant and the caveats.
    rng : numpy.random.Generator
        Source of all randomness.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public weights: each record's gradient is weighted before it is
        clipped (every solver); uniform weights are the unweighted fit.

    Returns
    -------
    fit : HeavyTailFit
    """
    if runs_dpsgd(config):
        _, l2 = _penalty_parts(config)
        return fit_heavy_tail_dpsgd(
            X, y, loss, config, budget, rng, sample_weight=sample_weight, l2=l2
        )
    if math.isinf(config.rho):
        # The same refusals of public parameters as a private fit.
        _plan_budget(ZCDPLedger(math.inf), config, math.inf)
        return _fit_non_private(X, y, loss, config, budget, sample_weight)
    if config.radius is None:
        config = replace(config, radius=ONE_PASS_RADIUS)
    rho = config.rho
    n, n_features = X.shape
    s = 1.0 if config.fit_intercept else 0.0
    d = n_features + int(config.fit_intercept)
    private = not math.isinf(rho)
    # Public weights, as given under privacy (fit_weights: nothing is read
    # from them; None when all are 1). Each record's weighted gradient (and
    # second-moment term) is clipped; the private medians count a record at
    # most once.
    weights = fit_weights(sample_weight, n, private=private)

    # 1. Budget, planned before any data access.
    ledger = ZCDPLedger(rho)
    tuning_rho = 0.5 * config.tuning_fraction * rho if private else math.inf
    needs_median, needs_curvature = _plan_budget(ledger, config, tuning_rho)
    rho_opt = ledger.allocate_rest("optimizer")
    eps = zcdp_eps(rho_opt) if private else math.inf
    if private and rho_opt <= 0:
        raise PrivacyBudgetError("tuning_fraction leaves no budget for the optimizer.")
    if private and _is_infinite(config.clip_norm):
        raise ValueError("clip_norm=inf is only allowed without privacy.")

    # 2. Private auto estimates (each spends its ledger entry).
    median = None
    if needs_median:
        # The n norms are not kept past the quantile (with few stored entries
        # per row they would weigh half a sparse X).
        median = private_quantile(
            gradient_norms_at_zero(X, y, loss, s, sample_weight=weights),
            0.5,
            ledger.spent["clip_median"],
            rng,
            # Capped at 1 there under privacy: a record counts at most once.
            weights=weights,
        )
    estimate = None
    if needs_curvature:
        c_beta, c_mu = _CURVATURE_FACTORS[config.loss_name]
        estimate = private_curvature(
            X,
            s,
            ledger.spent["curvature_scale"],
            ledger.spent["curvature_matrix"],
            rng,
            c_beta=c_beta,
            c_mu=c_mu,
            sample_weight=weights,
        )
    beta, mu = _resolve_curvature(config, estimate)
    solver = _resolve_solver(config, beta, mu, n)
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
    fixed_steps = config.max_iter if config.max_iter != "auto" else None

    # 3-4. Plan and run the solver.
    if row is None:
        coef_full, plan = _run_localized(
            X, y, loss, config, rng, d, eps, scale, median, rho_opt, fixed_steps, s,
            weights,
        )
        n_iter = sum(phase.n_steps for phase in plan)
        batch_size = plan[0].n_rows
        clip = plan[0].clip_norm
        noise_std = mean_oracle_sigma(clip, batch_size, eps) * math.sqrt(
            plan[0].n_steps
        )
        optimizer_event, index = localized_phase_events(plan, rho_opt)
        described = plan[index]
        mechanism = GaussianMechanism(
            2.0 * described.clip_norm, phase_noise_multiplier(described, rho_opt)
        )
        steps = described.n_steps
        mechanism_text = _localized_text(plan, index, rho_opt)
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
        clip = _clip_for(config, snr_factor(solver, eps, n, d, n_steps), median)
        noise_std = mean_oracle_sigma(clip, batch_size, eps)
        # Replace-one sensitivity of a clipped sum: 2 C; one query per
        # record, so each gets the whole optimizer budget.
        noise_multiplier = 1.0 / math.sqrt(2.0 * rho_opt) if private else 0.0
        mechanism = GaussianMechanism(2.0 * clip, noise_multiplier)
        batches = disjoint_batches(rng, n, n_batches, batch_size)
        # Each query reads its own batch: parallel composition.
        with parallel_parts() as parts:
            coef_full = one_pass_loop(
                X,
                y,
                loss,
                batches=batches,
                rule=row.rule(problem, n_steps, clip, noise_std),
                clip_norm=clip,
                mechanism=mechanism,
                intercept_scaling=s,
                rng=rng,
                sample_weight=weights,
                parts=parts,
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

    # 5. Describe the run: the private estimates' zCDP events, then the
    # optimizer's own event, which the record's fields describe.
    if private:
        tuning = [
            zcdp_event(r) for name, r in ledger.spent.items() if name != "optimizer"
        ]
        event = composed_event([*tuning, optimizer_event])
    else:
        event = ledger.dp_event()
    record = budget.account(
        mechanism,
        description=f"{mechanism_text}; rho-zCDP budget {_format_ledger(ledger.spent)}",
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
        rho_spent=ledger.spent,
        record=record,
        optimizer_epsilon=(
            epsilon_of(optimizer_event, budget.delta, budget.accountant)
            if private
            else math.inf
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
        GaussianMechanism(clip_norm=math.inf, noise_multiplier=0.0),
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
    X, y, loss, config, rng, d, eps, scale, median, rho_opt, fixed_steps, s, weights
):
    n = X.shape[0]
    if n < 4:
        raise ValueError(
            f"solver='localized' needs at least 4 samples; got n_samples = {n}."
        )
    levels = math.floor(math.log2(n))
    n_used = 2**levels
    log_n = math.log(n_used)
    clips = []
    for i in range(1, levels + 1):
        n_i = n_used // 2**i
        snr = eps * n_i / math.sqrt(d * log_n)
        clips.append(_clip_for(config, snr, median))
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
        rho=rho_opt,
        radius=config.radius,
        intercept_scaling=s,
        rng=rng,
        sample_weight=weights,
    )
    return w, plan


def _is_infinite(value):
    return not isinstance(value, str) and math.isinf(value)


def _localized_text(plan, index, rho):
    phases = "; ".join(
        f"{phase.n_rows} rows, {phase.n_steps} steps, noise multiplier "
        f"{phase_noise_multiplier(phase, rho):.4g}"
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
