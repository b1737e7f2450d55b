# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private damped Newton steps by the double-noise mechanism (binary logistic).

Ganesh, Haghifam, Steinke and Thakurta, "Faster Differentially Private
Convex Optimization via Second-Order Methods" (NeurIPS 2023), Algorithm 2
("double noise", regularized by adding ``lambda I``); reference code in
TensorFlow Privacy, ``research/dp_newton/src/opt_algs.py``
(``DoubleNoiseMech.noisy_direction``, ``type_reg="add"``).

Work in normalized coordinates. Rows are clipped to the public
``feature_norm_bound`` ``R`` and augmented with the intercept column ``s``;
every augmented row ``x~ = [x, s]`` then has norm at most
``R~ = sqrt(R^2 + s^2)``, and the solver reads ``u = x~ / R~`` (norm <= 1).
With ``y`` in {0, 1}, the binary logistic loss of one record has raw
gradient ``r = sigmoid(z) - y`` in ``[-1, 1]`` and curvature
``c = sigmoid'(z)`` in ``[0, 1/4]``, so, with public sample weights capped at
1 (the package's weight rule for terms bounded without clipping), each
record adds to

* the mean gradient ``g = (1/n) sum_i w_i r_i u_i`` a vector of norm <= 1/n;
* the mean Hessian ``H = (1/n) sum_i w_i c_i u_i u_i^T`` a PSD rank-one
  matrix ``v v^T`` with ``||v||^2 <= beta / n``, ``beta = 1/4``;
* the trace of ``H`` at most ``beta / n``,

under add/remove adjacency with the public ``n`` as divisor (the
convention of every full-batch solver here).

Each step ``t`` makes three Gaussian releases, in this order:

1. ``g~ = g + N(0, (z_g / n)^2 I)``;
2. ``tau = tr(H) + N(0, (z_tr beta / n)^2)``, from which the shift
   ``lambda = max((kappa max(tau, 0) / (n^2 rho_d))^(1/3), 1/n)`` is chosen
   (``rho_d = 1 / (2 z_d^2)``, ``kappa`` the public ``trace_coeff``; the
   reference code's rule);
3. the direction ``d = (H + A + lambda I)^(-1) g~ + N(0, (z_d Delta_d)^2 I)``,
   ``A`` the data-independent L2 penalty. Given the released ``g~`` and
   ``lambda``, ``d`` depends on the data through ``H`` only. With
   ``M = H + A + lambda I >= lambda I`` and a neighbour's ``M' = M +- v v^T``
   (both ``>= lambda I``), Sherman-Morrison gives
   ``||M'^(-1) g~ - M^(-1) g~|| <= b ||g~|| / (lambda^2 + b lambda)`` with
   ``b = beta / n`` (the paper's Lemma on the sensitivity of the
   regularized Newton direction), so
   ``Delta_d = beta ||g~|| / (n lambda^2 + beta lambda)``, computed from
   released values only. With a penalty the direction is released in the
   coordinates ``Q = (A + lambda I)^(1/2)`` instead, where its sensitivity
   does not grow with ``A`` (:func:`scaled_direction_sensitivity`; the
   same noise multiplier, the same event).

and updates ``w <- w - d`` (the reference's full step). The noise
multipliers are ``z_k = sigma sqrt(T / share_k)`` for shares of one budget
(gradient ``grad_share``; trace ``(1 - grad_share) trace_share``; direction
the rest), so the ``3 T`` releases compose to one Gaussian of multiplier
``sigma`` (Gaussian DP composes exactly, also adaptively: Dong, Roth and
Su, 2022, Cor. 3.3). ``sigma`` is the smallest multiplier that dp-accounting
(the budget's accountant, RDP by default) certifies for the composed event
of the ``3 T`` releases. All of it is planned (:func:`plan`) from public
quantities before the data are read.
"""

import math
import sys
from dataclasses import dataclass

import dp_accounting
import numpy as np
import scipy.sparse as sp

from ..privacy import GaussianMechanism
from ..privacy._accounting import composed_event, noisy_sgd_event
from ..privacy._calibration import calibrate_noise
from ..privacy._clipping import clip_margin
from ._rows import _underflow_rescued, clip_rows_to_norm, squared_row_norms
from ._row_blocks import row_block, row_blocks

__all__ = [
    "CURVATURE_BOUND",
    "MAX_FEATURES",
    "MAX_STEPS",
    "ClippedRows",
    "NewtonParams",
    "NewtonPlan",
    "clipped_rows",
    "newton_event",
    "noisy_newton",
    "plan",
]

#: Bound ``beta`` on the logistic curvature ``sigmoid'(z)``.
CURVATURE_BOUND = 0.25
#: Widest problem the solver takes: it holds and solves a dense
#: ``(d + 1) x (d + 1)`` Hessian each step (decided from the public shape).
MAX_FEATURES = 4096
#: Most private Newton steps a fit takes (each a full pass and a dense
#: solve): the method converges in a handful (Ganesh et al. 2023 run at
#: most tens), and a count far above would run for ever, not better.
MAX_STEPS = 10_000
# Rows of a dense X per block of the Hessian product. The weighted float64
# copy of a block is written into one buffer reused by every block and
# pass: a fresh array per block is a fresh mmap, and its page faults cost
# ~25 times the multiplication (measured at d = 100).
_DENSE_BLOCK_ROWS = 8192


@dataclass(frozen=True)
class NewtonParams:
    """Public hyperparameters of the double-noise Newton solver.

    Parameters
    ----------
    feature_norm_bound : float
        Public bound ``R`` the rows are clipped to.
    n_steps : int
        Number of Newton steps ``T`` (each one full pass, three releases).
    alpha : float
        L2 penalty ``alpha/2 ||coef||^2`` (the intercept is not penalized).
    fit_intercept : bool, default=True
        Whether an intercept is fitted (intercept scaling 1, else 0).
    grad_share : float, default=0.7
        Share of the budget spent on the gradients (the reference's
        ``grad_frac``).
    trace_share : float, default=0.1
        Share of the remaining budget spent on the traces (``trace_frac``).
    trace_coeff : float, default=0.5
        ``kappa`` of the shift rule (``trace_coeff``).
    curvature : {"hessian", "upper-bound"}, default="hessian"
        "hessian": the Hessian at each iterate (one ``n d^2`` product per
        step). "upper-bound": the logistic curvature bound
        ``(beta / n) sum_i w_i u_i u_i^T``, the same matrix at every step,
        computed once (the reference's ``curvature_info="ub"``; Boehning's
        bound): each later step costs two matrix-vector products. Its
        per-record term is also ``v v^T`` with ``||v||^2 <= beta / n``, so
        the direction's sensitivity is the same.
    """

    feature_norm_bound: float
    n_steps: int
    alpha: float
    fit_intercept: bool = True
    grad_share: float = 0.7
    trace_share: float = 0.1
    trace_coeff: float = 0.5
    curvature: str = "hessian"

    @property
    def intercept_scaling(self):
        return 1.0 if self.fit_intercept else 0.0

    @property
    def row_bound(self):
        """``R~ = sqrt(R^2 + s^2)``, the bound on an augmented row's norm."""
        return math.hypot(self.feature_norm_bound, self.intercept_scaling)

    def shares(self):
        """Per-step shares of the budget: gradient, trace, direction."""
        rest = 1.0 - self.grad_share
        return (
            self.grad_share,
            rest * self.trace_share,
            rest * (1.0 - self.trace_share),
        )


@dataclass(frozen=True)
class NewtonPlan:
    """What a double-noise fit fixes before it reads the data.

    ``gradient`` and ``trace`` are the mechanisms of releases 1 and 2 (their
    sensitivities ``1/n`` and ``beta/n`` are public); release 3 is a
    :class:`~sklearn_dpfair.privacy.GaussianMechanism` of multiplier
    ``direction_noise_multiplier`` whose sensitivity is computed from
    released values at each step. ``dp_event`` is the composed event of
    the ``3 T`` releases.
    """

    n_samples: int
    n_steps: int
    gradient: GaussianMechanism
    trace: GaussianMechanism
    direction_noise_multiplier: float
    noise_multiplier: float
    dp_event: object


def newton_event(noise_multiplier, n_steps, shares):
    """The event of ``n_steps`` double-noise steps at total multiplier ``sigma``.

    Each kind of release ``k`` (gradient, trace, direction) runs ``n_steps``
    times at multiplier ``sigma sqrt(T / share_k)``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._newton import newton_event
    >>> newton_event(1.0, 2, (0.5, 0.25, 0.25)).events[0]
    SelfComposedDpEvent(event=GaussianDpEvent(noise_multiplier=2.0), count=2)
    """
    if noise_multiplier == 0:
        return dp_accounting.NonPrivateDpEvent()
    return composed_event(
        noisy_sgd_event(
            _release_multiplier(noise_multiplier, n_steps, share), 1.0, n_steps
        )
        for share in shares
    )


def _release_multiplier(noise_multiplier, n_steps, share):
    return noise_multiplier * math.sqrt(n_steps / share)


def plan(n_samples, n_features, params, budget):
    """The mechanisms and event of a double-noise fit, from public quantities.

    Parameters
    ----------
    n_samples, n_features : int
        Public shape of the problem.
    params : NewtonParams
        Public hyperparameters.
    budget : PrivacyBudget
        Privacy inputs; its noise multiplier must be None (the solver
        calibrates its own noise).

    Returns
    -------
    plan : NewtonPlan

    Raises
    ------
    ValueError
        If a noise multiplier is given, ``n_features`` exceeds
        ``MAX_FEATURES``, or ``feature_norm_bound`` is so large that
        ``(R^2 + s^2) n`` overflows float64 (at every budget: the decision
        is the public constants').

    Examples
    --------
    >>> from sklearn_dpfair._solvers._newton import NewtonParams, plan
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> p = plan(10_000, 5, NewtonParams(1.0, 3, 0.0), PrivacyBudget(1.0, 1e-5))
    >>> p.n_steps, p.gradient.clip_norm
    (3, 0.0001)
    """
    if budget.noise_multiplier is not None:
        raise ValueError(
            "noise_multiplier does not apply to solver='dp-newton': its three "
            "releases per step are calibrated from epsilon and delta."
        )
    if params.n_steps > MAX_STEPS:
        raise ValueError(
            f"newton_steps={params.n_steps} exceeds {MAX_STEPS}: each private "
            "Newton step is a full pass over the data and a dense solve, and "
            "the method converges in tens of steps."
        )
    if n_features > MAX_FEATURES:
        raise ValueError(
            f"solver='dp-newton' holds a dense (n_features + 1)^2 Hessian; "
            f"n_features={n_features} exceeds {MAX_FEATURES}. Use "
            "solver='dp-sgd' (or 'dp-frank-wolfe' for wide sparse data)."
        )
    scale = params.row_bound
    if not math.isfinite(scale * scale * n_samples):
        # Public constants only, at every budget (as output perturbation):
        # the statistics are normalized by R~^2 n, which would be inf (the
        # Hessian and the penalty silently 0) or raise OverflowError mid-fit.
        raise ValueError(
            "feature_norm_bound is too large for solver='dp-newton': the "
            "rows are normalized by feature_norm_bound**2 times n_samples, "
            "which overflows float64 "
            f"(feature_norm_bound={params.feature_norm_bound:g}, "
            f"n_samples={n_samples}). Use a bound of the size of the rows' norms."
        )
    if (
        scale * scale < sys.float_info.min
        or not math.isfinite(params.alpha / (scale * scale))
    ):
        # Without an intercept R~ = R: below ~1.5e-154, R^2 underflows (the
        # penalty alpha / R^2 divides by 0, mid-fit), and a small R^2 can
        # make alpha / R^2 overflow. Public constants only, at every budget
        # (as the overflow above).
        raise ValueError(
            "feature_norm_bound is too small for solver='dp-newton' without an "
            "intercept: the rows are normalized by feature_norm_bound**2, which "
            "must be at least the smallest normal float64 (2.2e-308) and keep "
            "alpha / feature_norm_bound**2 finite "
            f"(feature_norm_bound={params.feature_norm_bound:g}, "
            f"alpha={params.alpha:g}). Rescale the features, or use "
            "fit_intercept=True."
        )
    n_steps, shares = int(params.n_steps), params.shares()
    if not budget.is_private:
        sigma = 0.0
    else:
        sigma = calibrate_noise(
            lambda s: newton_event(s, n_steps, shares),
            budget.epsilon,
            budget.delta,
            # The budget's accountant: RDP (the default) certifies a few %
            # more noise than PLD, but PLD costs seconds per calibration at
            # large epsilon (a wide grid for small multipliers).
            budget.accountant,
        )
    z_grad, z_trace, z_dir = (
        _release_multiplier(sigma, n_steps, share) for share in shares
    )
    return NewtonPlan(
        n_samples=int(n_samples),
        n_steps=n_steps,
        gradient=GaussianMechanism(1.0 / n_samples, z_grad),
        trace=GaussianMechanism(CURVATURE_BOUND / n_samples, z_trace),
        direction_noise_multiplier=z_dir,
        noise_multiplier=sigma,
        dp_event=newton_event(sigma, n_steps, shares),
    )


def direction_sensitivity(grad_norm, shift, n_samples):
    """``Delta_d = beta ||g~|| / (n lambda^2 + beta lambda)`` (see the module).

    Examples
    --------
    >>> from sklearn_dpfair._solvers._newton import direction_sensitivity
    >>> round(direction_sensitivity(1.0, 0.5, 100), 5)
    0.00995
    """
    beta = CURVATURE_BOUND
    return beta * grad_norm / (n_samples * shift**2 + beta * shift)


def scaled_direction_sensitivity(scaled_grad_norm, shift, n_samples):
    """``beta ||Q^(-1) g|| / (n lambda + beta)``, the direction's sensitivity in ``Q``.

    With a penalty ``A`` the direction ``d = M^(-1) g``
    (``g = g~ + A w``) is released as ``Q d``, ``Q = (A + lambda I)^(1/2)``
    (public, diagonal). ``Q d = N^(-1) Q^(-1) g`` with
    ``N = Q^(-1) M Q^(-1) = Q^(-1) H Q^(-1) + I >= I``, and a neighbour's
    ``N`` differs by ``u u^T``, ``u = Q^(-1) v``, with
    ``x = u^T N^(-1) u = v^T M^(-1) v <= b / lambda`` (``b = beta / n``):
    the Sherman-Morrison bound of the module, with ``N >= I``, gives
    ``x / (1 + x) ||Q^(-1) g||``, at most
    ``b ||Q^(-1) g|| / (lambda + b)``. Without a penalty this is the
    unscaled release (``Q = sqrt(lambda) I``, the same noise). With one it
    keeps the noise on a penalized coordinate ``w_j`` at
    ``1 / sqrt(a_j + lambda)`` of the scaled release's: the unscaled
    sensitivity grows as ``||A w||``, and that noise, fed back through
    ``A w`` at the next step, made the iterates diverge once ``a_j`` was
    well above ``lambda`` (``alpha = 10`` on 2,000 rows).

    Examples
    --------
    >>> from sklearn_dpfair._solvers._newton import scaled_direction_sensitivity
    >>> round(scaled_direction_sensitivity(1.0, 0.5, 100), 5)
    0.00498
    """
    beta = CURVATURE_BOUND
    return beta * scaled_grad_norm / (n_samples * shift + beta)


def shift_from_trace(noisy_trace, trace_coeff, direction_noise_multiplier, n_samples):
    """The reference's shift ``max((kappa tau+ / (n^2 rho_d))^(1/3), 1/n)``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._newton import shift_from_trace
    >>> shift_from_trace(-1.0, 0.5, 1.0, 100)
    0.01
    """
    if direction_noise_multiplier == 0:  # no privacy: the smallest shift
        return 1.0 / n_samples
    rho_dir = 0.5 / direction_noise_multiplier**2
    core = trace_coeff * max(noisy_trace, 0.0) / (n_samples**2 * rho_dir)
    return max(core ** (1.0 / 3.0), 1.0 / n_samples)


@dataclass
class ClippedRows:
    """Rows of ``X`` projected onto the ball of radius ``R``, without a copy of ``X``.

    A dense row ``x`` is read as ``f x`` with ``f = min(1, R / ||x||)``
    (the factor folded into the per-row terms, so every pass reads ``X``
    itself: a clipped copy would double the memory, and numpy's row norms
    cost more than a pass). Rows whose squared norm overflows get
    ``f = 0`` and ``keep = False`` there, and are read from ``extra``, their
    overflow-safe projection (:func:`~sklearn_dpfair._solvers._rows.clip_rows_to_norm`).
    A sparse ``X`` is clipped through its stored entries (one copy of its
    data), ``factors`` is None.
    """

    X: object
    factors: object = None
    overflowed: object = None
    extra: object = None


def clipped_rows(X, bound):
    """Row clipping of ``X`` to norm ``bound`` as the passes read it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._newton import clipped_rows
    >>> rows = clipped_rows(np.array([[3.0, 4.0], [0.3, 0.4], [1e300, 1e300]]), 1.0)
    >>> rows.factors.round(2).tolist(), rows.extra.round(3).tolist()
    ([0.2, 1.0, 0.0], [[0.707, 0.707]])
    """
    if sp.issparse(X):
        return ClippedRows(clip_rows_to_norm(X, bound))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # A nonzero row whose squares underflow (entries below ~1.5e-154)
        # would get norm 0 and factor 1, unclipped whatever its size
        # relative to a tiny bound: its norm is recomputed without
        # underflow (other rows keep theirs bit for bit).
        norms = _underflow_rescued(X, np.sqrt(squared_row_norms(X)))
        # Lower precision rows are read in float64: the margin keeps the
        # rounding of a float32 row inside the ball all the same. A zero
        # row's factor is 1 (no floor on the norm: it would shrink rows of
        # norm below the floor more than the projection does).
        factors = np.ones_like(norms)
        np.divide(bound * clip_margin(X), norms, out=factors, where=norms > 0)
        factors = np.minimum(1.0, factors)
    overflowed = np.flatnonzero(~np.isfinite(norms))
    extra = None
    if overflowed.size:
        factors[overflowed] = 0.0
        extra = clip_rows_to_norm(X[overflowed], bound)
    return ClippedRows(X, factors, overflowed, extra)


def _statistics(rows, y, w, scale, s, weights, *, curvature=True, buffer=None):
    """Mean gradient and Hessian in normalized coordinates, one pass.

    ``rows`` (:class:`ClippedRows`) holds the clipped rows; the augmented
    normalized row is ``[x, s] / scale``. Returns ``(g, H)`` with shapes
    ``(d + 1,)`` and ``(d + 1, d + 1)``, each divided by the public ``n``.
    With ``curvature=False`` only ``g`` is computed (``H`` is None); with
    ``curvature="bound"`` ``H`` is the curvature bound (every
    ``c_i = beta``).
    """
    X = rows.X
    n, d = X.shape
    coef, w0 = w[:-1] / scale, w[-1] * s / scale
    g = np.zeros(d + 1)
    H = None if curvature is False else np.zeros((d + 1, d + 1))
    blocks = (
        row_blocks(X)
        if sp.issparse(X)
        else [
            slice(a, min(a + _DENSE_BLOCK_ROWS, n))
            for a in range(0, n, _DENSE_BLOCK_ROWS)
        ]
    )
    for part in blocks:
        Xb = row_block(X, part) if sp.issparse(X) else X[part]
        factors = None if rows.factors is None else rows.factors[part]
        weights_b = None if weights is None else weights[part]
        _accumulate(
            Xb, y[part], factors, weights_b, coef, w0, s, curvature, g, H, buffer
        )
    if rows.extra is not None:
        idx = rows.overflowed
        _accumulate(
            rows.extra, y[idx], None, None if weights is None else weights[idx],
            coef, w0, s, curvature, g, H, None,
        )
    g /= scale * n
    if H is None:
        return g, None
    H[-1, :-1] = H[:-1, -1]
    return g, H / (scale * scale * n)


def _accumulate(Xb, y, factors, weights, coef, w0, s, curvature, g, H, buffer):
    """Add one block's clipped gradient (and curvature) sums to ``g`` and ``H``.

    Row ``i`` of the block is read as ``f_i x_i`` (``f_i = 1`` when
    ``factors`` is None); a row with ``f_i = 0`` (its norm overflowed; it is
    read from the projected copy instead) contributes nothing.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        # x.coef of an overflowing row may be inf; its factor is 0 and its
        # terms are masked below (no warning may depend on the data).
        z = np.asarray(Xb @ coef, dtype=np.float64).ravel()
        if factors is not None:
            z = np.where(factors > 0, z * factors, 0.0)
    z += w0
    p = _expit(z)
    r = p - y
    c = p * (1.0 - p) if curvature is True else np.full_like(p, CURVATURE_BOUND)
    if factors is not None:
        keep = factors > 0
        r = np.where(keep, r, 0.0)
        c = np.where(keep, c, 0.0)
    if weights is not None:
        r = r * weights
        c = c * weights
    # Coefficient block: sum_i r_i f_i x_i; intercept: s sum_i r_i.
    rf = r if factors is None else r * factors
    g[:-1] += np.asarray(Xb.T @ rf, dtype=np.float64).ravel()
    g[-1] += s * r.sum()
    if H is None:
        return
    cf = c if factors is None else c * factors
    cff = c if factors is None else cf * factors
    root = np.sqrt(cff)
    if sp.issparse(Xb):
        Xs = sp.diags(root) @ Xb
        H[:-1, :-1] += (Xs.T @ Xs).toarray()
    else:
        # The weighted block is formed and multiplied in float64 whatever
        # X's dtype: the trace release (sensitivity beta / n) and the
        # direction's Sherman-Morrison bound assume a neighbour's H differs by
        # a PSD rank-one term of trace <= beta / n, which a float32 product
        # (relative rounding ~6e-8 of the whole sum) breaks. The float64
        # block is bounded by _DENSE_BLOCK_ROWS rows, never n x d.
        root = root[:, None]
        if buffer is None or buffer.dtype != np.float64:
            Xs = Xb * root
        else:
            Xs = np.multiply(Xb, root, out=buffer[: Xb.shape[0]])
        # A.T @ A: numpy calls BLAS syrk (half the flops of a product).
        H[:-1, :-1] += Xs.T @ Xs
    H[:-1, -1] += s * np.asarray(Xb.T @ cf, dtype=np.float64).ravel()
    H[-1, -1] += s * s * c.sum()


def _expit(z):
    # Stable sigmoid; |z| <= ||w|| (normalized rows) is finite.
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def noisy_newton(X, y, newton_plan, params, *, rng, sample_weight=None, progress=None):
    """Run the planned double-noise steps on clipped rows ``X``.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Finite rows; they are clipped to ``params.feature_norm_bound`` as
        they are read (:func:`clipped_rows`).
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    newton_plan : NewtonPlan
        From :func:`plan` (same ``n_samples``).
    params : NewtonParams
    rng : numpy.random.Generator
    sample_weight : ndarray or None
        Public weights already capped at 1.
    progress : callable or None
        ``progress(step, proxy)`` after each step, with ``proxy`` the norm
        of the released gradient (released, so free).

    Returns
    -------
    coef : ndarray of shape (n_features,)
    intercept : float
    """
    n, d = X.shape
    s, scale = params.intercept_scaling, params.row_bound
    y = np.asarray(y, dtype=np.float64)
    # The penalty alpha/2 ||coef||^2 in normalized coordinates (coef = w / R~).
    # (scale * scale, not scale**2: a float power raises OverflowError.)
    penalty = np.full(d + 1, params.alpha / (scale * scale))
    penalty[-1] = 0.0
    penalized = bool(penalty.any())
    rows = clipped_rows(X, params.feature_norm_bound)
    buffer = (
        None
        if sp.issparse(X)
        else np.empty((min(n, _DENSE_BLOCK_ROWS), d), dtype=np.float64)
    )
    w = np.zeros(d + 1)
    bound = params.curvature == "upper-bound"
    H = None
    for step in range(newton_plan.n_steps):
        # The curvature bound does not depend on w: computed in the first pass.
        if bound and H is not None:
            mode = False
        else:
            mode = "bound" if bound else True
        g, H_step = _statistics(
            rows, y, w, scale, s, sample_weight, curvature=mode, buffer=buffer
        )
        H = H if H_step is None else H_step
        # One release in the linear-model layout (coefficient block, then
        # intercept): what the gradient-canary audit observes.
        coef_part, intercept_part = newton_plan.gradient.privatize_blocks(
            [g[:-1, None], g[-1:]], rng
        )
        g_noisy = np.concatenate([coef_part[:, 0], intercept_part])
        trace_noisy = float(newton_plan.trace.privatize(np.array([np.trace(H)]), rng)[0])
        shift = shift_from_trace(
            trace_noisy,
            params.trace_coeff,
            newton_plan.direction_noise_multiplier,
            newton_plan.n_samples,
        )
        # The penalty's gradient is data independent: added after the noise.
        g_full = g_noisy + penalty * w
        M = H + np.diag(penalty + shift)
        direction = np.linalg.solve(M, g_full)
        if penalized:
            # Released in the coordinates Q = (A + lambda I)^(1/2)
            # (scaled_direction_sensitivity): the noise on a penalized
            # coordinate no longer grows with the penalty.
            q = np.sqrt(penalty + shift)
            mechanism = GaussianMechanism(
                scaled_direction_sensitivity(
                    float(np.linalg.norm(g_full / q)), shift, newton_plan.n_samples
                ),
                newton_plan.direction_noise_multiplier,
            )
            w = w - mechanism.privatize(q * direction, rng) / q
        else:
            # H + shift >= shift I, and a neighbour's differs by a rank-one
            # v v^T with ||v||^2 <= beta / n: the sensitivity of the
            # direction given the released g~.
            mechanism = GaussianMechanism(
                direction_sensitivity(
                    float(np.linalg.norm(g_full)), shift, newton_plan.n_samples
                ),
                newton_plan.direction_noise_multiplier,
            )
            w = w - mechanism.privatize(direction, rng)
        if progress is not None:
            progress(step + 1, float(np.linalg.norm(g_noisy)))
    return w[:-1] / scale, w[-1] * s / scale
