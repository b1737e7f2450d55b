# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Second-order polish of a binary linear FERMI model on the exact-dual objective.

The full-batch phase (:mod:`._lbfgs`) minimises

    f(theta) = mean_i l_i(theta) + lambda max_W Psi(theta, W) + alpha/4 ||v||^2

for a binary model with the single logit ``z = x v + s b``. With the dual at
its maximiser (thesis Chapter 5, Eq. (5.1) and Lemma 221) the ERMI term of a
block is a function of the block's cell sums only: with
``a_r = sum_{i in cell r} w_i sigma(z_i)`` (the weighted predicted
positives of group ``r``), ``N_r`` the cell's weight, ``A = sum_r a_r``,
``T = sum_r N_r`` and ``P_r`` the group marginal,

    Phi(a) = sum_r a_r^2 / (P_r A) + (N_r - a_r)^2 / (P_r (T - A))  (- sum w),

a sum of quadratic-over-linear terms (convex in ``a``). Its Hessian in the
parameters is therefore that of a generalised linear model plus a low-rank
part, one rank per (block, group) cell:

    H = (1/n) X~^T diag(d) X~ + (lambda/n) sum_b J_b^T (nabla^2 Phi_b) J_b
        + alpha/2 I_v,

with ``x~ = [x, s]``, ``d_i = sw_i sigma'_i + lambda w_i sigma''_i
dPhi/da_{r_i}`` and ``J_b`` the rows ``sum_{i in cell} w_i sigma'_i x~_i``
of the block's cells. For a model of some hundred coefficients it is formed
explicitly, block of rows by block (a pass for the cell sums, one for
``X^T diag(d) X``), with temporaries of one block.

Why not plain Newton steps: at a large fairness weight the objective is
not convex (the ``sigma''`` term) and very ill-conditioned, and its
curvature changes over the distance the polish travels. On Adult
(StandardScaler on every column, equalized odds, weight 32, from the weight
path's point at 40 times ``tol``) the Hessian at the start has eigenvalues
from -4e-3 to 9 besides the exact zeros of the collinear one-hot blocks, and
at the minimum from 6e-5 to 9: Newton steps with a line search, or a trust
region, took more passes than L-BFGS (12 Hessians and 17 evaluations for
56 L-BFGS iterations). What pays is L-BFGS in the metric of the Hessian at
the start (:func:`preconditioned_polish`): the same stationarity in 21
iterations and 34 evaluations instead of 56 and 65, for one Hessian.

:func:`preconditioned_polish` evaluates the objective exactly as the L-BFGS
phase does and stops by the phase's own rule, ``max |grad_u f| <= tol`` in
the phase's (column-scaled) coordinates ``u``; the Hessian only changes the
metric in which L-BFGS searches. Where it stops short of ``tol`` the caller's
plain L-BFGS finishes from the last point it accepted.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit

from .._row_blocks import float64_product, row_block

__all__ = [
    "EIGEN_FLOOR",
    "POLISH_MAX_PARAMS",
    "PolishResult",
    "binary_exact_dual_hessian",
    "hessian_metric",
    "polish_applies",
    "polish_binary",
    "preconditioned_polish",
]

# Largest number of unknowns (coefficients + intercept) for which the
# Hessian is formed: its (p x p) array, its eigendecomposition and the
# O(n p^2) product X^T diag(d) X (one BLAS-3 pass: about three L-BFGS
# evaluations' time at p ~ 100 on Adult) stay small next to what they
# save; beyond it the phase is L-BFGS alone.
POLISH_MAX_PARAMS = 512
# Eigenvalues of the metric are floored at this fraction of the largest.
# On the Adult polish above (from 40 times tol to tol) 1e-3 took 21
# iterations and 34 evaluations; 1e-2: 29 and 37; 1e-1: 45 and 54; 1e-4:
# 21 and 27 but ended at a higher objective (the metric then trusts the
# start's curvature in directions where it changes sign).
EIGEN_FLOOR = 1e-3


@dataclass
class PolishResult:
    """What :func:`preconditioned_polish` returns: the last accepted point."""

    u: np.ndarray
    value: float
    grad: np.ndarray
    n_iter: int
    converged: bool


def polish_applies(X, n_classes):
    """Whether the second-order polish applies: two classes, few unknowns."""
    return int(n_classes) == 2 and X.shape[1] + 1 <= POLISH_MAX_PARAMS


def _row_slices(n, rows):
    return [slice(start, min(start + rows, n)) for start in range(0, n, rows)]


def _hessian_rows(X):
    """Rows per block of ``X^T diag(d) X``: float64 temporaries of ~1/16 of X."""
    n = X.shape[0]
    return int(max(256, -(-n // 16)))


def _add_weighted_products(out, block, d, cell_weights=None, index=None):
    """Add ``B^T diag(d) B``, ``B^T d`` and the cells' ``B^T M`` of a block ``B``.

    ``out`` is ``(gram, xd, xm)`` (float64); ``M`` (rows x n_cells) holds
    ``cell_weights[i]`` in row ``i``'s column ``index[i]``. A float32 block
    is cast alone; a sparse product is added entry by entry (never
    densified).
    """
    gram, xd, xm = out
    if block.dtype != np.float64:
        block = block.astype(np.float64)
    if sp.issparse(block):
        prod = sp.coo_matrix(block.T @ sp.csr_matrix(block.multiply(d[:, None])))
        prod.sum_duplicates()
        gram[prod.row, prod.col] += prod.data
    else:
        gram += block.T @ (block * d[:, None])
    xd += np.asarray(block.T @ d).ravel()
    if cell_weights is not None:
        M = np.zeros((d.size, xm.shape[1]))
        M[np.arange(d.size), index] = cell_weights
        xm += np.asarray(block.T @ M)


def _block_phi_derivatives(a, N, inv_p):
    """Gradient and Hessian of ``Phi`` (module docstring) in the cell sums ``a``.

    ``a``, ``N``, ``inv_p`` are the ``(n_groups,)`` cell sums, cell weights
    and ``1 / P_r`` of one block. Both classes' terms are
    quadratic-over-linear ``q(c) = sum_r c_r^2 / (P_r C)``, ``C = sum_r c_r``,
    with gradient ``2 c_r / (P_r C) - Q / C^2`` and Hessian
    ``2 diag(1 / (P C)) - 2 (u 1^T + 1 u^T) / C^2 + 2 Q / C^3``
    (``u_r = c_r / P_r``, ``Q = sum_r c_r^2 / P_r``); the class-0 sums are
    ``N - a`` (gradient negated, Hessian unchanged). A class no row predicts
    (``C`` = 0) adds nothing, as the guard of the exact dual makes it.
    """
    g = np.zeros_like(a)
    H = np.zeros((a.size, a.size))
    for c, sign in ((a, 1.0), (N - a, -1.0)):
        C = float(np.sum(c))
        if not C > 0:
            continue
        u = c * inv_p
        Q = float(u @ c)
        g += sign * (2.0 * u / C - Q / C**2)
        H += (
            2.0 * np.diag(inv_p) / C
            - 2.0 * (u[:, None] + u[None, :]) / C**2
            + 2.0 * Q / C**3
        )
    return g, H


@np.errstate(over="ignore", invalid="ignore")
def binary_exact_dual_hessian(
    X,
    u,
    *,
    regularizer,
    cells,
    fairness_weight,
    alpha,
    intercept_scaling,
    scale,
    weight_scale=1.0,
    sample_weight=None,
):
    """Hessian of the binary exact-dual objective in the L-BFGS coordinates ``u``.

    ``u = [v * scale, b]`` (:func:`~._lbfgs.refine_full_batch`'s
    preconditioned single logit ``z = x v + s b``). Returns the
    ``(d + 1, d + 1)`` matrix (module docstring), or None where a logit is
    not finite (a record near the float64 limit; the polish is then not
    used).
    """
    n, d = X.shape
    s = float(intercept_scaling)
    v = u[:d] / scale
    lam = float(fairness_weight)
    fair = regularizer is not None and cells is not None and lam > 0
    parts = _row_slices(n, _hessian_rows(X))

    def rows(part):
        # Per block of rows: sigma, sigma', and the penalty's constants.
        z = float64_product(row_block(X, part), v)
        z += s * u[d]
        p = expit(z)
        sw = None if sample_weight is None else sample_weight[part]
        if not fair:
            return z, p, sw, None, None
        row_scale = weight_scale if sw is None else weight_scale * sw
        blk, grp, wt, _ = regularizer.batch_constants(cells[part], row_scale)
        # Rows without a term have weight 0 (and dummy cell (0, 0)).
        return z, p, sw, wt, blk * regularizer.n_groups + grp

    if fair:
        n_blocks, n_groups = regularizer.n_blocks, regularizer.n_groups
        n_cells = n_blocks * n_groups
        # First pass: the cell sums a and N of the module docstring.
        a, N = np.zeros(n_cells), np.zeros(n_cells)
        for part in parts:
            z, p, _, wt, index = rows(part)
            if not np.all(np.isfinite(z)):
                return None
            a += np.bincount(index, weights=wt * p, minlength=n_cells)
            N += np.bincount(index, weights=wt, minlength=n_cells)
        a, N = a.reshape(n_blocks, n_groups), N.reshape(n_blocks, n_groups)
        inv_p = regularizer.inv_sqrt_marginals**2
        grads = np.zeros((n_blocks, n_groups))
        hessians = []
        for b in range(n_blocks):
            grads[b], Hb = _block_phi_derivatives(a[b], N[b], inv_p[b])
            hessians.append(Hb)
        grads = grads.ravel()
    out = (np.zeros((d, d)), np.zeros(d), np.zeros((d, n_cells if fair else 0)))
    diag_sum, cell_dp = 0.0, np.zeros(n_cells if fair else 0)
    for part in parts:
        z, p, sw, wt, index = rows(part)
        if not np.all(np.isfinite(z)):
            return None
        dp = p * (1.0 - p)
        diag = dp if sw is None else dp * sw
        if fair:
            # d/dz_i of dPhi/da_{r_i} w_i sigma'_i: the diagonal part.
            diag = diag + lam * wt * dp * (1.0 - 2.0 * p) * grads[index]
            cell_dp += np.bincount(index, weights=wt * dp, minlength=n_cells)
            _add_weighted_products(out, row_block(X, part), diag, wt * dp, index)
        else:
            _add_weighted_products(out, row_block(X, part), diag)
        diag_sum += float(np.sum(diag))
    gram, xd, xm = out
    H = np.empty((d + 1, d + 1))
    H[:d, :d] = gram
    H[:d, d] = H[d, :d] = s * xd
    H[d, d] = s * s * diag_sum
    if fair:
        # J: one row per cell, the sum over its rows of w_i sigma'_i x~_i.
        J = np.empty((n_cells, d + 1))
        J[:, :d] = xm.T
        J[:, d] = s * cell_dp
        for b in range(n_blocks):
            Jb = J[b * n_groups : (b + 1) * n_groups]
            H += lam * (Jb.T @ hessians[b] @ Jb)
    H /= n
    H[np.arange(d), np.arange(d)] += 0.5 * alpha
    # To the coordinates u: v = u[:d] / scale.
    inv = np.append(1.0 / scale, 1.0)
    H *= inv[:, None]
    H *= inv[None, :]
    return H if np.all(np.isfinite(H)) else None


def hessian_metric(H, free, floor=EIGEN_FLOOR):
    """``M = V |Lambda|_floor^{-1/2} V^T`` on the ``free`` coordinates (0 elsewhere).

    ``H = V Lambda V^T``; each eigenvalue is replaced by its absolute value
    (the ERMI term is not convex in ``theta``: negative curvature is taken
    as positive, as in saddle-free Newton) and floored at ``floor`` times
    the largest, so that flat directions (collinear columns, such as one-hot
    blocks standardized beside the intercept) get a bounded scale. In the
    coordinates ``y`` of ``u = u0 + M y`` the Hessian at ``u0`` is about the
    identity on the directions above the floor. Returns None where ``H`` is
    not finite or is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._newton_polish import hessian_metric
    >>> M = hessian_metric(np.diag([4.0, -1.0, 0.0]), np.ones(3, bool))
    >>> np.round(np.diag(M), 3).tolist()
    [0.5, 1.0, 15.811]
    """
    p = H.shape[0]
    Hf = H[np.ix_(free, free)]
    if not np.all(np.isfinite(Hf)):
        return None
    w, V = np.linalg.eigh(Hf)
    top = float(np.max(np.abs(w), initial=0.0))
    if not top > 0:
        return None
    M = np.zeros((p, p))
    M[np.ix_(free, free)] = (V / np.sqrt(np.maximum(np.abs(w), floor * top))) @ V.T
    return M


def preconditioned_polish(
    fun, u0, value, grad, hessian, *, tol, max_iter, maxcor, free=None
):
    """L-BFGS on ``fun`` in the metric of its Hessian at ``u0``, to stationarity tol.

    ``fun(u) -> (value, grad)`` is the objective exactly as the L-BFGS
    phase evaluates it, ``(value, grad)`` its value at ``u0``, and
    ``hessian(u)`` its Hessian (None where it cannot be formed). L-BFGS
    runs on ``y``, ``u = u0 + M y`` (:func:`hessian_metric`); the stopping
    rule is the phase's, read in the coordinates ``u`` at each accepted
    iterate: ``max |grad_u f| <= tol`` (the norm and coordinates of the
    phase's ``gtol``). ``free`` (boolean, default all) marks the
    coordinates that may move (the intercept is fixed when its scaling is
    0). Returns the :class:`PolishResult` of the last accepted iterate
    (``u0`` where there is none, or where it is not finite or not lower than
    ``u0``); ``converged`` False (L-BFGS stopped first: ``ftol``, a failed
    line search, ``max_iter``) leaves the rest to the caller's L-BFGS.
    """
    u0 = np.asarray(u0, dtype=np.float64)
    free = np.ones(u0.size, bool) if free is None else np.asarray(free, bool)
    stationarity = float(np.max(np.abs(grad), initial=0.0))
    start = PolishResult(u=u0, value=float(value), grad=grad, n_iter=0,
                         converged=stationarity <= tol)
    if start.converged or max_iter < 1:
        return start
    H = hessian(u0)
    M = None if H is None else hessian_metric(H, free)
    if M is None:
        return start
    seen = {}

    def fun_y(y):
        u = u0 + M @ y
        f, g = fun(u)
        seen.update(y=np.array(y, copy=True), u=u, value=f, grad=g)
        return f, M @ g

    last = {"result": start}

    def accepted(intermediate_result):
        y = intermediate_result.x
        if not ("y" in seen and np.array_equal(y, seen["y"])):
            fun_y(y)
        done = float(np.max(np.abs(seen["grad"]))) <= tol
        last["result"] = PolishResult(
            u=seen["u"], value=float(seen["value"]), grad=seen["grad"],
            n_iter=last["result"].n_iter + 1, converged=done,
        )
        if done:
            raise StopIteration

    minimize(
        fun_y,
        np.zeros(u0.size),
        jac=True,
        method="L-BFGS-B",
        callback=accepted,
        options={
            "maxiter": int(max_iter),
            # The stopping rule is read in u by the callback, never in y.
            "gtol": 0.0,
            "ftol": 64 * np.finfo(float).eps,
            "maxls": 50,
            "maxcor": int(maxcor),
        },
    )
    result = last["result"]
    finite = np.isfinite(result.value) and np.all(np.isfinite(result.grad))
    if not finite or result.value > start.value:
        start.n_iter = result.n_iter
        return start
    return result


def polish_binary(
    fun, u0, value, grad, X, *, tol, max_iter, maxcor, scale, intercept_scaling,
    to_plain=None, **objective,
):
    """:func:`preconditioned_polish` of the binary exact-dual objective, if it applies.

    ``fun`` is :func:`~._lbfgs.refine_full_batch`'s objective in its
    coordinates ``u`` (``scale``: the column scales), ``objective`` the
    keywords of :func:`binary_exact_dual_hessian` besides them. ``to_plain``
    (None: the identity) is the linear map from ``fun``'s coordinates to
    those ``[v * scale, b]`` of :func:`binary_exact_dual_hessian` (the
    centred coordinates of :func:`~._lbfgs.refine_full_batch`): the Hessian
    is formed at the mapped point and carried back, ``T^T H T`` for the
    map's matrix ``T``. Returns None where the polish does not apply
    (:func:`polish_applies`), else the :class:`PolishResult`, from which
    the caller continues with L-BFGS unless it is ``converged``.
    """
    if not polish_applies(X, 2):
        return None
    free = np.ones(u0.size, bool)
    if not intercept_scaling:
        free[-1] = False
    T = None
    if to_plain is not None:
        # The map is linear: its matrix, column by column.
        T = np.column_stack([to_plain(e) for e in np.eye(u0.size)])

    def hessian(u):
        if T is None:
            return binary_exact_dual_hessian(
                X, u, scale=scale, intercept_scaling=intercept_scaling, **objective
            )
        H = binary_exact_dual_hessian(
            X, T @ u, scale=scale, intercept_scaling=intercept_scaling, **objective
        )
        return None if H is None else T.T @ H @ T

    # At most max_iter - 1 iterations: the caller's L-BFGS, which runs at
    # least one where it is asked for none, keeps one and the total stays
    # within max_iter.
    return preconditioned_polish(
        fun, u0, value, grad, hessian, tol=tol, max_iter=int(max_iter) - 1,
        maxcor=maxcor, free=free,
    )
