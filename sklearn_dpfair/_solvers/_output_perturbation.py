# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Output perturbation: a certified regularized ERM solve plus one Gaussian.

The L2-regularized empirical risk
``F(w) = (1/n) sum_i l(w; x_i, y_i) + (alpha/2) ||w||^2`` (intercept included in
``w`` through the constant column ``s``, so ``F`` is ``alpha``-strongly convex
in every coordinate) has a minimizer that moves by at most ``2 L / (alpha n)``
when one record is replaced, where ``L`` is the Lipschitz constant of one
example's loss (Chaudhuri et al., 2011; Lowy's thesis, seed 000 Alg. 5).

A numerical solver only approximates the minimizer. Strong convexity gives
the certificate ``||w - w*|| <= ||grad F(w)|| / alpha``: stopping only once
``||grad F(w)|| <= alpha * tol`` bounds the distance to the exact minimizer by
``tol`` *for every dataset*, so the released point is within ``tol`` of a
mechanism with sensitivity ``2L/(alpha n)``, i.e. a mechanism with
sensitivity ``2L/(alpha n) + 2 tol``.
"""

import numpy as np
from scipy.optimize import minimize

__all__ = ["certified_regularized_erm", "output_perturbation"]

# Gradient-descent fallback budget after L-BFGS. Gradient descent with step
# 1/(beta + alpha) converges linearly on a strongly convex smooth objective,
# so it always reaches the certificate; the cap only bounds the run time.
_MAX_FALLBACK_STEPS = 100_000


def _objective(w_flat, X, y, loss, alpha, s, shape):
    W = w_flat.reshape(shape)
    coef, w0 = W[:-1], W[-1]
    raw = X @ coef + s * w0
    n = X.shape[0]
    value = loss.loss(y, raw).mean() + 0.5 * alpha * np.sum(W * W)
    R = loss.raw_gradient(y, raw)
    grad = np.empty_like(W)
    grad[:-1] = X.T @ R / n
    grad[-1] = s * R.sum(axis=0) / n
    grad += alpha * W
    return value, grad.ravel()


def certified_regularized_erm(X, y, loss, *, alpha, intercept_scaling, tol, smoothness):
    """Minimize ``F`` until ``||grad F|| <= alpha * tol`` is certified.

    Returns the stacked parameters ``W`` of shape ``(n_features + 1, K)``
    (last row: the intercept parameter ``w0`` with ``b = s * w0``).
    """
    shape = (X.shape[1] + 1, loss.n_outputs)
    args = (X, y, loss, alpha, float(intercept_scaling), shape)
    target = alpha * tol
    res = minimize(
        _objective,
        np.zeros(np.prod(shape)),
        args=args,
        jac=True,
        method="L-BFGS-B",
        options={"gtol": target / 10, "maxiter": 10_000, "ftol": 0.0},
    )
    w = res.x
    _, grad = _objective(w, *args)
    step = 1.0 / (smoothness + alpha)
    n_fallback = 0
    while np.linalg.norm(grad) > target:
        if n_fallback >= _MAX_FALLBACK_STEPS:
            raise RuntimeError(
                "Output perturbation could not certify the regularized solution "
                f"to tol={tol}; increase tol or alpha. No model is released."
            )
        w = w - step * grad
        _, grad = _objective(w, *args)
        n_fallback += 1
    return w.reshape(shape)


def output_perturbation(W, *, noise_std, rng):
    """Release ``W + N(0, noise_std^2 I)``."""
    return W + rng.normal(0.0, noise_std, size=W.shape)
