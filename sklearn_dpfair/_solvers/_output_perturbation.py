# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Output perturbation: a certified regularized ERM solve plus one Gaussian.

The L2-regularized empirical risk
``F(w) = (1/n) sum_i l(w; x_i, y_i) + (alpha/2) ||w||^2`` (intercept included in
``w`` through the constant column ``s``, so ``F`` is ``alpha``-strongly convex
in every coordinate) has a minimizer that moves by at most ``2 L / (alpha n)``
when one record is replaced, where ``L`` is the Lipschitz constant of one
example's loss (Chaudhuri et al., 2011; each phase of Menart and Nikolov's
Phased ERM, Algorithm 5, perturbs such an approximate minimizer).

A numerical solver only approximates the minimizer. Strong convexity gives
the certificate ``||w - w*|| <= ||grad F(w)|| / alpha``: stopping only once
``||grad F(w)|| <= alpha * tol`` bounds the distance to the exact minimizer by
``tol`` *for every dataset*, so the released point is within ``tol`` of a
mechanism with sensitivity ``2L/(alpha n)``, i.e. a mechanism with
sensitivity ``2L/(alpha n) + 2 tol``.

How the certificate is reached does not matter to the guarantee (only the
certified point is released), only whether and how fast: L-BFGS first;
then, where it stops short (its line search needs ``F`` to decrease, and
with a small ``alpha`` the last factor of 10 to 100 in ``||grad F||``
changes ``F`` by less than its float64 resolution), inexact Newton steps
accepted on ``||grad F||`` alone, which reach ``alpha * tol`` in one or two
steps where gradient descent at ``1/beta`` would need about ``beta / alpha``
steps per factor ``e`` (``10^8`` for ``alpha = 0.001`` and rows of norm 600);
gradient descent last, whose step count the public
:func:`guaranteed_certificate_steps` bounds.
"""

import math

import numpy as np
from scipy.optimize import minimize

from ..utils._numeric import SQRT_SMALLEST_NORMAL
from ._linear import LinearModel

__all__ = [
    "certified_regularized_erm",
    "guaranteed_certificate_steps",
    "output_perturbation",
]

# Gradient-descent fallback budget after L-BFGS. Gradient descent with step
# 1/(beta + alpha) converges linearly on a strongly convex smooth objective,
# so it always reaches the certificate within guaranteed_certificate_steps
# (public); the cap only bounds the run time, and where the guaranteed count
# exceeds it whether the fit fails depends on the data (a recorded caveat).
MAX_FALLBACK_STEPS = 100_000
# Newton steps after L-BFGS; each solves its system by conjugate gradients
# on finite-difference Hessian-vector products (two gradients each), at most
# _NEWTON_CG_FACTOR times the parameter count of them. From a point L-BFGS
# left, one or two steps certified every case seen (its stalls at ||grad F||
# ~ 1e-7 for a target of 1e-9).
MAX_NEWTON_STEPS = 20
_NEWTON_CG_FACTOR = 2
# Halvings of a Newton step before it is given up.
_NEWTON_BACKTRACKS = 30


# The square root of the smallest normal float64: a plain norm below it
# comes from a sum of squares that underflowed.
_SQRT_TINY = SQRT_SMALLEST_NORMAL


def _norm(v):
    """Euclidean norm of a float64 vector that neither underflows nor overflows.

    The certificate compares ``||grad F||`` with ``alpha * tol``; a plain
    ``sqrt(sum_j g_j^2)`` is 0 for a gradient whose squares underflow
    (entries below ~1.5e-154, with a tiny ``alpha`` and rows) and would
    certify any point, and ``inf`` past ~1.3e154. Such norms are recomputed
    as ``m ||g / m||`` with ``m = max_j |g_j|``; every other norm is the
    plain one, bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._output_perturbation import _norm
    >>> float(_norm(np.array([3e-200, 4e-200])))
    5e-200
    """
    norm = np.linalg.norm(v)
    if _SQRT_TINY < norm < math.inf:
        return norm
    scale = np.max(np.abs(v)) if v.size else 0.0
    if not 0.0 < scale < math.inf:
        return norm
    with np.errstate(under="ignore", over="ignore"):
        rescued = scale * np.linalg.norm(v / scale)
    if rescued < np.finfo(np.float64).smallest_normal:
        # A subnormal norm is rounded to a multiple of the smallest
        # subnormal: one step up keeps it an upper bound (the certificate
        # must not pass on a rounded-down norm).
        rescued = np.nextafter(rescued, math.inf)
    return rescued


def _objective(w_flat, X, y, loss, alpha, s, shape, weights=None):
    # F and its gradient (flat) for scipy's optimizer: the linear layer's
    # full-batch loss_gradient, whose penalty covers the intercept too.
    value, grad = LinearModel(shape[1], s).loss_gradient(
        w_flat.reshape(shape), X, y, loss, alpha=alpha, sample_weight=weights
    )
    return value, grad.ravel()


def _gradient(w, args):
    return _objective(w, *args)[1]


def _hessian_product(w, args):
    """``v -> H v`` of ``F`` at ``w`` by central differences of its gradient.

    The step ``h`` is the cube root of the machine epsilon (relative to
    ``1 + ||w||``, over ``||v||``): it balances the ``O(h^2)`` truncation
    against the ``O(eps / h)`` round-off of central differences. Its error
    only slows the Newton steps; it never touches the certificate, which is
    the exact gradient's norm.
    """
    scale = np.cbrt(np.finfo(float).eps) * (1.0 + np.linalg.norm(w))

    def product(v):
        norm = _norm(v)
        if norm == 0.0:
            return np.zeros_like(v)
        h = scale / norm
        return (_gradient(w + h * v, args) - _gradient(w - h * v, args)) / (2.0 * h)

    return product


def _newton_polish(w, grad, args, target):
    """Inexact Newton steps while ``||grad F|| > target``, accepted on ``||grad F||``.

    A step is the conjugate-gradient solution of ``H d = -grad`` (Hessian
    products by :func:`_hessian_product`), halved until the gradient norm
    decreases; no step that does not decrease it is taken, so the returned
    point's gradient norm is at most the given one (and the fallback's
    guarantee, from a point of gradient norm at most the Lipschitz
    constant, still holds). Unlike a line search on ``F``, it is not
    stopped by ``F``'s float64 resolution near the minimizer.
    """
    from scipy.sparse.linalg import LinearOperator, cg

    norm = _norm(grad)
    for _ in range(MAX_NEWTON_STEPS):
        if norm <= target:
            break
        hessian = LinearOperator(
            (w.size, w.size), matvec=_hessian_product(w, args), dtype=float
        )
        direction, _ = cg(
            hessian, -grad, rtol=1e-2, maxiter=_NEWTON_CG_FACTOR * w.size
        )
        step = 1.0
        for _ in range(_NEWTON_BACKTRACKS):
            candidate = w + step * direction
            candidate_grad = _gradient(candidate, args)
            candidate_norm = _norm(candidate_grad)
            if candidate_norm < norm:
                break
            step *= 0.5
        else:
            # No decrease along this direction: leave it to the fallback.
            break
        w, grad, norm = candidate, candidate_grad, candidate_norm
    return w, grad


def guaranteed_certificate_steps(*, lipschitz, smoothness, alpha, tol):
    """Gradient-descent steps that certify ``||grad F|| <= alpha tol`` on *any* data.

    From public constants only. ``F`` is ``alpha``-strongly convex and
    ``beta = smoothness + alpha`` smooth; gradient descent with step
    ``1/beta`` contracts the distance to the minimizer by ``rho = 1 - alpha /
    beta`` per step (Nesterov 2004, Thm. 2.1.15). Started where
    ``||grad F|| <= lipschitz`` (the zero vector: each example's gradient
    there has norm at most ``lipschitz``), the distance is at most
    ``lipschitz / alpha``, and ``||grad F(w_t)|| <= beta rho^t lipschitz /
    alpha``; the returned ``t`` makes this at most ``alpha tol``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._output_perturbation import (
    ...     guaranteed_certificate_steps)
    >>> guaranteed_certificate_steps(lipschitz=1.0, smoothness=0.25, alpha=0.1,
    ...                              tol=1e-6)
    52
    """
    beta = smoothness + alpha
    # alpha**2 tol can underflow to 0 for a tiny alpha: no finite count.
    denominator = alpha * alpha * tol
    ratio = beta * lipschitz / denominator if denominator > 0 else math.inf
    if ratio <= 1.0:
        return 0
    contraction = -math.log1p(-alpha / beta) if alpha < beta else math.inf
    steps = math.log(ratio) / contraction
    return math.ceil(steps) if math.isfinite(steps) else math.inf


def certified_regularized_erm(
    X, y, loss, *, alpha, intercept_scaling, tol, smoothness, sample_weight=None
):
    """Minimize ``F`` until ``||grad F|| <= alpha * tol`` is certified.

    L-BFGS, then Newton steps accepted on the gradient norm
    (:func:`_newton_polish`), then gradient descent at step ``1/beta`` for
    at most :data:`MAX_FALLBACK_STEPS` steps (which
    :func:`guaranteed_certificate_steps` bounds from public constants); a
    ``RuntimeError`` where none certifies (see the record's caveat).

    ``sample_weight`` (public, mean 1, or None) weights each example's loss;
    ``smoothness`` must then bound the weighted example's curvature. ``X``
    may be dense or a scipy sparse matrix (CSR/CSC: only products with it
    are taken, it is never made dense), in float32 or float64 (the
    parameters are float64 either way; ``X`` is not converted).

    Returns the stacked parameters ``W`` of shape ``(n_features + 1, K)``
    (last row: the intercept parameter ``w0`` with ``b = s * w0``).
    """
    shape = (X.shape[1] + 1, loss.n_outputs)
    args = (X, y, loss, alpha, float(intercept_scaling), shape, sample_weight)
    target = alpha * tol
    w_zero = np.zeros(np.prod(shape))
    res = minimize(
        _objective,
        w_zero,
        args=args,
        jac=True,
        method="L-BFGS-B",
        options={"gtol": target / 10, "maxiter": 10_000, "ftol": 0.0},
    )
    w = res.x
    _, grad = _objective(w, *args)
    _, grad_zero = _objective(w_zero, *args)
    # Norms that neither underflow nor overflow (_norm): with a tiny alpha
    # and tiny rows the gradient's squares underflow, and a norm of 0 would
    # certify an arbitrary point.
    if _norm(grad_zero) < _norm(grad):
        # The fallback starts from the point with the smaller gradient norm:
        # at most ||grad F(0)|| <= lipschitz, where the step count of
        # guaranteed_certificate_steps holds for every dataset.
        w, grad = w_zero, grad_zero
    w, grad = _newton_polish(w, grad, args, target)
    step = 1.0 / (smoothness + alpha)
    n_fallback = 0
    while _norm(grad) > target:
        if n_fallback >= MAX_FALLBACK_STEPS:
            # Reachable only where guaranteed_certificate_steps exceeds the
            # cap (the record then carries a caveat) or through round-off.
            raise RuntimeError(
                "Output perturbation could not certify the regularized solution "
                f"to tol={tol}; increase tol or alpha. No model is released."
            )
        w = w - step * grad
        _, grad = _objective(w, *args)
        n_fallback += 1
    return w.reshape(shape)


def output_perturbation(W, *, mechanism, rng):
    """Release ``W + N(0, (sigma * sensitivity)^2 I)`` through ``mechanism``.

    ``mechanism`` is the privacy core's Gaussian mechanism whose
    ``clip_norm`` is the replace-one sensitivity of the certified minimizer
    (:meth:`~sklearn_dpfair.privacy.PrivacyBudget.gaussian`); it draws the
    noise. Returns float64.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._output_perturbation import output_perturbation
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> output_perturbation(np.ones((2, 1)), mechanism=GaussianMechanism(0.1, 0.0),
    ...                     rng=np.random.default_rng(0)).ravel()
    array([1., 1.])
    """
    return mechanism.privatize(W, rng)
