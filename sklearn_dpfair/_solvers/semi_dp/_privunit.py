# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivUnit: the pure epsilon-LDP randomizer of one vector (thesis Algorithm 12).

Lowy's thesis (§2.3, Appendix A.3, Algorithm 12) uses PrivUnit(p, gamma) of
Bhowmick et al. (2018) as the local randomizer of its semi-LDP mean
estimator and of Semi-LDP-SGD (Algorithm 13). For a unit vector ``v`` in
``R^d`` it draws ``z ~ Bernoulli(p)`` and returns ``V / m`` with ``V``
uniform on the cap ``{u in S^{d-1}: <u, v> >= gamma}`` when ``z = 1`` and on
its complement otherwise.

Privacy, exactly. With ``A = P(<U, v> >= gamma)`` for ``U`` uniform on the
sphere (the cap's share of the sphere), the output density under input
``v`` is ``p / A`` on the cap of ``v`` and ``(1 - p) / (1 - A)`` elsewhere,
so the largest ratio over any two inputs and any output is

    epsilon = log(p / (1 - p)) + log((1 - A) / A),                 (*)

attained (for ``d >= 2`` and ``gamma > 0``) by an output in one input's cap
and not the other's. Any ``epsilon``-DP randomizer is dominated by binary
randomized response at ``epsilon`` (Kairouz, Oh and Viswanath, 2015), so a
message is accounted as ``RandomizedResponseDpEvent(2 / (1 + e^eps), 2)``
under replace-one, which dp-accounting's PLD interprets; (*) gives the
cap, and the accountant's epsilon of that event, not (*), is recorded.

Unbiasedness. ``m`` (Algorithm 12, line 9) is ``E[<V, v>]``: with
``t = <U, v>`` of density proportional to ``(1 - t^2)^((d - 3) / 2)``,
``E[t; t >= gamma] = -E[t; t < gamma] = (1 - gamma^2)^alpha / ((d - 1) B(1/2,
alpha))`` with ``alpha = (d - 1) / 2``, hence ``m = (1 - gamma^2)^alpha /
((d - 1) B(1/2, alpha)) * (p / A - (1 - p) / (1 - A))`` and
``E[V / m] = v``. (The thesis prints the same constant through incomplete
Beta functions.) ``||V / m|| = 1 / m`` for every output.

Choice of ``(p, gamma)``. Every split of ``epsilon`` into
``epsilon_0 = log(p / (1 - p))`` and the cap's ``epsilon_1`` satisfies (*);
the variance of ``V / m`` is ``1 / m^2 - 1``, so the split maximizing ``m``
is taken (the optimized PrivUnit of Asi, Feldman and Talwar, 2022). It
depends on ``epsilon`` and ``d`` only (public).

Resolution in float64. A message is a float64 vector: a cap narrower than
float64 can resolve around ``v`` would make its draws round onto ``v / m``
itself, a point mass that the other inputs' densities do not have (an
unbounded loss, whatever (*) says). The split is therefore taken among
those whose cap ``(1 - gamma) / 2`` is at least :data:`MIN_CAP` (an angular
radius of at least ``2e-4`` around ``v``), the rest of ``epsilon`` going to
``epsilon_0``; this binds only at large ``epsilon`` in few dimensions
(``d = 2`` beyond ``epsilon ~ 25``), where ``m`` is within ``1e-7`` of 1
either way, and the mechanism is still exactly PrivUnit(p, gamma) with loss
(*). The draw itself keeps the distance ``x`` to the pole of its region
(``x = (1 - t) / 2`` from ``v`` in the cap, ``(1 + t) / 2`` from ``-v`` off
it) and builds the orthogonal part from ``sqrt(1 - t^2) = 2 sqrt(x (1 -
x))``, never from ``1 - t^2`` of a rounded ``t``.

``d = 1``: the sphere is ``{-1, +1}`` and PrivUnit is binary randomized
response, ``m = (e^eps - 1) / (e^eps + 1)``.
"""

import functools
import math
from dataclasses import dataclass

import dp_accounting
import numpy as np
from scipy import optimize, special

from ...privacy._accounting import epsilon_of
from ...privacy._releases import log_release, pure_epsilon_of

__all__ = [
    "MAX_LOCAL_EPSILON",
    "MIN_CAP",
    "MIN_LOCAL_EPSILON",
    "PrivUnit",
    "local_epsilon_event",
]

#: Largest finite epsilon a message may spend: a bound that keeps the coin's
#: complement ``1 - p ~ e^-epsilon`` and the accounted randomized response's
#: flip probability ``2 / (1 + e^epsilon)`` far inside float64 (the cap
#: itself stays at or above :data:`MIN_CAP`).
MAX_LOCAL_EPSILON = 300.0
#: Smallest epsilon a message may spend: dp-accounting's PLD, which
#: certifies the randomizer's event, rounds a randomized response's epsilon
#: up to its discretization interval (1e-4), so it certifies no budget below.
MIN_LOCAL_EPSILON = 1e-4
#: Smallest cap ``(1 - gamma) / 2`` a calibrated PrivUnit uses: its draws lie
#: within an angle ``~2 sqrt(cap)`` of the input, which float64 (resolution
#: ``2.2e-16``) must resolve, or they round onto the input itself. At this
#: floor an in-cap draw rounds onto the input with probability below
#: ``(1e-32 / MIN_CAP)^((d - 1) / 2)``, at most ``1e-12``.
MIN_CAP = 1e-8

# dp-accounting's PLD is pessimistic by up to its discretization interval
# (1e-4): the randomizer's epsilon is lowered by at most this many steps of
# it until the accountant certifies the budget.
_CALIBRATION_STEPS = 5
_PLD_STEP = 1e-4
# Float round-off of the accountant's epsilon (as check_budget allows).
_BUDGET_RTOL = 1e-9


def local_epsilon_event(epsilon):
    """Event of one ``epsilon``-DP local message: binary randomized response.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp._privunit import local_epsilon_event
    >>> local_epsilon_event(1.0).num_buckets
    2
    """
    return dp_accounting.RandomizedResponseDpEvent(
        noise_parameter=2.0 / (1.0 + math.exp(epsilon)), num_buckets=2
    )


def _calibrate(epsilon):
    """The largest message epsilon whose event dp-accounting certifies <= epsilon."""
    for k in range(_CALIBRATION_STEPS):
        run = float(epsilon) - k * _PLD_STEP / 2
        if run > 0 and epsilon_of(local_epsilon_event(run), 0.0, "pld") <= epsilon * (
            1 + _BUDGET_RTOL
        ):
            return run
    raise RuntimeError(
        "dp-accounting certifies no local randomizer within the budget; "
        "this is a bug in sklearn_dpfair."
    )


def _log_cap_share(x, alpha):
    """``log A``: ``A = P(<U, v> >= 1 - 2 x)`` for ``U`` uniform on ``S^{d-1}``.

    The cap is parametrized by ``x = (1 - gamma) / 2`` in ``(0, 1/2]``, not
    by ``gamma``: ``(1 - t) / 2 ~ Beta(alpha, alpha)`` for ``t = <U, v>``,
    so ``A = I_x(alpha, alpha)``, and at large epsilon ``x`` is far below
    float64's resolution near ``gamma = 1``.
    """
    share = special.betainc(alpha, alpha, x)
    if share > 1e-250:
        return math.log(share)
    # Below its float range, the series of the regularized incomplete Beta
    # function (DLMF 8.17.8): I_x(a, b) = x^a (1-x)^b / (a B(a, b))
    # 2F1(a+b, 1; a+1; x), whose terms' ratio x (2a + k) / (a + 1 + k) is
    # below 1 for x <= 1/2, summed directly (scipy's hyp2f1 loses it at
    # large a).
    total, term, k = 1.0, 1.0, 0
    while term > 1e-17 * total and k < 1_000_000:
        term *= x * (2 * alpha + k) / (alpha + 1 + k)
        total += term
        k += 1
    return (
        alpha * math.log(x)
        + alpha * math.log1p(-x)
        - math.log(alpha)
        - special.betaln(alpha, alpha)
        + math.log(total)
    )


def _cap_loss(x, alpha):
    """The cap's share of (*): ``log((1 - A) / A)``."""
    log_a = _log_cap_share(x, alpha)
    return math.log(-math.expm1(log_a)) - log_a


def _cap_for(epsilon1, alpha):
    """The cap ``x = (1 - gamma) / 2`` whose loss ``log((1 - A) / A)`` is ``epsilon1``."""
    if epsilon1 <= 0:
        return 0.5
    lo = math.log(1e-300)
    if _cap_loss(math.exp(lo), alpha) <= epsilon1:
        raise ValueError(f"No PrivUnit cap spends epsilon={epsilon1:g} in this dimension.")
    log_x = optimize.brentq(
        lambda t: _cap_loss(math.exp(t), alpha) - epsilon1,
        lo,
        math.log(0.5),
        xtol=1e-13,
    )
    return math.exp(log_x)


def _log_m(eps0, x, alpha):
    """``log m``: ``m = E<V, v>`` of Algorithm 12, ``p = 1 / (1 + e^-eps0)``."""
    log_a = _log_cap_share(x, alpha)
    # (1 - gamma^2)^alpha = (4 x (1 - x))^alpha.
    log_scale = (
        alpha * (math.log(4.0 * x) + math.log1p(-x))
        - math.log(2 * alpha)
        - special.betaln(0.5, alpha)
    )
    # p / A - (1 - p) / (1 - A) > 0 since p >= 1/2 >= A; factored as
    # (p / A) (1 - (1 - p) A / (p (1 - A))) to stay finite for tiny A.
    a = math.exp(log_a)
    ratio = math.exp(-eps0) * a / (1.0 - a)
    log_p = -math.log1p(math.exp(-eps0))
    return log_scale + log_p - log_a + math.log1p(-ratio)


@dataclass(frozen=True)
class PrivUnit:
    """PrivUnit(p, gamma) on ``S^{d-1}``, ``epsilon``-DP for every input.

    Parameters
    ----------
    epsilon : float
        The budget; the randomizer runs at the largest epsilon (at most this
        one) that dp-accounting certifies for its event.
    dim : int
        Dimension ``d`` of the vectors randomized.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.semi_dp._privunit import PrivUnit
    >>> unit = PrivUnit.calibrated(2.0, dim=3)
    >>> message = unit.randomize(np.array([1.0, 0.0, 0.0]), np.random.default_rng(0))
    >>> bool(np.isclose(np.linalg.norm(message), 1 / unit.m))
    True
    """

    epsilon: float
    dim: int
    eps0: float
    cap: float
    m: float

    @property
    def p(self):
        """``P(z = 1)``, the probability of sampling from the cap."""
        return 1.0 / (1.0 + math.exp(-self.eps0))

    @property
    def q(self):
        """``P(z = 0) = 1 - p``, computed without cancellation."""
        return special.expit(-self.eps0)

    @property
    def gamma(self):
        """The cap threshold ``gamma = 1 - 2 cap`` of Algorithm 12."""
        return 1.0 - 2.0 * self.cap

    @classmethod
    def calibrated(cls, epsilon, dim):
        """The variance-optimal PrivUnit for ``(epsilon, dim)`` (public inputs).

        Optimal among the splits of ``epsilon`` whose cap is at least
        :data:`MIN_CAP` (float64 resolves no narrower cap: module
        docstring); every split spends exactly the calibrated epsilon.
        """
        epsilon, dim = float(epsilon), int(dim)
        if not 0 < epsilon <= MAX_LOCAL_EPSILON:
            raise ValueError(
                f"PrivUnit needs 0 < epsilon <= {MAX_LOCAL_EPSILON:g}, got {epsilon!r}."
            )
        run = _calibrate(epsilon)
        if dim == 1:
            return cls(run, 1, run, 0.5, math.tanh(run / 2.0))
        alpha = (dim - 1) / 2.0
        # The cap's share of (*) is at most that of the narrowest cap float64
        # resolves; the rest of the budget goes to eps0 (the split stays
        # exact: eps0 + the cap's loss = run).
        max_eps1 = _cap_loss(MIN_CAP, alpha)
        lowest = max(0.0, 1.0 - max_eps1 / run)

        def cap_of(eps0):
            return _cap_for(min(run - eps0, max_eps1), alpha)

        def neg_log_m(fraction):
            eps0 = fraction * run
            return -_log_m(eps0, cap_of(eps0), alpha)

        # Coarse grid, then a bounded refinement: deterministic, public.
        grid = np.linspace(lowest, 0.98 if lowest < 0.98 else 1.0, 50)
        values = [neg_log_m(f) for f in grid]
        best = int(np.argmin(values))
        lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
        res = optimize.minimize_scalar(
            neg_log_m, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6}
        )
        fraction = res.x if res.fun < values[best] else grid[best]
        eps0 = fraction * run
        return cls(run, dim, eps0, cap_of(eps0), math.exp(-neg_log_m(fraction)))

    @functools.cached_property
    def _level(self):
        # What each message logs: the event's pure epsilon.
        return pure_epsilon_of(self.event)

    @functools.cached_property
    def _tail(self):
        # A, the cap's share of the sphere.
        return math.exp(_log_cap_share(self.cap, (self.dim - 1) / 2.0))

    @property
    def event(self):
        """The ``DpEvent`` of one message (binary randomized response)."""
        return local_epsilon_event(self.epsilon)

    def loss_bound(self):
        """Formula (*): the largest log-ratio of two inputs' output densities."""
        if self.dim == 1:
            return self.eps0
        return self.eps0 + _cap_loss(self.cap, (self.dim - 1) / 2.0)

    def log_density(self, output, v):
        """Log density of ``output`` (a message) under input ``v``, up to a constant.

        ``log(p / A)`` on the cap of ``v``, ``log((1 - p) / (1 - A))`` off
        it; the constant (the sphere's area) is the same for every input.
        """
        log_p = -math.log1p(math.exp(-self.eps0))
        log_q = -self.eps0 + log_p
        if self.dim == 1:
            same = np.sign(output[0]) == np.sign(v[0])
            return log_p if same else log_q
        alpha = (self.dim - 1) / 2.0
        log_a = _log_cap_share(self.cap, alpha)
        inside = (1.0 - float(np.dot(output * self.m, v))) / 2.0 <= self.cap
        if inside:
            return log_p - log_a
        return log_q - math.log(-math.expm1(log_a))

    def randomize(self, v, rng):
        """One message for the unit vector ``v``: ``V / m``, unbiased for ``v``.

        Logs one ``("epsilon", eps)`` release in the current fit's log.

        Parameters
        ----------
        v : ndarray of shape (dim,)
            Unit vector (the caller maps every record to one).
        rng : numpy.random.Generator

        Returns
        -------
        message : ndarray of shape (dim,)
            Of norm ``1 / m``.
        """
        log_release("epsilon", self._level)
        # z = 0 with probability q = 1 - p, drawn against q itself: where q
        # is below float resolution the complement is drawn at least as
        # often as planned, which only lowers the loss (*).
        z = rng.random() >= self.q
        if self.dim == 1:
            sign = np.sign(v[0]) if z else -np.sign(v[0])
            return np.array([sign / self.m])
        alpha = (self.dim - 1) / 2.0
        # t = <V, v>; s = (1 - t) / 2 ~ Beta(alpha, alpha) restricted to the
        # cap (s <= cap) or to its complement, drawn by inverting the Beta
        # CDF (Algorithm 12, lines 2-7). The complement draws r = 1 - s (of
        # the same law, Beta(alpha, alpha) being symmetric: I_r = 1 - I_s),
        # so that x, the distance to the pole of the drawn region, keeps its
        # relative precision at either end.
        tail = self._tail
        u = rng.random()
        level = u * tail if z else (1.0 - u) * (1.0 - tail)
        x = min(max(float(special.betaincinv(alpha, alpha, level)), 0.0), 1.0)
        t = 1.0 - 2.0 * x if z else 2.0 * x - 1.0
        # sqrt(1 - t^2) = 2 sqrt(x (1 - x)): exact for the drawn x, where
        # 1 - t^2 of a t rounded to 1 would be 0 (a message equal to v / m).
        radial = 2.0 * math.sqrt(x) * math.sqrt(1.0 - x)
        # The rest of V: uniform on the unit sphere orthogonal to v.
        g = rng.standard_normal(self.dim)
        g -= np.dot(g, v) * v
        norm = np.linalg.norm(g)
        w = g / norm if norm > 0 else g
        return (t * v + radial * w) / self.m
