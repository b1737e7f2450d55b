# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Full-batch private Frank-Wolfe over an l1 ball (sparse logistic regression).

The coefficients ``W`` (``d x K`` for ``K`` outputs) are constrained to the
l1 ball ``{||W||_1 <= r}``, whose vertices are ``+-r e_(j, k)``, and the
intercept ``b`` to its own l1 ball ``{||b||_1 <= r_b}`` in ``R^K`` (vertices
``+-r_b e_k``); the feasible set is their product, a polytope whose linear
minimization splits into one vertex per factor. Each step computes the
full gradient of the data term, selects a vertex of each factor with the
exponential mechanism on the scores ``u(v) = -<v, g>`` (Talwar, Thakurta
and Zhang, "Nearly optimal private LASSO", NeurIPS 2015, the full-batch
method that Bassily, Guzman and Nandi's polyhedral Frank-Wolfe builds on),
and moves ``(W, b) <- (1 - eta_t) (W, b) + eta_t (v, v_b)`` with
``eta_t = 2 / (t + 2)``. After ``T`` steps ``W`` has at most ``T``
nonzeros.

Why a separate intercept ball: the intercept vertex of a joint ball would
move every logit by ``r`` at once, while a column vertex moves only the rows
where that column is nonzero (a few percent on sparse data). With the
radius a sparse truth needs, the intercept gradient dominates every step
and Frank-Wolfe zigzags on it.

Score sensitivity (add/remove one record, ``n`` public). Features are
clipped coordinate-wise to ``[-B, B]``. The raw gradient of the logistic
and softmax losses has entries in ``[-1, 1]`` (``sigmoid - y`` and
``softmax - onehot(y)``), so one record adds an entry in ``[-B, B]`` to
every coordinate of the summed gradient ``X^T R`` and one in ``[-1, 1]`` to
the summed intercept gradient. The scores are these sums divided by the
public ``n``, so a coefficient score ``-+r g_(j, k)`` moves by at most
``r B / n`` and an intercept score by at most ``r_b / n``, whatever the
iterate (replacing a record would double both).
``tests/solvers/test_frank_wolfe.py`` checks the bounds on random
neighbours.

Cost per step: one product ``X^T R`` (``O(nnz K)`` for a sparse ``X``), an
``O(n K + d K)`` update, and one Gumbel draw per vertex. The linear
predictions are updated in place, ``z <- (1 - eta) z + eta (r x_j + v_b)``,
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
    "INTERCEPT_BOUND",
    "INTERCEPT_RHO_SHARE",
    "auto_frank_wolfe_steps",
    "clip_coordinates",
    "private_frank_wolfe",
    "resolve_feature_inf_bound",
    "score_sensitivity",
    "scores_from_predictions",
    "selection_budget_shares",
    "vertex_scores",
]

#: The step count from the rate formula is capped here (public, data-free):
#: every step costs one pass over the data, and ``epsilon = inf`` needs a cap.
MAX_AUTO_STEPS = 1000
#: Share of the worst-case step count that :func:`auto_frank_wolfe_steps`
#: takes (the curvature of sparse features is far below its worst case).
STEPS_FACTOR = 0.08
#: Default radius ``r_b`` of the intercept ball: ``|b| <= 5`` allows base
#: rates from 0.7% to 99.3%; public and data-free.
INTERCEPT_BOUND = 5.0
#: Share of the zCDP budget that the intercept selections get when fitted
#: (two candidates per output: a small share selects well).
INTERCEPT_RHO_SHARE = 0.1

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
    """Coefficients ``(n_features, n_outputs)``, intercept ``(n_outputs,)``, steps."""

    coef: np.ndarray
    intercept: np.ndarray
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


def score_sensitivity(radius, coordinate_bound, n_samples):
    """Add/remove sensitivity ``r B / n`` of every vertex score (``n`` public).

    ``coordinate_bound`` bounds every coordinate of the features the
    vertices multiply: ``B`` for the coefficient ball, 1 for the intercept
    ball (the intercept feature). It assumes a loss whose raw gradient has
    entries in ``[-1, 1]`` (logistic, softmax).

    Examples
    --------
    >>> from sklearn_dpfair._solvers._frank_wolfe import score_sensitivity
    >>> score_sensitivity(5.0, 1.0, 1000)
    0.005
    """
    return float(radius) * float(coordinate_bound) / int(n_samples)


def auto_frank_wolfe_steps(*, l1_radius, feature_bound, n_samples, n_vertices, rho):
    """Step count of private Frank-Wolfe from public inputs only.

    With ``eta_t = 2 / (t + 2)`` the optimization error is at most
    ``C / T`` for the curvature constant ``C`` of the loss over the ball,
    and each selection is off by about ``(Delta / epsilon0) ln J`` in score
    (Talwar, Thakurta and Zhang, 2015), with ``Delta = r B / n`` and
    ``epsilon0 = sqrt(8 rho / T)``. The worst case ``C = beta_1 D^2 = B^2
    r^2`` (``beta_1 = B^2 / 4``, ``D = 2 r``) balances to
    ``T = (B r n sqrt(8 rho) / ln J)^(2/3)``. That curvature assumes every
    feature is at its bound in every row; on sparse features, nonzero in a
    few percent of the rows, it is one to two orders of magnitude smaller,
    and the balance moves to about a twelfth of that ``T``
    (:data:`STEPS_FACTOR`, a public constant measured on synthetic sparse
    data in ``benchmarks/bench_sparse.py``). Capped at
    :data:`MAX_AUTO_STEPS` (which ``rho = inf`` gets).

    Examples
    --------
    >>> from sklearn_dpfair._solvers._frank_wolfe import auto_frank_wolfe_steps
    >>> auto_frank_wolfe_steps(l1_radius=20.0, feature_bound=1.0,
    ...     n_samples=20000, n_vertices=20000, rho=0.03)
    59
    """
    if math.isinf(rho):
        return MAX_AUTO_STEPS
    base = feature_bound * l1_radius * n_samples * math.sqrt(8.0 * rho) / math.log(
        n_vertices
    )
    steps = STEPS_FACTOR * base ** (2.0 / 3.0)
    return int(min(MAX_AUTO_STEPS, max(1, math.ceil(steps))))


def selection_budget_shares(n_steps):
    """The zCDP budget share of each of ``n_steps`` selections: ``(t + 1)^2``.

    With ``eta_t = 2 / (t + 2)`` the output is ``w_T = sum_t lambda_t v_t``
    with ``lambda_t = 2 (t + 1) / (T (T + 1))``: late vertices weigh more,
    and late gradients are smaller (the Frank-Wolfe gap shrinks like
    ``1 / t``), so late selections need more accuracy. Giving selection
    ``t`` the parameter ``epsilon0_t`` proportional to ``lambda_t`` (its
    zCDP cost ``epsilon0_t^2 / 8`` proportional to ``(t + 1)^2``) lowered
    the test loss of ``benchmarks/bench_sparse.py`` against equal shares at
    every budget tried. Public: a function of ``T`` only.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._frank_wolfe import selection_budget_shares
    >>> selection_budget_shares(3).round(4).tolist()
    [0.0714, 0.2857, 0.6429]
    """
    shares = (np.arange(int(n_steps)) + 1.0) ** 2
    return shares / shares.sum()


def vertex_scores(
    X, y, loss, coef, intercept=None, *, l1_radius, intercept_bound=0.0, alpha=0.0
):
    """Scores ``u(v) = -<v, grad F>`` of the vertices of both balls.

    ``X`` is the clipped data, ``coef`` of shape ``(d, K)``, ``intercept``
    of shape ``(K,)`` (None: no intercept). Returns ``(coef_scores,
    intercept_scores)``: ``+r e_(j, k)`` for the ``d K`` coordinates
    (row-major in ``coef``), then ``-r e_(j, k)``; likewise ``+-r_b e_k``
    (None without an intercept). Used by the solver and the sensitivity
    tests.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair._solvers._frank_wolfe import vertex_scores
    >>> X, y = np.array([[1.0], [-1.0]]), np.array([1.0, 0.0])
    >>> u, u_b = vertex_scores(X, y, BinaryLogisticLoss(), np.zeros((1, 1)),
    ...     np.zeros(1), l1_radius=1.0, intercept_bound=2.0)
    >>> (u + 0.0).tolist(), (u_b + 0.0).tolist()  # +-r e_0; +-r_b
    ([0.5, -0.5], [0.0, 0.0])
    """
    Z = np.asarray(X @ coef)
    if intercept is not None:
        Z = Z + intercept
    return scores_from_predictions(
        X, y, loss, Z, coef, l1_radius=l1_radius,
        intercept_bound=intercept_bound if intercept is not None else None,
        alpha=alpha,
    )


def scores_from_predictions(
    X, y, loss, Z, coef, *, l1_radius, intercept_bound=None, alpha=0.0,
    weights=None, clip_weighted=True,
):
    """Vertex scores from the linear predictions ``Z`` (see :func:`vertex_scores`).

    ``weights`` (public, or None) multiply each record's raw gradient,
    which is then clipped back to the loss's ``[-1, 1]`` entries (unless
    ``clip_weighted`` is False, without privacy), so the score sensitivity
    stays that of :func:`score_sensitivity` whatever a record's weight.
    """
    n = X.shape[0]
    R = loss.raw_gradient(y, Z)
    if weights is not None:
        R = R * weights[:, None]
        if clip_weighted:
            R = np.clip(R, -1.0, 1.0)
    # Each entry of R is in [-1/n, 1/n]: divided before the product so that no
    # partial sum exceeds the coordinate bound (no overflow whatever B is).
    R = R / n
    G = np.asarray(X.T @ R)
    if alpha:
        G = G + alpha * coef  # data independent: no sensitivity
    coef_scores = _ball_scores(G.ravel(), l1_radius)
    if intercept_bound is None:
        return coef_scores, None
    return coef_scores, _ball_scores(R.sum(axis=0), intercept_bound)


def _ball_scores(g, radius):
    """``[-r g, r g]``: the scores of the ball's vertices ``+r e_i`` then ``-r e_i``."""
    return np.concatenate([-radius * g, radius * g])


def private_frank_wolfe(
    X,
    y,
    loss,
    *,
    l1_radius,
    mechanisms,
    rng,
    intercept_bound=None,
    intercept_mechanisms=None,
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
        Radius ``r`` of the coefficients' ball.
    mechanisms : sequence of ExponentialMechanism
        One per step (``T = len(mechanisms)``, public): selects the
        coefficient vertex from its scores and draws its noise (see
        :func:`selection_budget_shares`).
    rng : numpy.random.Generator
        The fit's generator, passed to the mechanisms.
    intercept_bound : float or None, default=None
        Radius ``r_b`` of the intercept's ball; None fits no intercept.
    intercept_mechanisms : sequence of ExponentialMechanism or None, default=None
        One per step: selects the intercept vertex (drawn after the
        coefficient vertex at every step); required with
        ``intercept_bound``.
    alpha : float, default=0.0
        Optional L2 penalty ``alpha/2 ||W||^2`` (data independent).
    sample_weight : ndarray of shape (n,) or None, default=None
        Public per-record weights. Each record's raw gradient is multiplied
        by its weight and *then* clipped to ``[-1, 1]`` (unless the
        mechanism's epsilon is infinite), so the score sensitivity is
        unchanged.

    Returns
    -------
    result : FrankWolfeResult
        ``coef`` of shape ``(d, K)`` and ``intercept`` of shape ``(K,)``
        (zeros without an intercept).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair._solvers._frank_wolfe import private_frank_wolfe
    >>> from sklearn_dpfair.privacy._exponential import ExponentialMechanism
    >>> X = np.asfortranarray([[1.0, 0.0], [-1.0, 0.0]] * 10)
    >>> y = np.array([1.0, 0.0] * 10)
    >>> mech = ExponentialMechanism(sensitivity=0.1, epsilon=np.inf)
    >>> res = private_frank_wolfe(X, y, BinaryLogisticLoss(), l1_radius=2.0,
    ...     mechanisms=[mech] * 5, rng=np.random.default_rng(0))
    >>> res.coef.ravel().tolist()
    [2.0, 0.0]
    """
    n, d = X.shape
    K = loss.n_outputs
    W = np.zeros((d, K))
    b = np.zeros(K)
    Z = np.zeros((n, K))
    sparse = sp.issparse(X)
    clip_weighted = not math.isinf(mechanisms[0].epsilon)
    for t, mechanism in enumerate(mechanisms):
        scores, intercept_scores = scores_from_predictions(
            X, y, loss, Z, W, l1_radius=l1_radius,
            intercept_bound=intercept_bound, alpha=alpha,
            weights=sample_weight, clip_weighted=clip_weighted,
        )
        step = 2.0 / (t + 2.0)
        index, sign = _select(mechanism, scores, rng)
        j, k = divmod(index, K)
        move = step * sign * l1_radius
        W *= 1.0 - step
        W[j, k] += move
        Z *= 1.0 - step
        # z <- (1 - eta) z + eta <v, x>: only column j of X is touched.
        if sparse:
            lo, hi = X.indptr[j], X.indptr[j + 1]
            Z[X.indices[lo:hi], k] += move * X.data[lo:hi]
        else:
            Z[:, k] += move * X[:, j]
        if intercept_scores is not None:
            # Both blocks take the same step: Z already holds (1 - eta) b.
            index, sign = _select(intercept_mechanisms[t], intercept_scores, rng)
            b *= 1.0 - step
            b[index] += step * sign * intercept_bound
            Z[:, index] += step * sign * intercept_bound
    return FrankWolfeResult(W, b, len(mechanisms))


def _select(mechanism, scores, rng):
    """``(position, sign)`` of the vertex selected among ``2 m`` (+ then -)."""
    size = scores.shape[0] // 2
    index = mechanism.select(scores, rng)
    return index % size, (1.0 if index < size else -1.0)
