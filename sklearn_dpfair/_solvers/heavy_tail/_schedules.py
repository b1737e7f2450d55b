# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public constants of the heavy-tailed DP optimizers (Lowy's thesis, chapter 4).

Every function here maps *public* quantities (n, d, the zCDP budget, the
moment order k, curvature and scale constants that are either declared or
privately estimated) to the number of steps, the batch size, the clip
threshold and the step sizes. None reads data, so none costs privacy.

Notation follows the thesis: ``eps = sqrt(2 rho)`` is the zCDP parameter of
chapter 4 (not the epsilon of (epsilon, delta)-DP), ``d`` the number of
parameters (features + intercept), ``D`` the diameter of the constraint
ball, ``k`` the moment order and ``r`` the gradient-norm scale (the moment
bound r_k in theory mode, a private median in practical mode).
"""

import math

import numpy as np

__all__ = [
    "acsa_saturation_eps",
    "acsa_step_size",
    "acsa_steps",
    "clip_auto",
    "clip_theory",
    "mean_oracle_sigma",
    "prox_steps",
    "sgd_steps",
    "sgd_steps_practical",
    "snr_factor",
    "step_cap",
    "stich_schedule",
    "zcdp_eps",
]

# Smallest batch of the practical step cap: below 16 rows a
# clipped mean is dominated by a single row.
_MIN_BATCH = 16
# The cap keeps the per-step noise norm sqrt(d) sigma <= C / 2, i.e. a batch
# of at least 4 sqrt(d) / eps rows (sigma = 2 C / (s eps)).
_NOISE_TO_CLIP = 4.0


def zcdp_eps(rho):
    """The thesis' ``eps = sqrt(2 rho)`` of a rho-zCDP budget.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import zcdp_eps
    >>> round(zcdp_eps(0.0208199), 5)
    0.20406
    """
    return math.sqrt(2.0 * rho)


def mean_oracle_sigma(clip, batch_size, eps):
    """Per-coordinate noise std of MeanOracle1 on a mean of ``batch_size`` rows.

    The replace-one sensitivity of a clipped mean is ``2 C / s``; the
    Gaussian mechanism with ``sigma = 2 C / (s eps)`` is ``eps^2 / 2``-zCDP
    (thesis, Algorithm 5 and table 3.6).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import mean_oracle_sigma
    >>> round(mean_oracle_sigma(139.49, 487, 0.20406), 3)
    2.807
    """
    if math.isinf(eps):
        return 0.0
    return 2.0 * clip / (batch_size * eps)


def snr_factor(solver, eps, n, d, n_steps):
    """The "signal-to-noise" factor of a solver's clip rule (Thms 173, 176, 63, 163).

    ``eps n / sqrt(d T)`` for "sgd" and "acsa", ``eps n / (sqrt(d) T)`` for
    "prox" and ``eps n_i / sqrt(d ln n)`` for a "localized" phase of
    ``n_i = n`` rows out of ``n_steps`` total rows.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import snr_factor
    >>> round(snr_factor("sgd", 0.2040585, 20000, 11, 40), 2)
    194.56
    """
    if solver in ("sgd", "acsa"):
        return eps * n / math.sqrt(d * n_steps)
    if solver == "prox":
        return eps * n / (math.sqrt(d) * n_steps)
    if solver == "localized":
        return eps * n / math.sqrt(d * math.log(n_steps))
    raise ValueError(f"Unknown solver {solver!r}.")


def clip_theory(moment_bound, snr, k):
    """The thesis' clip threshold ``C = r_k * snr^(1/k)`` (Thm 173/176).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import clip_theory
    >>> round(clip_theory(10.0, 194.57, 2.0), 2)
    139.49
    """
    return moment_bound * snr ** (1.0 / k)


def clip_auto(median, snr, k, clip_ref):
    """The practical clip rule ``C = m * max(1, snr / c0)^(1/k)``.

    ``m`` is a private median of the per-sample gradient norms: a robust
    private scale that replaces the worst-case moment ``r_k`` while keeping
    the theory's growth of C with ``n``, ``eps`` and ``1/d``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import clip_auto
    >>> clip_auto(2.0, 400.0, 2.0, 100.0)
    4.0
    """
    return median * max(1.0, snr / clip_ref) ** (1.0 / k)


def step_cap(n, d, eps):
    """Largest T with ``T + 1`` batches of at least ``max(16, 4 sqrt(d)/eps)`` rows.

    With that batch size the per-step noise norm ``sqrt(d) sigma`` is at
    most ``C / 2`` (MeanOracle1's noise, thesis Algorithm 5). At least 1.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import step_cap
    >>> step_cap(20000, 11, 0.20406)
    302
    """
    s_min = _MIN_BATCH
    if not math.isinf(eps):
        s_min = max(s_min, math.ceil(_NOISE_TO_CLIP * math.sqrt(d) / eps))
    return max(1, n // s_min - 1)


def sgd_steps(n, d, eps, k, mu, beta, diameter, scale):
    """Number of steps T of Algorithm 27 (noisy clipped SGD, Thm 176).

    ``T = ceil(4 kappa ln((mu beta D^2 / r^2) (n + (eps^2 n^2 / d)^((k-1)/k))))``,
    at least 1.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import sgd_steps
    >>> sgd_steps(20000, 11, 0.20406, 2.0, 1.0, 1.0, 10.0, 10.0)
    40
    """
    kappa = beta / mu
    growth = n + (eps**2 * n**2 / d) ** ((k - 1.0) / k)
    # Products, not **: a square past the largest float is inf here (a
    # Python float ** raises), which caps the steps below.
    arg = (mu * beta * (diameter * diameter) / (scale * scale)) * growth
    if math.isinf(arg):
        return math.inf
    return max(1, math.ceil(4.0 * kappa * math.log(max(arg, 1.0))))


def sgd_steps_practical(n, d, eps, mu, beta, radius, scale):
    """Practical number of steps of Algorithm 27: contraction balanced against noise.

    Gradient steps ``1/beta`` contract the distance to the optimum by
    ``1 - 1/kappa`` each, so the optimization error after T steps is about
    ``beta R^2 exp(-2 T / kappa)`` from a start at distance ``R`` (the
    constraint radius, public); the noise error of the average grows like
    ``4 d C^2 T / (mu (eps n)^2)``. Balancing the two gives
    ``T = (kappa / 2) ln(mu^2 R^2 (eps n)^2 / (2 d C^2))`` with the gradient
    scale ``C ~ scale``. Thm 176's ``4 kappa ln(...)`` bounds the same
    trade-off with worst-case constants and is 4-10 times larger; in
    experiments the smaller T was 3-10 times more accurate (the damage of
    Alg. 27 comes from large T and small batches).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import sgd_steps_practical
    >>> sgd_steps_practical(10000, 6, 0.23, 1.0, 1.0, 10.0, 3.0)
    8
    """
    kappa = beta / mu
    # Products, not **: a square past the largest float is inf here (a
    # Python float ** raises), which caps the steps below.
    root = mu * radius * eps * n
    arg = (root * root) / (2.0 * d * (scale * scale))
    if math.isinf(arg):
        return math.inf
    return max(1, math.ceil(0.5 * kappa * math.log(max(arg, 1.0))))


def acsa_steps(n, d, eps, k, beta, diameter, scale):
    """Number of steps T of Algorithm 8 (noisy clipped AC-SA, Thm 173), at least 1.

    ``T = ceil(min{(beta D/r)^(2k/(5k-1)) (eps n/sqrt(d))^((2k-2)/(5k-1)),
    sqrt(beta D/r) n^(1/4)})``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import acsa_steps
    >>> acsa_steps(20000, 11, 0.20406, 2.0, 1.0, 10.0, 10.0)
    5
    """
    ratio = beta * diameter / scale
    first = ratio ** (2 * k / (5 * k - 1)) * (eps * n / math.sqrt(d)) ** (
        (2 * k - 2) / (5 * k - 1)
    )
    second = math.sqrt(ratio) * n**0.25
    return max(1, math.ceil(min(first, second)))


def acsa_saturation_eps(n, d, n_steps, k):
    """Budget ``sqrt(d T) n^(k/(2k-2) - 1)`` past which Thm 173's bound stops improving.

    With the clip ``C = r (eps n / sqrt(d T))^(1/k)``, Algorithm 8's excess
    risk is at most of order ``beta D^2 / T^2 + r D / sqrt(n)`` plus a
    privacy-noise term ``C D sqrt(d T) / (eps n)`` and a clipping-bias term
    ``r^k D / C^(k-1)``, both equal to ``r D (sqrt(d T) / (eps n))^((k-1)/k)``
    (Lowy's thesis, proof of Thm 173, eq. C.53). They fall below the
    statistical term ``r D / sqrt(n)`` once the signal-to-noise factor
    ``eps n / sqrt(d T)`` reaches ``n^(k/(2k-2))``, i.e. for ``eps`` at least
    this value. At Thm 173's ``T`` it is the budget where ``T`` reaches its
    non-private value ``sqrt(beta D / r) n^(1/4)`` (the two terms of
    ``acsa_steps`` meet), where the rate (4.3) becomes ``r D / sqrt(n)``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import acsa_saturation_eps
    >>> round(acsa_saturation_eps(20000, 6, 30, 2.0), 3)
    13.416
    """
    return math.sqrt(d * n_steps) * n ** (k / (2.0 * (k - 1.0)) - 1.0)


def acsa_step_size(n_steps, beta, diameter, noise_sq, bias=0.0):
    """Step-size constant ``eta = max(2 beta, T^(3/2) sqrt(Sigma^2 + B^2) / D)``.

    ``noise_sq`` is the oracle's second-moment bound ``Sigma^2``; ``bias``
    the clipping-bias bound ``B`` (theory mode) or 0 (practical AC-SA,
    where B makes the steps needlessly small).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import acsa_step_size
    >>> acsa_step_size(4, 1.0, 2.0, 1.0)
    4.0
    """
    return max(2.0 * beta, n_steps**1.5 * math.sqrt(noise_sq + bias**2) / diameter)


def prox_steps(n, mu, beta):
    """Number of steps of Algorithm 29 (noisy clipped proximal SGD): ``ceil(2 kappa ln n)``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import prox_steps
    >>> prox_steps(10000, 1.0, 2.0)
    37
    """
    return max(1, math.ceil(2.0 * (beta / mu) * math.log(n)))


def stich_schedule(n_steps, mu, beta):
    """Step sizes and averaging weights of Algorithm 27 for ``t = 0..T``.

    Stich (2019), Lemma 3, with ``a = mu/2`` and ``g = beta``: constant steps
    ``1/beta`` with exponentially growing weights when ``T <= 2 kappa``;
    otherwise a warm-up half with steps ``1/beta`` and weight 0, then steps
    ``4 / (mu (4 kappa + t - t0))`` with weights ``(4 kappa + t - t0)^2``
    (continuous at ``t0``, where the step is ``1/beta``).

    Returns
    -------
    step_sizes, weights : ndarray of shape (T + 1,)

    Examples
    --------
    >>> from sklearn_dpfair._solvers.heavy_tail._schedules import stich_schedule
    >>> eta, zeta = stich_schedule(4, 1.0, 1.0)
    >>> eta.round(3).tolist(), zeta.tolist()
    ([1.0, 1.0, 1.0, 0.8, 0.667], [0.0, 0.0, 16.0, 25.0, 36.0])
    """
    kappa = beta / mu
    t = np.arange(n_steps + 1, dtype=np.float64)
    if n_steps <= 2 * kappa:
        eta = np.full_like(t, 1.0 / beta)
        # (1 - mu/(2 beta))^-(t+1), computed in logs to avoid overflow.
        zeta = np.exp(-(t + 1) * np.log1p(-mu / (2.0 * beta)))
        return eta, zeta / zeta.max()
    t0 = math.ceil(n_steps / 2)
    shifted = 4.0 * kappa + t - t0
    warm = t < t0
    eta = np.where(warm, 1.0 / beta, 4.0 / (mu * np.where(warm, 1.0, shifted)))
    zeta = np.where(warm, 0.0, shifted**2)
    return eta, zeta
