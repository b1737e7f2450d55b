# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What "n treated as public" costs: the true epsilon of a division by the count.

A one-step release divides a noisy clipped sum by the number of private
records it was computed on, ``(S + N(0, sigma^2 C^2 I_p)) / n``, with
``sigma`` calibrated by dp-accounting for the claimed ``(epsilon, delta)``
of a Gaussian sum of sensitivity ``C`` under add/remove adjacency. Adding
one record changes both the sum (by at most ``C``) and the divisor
(``n -> n + 1``), so the neighbouring outputs are Gaussians with different
means *and* different scales:

    A = N(S / n, (sigma C / n)^2 I_p),
    B = N((S + v) / (n + 1), (sigma C / (n + 1))^2 I_p).

Scaled by ``n + 1`` (a bijection), ``A`` has mean ``S (n + 1) / n``, ``B``
mean ``S + v``; the mean gap ``S / n - v`` reaches ``2 C`` (every record's
term ``-C u``, the added one ``+C u``), and the scale ratio is
``(n + 1) / n``. The privacy loss of two isotropic Gaussians splits into the
coordinate along the gap (a 1-D integral) and a scaled chi-square with
``p - 1`` degrees of freedom in the others, so the hockey-stick divergence
``delta(eps) = P[L > eps] - e^eps Q[L > eps]`` is computed exactly (by
quadrature on a fine grid), in both directions (add and remove), and the
true epsilon at the claimed delta is found by bisection. No sampling, one
step: what semidp-gd's one step and full-batch DP-SGD release before their
post-processing.

Run: ``python benchmarks/bench_public_counts.py`` (about a minute).
"""

import math

import numpy as np
from scipy.special import log_ndtr
from scipy.stats import chi2

from sklearn_dpfair.privacy import calibrate_noise_multiplier

CLAIMED_EPSILON, DELTA = 1.0, 1e-5
COUNTS = (20, 100, 1000, 10_000)
DIMENSIONS = (1, 10, 100)
_GRID = 40_001
_SPAN = 40.0  # standard deviations of the integration range


def hockey_stick(eps, mean_p, sd_p, mean_q, sd_q, dim):
    """``delta(eps)`` of ``P = N(mean_p e1, sd_p^2 I)`` against ``Q`` likewise.

    Exact up to the quadrature of the gap coordinate (``_GRID`` points over
    ``_SPAN`` standard deviations of either distribution).
    """
    lo = min(mean_p - _SPAN * sd_p, mean_q - _SPAN * sd_q)
    hi = max(mean_p + _SPAN * sd_p, mean_q + _SPAN * sd_q)
    y = np.linspace(lo, hi, _GRID)
    dy = y[1] - y[0]
    # L(y1, R) = c0 + f(y1) + k R, R the squared norm of the other dim - 1
    # coordinates.
    c0 = dim * math.log(sd_q / sd_p)
    f = -((y - mean_p) ** 2) / (2 * sd_p**2) + (y - mean_q) ** 2 / (2 * sd_q**2)
    k = 1 / (2 * sd_q**2) - 1 / (2 * sd_p**2)
    log_dens_p = -((y - mean_p) ** 2) / (2 * sd_p**2) - math.log(sd_p * math.sqrt(2 * math.pi))
    log_dens_q = -((y - mean_q) ** 2) / (2 * sd_q**2) - math.log(sd_q * math.sqrt(2 * math.pi))
    slack = eps - c0 - f  # L > eps  <=>  k R > slack
    if dim == 1:
        exceed_p = exceed_q = (slack < 0).astype(float)
    else:
        # R = sd^2 chi2(dim - 1) under each distribution.
        with np.errstate(divide="ignore", invalid="ignore"):
            t = slack / k
        if k > 0:
            exceed_p = np.where(t <= 0, 1.0, chi2.sf(np.maximum(t, 0) / sd_p**2, dim - 1))
            exceed_q = np.where(t <= 0, 1.0, chi2.sf(np.maximum(t, 0) / sd_q**2, dim - 1))
        else:
            exceed_p = np.where(t <= 0, 0.0, chi2.cdf(np.maximum(t, 0) / sd_p**2, dim - 1))
            exceed_q = np.where(t <= 0, 0.0, chi2.cdf(np.maximum(t, 0) / sd_q**2, dim - 1))
    p_mass = np.sum(np.exp(log_dens_p) * exceed_p) * dy
    q_mass = np.sum(np.exp(log_dens_q + eps) * exceed_q) * dy
    return max(0.0, p_mass - q_mass)


def true_epsilon(n, sigma, dim, delta=DELTA):
    """Epsilon at ``delta`` of the division by the private count, both ways."""
    # Scaled by n + 1, in units of C: A (n records) against B (n + 1).
    sd_a, sd_b = sigma * (n + 1) / n, sigma
    mean_a, mean_b = 0.0, 2.0  # only the gap matters: 2 C at worst

    def delta_at(eps):
        return max(
            hockey_stick(eps, mean_a, sd_a, mean_b, sd_b, dim),
            hockey_stick(eps, mean_b, sd_b, mean_a, sd_a, dim),
        )

    lo, hi = 0.0, 1.0
    while delta_at(hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(24):  # 2^-24 of the bracket: well below the 3 decimals shown
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if delta_at(mid) > delta else (lo, mid)
    return hi


def main():
    sigma = calibrate_noise_multiplier(CLAIMED_EPSILON, DELTA, 1.0, 1, "pld")
    # Sanity check of the quadrature: equal counts (no division effect) and
    # gap C give back the claimed epsilon.
    same = true_epsilon_equal_counts(sigma)
    print(f"noise multiplier {sigma:.4f} (claimed epsilon {CLAIMED_EPSILON}, "
          f"delta {DELTA:g}); check with equal counts: epsilon {same:.3f}")
    header = "n_private | " + " | ".join(f"p = {d}" for d in DIMENSIONS)
    print(header)
    for n in COUNTS:
        row = [f"{true_epsilon(n, sigma, d):.3f}" for d in DIMENSIONS]
        print(f"{n} | " + " | ".join(row))


def true_epsilon_equal_counts(sigma, delta=DELTA):
    """The claimed case: the same divisor on both sides, gap ``C``."""
    lo, hi = 0.0, 8.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        d = hockey_stick(mid, 0.0, sigma, 1.0, sigma, 1)
        lo, hi = (mid, hi) if d > delta else (lo, mid)
    return hi


if __name__ == "__main__":
    main()
