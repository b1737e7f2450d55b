# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Full-batch private Frank-Wolfe over an l1 ball (sparse logistic regression).

The constraint set is ``{w : ||w||_1 <= r}`` over all coefficients (the
intercept is the coefficient of a constant feature ``s``); its vertices are
``+-r e_j``, ``J = 2 K (d + 1)`` of them for ``K`` outputs. Each step
computes the full gradient ``g`` of the data term, selects a vertex with the
exponential mechanism on the scores ``u(v) = -<v, g>`` (Talwar, Thakurta and
Zhang, "Nearly optimal private LASSO", NeurIPS 2015, the full-batch method
that Bassily, Guzman and Nandi's polyhedral Frank-Wolfe builds on), and
moves ``w <- (1 - eta_t) w + eta_t v`` with ``eta_t = 2 / (t + 2)``. After
``T`` steps ``w`` has at most ``T`` nonzeros.

Score sensitivity (replace-one, ``n`` public). Features are clipped
coordinate-wise to ``[-B, B]`` and the intercept feature is ``s``, so every
coordinate of ``x~`` is at most ``X~ = max(B, s)`` in magnitude. The raw
gradient of the logistic and softmax losses has entries in ``[-1, 1]``
(``sigmoid - y`` and ``softmax - onehot(y)``), so each entry of one record's
gradient ``r x~^T`` lies in ``[-X~, X~]`` and replacing the record moves
every entry of the mean gradient by at most ``2 X~ / n``. A vertex score is
``-+r g_j``: its sensitivity is ``2 r X~ / n``, whatever the iterate.
``tests/solvers/test_frank_wolfe.py`` checks the bound on random neighbours.

Cost per step: one product ``X^T R`` (``O(nnz K)`` for a sparse ``X``), an
``O(n K + d K)`` update, and one Gumbel draw over the ``J`` vertices. The
linear predictions are updated in place, ``z <- (1 - eta) z + eta r x_j``,
from one column of ``X`` (a CSC copy for sparse input), so no second
product is needed.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..exceptions import PrivacyLeakWarning
from ..utils._validation import warn_at_caller

__all__ = [
    "FrankWolfeResult",
    "auto_frank_wolfe_steps",
    "clip_coordinates",
    "private_frank_wolfe",
    "resolve_feature_inf_bound",
    "score_sensitivity",
    "vertex_scores",
]

#: The step count from the rate formula is capped here (public, data-free):
#: every step costs one pass over the data, and ``epsilon = inf`` needs a cap.
MAX_AUTO_STEPS = 1000

# Messages are constants so tests can match them exactly.
_BOUND_INFERRED = (
    "feature_inf_bound was not given, so the largest |x_ij| of the private X "
    "was used as the per-coordinate bound. That bound sets the sensitivity of "
    "every selection and is not covered by the differential privacy "
    "guarantee. Pass feature_inf_bound=... (a bound known a priori, e.g. 1 "
    "for one-hot or [0, 1]-scaled features) to declare it."
)


@dataclass
class FrankWolfeResult:
    """Coefficients ``(n_coords, n_outputs)`` (last row: intercept feature)."""

    coef: np.ndarray
    n_steps: int


def resolve_feature_inf_bound(bound, X):
    """Return ``(bound, caveats)``: the declared bound, or the data's with a warning.

    An undeclared bound is read from the private ``X`` as ``max |x_ij|``
    (1.0 when ``X`` is all zeros) with a :class:`PrivacyLeakWarning`, like
    an undeclared label set.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._frank_wolfe import resolve_feature_inf_bound
    >>> resolve_feature_inf_bound(2.0, np.ones((2, 2)))
    (2.0, [])
    """
    if bound is not None:
        return float(bound), []
    # resolve <- fit_dp_frank_wolfe <- fit <- _fit_context <- the caller.
    warn_at_caller(_BOUND_INFERRED, PrivacyLeakWarning)
    data = X.data if sp.issparse(X) else X
    largest = float(np.max(np.abs(data))) if data.size else 0.0
    return (largest if largest > 0 else 1.0), [
        "per-coordinate feature bound inferred from the private data"
    ]


def clip_coordinates(X, bound, dtype=np.float64):
    """Copy of ``X`` with every entry clipped to ``[-bound, bound]``.

    Data-independent and elementwise, so one record's clipped row depends on
    that record only. Sparse input comes back as a CSC matrix (zeros stay
    implicit); dense input as a Fortran-ordered array (fast columns).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._frank_wolfe import clip_coordinates
    >>> clip_coordinates(np.array([[3.0, -0.5], [-1e308, 0.0]]), 1.0)
    array([[ 1. , -0.5],
           [-1. ,  0. ]])
    """
    if sp.issparse(X):
        X = sp.csc_matrix(X, dtype=dtype, copy=True)
        # Entries stored twice are one value (their sum): merge, then clip.
        X.sum_duplicates()
        np.clip(X.data, -bound, bound, out=X.data)
        return X
    return np.asfortranarray(np.clip(np.asarray(X, dtype=dtype), -bound, bound))


def score_sensitivity(l1_radius, coordinate_bound, n_samples):
    """Replace-one sensitivity ``2 r X~ / n`` of every vertex score.

    ``coordinate_bound`` is ``X~ = max(B, s)``, the bound on every
    coordinate of the augmented features; it assumes a loss whose raw
    gradient has entries in ``[-1, 1]`` (logistic, softmax).

    Examples
    --------
    >>> from sklearn_dpfair._solvers._frank_wolfe import score_sensitivity
    >>> score_sensitivity(5.0, 1.0, 1000)
    0.01
    """
    return 2.0 * float(l1_radius) * float(coordinate_bound) / int(n_samples)


def auto_frank_wolfe_steps(
    *, l1_radius, coordinate_bound, n_samples, n_vertices, epsilon, delta
):
    """Step count from the rate formula of private Frank-Wolfe (public inputs only).

    With ``eta_t = 2 / (t + 2)`` the optimization error is of order
    ``beta_1 D^2 / T`` (``beta_1 = X~^2 / 4``, the l1-to-linf smoothness of
    the logistic loss; ``D = 2 r``) and each selection is off by about
    ``(Delta / epsilon0) ln J`` (Talwar, Thakurta and Zhang, 2015), with
    ``epsilon0 ~ epsilon / sqrt(T ln(1/delta))``. Balancing the two, up to
    constants, gives
    ``T = (beta_1 r n epsilon / (L_inf ln J sqrt(ln(1/delta))))^(2/3)
    = (X~ r n epsilon / (4 ln J sqrt(ln(1/delta))))^(2/3)``,
    capped at :data:`MAX_AUTO_STEPS` (which ``epsilon = inf`` gets).

    Examples
    --------
    >>> from sklearn_dpfair._solvers._frank_wolfe import auto_frank_wolfe_steps
    >>> auto_frank_wolfe_steps(l1_radius=10.0, coordinate_bound=1.0,
    ...     n_samples=20000, n_vertices=20002, epsilon=1.0, delta=1e-5)
    131
    """
    if math.isinf(epsilon):
        return MAX_AUTO_STEPS
    beta_1 = coordinate_bound**2 / 4.0
    base = (
        beta_1 * l1_radius * n_samples * epsilon
        / (coordinate_bound * math.log(n_vertices) * math.sqrt(math.log(1.0 / delta)))
    )
    return int(min(MAX_AUTO_STEPS, max(1, math.ceil(base ** (2.0 / 3.0)))))


def _mean_gradient(X, R, intercept_scaling, n_samples):
    """``[X, s]^T R / n`` as ``(n_coords, K)``; R already divided by n."""
    G = np.asarray(X.T @ R)
    if intercept_scaling:
        G = np.vstack([G, intercept_scaling * R.sum(axis=0, keepdims=True)])
    return G


def vertex_scores(X, y, loss, coef, *, l1_radius, intercept_scaling, alpha=0.0):
    """Scores ``u(v) = -<v, grad F(w)>`` of the ``2 n_coords K`` vertices.

    Order: ``+r e_(j, k)`` for the ``n_coords * K`` coordinates (row-major in
    ``coef``), then ``-r e_(j, k)``. ``X`` is the clipped data, ``coef`` of
    shape ``(n_coords, K)``. Used by the solver and by the sensitivity tests.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair._solvers._frank_wolfe import vertex_scores
    >>> X, y = np.array([[1.0], [-1.0]]), np.array([1.0, 0.0])
    >>> scores = vertex_scores(X, y, BinaryLogisticLoss(), np.zeros((2, 1)),
    ...     l1_radius=1.0, intercept_scaling=1.0)
    >>> (scores + 0.0).tolist()  # +r e_0, +r e_intercept, -r e_0, -r e_intercept
    [0.5, 0.0, -0.5, 0.0]
    """
    d = X.shape[1]
    Z = np.asarray(X @ coef[:d])
    if intercept_scaling:
        Z = Z + intercept_scaling * coef[d]
    return _scores_from_raw(X, y, loss, Z, coef, l1_radius, intercept_scaling, alpha)


def _scores_from_raw(
    X, y, loss, Z, coef, l1_radius, intercept_scaling, alpha, weights=None,
    clip_weighted=True,
):
    n = X.shape[0]
    R = loss.raw_gradient(y, Z)
    if weights is not None:
        # Weighted, then clipped back to the loss's [-1, 1] entries, so the
        # score sensitivity stays 2 r X~ / n whatever a record's weight
        # (without privacy, clip_weighted=False, the loss is simply weighted).
        R = R * weights[:, None]
        if clip_weighted:
            R = np.clip(R, -1.0, 1.0)
    # Each entry of R is in [-1/n, 1/n]: divided before the product so that no
    # partial sum exceeds the coordinate bound (no overflow whatever B is).
    R = R / n
    G = _mean_gradient(X, R, intercept_scaling, n)
    if alpha:
        G = G + alpha * coef  # data independent: no sensitivity
    g = G.ravel()
    return np.concatenate([-l1_radius * g, l1_radius * g])


def private_frank_wolfe(
    X,
    y,
    loss,
    *,
    l1_radius,
    intercept_scaling,
    n_steps,
    mechanism,
    rng,
    alpha=0.0,
    sample_weight=None,
):
    """Run ``n_steps`` of full-batch Frank-Wolfe with private vertex selection.

    Parameters
    ----------
    X : ndarray (Fortran order) or scipy.sparse CSC matrix of shape (n, d)
        Clipped features (see :func:`clip_coordinates`).
    y : ndarray of shape (n,)
        Encoded labels.
    loss : BinaryLogisticLoss or SoftmaxLoss
        Pointwise loss with raw gradient entries in ``[-1, 1]``.
    l1_radius : float
        Radius ``r`` of the constraint set.
    intercept_scaling : float
        Value ``s`` of the constant feature; 0 fits no intercept (and offers
        no intercept vertex).
    n_steps : int
        Number of steps ``T`` (public).
    mechanism : ExponentialMechanism
        Selects a vertex from the scores; draws all the noise.
    rng : numpy.random.Generator
        The fit's generator, passed to the mechanism.
    alpha : float, default=0.0
        Optional L2 penalty ``alpha/2 ||w||^2`` (data independent).
    sample_weight : ndarray of shape (n,) or None, default=None
        Public per-record weights. Each record's raw gradient is multiplied
        by its weight and *then* clipped to ``[-1, 1]`` (unless the
        mechanism's epsilon is infinite), so the score sensitivity is
        unchanged.

    Returns
    -------
    result : FrankWolfeResult
        ``coef`` of shape ``(d + 1, K)`` (last row: intercept coordinate,
        zero when ``intercept_scaling == 0``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair._solvers._frank_wolfe import private_frank_wolfe
    >>> from sklearn_dpfair.privacy._exponential import ExponentialMechanism
    >>> X = np.asfortranarray([[1.0, 0.0], [-1.0, 0.0]] * 10)
    >>> y = np.array([1.0, 0.0] * 10)
    >>> res = private_frank_wolfe(X, y, BinaryLogisticLoss(), l1_radius=2.0,
    ...     intercept_scaling=1.0, n_steps=5, rng=np.random.default_rng(0),
    ...     mechanism=ExponentialMechanism(sensitivity=0.2, epsilon=np.inf))
    >>> res.coef.ravel().tolist()
    [2.0, 0.0, 0.0]
    """
    n, d = X.shape
    K = loss.n_outputs
    n_coords = d + 1 if intercept_scaling else d
    W = np.zeros((d + 1, K))
    Z = np.zeros((n, K))
    sparse = sp.issparse(X)
    clip_weighted = not math.isinf(mechanism.epsilon)
    for t in range(int(n_steps)):
        scores = _scores_from_raw(
            X, y, loss, Z, W[:n_coords], l1_radius, intercept_scaling, alpha,
            sample_weight, clip_weighted,
        )
        index = mechanism.select(scores, rng)
        sign = 1.0 if index < n_coords * K else -1.0
        j, k = divmod(index % (n_coords * K), K)
        step = 2.0 / (t + 2.0)
        move = step * sign * l1_radius
        W *= 1.0 - step
        W[j, k] += move
        Z *= 1.0 - step
        # z <- (1 - eta) z + eta <v, x~>: only column j of X~ is touched.
        if j == d:
            Z[:, k] += move * intercept_scaling
        elif sparse:
            lo, hi = X.indptr[j], X.indptr[j + 1]
            Z[X.indices[lo:hi], k] += move * X.data[lo:hi]
        else:
            Z[:, k] += move * X[:, j]
    return FrankWolfeResult(W, int(n_steps))
