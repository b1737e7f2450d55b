# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate, choose, solve, describe: the fit behind ``SemiDPLinearRegression``.

Order of work, so that nothing private is read before it is needed:

1. copy the public rows out by the (public) mask; the private rows stay in
   place, addressed by the mask (no copy of them: issue 9's memory target);
2. public statistics, warm start and the "auto" hyperparameters from the
   public rows only (``_public_geometry``, ``_public_tuning``);
3. noise multiplier from ``(epsilon, delta)``, the sampling rate and the
   number of steps (dp-accounting, ``calibrate_noise_multiplier``);
4. the semi-DP iteration (``_semidp``), where private rows enter only
   through noisy clipped sums;
5. the :class:`~sklearn_dpfair.privacy.PrivacyRecord` of the run.

Adjacency. Only private rows are protected (semi-DP, thesis Definition 14);
which rows are public, and the counts, are public. Under ``"replace_one"``
one private row moves a clipped sum by ``2 C``, under ``"add_remove"`` by
``C``. The noise std is ``z * sensitivity`` and the event is
``GaussianDpEvent(z)`` accounted under add/remove, i.e. the factor 2 is
folded into the sensitivity as ``privacy/_accounting.py`` prescribes.

The :class:`~sklearn_dpfair.privacy.PrivacyRecord` describes exactly the
event given to the accountant: ``noisy_sgd_event(noise_multiplier,
sampling_probability or 1, steps)``, or a no-op when ``steps == 0``
(``public_only``: no private sum is released, ``clip_norm`` is None). Its
``clip_norm`` is the sensitivity of one released sum (``C`` or ``2 C``;
``inf`` for ``epsilon = inf``, where the private rows are not clipped).

No exception or warning after input validation depends on the private rows:
the checks read the public rows, the counts and the parameters only, and the
solver maps a private row whose terms overflow to the fixed contribution 0.
"""

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from ...privacy._accounting import (
    epsilon_of,
    no_op_event,
    noisy_sgd_event,
    non_private_event,
)
from ...privacy._calibration import calibrate_noise_multiplier
from ...privacy._mechanism import GaussianMechanism
from ...privacy._record import PrivacyRecord
from ...utils._validation import normalized_weights
from ._public_geometry import (
    newton_preconditioner,
    pda_md_preconditioner,
    public_geometry,
)
from ._public_tuning import (
    TAIL_FRACTION,
    HyperparameterChoice,
    choose_hyperparameters,
    clipped_gradient_moments,
    inverse_variance_weight,
    norm_quantiles,
)
from ._solver import SemiDPData, semidp_gradient_descent

__all__ = ["SENSITIVITY_FACTOR", "SemiDPFit", "fit_semidp"]

# Float round-off allowed when re-checking a calibrated multiplier.
_BUDGET_RTOL = 1e-9

#: Sensitivity of a clipped sum in units of the clip norm, per adjacency.
SENSITIVITY_FACTOR = {"add_remove": 1.0, "replace_one": 2.0}

_MECHANISM_NAME = {
    "semidp_gd": "semi-DP noisy full-batch GD (thesis Algorithm 11, Gaussian)",
    "semidp_sgd": "semi-DP noisy SGD, Poisson-sampled private rows (Algorithm 11)",
    # semidp_sgd whose expected batch holds every private row (q = 1).
    "semidp_sgd_full": (
        "semi-DP noisy SGD with sampling rate 1: every private row in every "
        "step, i.e. full-batch GD (thesis Algorithm 11, Gaussian)"
    ),
    "dp_gd": "DP-GD on all rows, public rows treated as private",
    "pda_md": "PDA-MD: DP-GD on private rows, public-Hessian mirror map",
    "public_only": "public rows only (private rows discarded)",
}

# Defaults when no public row can inform a choice. 20 full-batch steps: the
# total privacy noise does not depend on T (GDP composition), and 20 steps
# converge from the warm start on the benchmark. Without public rows there is
# no curvature estimate, so the plain step is 1 (a clipped, C-normalized
# gradient has norm <= 1).
DEFAULT_MAX_ITER = 20
DEFAULT_EPOCHS = 5
DEFAULT_PLAIN_LEARNING_RATE = 1.0
# Plain (identity-preconditioned) solvers step half of the model's Newton
# step 1/k: the model curvature is that at the optimum, larger than the
# curvature far from it, so a full step would overshoot near convergence.
PLAIN_NEWTON_FRACTION = 0.5
# semidp_sgd's default expected private batch: 5 % of the private rows, at
# least 256 (as DPLogisticRegression's "auto").
AUTO_BATCH_FRACTION, AUTO_BATCH_MIN = 0.05, 256


@dataclass
class SemiDPFit:
    """Result of :func:`fit_semidp`."""

    coef: np.ndarray
    intercept: float
    warm_start_coef: np.ndarray
    alpha: float
    learning_rate: float
    n_steps: int
    record: PrivacyRecord
    choice: HyperparameterChoice | None


@functools.lru_cache(maxsize=1024)
def _noise_multiplier(epsilon, delta, q, steps, accountant):
    """Calibrated noise multiplier of ``steps`` (sub)sampled Gaussian steps.

    Full batch: ``T`` composed Gaussians of multiplier ``z`` are exactly one
    Gaussian of multiplier ``z / sqrt(T)`` (GDP composition; both
    accountants agree), so one calibration serves every ``T``. The result is
    re-checked on the composed event itself and recalibrated directly in
    the (never observed) case that it overshoots.
    """
    if math.isinf(epsilon):
        return 0.0
    if q >= 1.0:
        z = math.sqrt(steps) * calibrate_noise_multiplier(
            epsilon, delta, 1.0, 1, accountant
        )
        spent = epsilon_of(noisy_sgd_event(z, 1.0, steps), delta, accountant)
        if spent <= epsilon * (1.0 + _BUDGET_RTOL):
            return z
    return calibrate_noise_multiplier(epsilon, delta, q, steps, accountant)


def _record(solver, z, sensitivity, q, steps, *, delta, accountant, adjacency):
    name = solver
    if solver == "public_only":
        # The output does not depend on private rows: a no-op (epsilon 0),
        # no private sum released, hence no sensitivity.
        event, sensitivity = no_op_event(), None
    elif z > 0:
        event = noisy_sgd_event(z, q, steps)
    else:
        event = non_private_event()
    if solver == "semidp_sgd" and q >= 1.0:
        name = "semidp_sgd_full"
    return PrivacyRecord.from_event(
        event,
        delta=delta,
        accountant=accountant,
        adjacency=adjacency,
        mechanism=_MECHANISM_NAME[name],
        noise_multiplier=z,
        clip_norm=sensitivity,
        # Full batch involves no sampling; the summary then omits the rate.
        sampling_probability=q if q < 1.0 else None,
        steps=steps,
    )


def _plain_learning_rate(geometry, clip_norm):
    """Half a Newton step of the clipped curvature at the public noise level."""
    if geometry.n_public == 0:
        return DEFAULT_PLAIN_LEARNING_RATE
    k, _ = clipped_gradient_moments(
        np.array([math.sqrt(geometry.noise_variance)]),
        norm_quantiles(geometry.row_norms),
        clip_norm,
    )
    return PLAIN_NEWTON_FRACTION / float(k[0] * np.mean(geometry.scale))


def _thesis_alpha(geometry, *, step_noise_var, n_steps, n_private):
    """Spec section 5.2's full-batch rule for Algorithm 11 with clipped public rows.

    ``v_pub = V2 / n_pub``, ``v_priv = V2 / n_priv + p tau^2 / T`` with ``V2``
    the trace variance of one clipped, C-normalized gradient (at most 1; the
    model's per-coordinate variance times ``p``).
    """
    # Each clipped, C-normalized gradient has norm <= 1, and in the clipped
    # regime (the thesis's benchmark) its trace variance is close to 1.
    v2 = 1.0
    v_pub = v2 / geometry.n_public
    v_priv = v2 / n_private + geometry.n_params * step_noise_var / n_steps
    return inverse_variance_weight(v_pub, v_priv)[0]


_WEIGHTS_CAVEAT = (
    "sample_weight is public; each row's weighted residual is clipped, so "
    "the guarantee is per record, not per unit of weight"
)


def fit_semidp(
    X,
    y,
    public_mask,
    *,
    solver,
    epsilon,
    delta,
    alpha,
    clip_norm,
    public_clipping,
    preconditioner,
    max_iter,
    learning_rate,
    batch_size,
    public_ridge,
    fit_intercept,
    adjacency,
    accountant,
    rng,
    sample_weight=None,
):
    """Fit a semi-private linear regression; see ``SemiDPLinearRegression``.

    ``sample_weight`` (public, or None) is rescaled to mean 1 and multiplies
    each row's residual before it is clipped, in the private and the public
    gradient sums, so the iterations converge to the minimizer of the
    weighted objective and one private row still moves a sum by at most the
    clip. The
    public statistics (warm start, preconditioner, tuning) are unweighted:
    they shape the path, not the fixed point; hence "public_only", whose
    output *is* the warm start, refuses non-uniform weights.

    Returns
    -------
    fit : SemiDPFit
    """
    # Only the public block is copied (the public statistics need it); the
    # private rows are read from X through the mask by the solver.
    private_rows = ~public_mask
    weights = normalized_weights(sample_weight, X.shape[0])
    if weights is not None and solver == "public_only":
        raise ValueError(
            "solver='public_only' does not take non-uniform sample_weight (its "
            "output is the unweighted public warm start)."
        )
    Xp, yp = X[public_mask], y[public_mask]
    n_public = Xp.shape[0]
    n_private = X.shape[0] - n_public
    s = 1.0 if fit_intercept else 0.0
    geometry = public_geometry(
        Xp, yp, intercept_scaling=s, ridge=public_ridge, n_features=X.shape[1]
    )
    non_private = math.isinf(epsilon)
    clip = math.inf if non_private else float(clip_norm)
    # Of one released private sum (inf without privacy: no clipping then).
    sensitivity = SENSITIVITY_FACTOR[adjacency] * clip

    if solver == "public_only":
        record = _record(
            solver, 0.0, sensitivity, 1.0, 0,
            delta=delta, accountant=accountant, adjacency=adjacency,
        )
        return _result(geometry.warm_start, geometry, s, np.nan, np.nan, 0, record, None)

    if solver == "semidp_sgd":
        batch = (
            max(AUTO_BATCH_MIN, AUTO_BATCH_FRACTION * n_private)
            if batch_size == "auto"
            else batch_size
        )
        q = min(1.0, batch / n_private)
        epochs = DEFAULT_EPOCHS if max_iter == "auto" else max_iter
        fixed_steps = max(1, math.ceil(epochs / q - 1e-9))
    else:
        q = 1.0
        fixed_steps = None if max_iter == "auto" else int(max_iter)

    def step_noise_var(steps):
        # Per-coordinate variance of the privacy noise on the C-normalized
        # private mean gradient, in the scale-free coordinates of the model.
        z = _noise_multiplier(epsilon, delta, q, steps, accountant)
        std = SENSITIVITY_FACTOR[adjacency] * z / (q * n_private)
        return std**2 * float(np.mean(1.0 / geometry.scale))

    use_public_gradient = solver in ("semidp_gd", "semidp_sgd", "dp_gd") and n_public
    public_clip = solver == "dp_gd" or public_clipping == "clip"
    choice = None
    P = None
    if solver == "dp_gd":
        a = n_private / (n_private + n_public)
    elif solver == "pda_md" or not n_public:
        a = 1.0
    elif alpha != "auto":
        a = float(alpha)
    else:
        a = None

    if solver in ("semidp_gd", "semidp_sgd") and preconditioner == "public" and n_public:
        choice = choose_hyperparameters(
            geometry,
            clip_norm=clip,
            public_clipping=public_clip,
            n_private=n_private,
            step_noise_var_of=step_noise_var,
            alphas=None if a is None else [a],
            learning_rates=None if learning_rate == "auto" else [learning_rate],
            max_iters=(
                [fixed_steps] if fixed_steps is not None else None
            ),
        )
        a, lr, steps = choice.alpha, choice.learning_rate, choice.max_iter
        public_curv = choice.curvature if public_clip else (
            1.0 / clip if math.isfinite(clip) else 1.0
        )
        P = newton_preconditioner(geometry, [a], [choice.curvature], public_curv)
    else:
        steps = DEFAULT_MAX_ITER if fixed_steps is None else fixed_steps
        lr = (
            _plain_learning_rate(geometry, clip)
            if learning_rate == "auto"
            else float(learning_rate)
        )
        if a is None:
            a = _thesis_alpha(
                geometry,
                step_noise_var=step_noise_var(steps),
                n_steps=steps,
                n_private=n_private,
            )
        if solver == "pda_md" and n_public:
            P = pda_md_preconditioner(Xp, s, 1)

    z = _noise_multiplier(epsilon, delta, q, steps, accountant)
    record = _record(
        solver, z, sensitivity, q, steps,
        delta=delta, accountant=accountant, adjacency=adjacency,
    )
    if weights is not None:
        record = replace(
            record, caveats=(*record.caveats, _WEIGHTS_CAVEAT)
        )
    data = SemiDPData(
        X_private=X,
        y_private=y,
        X_public=Xp if use_public_gradient else Xp[:0],
        y_public=yp if use_public_gradient else yp[:0],
        intercept_scaling=s,
        # None when every row is private: no masking pass is needed then.
        private_rows=private_rows if n_public else None,
        private_weights=weights,
        public_weights=None if weights is None else weights[public_mask],
    )
    result = semidp_gradient_descent(
        data,
        geometry.warm_start[:, None],
        mechanisms=[GaussianMechanism(clip_norm=sensitivity, noise_multiplier=z)],
        alpha=np.array([a]),
        learning_rate=np.array([lr]),
        n_steps=np.array([steps]),
        clip_norm=clip,
        public_clipping=public_clip,
        sampling_probability=q,
        preconditioner=P,
        rngs=[rng],
        tail_fraction=TAIL_FRACTION,
    )
    return _result(result.params[:, 0], geometry, s, a, lr, steps, record, choice)


def _result(params, geometry, s, a, lr, steps, record, choice):
    n_coef = params.shape[0] - (1 if s else 0)
    return SemiDPFit(
        coef=params[:n_coef].copy(),
        intercept=float(s * params[n_coef]) if s else 0.0,
        warm_start_coef=geometry.warm_start[:n_coef].copy(),
        alpha=float(a),
        learning_rate=float(lr),
        n_steps=int(steps),
        record=record,
        choice=choice,
    )
