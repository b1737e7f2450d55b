# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Choose alpha, the learning rate and the number of steps from public rows only.

Tuning a private fit on its own (private) training or validation loss leaks:
the selected configuration is a function of the private rows. Here the
choice is made by *predicting* the excess test risk of each candidate with a
linear-Gaussian model of the preconditioned semi-DP iteration whose inputs
are all public: the :class:`~._public_geometry.PublicGeometry` of the public
rows, the public counts, and the noise multiplier calibrated from
``(epsilon, delta)`` and the number of steps. No private row is read, so the
choice is free.

The model (scale-free coordinates ``u = D^1/2 w``, eigenbasis of ``H~``):

* the clipped private gradient has curvature ``k(sigma_r) I`` and per-row
  variance ``s2(sigma_r) I`` for Gaussian residuals of standard deviation
  ``sigma_r`` (computed from the public row norms, ``C`` and ``sigma_r``);
* the warm start's error in direction ``i`` has variance
  ``sigma^2 / (n_pub h_i)`` and the unclipped public gradient curvature
  ``c h_i``;
* with ``a_i = alpha k + (1 - alpha) c h_i`` the tail-averaged output has the
  stationary error variance
  ``(alpha^2 (tau^2 / T_avg + k^2 v_lad) + (1 - alpha)^2 c^2 h_i sigma^2 / n_pub) / a_i^2``
  (the inverse-variance combination of the public and the noisy private
  estimates, Prop. 18 of the thesis applied per direction), plus the
  burn-in bias left by ``T`` steps of size ``eta`` from the warm start;
* ``sigma_r^2 = sigma^2 + (excess error of the iterates)`` closes the loop:
  noisy iterates sit further from the optimum, where clipped gradients are
  flatter.

On the Gaussian benchmark of the thesis (``benchmarks/bench_semidp.py``) the
predicted test MSE tracks the measured one within a few percent over the
whole grid, which is what makes the argmin a good choice.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import erf

__all__ = [
    "AUTO_LEARNING_RATES",
    "AUTO_MAX_ITERS",
    "HyperparameterChoice",
    "check_clip_norm_range",
    "choose_hyperparameters",
    "clipped_gradient_moments",
    "inverse_variance_weight",
    "predicted_excess_risk",
]

#: Candidate numbers of full-batch steps. The GDP noise grows like sqrt(T),
#: so the total private information does not depend on T; more steps only
#: help the burn-in and cost run time. 40 was never needed on the benchmark.
AUTO_MAX_ITERS = (10, 20, 40)
#: Candidate step sizes, in units of a full Newton step of the model.
AUTO_LEARNING_RATES = (0.25, 0.5, 1.0)
#: Candidate private weights: logit-spaced, dense near 1 where large budgets
#: put the optimum.
AUTO_ALPHAS = 1.0 / (1.0 + np.exp(-np.linspace(-4.5, 9.0, 55)))
#: Fraction of the last iterates that are averaged (the released point).
TAIL_FRACTION = 0.75
# Self-consistency iterations for sigma_r; the map is a contraction and 8
# iterations change the predicted risk by < 0.1 % on the benchmark.
_N_FIXED_POINT = 8
# Number of row-norm quantiles that summarize the public rows in the model.
_N_NORM_QUANTILES = 32


@dataclass(frozen=True)
class HyperparameterChoice:
    """The chosen ``alpha``, learning rate and number of steps, and why.

    ``predicted_excess_risk`` is the model's excess test MSE
    ``E[(x^T (w - w*))^2]`` of the choice; ``curvature`` the model curvature
    ``k`` used in the Newton preconditioner.
    """

    alpha: float
    learning_rate: float
    max_iter: int
    curvature: float
    predicted_excess_risk: float


def check_clip_norm_range(clip_norm):
    """Refuse a finite ``clip_norm`` whose square or inverse square leaves float64.

    The model divides by ``C^2`` (the variance of a ``C``-normalized clipped
    gradient) and squares ``1 / C`` (the unclipped public gradient's
    curvature), so both must be finite: ``C`` between about ``7.5e-155``
    and ``1.3e154``. ``inf`` (no clipping: the non-private limit) passes.
    Reads the parameter only.

    Raises
    ------
    ValueError
        Naming ``clip_norm``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp._public_tuning import check_clip_norm_range
    >>> check_clip_norm_range(1e-100)
    >>> check_clip_norm_range(1e-160)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: clip_norm is too small: ...
    """
    clip = float(clip_norm)
    if math.isinf(clip):
        return
    # Products, not **: a float square that overflows raises there.
    if not math.isfinite(clip * clip):
        raise ValueError(
            "clip_norm is too large: the private solvers model the clipped "
            f"gradients through clip_norm**2, which overflows float64 for "
            f"clip_norm={clip:g}. Use a clip norm of the size of the "
            "per-example gradients."
        )
    inverse = 1.0 / clip
    if not math.isfinite(inverse * inverse):
        raise ValueError(
            "clip_norm is too small: the private solvers model the clipped "
            "gradients through 1 / clip_norm**2, which overflows float64 for "
            f"clip_norm={clip:g}. Use a clip norm of the size of the "
            "per-example gradients."
        )


def inverse_variance_weight(v_public, v_private):
    """Weight ``alpha*`` of the private estimate and the combined variance.

    Proposition 18 of the thesis: for unbiased public and (noisy) private
    estimates with variances ``v_public`` and ``v_private``,
    ``alpha* = v_pub / (v_pub + v_priv)`` minimizes the variance of
    ``alpha * private + (1 - alpha) * public``, which is then
    ``v_pub v_priv / (v_pub + v_priv)``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp._public_tuning import inverse_variance_weight
    >>> inverse_variance_weight(1.0, 3.0)
    (0.25, 0.75)
    """
    total = v_public + v_private
    return v_public / total, v_public * v_private / total


def norm_quantiles(row_norms):
    """Quantiles of the public row norms that stand in for all public rows."""
    levels = (np.arange(_N_NORM_QUANTILES) + 0.5) / _N_NORM_QUANTILES
    # A zero row has a zero gradient; the floor keeps C / ||x|| finite.
    return np.maximum(np.quantile(row_norms, levels), 1e-12)


def clipped_gradient_moments(residual_sd, norms, clip_norm):
    """Curvature and variance of one clipped, ``C``-normalized gradient.

    For residuals ``r ~ N(0, sigma_r^2)`` and a row of norm ``||x||`` the
    clipped gradient is ``r x min(1, C / (|r| ||x||)) / C``: linear in ``r``
    while ``|r| < c = C / ||x||``, constant beyond. Per scale-free coordinate
    its mean slope is ``P(|r| < c) / C`` and its variance
    ``E[min(r^2, c^2)] / C^2``, averaged over the public row norms.

    Parameters
    ----------
    residual_sd : ndarray of shape (A,)
    norms : ndarray of shape (m,)
        Public row norms (or their quantiles).
    clip_norm : float
        ``C``; ``inf`` means no clipping (and no normalization).

    Returns
    -------
    curvature, variance : ndarray of shape (A,)
    """
    sd = np.asarray(residual_sd, dtype=float)[:, None]
    if math.isinf(clip_norm):
        return np.ones(sd.shape[0]), sd[:, 0] ** 2
    c = clip_norm / norms[None, :]
    z = c / sd
    inside = erf(z / math.sqrt(2.0))
    pdf = np.exp(-0.5 * z**2) / math.sqrt(2.0 * math.pi)
    # An infinite residual spread (public targets near 1e154 or beyond square
    # past the largest float) clips every residual: the first term's limit
    # is 0, where its product would be inf * 0.
    with np.errstate(over="ignore", invalid="ignore"):
        first = sd**2 * (inside - 2.0 * z * pdf)
    first = np.where(np.isinf(sd), 0.0, first)
    second = first + c**2 * (1.0 - inside)
    # clip_norm * clip_norm, not **: a Python float square that leaves the
    # float range raises (check_clip_norm_range refuses such a C up front).
    return inside.mean(axis=1) / clip_norm, second.mean(axis=1) / (
        clip_norm * clip_norm
    )


# A public-only candidate (alpha = 0) in a direction no public row sees (h =
# 0) has no model (0 / 0): NaN, ranked last by choose_hyperparameters. So is
# one whose terms overflow (a clip norm near the smallest that
# check_clip_norm_range admits makes the public curvature 1 / C near 1e154).
@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def predicted_excess_risk(
    alpha,
    geometry,
    *,
    norms,
    clip_norm,
    public_curvature,
    n_private,
    step_noise_var,
    n_steps,
    learning_rate,
):
    """Model excess test MSE of the tail-averaged preconditioned iteration.

    Parameters
    ----------
    alpha : ndarray of shape (A,)
        Candidate private weights.
    geometry : PublicGeometry
    norms : ndarray
        Public row-norm quantiles.
    clip_norm : float
    public_curvature : float or None
        ``c`` of the unclipped public gradient (``1/C``); None when public
        gradients are clipped too (their curvature is then ``k``).
    n_private : int
    step_noise_var : float
        ``tau^2``: per-coordinate variance of the privacy noise (plus any
        subsampling noise) on the private mean gradient of one step.
    n_steps : int
    learning_rate : float

    Returns
    -------
    excess : ndarray of shape (A,)
    curvature : ndarray of shape (A,)
        Model curvature ``k`` at the predicted error (for the preconditioner).
    """
    alpha = np.asarray(alpha, dtype=float)[:, None]
    h = geometry.eigvals[None, :]
    sigma2 = geometry.noise_variance
    n_pub = geometry.n_public
    eta = float(learning_rate)
    t_avg = max(1, math.ceil(TAIL_FRACTION * n_steps))  # as the solver
    t0 = n_steps - t_avg
    # Warm start error per direction; unseen directions are capped at the
    # public target variance (their error is the unknown signal there).
    with np.errstate(divide="ignore"):
        init = np.minimum(sigma2 / (n_pub * h), sigma2 + 1.0)

    excess = np.zeros(alpha.shape[0])
    wander = np.zeros(alpha.shape[0])
    for _ in range(_N_FIXED_POINT):
        sd = np.sqrt(sigma2 + excess + wander)
        k, s2 = clipped_gradient_moments(sd, norms, clip_norm)
        k = k[:, None]
        c = k if public_curvature is None else public_curvature
        a = alpha * k + (1.0 - alpha) * c * h
        noise = alpha**2 * (step_noise_var / t_avg + s2[:, None] / n_private)
        # In place (the same values as (noise + public) / a**2): the (A, p)
        # tables are the tuning's whole memory, which must stay small next
        # to a sparse X of few stored entries.
        # c * c, not c**2: c may be a Python float (1 / C), whose square
        # raises where it leaves the float range.
        variance = (1.0 - alpha) ** 2 * (c * c) * h * sigma2 / n_pub
        variance += noise
        variance /= a**2
        stationary = np.sum(variance, axis=1)
        del variance

        # Burn-in: the distance to the fixed point (the private share of the
        # warm start's error) shrinks by rho_t per step; clipped gradients
        # are flatter while the error is large.
        gap = np.sqrt(init) * (alpha * k / a)
        tail_sum = np.zeros_like(gap)
        # With every a_i positive and finite each step's factor is finite, so
        # a gap that has decayed to exactly 0 stays 0 and adds nothing to the
        # tail: the remaining steps are skipped (the same result, bit for bit,
        # in a few thousand steps however many the run takes).
        settles = bool(np.all((a > 0) & np.isfinite(a)))
        for t in range(n_steps):
            sd_t = np.sqrt(sigma2 + excess + wander + np.sum(gap**2, axis=1))
            k_t = clipped_gradient_moments(sd_t, norms, clip_norm)[0][:, None]
            c_t = k_t if public_curvature is None else public_curvature
            gap = gap * (1.0 - eta * (alpha * k_t + (1.0 - alpha) * c_t * h) / a)
            if t >= t0:
                tail_sum += gap
            if settles and not gap.any():
                break
        bias = np.sum((tail_sum / t_avg) ** 2, axis=1)

        wander = np.sum(
            eta / (2.0 - eta) * alpha**2 * step_noise_var / a**2, axis=1
        )
        excess = stationary + bias
        # Not alive while the next round builds its own.
        del a, gap, tail_sum
    return excess, k[:, 0]


def choose_hyperparameters(
    geometry,
    *,
    clip_norm,
    public_clipping,
    n_private,
    step_noise_var_of,
    alphas=None,
    learning_rates=None,
    max_iters=None,
):
    """Minimize :func:`predicted_excess_risk` over a grid; public inputs only.

    Parameters
    ----------
    geometry : PublicGeometry
    clip_norm : float
    public_clipping : bool
    n_private : int
    step_noise_var_of : callable
        ``T -> tau^2`` (the calibrated per-step noise variance for ``T``
        steps; calibration depends only on the budget).
    alphas, learning_rates, max_iters : sequence or None
        Candidates; None uses the defaults of this module. A single value
        fixes that hyperparameter.

    Returns
    -------
    choice : HyperparameterChoice
    """
    alphas = AUTO_ALPHAS if alphas is None else np.asarray(alphas, dtype=float)
    learning_rates = AUTO_LEARNING_RATES if learning_rates is None else learning_rates
    max_iters = AUTO_MAX_ITERS if max_iters is None else max_iters
    public_curvature = None if public_clipping else (
        1.0 / clip_norm if not math.isinf(clip_norm) else 1.0
    )
    # What every candidate shares: the public rows, the clip and the counts.
    model = {
        "norms": norm_quantiles(geometry.row_norms),
        "clip_norm": clip_norm,
        "public_curvature": public_curvature,
        "n_private": n_private,
    }
    best = None
    for n_steps in max_iters:
        noise_var = step_noise_var_of(n_steps)
        for eta in learning_rates:
            excess, k = predicted_excess_risk(
                alphas, geometry, step_noise_var=noise_var, n_steps=int(n_steps),
                learning_rate=eta, **model,
            )
            # Degenerate public rows (e.g. a single one) can make the model
            # overflow; such candidates rank last instead of poisoning the min.
            excess = np.nan_to_num(excess, nan=np.inf)
            j = int(np.argmin(excess))
            if best is None or excess[j] < best.predicted_excess_risk:
                best = HyperparameterChoice(
                    alpha=float(alphas[j]),
                    learning_rate=float(eta),
                    max_iter=int(n_steps),
                    curvature=float(k[j]),
                    predicted_excess_risk=float(excess[j]),
                )
    return best
