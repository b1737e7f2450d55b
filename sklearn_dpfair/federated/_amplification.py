# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy amplification by shuffling, computed numerically.

Feldman, McMillan and Talwar, "Hiding Among the Clones: A Simple and Nearly
Optimal Analysis of Privacy Amplification by Shuffling" (FOCS 2021,
arXiv:2012.12803), Theorem 3.2 and Appendix E: if ``n`` users each apply an
``eps0``-DP local randomizer (pure, possibly chosen adaptively) to their own
input and the ``n`` reports are uniformly shuffled, then for two inputs that
differ in one user the shuffled output is a post-processing of the pair

    P = (A + D, C - A + 1 - D),   Q = (A + 1 - D, C - A + D)

with ``C ~ Bin(n - 1, e^-eps0)`` (the other users' "clones"), ``A ~ Bin(C,
1/2)`` and ``D ~ Bernoulli(e^eps0 / (e^eps0 + 1))``. The shuffled output is
therefore ``(eps, delta(eps))``-DP with ``delta(eps) = max(D_{e^eps}(P||Q),
D_{e^eps}(Q||P))``. Since ``C`` is read off ``P``'s two coordinates, the
hockey-stick divergence is an expectation over ``C`` of the divergence of
two mixtures of binomials, whose likelihood ratio is monotone: each term is
a difference of binomial CDFs at one cutoff. :func:`shuffle_delta` sums all
``n`` terms (the authors' code, ``ml-shuffling-amplification``, groups them
in steps for speed; summing all of them is the exact value of the same
bound), and :func:`shuffle_epsilon` inverts it by bisection, returning the
upper end of the bracket so that the result is always a valid epsilon.

The 2023 follow-up ("Stronger Privacy Amplification by Shuffling for Renyi
and Approximate Differential Privacy", SODA 2023) states a tighter bound,
but its published errata restrict it to a class of local randomizers; the
2021 bound above holds for every (adaptive) pure LDP randomizer, and is the
one used here.
"""

import math

import numpy as np
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import stats

__all__ = [
    "closed_form_shuffle_epsilon",
    "compose_epsilon_delta",
    "sample_one_epsilon",
    "shuffle_delta",
    "shuffle_epsilon",
]

# Value discretization of the PLD composition (dp-accounting's pessimistic
# rounding keeps the composed epsilon an upper bound at any interval).
_PLD_DISCRETIZATION = 1e-4


def shuffle_delta(n, eps0, eps):
    """Delta of ``n`` shuffled ``eps0``-LDP reports at ``eps`` (FMT 2021).

    The exact value of the numerical bound of Feldman, McMillan and Talwar
    (2021, Theorem 3.2, Appendix E), summed over every clone count ``c``.

    Parameters
    ----------
    n : int
        Number of users whose reports are shuffled (>= 1).
    eps0 : float
        Pure local DP parameter of every report.
    eps : float
        Epsilon of the shuffled output (>= 0).

    Returns
    -------
    delta : float
        ``max(D_{e^eps}(P||Q), D_{e^eps}(Q||P))`` for the pair of the
        module docstring; 0 when ``eps >= eps0``.

    Examples
    --------
    >>> from sklearn_dpfair.federated._amplification import shuffle_delta
    >>> shuffle_delta(1000, 1.0, 0.2) < shuffle_delta(100, 1.0, 0.2)
    True
    """
    n, eps0, eps = int(n), float(eps0), float(eps)
    if n < 1 or not eps0 >= 0 or not eps >= 0:
        raise ValueError(f"need n >= 1, eps0 >= 0, eps >= 0; got {n}, {eps0}, {eps}.")
    if eps >= eps0:
        return 0.0
    alpha = math.exp(eps0) / (math.exp(eps0) + 1.0)
    e = math.exp(eps)
    # Likelihood ratio P(k)/Q(k) > e^eps  <=>  k < beta (c + 1) (FMT 2021,
    # Appendix E); r > 0 because eps < eps0.
    r = ((1.0 + e) * alpha - e) / ((1.0 + e) * alpha - 1.0)
    beta = r / (1.0 + r)
    c = np.arange(n)
    weight = stats.binom.pmf(c, n - 1, math.exp(-eps0))
    total = []
    for cut, (a_p, a_q) in (
        (np.floor(beta * (c + 1)), (alpha, 1.0 - alpha)),
        # D(Q||P): the region k > (1 - beta)(c + 1), written as a tail.
        (np.floor((1.0 - beta) * (c + 1)), (1.0 - alpha, alpha)),
    ):
        f0 = stats.binom.cdf(cut, c, 0.5)
        f1 = stats.binom.cdf(cut - 1, c, 0.5)
        first = a_p * f0 + (1.0 - a_p) * f1  # P(K <= cut) for P's law
        second = a_q * f0 + (1.0 - a_q) * f1  # the same for Q's law
        if a_p == alpha:
            term = first - e * second
        else:
            # (1 - Q(K <= cut)) - e^eps (1 - P(K <= cut)), the tail above cut.
            term = (1.0 - second) - e * (1.0 - first)
        total.append(float(np.sum(weight * np.maximum(term, 0.0))))
    return min(1.0, max(total))


def shuffle_epsilon(n, eps0, delta, *, tol=1e-6):
    """Smallest epsilon the FMT 2021 numerical bound certifies at ``delta``.

    Bisection on ``eps`` in ``[0, eps0]`` (``delta(eps)`` decreases in
    ``eps``); the upper end of the final bracket is returned, so the result
    is a valid epsilon within ``tol * eps0`` of the bound's.

    Parameters
    ----------
    n : int
        Number of shuffled reports.
    eps0 : float
        Pure local DP parameter of each report (``inf``: no guarantee).
    delta : float
        Target delta in (0, 1).
    tol : float, default=1e-6
        Relative width of the final bracket.

    Returns
    -------
    eps : float
        At most ``eps0`` (shuffling never hurts).

    Examples
    --------
    The example of the authors' code (``n = 10**5``, ``eps0 = 4``, ``delta
    = 1e-6``), whose stepped bounds bracket the value in [0.1675, 0.1728]:

    >>> from sklearn_dpfair.federated._amplification import shuffle_epsilon
    >>> round(shuffle_epsilon(10**5, 4.0, 1e-6), 3)
    0.17
    """
    eps0 = float(eps0)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta!r}.")
    if math.isinf(eps0):
        return math.inf
    lo, hi = 0.0, eps0
    if shuffle_delta(n, eps0, 0.0) <= delta:
        return 0.0
    while hi - lo > tol * max(eps0, 1e-12):
        mid = 0.5 * (lo + hi)
        if shuffle_delta(n, eps0, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def closed_form_shuffle_epsilon(n, eps0, delta):
    """The closed-form bound of FMT 2021, Theorem 3.1 (for reference only).

    Valid when ``eps0 <= log(n / (16 log(2 / delta)))``; None outside that
    range. Looser than :func:`shuffle_epsilon`, which is what the library
    accounts with; kept to check the numerical bound against the paper.

    Parameters
    ----------
    n : int
    eps0 : float
    delta : float

    Returns
    -------
    eps : float or None

    Examples
    --------
    >>> from sklearn_dpfair.federated._amplification import (
    ...     closed_form_shuffle_epsilon, shuffle_epsilon)
    >>> closed_form_shuffle_epsilon(10**5, 4.0, 1e-6) > shuffle_epsilon(10**5, 4.0, 1e-6)
    True
    """
    if eps0 > math.log(n / (16.0 * math.log(2.0 / delta))):
        return None
    a = 8.0 * math.sqrt(math.exp(eps0) * math.log(4.0 / delta) / n)
    b = 8.0 * math.exp(eps0) / n
    return math.log(1.0 + (math.exp(eps0) - 1.0) / (math.exp(eps0) + 1.0) * (a + b))


def sample_one_epsilon(eps, n_records):
    """Epsilon of an ``eps``-DP release on one record drawn from ``n_records``.

    Sampling one of ``n`` records uniformly (without replacement) and
    releasing an ``eps``-DP function of it is ``log(1 + (e^eps - 1) / n)``-DP
    under replace-one adjacency (Balle, Barthe and Gaboardi, "Privacy
    Amplification by Subsampling", NeurIPS 2018, Table 1; with approximate
    DP the delta is multiplied by ``1 / n``).

    Parameters
    ----------
    eps : float
    n_records : int

    Returns
    -------
    eps : float

    Examples
    --------
    >>> from sklearn_dpfair.federated._amplification import sample_one_epsilon
    >>> round(sample_one_epsilon(1.0, 100), 5)
    0.01704
    """
    if math.isinf(eps):
        return math.inf
    return math.log1p(math.expm1(eps) / int(n_records))


def compose_epsilon_delta(eps, delta, rounds, target_delta):
    """Epsilon of ``rounds`` adaptive ``(eps, delta)``-DP releases.

    dp-accounting's privacy loss distribution of the worst-case ``(eps,
    delta)``-DP pair (``from_privacy_parameters``), self-composed
    ``rounds`` times: the optimal composition of approximate-DP
    mechanisms (Kairouz, Oh and Viswanath, 2015), read at ``target_delta``.

    Parameters
    ----------
    eps, delta : float
        Guarantee of each release.
    rounds : int
    target_delta : float

    Returns
    -------
    eps : float
        ``inf`` when ``rounds * delta`` leaves no room for ``target_delta``.

    Examples
    --------
    >>> from sklearn_dpfair.federated._amplification import compose_epsilon_delta
    >>> composed = compose_epsilon_delta(0.1, 1e-8, 100, 1e-5)
    >>> 0.1 < composed < 100 * 0.1
    True
    """
    if math.isinf(eps):
        return math.inf
    if 1.0 - (1.0 - delta) ** rounds >= target_delta:
        return math.inf
    pld = pld_lib.from_privacy_parameters(
        pld_common.DifferentialPrivacyParameters(float(eps), float(delta)),
        value_discretization_interval=_PLD_DISCRETIZATION,
    )
    return float(pld.self_compose(int(rounds)).get_epsilon_for_delta(target_delta))
