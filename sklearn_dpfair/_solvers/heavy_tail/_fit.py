# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Budget, tune, plan, solve, describe: the private fit of ``HeavyTailDPRegressor``.

``solver="dp-sgd"`` (and ``"auto"`` without an l1/elastic-net penalty) is
handed to the multi-pass DP-SGD of :mod:`._heavy_tail_dpsgd`, accounted
under add/remove adjacency. Order of calls for the one-pass solvers in
:func:`fit_heavy_tail`:

1. split the rho-zCDP budget in a :class:`~sklearn_dpfair.privacy._zcdp.ZCDPLedger`
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
   ``noise_multiplier``, ``clip_norm`` and ``steps`` are that event's.

The one-pass solvers are stated under replace-one adjacency (``n`` is public).

Whatever one record holds, every term that enters a noisy sum is finite and
within its clip bound (see :mod:`._mean_oracle`, :mod:`._private_quantile`
and :mod:`._private_curvature`), and no exception or warning after input
validation depends on the data: floating-point warnings are silenced for the
whole fit, since their results are handled explicitly.
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from ...exceptions import PrivacyBudgetError
from ...privacy._accounting import (
    composed_event,
    epsilon_of,
    noisy_sgd_event,
    zcdp_event,
)
from ...privacy import GaussianMechanism, private_quantile
from ...privacy._record import PrivacyRecord, check_budget
from ...privacy._zcdp import ZCDP_ACCOUNTANT, ZCDPLedger
from ._disjoint_batches import disjoint_batches, disjoint_blocks
from ._dpsgd import fit_heavy_tail_dpsgd
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
from ._localized import (
    localized_phase_events,
    localized_plan,
    localized_subgradient,
    phase_noise_multiplier,
)
from ._mean_oracle import gradient_norms_at_zero
from ._one_pass import AcceleratedStep, ProximalStep, StichAveraging, one_pass_loop
from ._private_curvature import CURVATURE_SCALE_SHARE, private_curvature

__all__ = ["HeavyTailConfig", "HeavyTailFit", "fit_heavy_tail"]

# Huber's population Hessian is E[1{|res| <= t} x~ x~^T]: its top eigenvalue
# is at most that of E x~ x~^T, its bottom one is that of the non-saturated
# rows only. 0.5 is a heuristic fraction of non-saturated residuals.
_CURVATURE_FACTORS = {"squared_error": (1.0, 1.0), "huber": (1.0, 0.5)}
_SMOOTH_LOSSES = frozenset(_CURVATURE_FACTORS)

_MECHANISM_NAMES = {
    "sgd": "noisy clipped SGD (Lowy's thesis, Alg. 27)",
    "acsa": "noisy clipped AC-SA (Lowy's thesis, Alg. 8)",
    "prox": "noisy clipped proximal SGD (Lowy's thesis, Alg. 29)",
    "localized": "localized noisy clipped subgradient method (Lowy's thesis, Alg. 7)",
}

# Solvers that ``solver="auto"`` never picks over "dp-sgd" unless a penalty
# needs them: multi-pass DP-SGD with the private clip beat the one-pass
# solvers in every cell of the spec's benchmark grid on the dev seeds (see
# docs/benchmarks/heavytail.rst).
_NON_SMOOTH_PENALTIES = frozenset({"l1", "elasticnet"})


@dataclass(frozen=True)
class HeavyTailConfig:
    """The public hyperparameters of a heavy-tail fit (see ``HeavyTailDPRegressor``)."""

    loss_name: str
    solver: str
    clip_threshold: object
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


@dataclass
class HeavyTailFit:
    """What :func:`fit_heavy_tail` returns."""

    coef: np.ndarray
    intercept: float
    solver: str
    n_iter: int
    batch_size: float
    clip_threshold: float
    noise_std: float
    smoothness: float | None
    strong_convexity: float | None
    rho_spent: dict
    record: PrivacyRecord
    optimizer_epsilon: float
    target_location: float = 0.0
    target_scale: float = 1.0
    fallback: str | None = None


# The one-pass solvers project every iterate on a public ball and use its
# diameter in their step formulas: without a declared radius they take this
# one, in the units of the data.
ONE_PASS_RADIUS = 10.0


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
    solver = config.solver
    if solver == "localized":
        return False, False
    if solver == "acsa":
        return True, False
    # "sgd", "prox" and "auto" (which decides with both).
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
        # solver="auto" falls back to the localized method (spec 4.4).
        needs_curvature = False
    needs_median = config.clip_threshold == "auto"
    if (needs_median or needs_curvature) and config.tuning_fraction <= 0:
        raise ValueError(
            "tuning_fraction must be positive when clip_threshold, smoothness "
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
    if config.penalty in ("l1", "elasticnet"):
        return "prox"
    if beta is None:
        return "localized"
    # Thm 176 needs kappa <= n / ln n.
    if mu is not None and mu > beta * math.log(n) / n:
        return "sgd"
    return "acsa"


def _clip_for(config, snr, scale_median):
    k = config.moment_order
    if config.clip_threshold == "auto":
        return clip_auto(scale_median, snr, k, config.clip_ref)
    if config.clip_threshold == "theory":
        return clip_theory(config.moment_bound, snr, k)
    return float(config.clip_threshold)


def _cap_steps(n_steps, n, d, eps, config, n_extra_batches):
    """Apply the practical step cap (or only feasibility in theory mode)."""
    if config.mode == "practical":
        limit = step_cap(n, d, eps) + 1 - n_extra_batches
    else:
        limit = n - n_extra_batches
    return int(max(1, min(n_steps, limit)))


def fit_heavy_tail(
    X,
    y,
    loss,
    *,
    rho,
    delta,
    epsilon_target,
    config,
    rng,
    sample_weight=None,
    caveats=(),
):
    """Fit a heavy-tail-robust private linear model (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        Pointwise loss.
    rho : float
        Total zCDP budget (``inf``: non-private).
    delta : float
        Delta at which ``epsilon`` is reported.
    epsilon_target : float or None
        The (epsilon, delta) target ``rho`` was calibrated to, checked after
        the fit (None when rho was given directly).
    config : HeavyTailConfig
        Public hyperparameters.
    rng : numpy.random.Generator
        Source of all randomness.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public weights; non-uniform weights need ``solver="dp-sgd"``.
    caveats : tuple of str, default=()
        Carried into the privacy record.

    Returns
    -------
    fit : HeavyTailFit
    """
    # One record's overflow (a huge row times w, inf - inf) must not show
    # as a warning: its results are handled explicitly (non-finite terms
    # contribute 0), and a warning that depends on one record is a leak.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return _fit_heavy_tail(
            X, y, loss, rho, delta, epsilon_target, config, rng, sample_weight, caveats
        )


def _fit_heavy_tail(
    X, y, loss, rho, delta, epsilon_target, config, rng, sample_weight, caveats
):
    if config.solver == "dp-sgd" or (
        config.solver == "auto" and config.penalty not in _NON_SMOOTH_PENALTIES
    ):
        return _fit_dpsgd(
            X, y, loss, rho, delta, epsilon_target, config, rng, sample_weight, caveats
        )
    if sample_weight is not None and not np.all(sample_weight == sample_weight[0]):
        raise ValueError(
            f"Non-uniform sample_weight needs solver='dp-sgd' (or 'auto' "
            f"without an l1/elastic-net penalty); solver={config.solver!r} "
            "accepts only None or uniform weights."
        )
    if config.radius is None:
        config = replace(config, radius=ONE_PASS_RADIUS)
    n, n_features = X.shape
    s = 1.0 if config.fit_intercept else 0.0
    d = n_features + int(config.fit_intercept)
    diameter = 2.0 * config.radius
    k = config.moment_order
    private = not math.isinf(rho)

    # 1. Budget, planned before any data access.
    ledger = ZCDPLedger(rho)
    tuning_rho = 0.5 * config.tuning_fraction * rho if private else math.inf
    needs_median, needs_curvature = _plan_budget(ledger, config, tuning_rho)
    rho_opt = ledger.allocate_rest("optimizer")
    eps = zcdp_eps(rho_opt) if private else math.inf
    if private and rho_opt <= 0:
        raise PrivacyBudgetError("tuning_fraction leaves no budget for the optimizer.")
    if private and _is_infinite(config.clip_threshold):
        raise ValueError("clip_threshold=inf is only allowed without privacy.")

    # 2. Private auto estimates (each spends its ledger entry).
    median = None
    if needs_median:
        norms = gradient_norms_at_zero(X, y, loss, s)
        median = private_quantile(norms, 0.5, ledger.spent["clip_median"], rng)
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
        )
    beta, mu = _resolve_curvature(config, estimate)
    solver = _resolve_solver(config, beta, mu, n)
    if solver in ("sgd", "prox") and (mu is None or beta is None):
        raise ValueError(f"solver={solver!r} needs smoothness and strong_convexity.")
    if solver == "acsa" and beta is None:
        raise ValueError("solver='acsa' needs smoothness.")
    if solver in ("sgd", "prox"):
        # Thm 176 / 63 need kappa <= n / ln n: floor mu there.
        mu = max(mu, beta * math.log(n) / n)

    # The gradient-norm scale standing for r_k in the step formulas.
    if config.mode == "theory" or config.clip_threshold == "theory":
        scale = config.moment_bound
    elif median is not None:
        scale = median
    elif config.moment_bound is not None:
        scale = config.moment_bound
    else:
        scale = float(config.clip_threshold)
    if math.isinf(scale):
        scale = 1.0
    fixed_steps = config.max_iter if config.max_iter != "auto" else None

    # 3-4. Plan and run the solver.
    noise_multiplier = 1.0 / math.sqrt(2.0 * rho_opt) if private else 0.0
    if solver == "localized":
        coef_full, plan = _run_localized(
            X,
            y,
            loss,
            config,
            rng,
            d,
            eps,
            diameter,
            scale,
            median,
            rho_opt,
            fixed_steps,
            s,
        )
        n_iter = sum(phase.n_steps for phase in plan)
        batch_size = plan[0].n_rows
        clip = plan[0].clip_norm
        noise_std = mean_oracle_sigma(clip, batch_size, eps) * math.sqrt(
            plan[0].n_steps
        )
        optimizer_event, index = localized_phase_events(plan, rho_opt)
        described = plan[index]
        noise_multiplier = phase_noise_multiplier(described, rho_opt)
        sensitivity, steps = 2.0 * described.clip_norm, described.n_steps
        mechanism_text = _localized_text(plan, index, rho_opt)
    else:
        n_extra = 1 if solver == "sgd" else 0
        if fixed_steps is not None:
            n_steps = fixed_steps
        elif solver == "sgd" and config.mode == "theory":
            n_steps = sgd_steps(n, d, eps, k, mu, beta, diameter, scale)
        elif solver == "sgd":
            n_steps = sgd_steps_practical(n, d, eps, mu, beta, config.radius, scale)
        elif solver == "acsa":
            n_steps = acsa_steps(n, d, eps, k, beta, diameter, scale)
        else:
            n_steps = prox_steps(n, mu, beta)
        n_steps = _cap_steps(n_steps, n, d, eps, config, n_extra)
        n_batches = n_steps + n_extra
        batch_size = n // n_batches
        if batch_size < 1:
            raise ValueError(
                f"{n_batches} disjoint batches need at least {n_batches} samples; "
                f"got n_samples = {n}."
            )
        clip = _clip_for(config, snr_factor(solver, eps, n, d, n_steps), median)
        noise_std = mean_oracle_sigma(clip, batch_size, eps)
        mechanism = GaussianMechanism(2.0 * clip, noise_multiplier)
        batches = disjoint_batches(rng, n, n_batches, batch_size)
        l1, l2 = _penalty_parts(config)
        if solver == "sgd":
            step_sizes, weights = stich_schedule(n_steps, mu, beta)
            rule = StichAveraging(step_sizes, weights, l2, config.radius)
        elif solver == "acsa":
            eta = _acsa_eta(
                config, n, d, n_steps, beta, diameter, clip, noise_std, scale
            )
            rule = AcceleratedStep(eta, l2, config.radius)
        else:
            rule = ProximalStep(0.5 / beta, l1, l2, config.radius)
        coef_full = one_pass_loop(
            X,
            y,
            loss,
            batches=batches,
            rule=rule,
            clip_norm=clip,
            mechanism=mechanism,
            intercept_scaling=s,
            rng=rng,
        )
        n_iter = n_steps
        # Parallel composition: one record enters one query of the T, so
        # the optimizer's event is one Gaussian release.
        optimizer_event = noisy_sgd_event(noise_multiplier, 1.0, 1)
        sensitivity, steps = 2.0 * clip, 1
        # The number of queries and their batch size may follow from the
        # private curvature estimate (post-processing, reported as n_iter_ and
        # batch_size_); the record names neither, so that it is the same on
        # neighbouring datasets, as the accounted event is.
        mechanism_text = (
            f"{_MECHANISM_NAMES[solver]}: T noisy clipped-mean queries on "
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
    record = PrivacyRecord.from_event(
        event,
        delta=delta,
        accountant=ZCDP_ACCOUNTANT,
        adjacency="replace_one",
        mechanism=(
            f"{mechanism_text}; rho-zCDP budget {_format_ledger(ledger.spent)}"
        ),
        noise_multiplier=noise_multiplier,
        clip_norm=sensitivity,
        steps=int(steps),
        caveats=tuple(caveats),
    )
    if epsilon_target is not None:
        check_budget(record, epsilon_target, calibrated=True)
    return HeavyTailFit(
        coef=coef_full[:-1],
        intercept=float(s * coef_full[-1]),
        solver=solver,
        n_iter=int(n_iter),
        batch_size=int(batch_size),
        clip_threshold=float(clip),
        noise_std=float(noise_std),
        smoothness=beta,
        strong_convexity=mu,
        rho_spent=ledger.spent,
        record=record,
        optimizer_epsilon=(
            epsilon_of(optimizer_event, delta, ZCDP_ACCOUNTANT) if private else math.inf
        ),
    )


def _fit_dpsgd(
    X, y, loss, rho, delta, epsilon_target, config, rng, sample_weight, caveats
):
    """Multi-pass DP-SGD with the private clip, as a :class:`HeavyTailFit`."""
    _, l2 = _penalty_parts(config)
    fit = fit_heavy_tail_dpsgd(
        X,
        y,
        loss,
        rho=rho,
        delta=delta,
        epsilon_target=epsilon_target,
        config=config,
        rng=rng,
        l2=l2,
        sample_weight=sample_weight,
        caveats=caveats,
    )
    return HeavyTailFit(
        coef=fit.coef,
        intercept=fit.intercept,
        solver="dp-sgd",
        n_iter=fit.n_iter,
        batch_size=fit.batch_size,
        clip_threshold=fit.clip_threshold,
        noise_std=fit.noise_std,
        smoothness=None,
        strong_convexity=None,
        rho_spent=fit.rho_spent,
        record=fit.record,
        optimizer_epsilon=fit.optimizer_epsilon,
        target_location=fit.target_location,
        target_scale=fit.target_scale,
        fallback=fit.fallback,
    )


def _acsa_eta(config, n, d, n_steps, beta, diameter, clip, noise_std, scale):
    """Step constant of Algorithm 8: theory (with the bias bound) or practical."""
    if config.mode == "theory":
        k = config.moment_order
        r = config.moment_bound
        bias = 0.0 if math.isinf(clip) else r**k / ((k - 1.0) * clip ** (k - 1.0))
        noise_sq = d * noise_std**2 + r**2 * n_steps / n
        return acsa_step_size(n_steps, beta, diameter, noise_sq, bias)
    # Practical AC-SA (spec 4.4, item 7): B dropped, C^2 bounds E||g~||^2.
    second = clip if not math.isinf(clip) else scale
    noise_sq = d * noise_std**2 + second**2 * n_steps / n
    return acsa_step_size(n_steps, beta, diameter, noise_sq)


def _run_localized(
    X, y, loss, config, rng, d, eps, diameter, scale, median, rho_opt, fixed_steps, s
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
        diameter=diameter,
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
        f"{_MECHANISM_NAMES['localized']}: {len(plan)} phases on disjoint "
        f"blocks of rows, composed in parallel (each record enters one phase); "
        f"phase i composes its T_i steps sequentially, each a Gaussian release "
        f"of noise multiplier sqrt(T_i / (2 rho)) at sensitivity 2 C_i, so "
        f"every phase is rho-zCDP ({phases}); the event and the recorded "
        f"noise multiplier, sensitivity and steps are those of phase "
        f"{index + 1}"
    )


def _format_ledger(spent):
    return ", ".join(f"{name}={rho:.4g}" for name, rho in spent.items())
