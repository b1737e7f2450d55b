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
from one column of ``X``, so no second product is needed. A CSR ``X`` is
never copied (:func:`readable_coordinates`): its entries are clipped as they
are read, the product runs over blocks of rows (``R`` and its weighted form
exist one block at a time), and column ``j`` is found by a scan of the
column indices, ``O(nnz)`` like the product, instead of a column-ordered
copy (0.75 times the CSR storage in float64). Beyond ``X`` a fit holds the
predictions ``Z`` (``n K`` float64) and the labels: at one stored entry per
row, about 1.3 times the CSR storage, against 2.9 (4.1 in float32) with
the clipped CSC copy; each step about 2.5 times as long there (1.7 times
at ten entries per row).

The non-private limit (``epsilon=inf``) does not run this loop: its public
feature bound, intercept bound and step count assume columns of unit scale,
so the fit minimizes the same objective over the same l1 ball exactly
(:func:`~sklearn_dpfair._solvers._non_private.minimize_l1_ball`).
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..exceptions import PrivacyLeakWarning
from ..utils._validation import warn_at_caller
from ._linear import raw_predictions
from ._row_blocks import row_blocks

__all__ = [
    "FrankWolfeResult",
    "INTERCEPT_BOUND",
    "INTERCEPT_RHO_SHARE",
    "auto_frank_wolfe_steps",
    "clip_coordinates",
    "private_frank_wolfe",
    "readable_coordinates",
    "resolve_feature_inf_bound",
    "score_sensitivity",
    "scores_from_predictions",
    "selection_budget_shares",
    "vertex_scores",
]

#: The step count from the rate formula is capped here (public, data-free):
#: every step costs one pass over the data, and ``epsilon = inf`` needs a cap.
MAX_AUTO_STEPS = 1000
#: Most steps a user's ``fw_steps`` may ask for: each is a full pass over the
#: data and a selection with its own share of the budget (planning 10**5 of
#: them alone took 10 s), ten times the default cap; dp-newton's cap alike.
MAX_FW_STEPS = 10_000
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


#: The caveat of a feature bound read from the private X: it marks the
#: bound as the data's, not the user's (a record's value, which
#: :func:`~._private_fit.frank_wolfe_setup` caps rather than refuses).
INFERRED_BOUND_CAVEAT = "per-coordinate feature bound inferred from the private data"


def resolve_feature_inf_bound(bound, X):
    """Return ``(bound, caveats)``: the declared bound, or the data's with a warning.

    An undeclared bound is read from the private ``X`` as ``max |x_ij|``
    (1.0 when ``X`` is all zeros) with a :class:`PrivacyLeakWarning`, like
    an undeclared label set. A sparse ``X`` is read in canonical form, as
    the solver reads it (:func:`readable_coordinates`): a value stored as
    several entries is their sum, so the bound is that of the dense matrix.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, warnings
    >>> from sklearn_dpfair._solvers._frank_wolfe import resolve_feature_inf_bound
    >>> resolve_feature_inf_bound(2.0, np.ones((2, 2)))
    (2.0, [])
    >>> halves = sp.csr_matrix((np.ones(2), ([0, 0], [0, 0])), shape=(1, 1))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     resolve_feature_inf_bound(None, halves)[0]  # 1 + 1, one value
    2.0
    """
    if bound is not None:
        return float(bound), []
    warn_at_caller(_BOUND_INFERRED, PrivacyLeakWarning)
    data = _summed_duplicates(X).data if sp.issparse(X) else X
    largest = float(np.max(np.abs(data))) if data.size else 0.0
    return (largest if largest > 0 else 1.0), [INFERRED_BOUND_CAVEAT]


def clip_coordinates(X, bound, dtype=np.float64):
    """``X`` with every entry clipped to ``[-bound, bound]``.

    Data-independent and elementwise, so one record's clipped row depends on
    that record only. Dense input comes back as a Fortran-ordered copy of
    ``dtype`` (fast columns). Sparse input comes back in its own format
    (CSR or CSC; others as CSR) and floating dtype (float32 or float64;
    others as ``dtype``), without a copy of what needs none: entries stored
    twice are one value, their sum, which must be clipped once, so a matrix
    not in canonical form is first canonicalized in a copy; then, if every
    stored entry is within the bound, the clipped matrix *is* ``X`` (shared,
    never written); otherwise only its ``data`` are copied, clipped, and its
    ``indices`` and ``indptr`` shared. A float32 matrix is clipped to the
    largest float32 at most ``bound``, so no entry exceeds the bound the
    sensitivity uses.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._frank_wolfe import clip_coordinates
    >>> clip_coordinates(np.array([[3.0, -0.5], [-1e308, 0.0]]), 1.0)
    array([[ 1. , -0.5],
           [-1. ,  0. ]])
    >>> X = sp.csr_matrix(np.array([[3.0, -0.5], [-1e308, 0.0]]))
    >>> C = clip_coordinates(X, 1.0)
    >>> C.toarray().tolist(), np.shares_memory(C.indices, X.indices)
    ([[1.0, -0.5], [-1.0, 0.0]], True)
    >>> clip_coordinates(X, 1e308) is not X  # a new matrix, sharing every array
    True
    """
    X, limit = readable_coordinates(X, bound, dtype)
    if limit is None:  # clipped, or nothing to clip
        return X
    return _with_data(X, _clipped(X.data, limit))


def readable_coordinates(X, bound, dtype=np.float64):
    """``(X, limit)``: ``X`` as the solver reads it, clipped to ``[-bound, bound]``.

    As :func:`clip_coordinates`, except for a CSR matrix with entries out
    of the bound: it comes back canonical but unclipped, with ``limit``,
    the value its entries are clipped to as they are read (a block of rows
    or a column at a time, see :func:`scores_from_predictions`), so that
    no clipped copy of its data is kept. ``limit`` is None when ``X`` needs
    no clipping on reading.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._frank_wolfe import readable_coordinates
    >>> X = sp.csr_matrix(np.array([[3.0, -0.5], [0.0, 1.0]]))
    >>> C, limit = readable_coordinates(X, 2.0)
    >>> limit, np.shares_memory(C.data, X.data)
    (2.0, True)
    >>> readable_coordinates(X, 5.0)[1] is None
    True
    """
    if not sp.issparse(X):
        X = np.asarray(X, dtype=dtype)
        return np.asfortranarray(np.clip(X, -bound, bound)), None
    if X.format not in ("csr", "csc"):
        X = X.tocsr()
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(dtype)
    # Entries stored twice are one value, their sum: summed before any
    # clipping, which must act on the sum.
    X = _summed_duplicates(X)
    limit = _largest_at_most(bound, X.dtype)
    data = X.data
    # max and min allocate nothing; compared as Python floats (exactly).
    if data.size == 0 or -limit <= float(data.min()) <= float(data.max()) <= limit:
        return X, None
    if X.format == "csc":
        # Read whole at every step (X.T @ R): clipped once, in a copy.
        return _with_data(X, _clipped(data, limit)), None
    return X, limit


def _summed_duplicates(X):
    """Sparse ``X`` as CSR or CSC without duplicate entries (a copy only if any).

    Entries stored twice are one value, their sum: the solver clips and
    reads the sums, and the inferred bound must be read from them too.
    """
    if X.format not in ("csr", "csc"):
        X = X.tocsr()
    # A new matrix on the same arrays: whether it is canonical is computed
    # from them, never read from a flag cached on (and maybe stale in) X.
    X = _with_data(X, X.data, canonical=None)
    if not X.has_canonical_format:
        X = X.copy()  # summed in a copy: the caller's X is never written
        X.sum_duplicates()
    return X


def _with_data(X, data, canonical=True):
    """A CSR/CSC matrix of ``X``'s structure (shared) holding ``data``."""
    container = sp.csr_matrix if X.format == "csr" else sp.csc_matrix
    new = container((data, X.indices, X.indptr), shape=X.shape, copy=False)
    if canonical:
        new.has_canonical_format = True  # the indices of the canonical X
    return new


def _clipped(values, limit):
    """``values`` clipped to ``[-limit, limit]`` (a new array, in their dtype)."""
    if limit is None:
        return values
    return np.clip(values, -values.dtype.type(limit), values.dtype.type(limit))


def _largest_at_most(bound, dtype):
    """The largest value of ``dtype`` at most ``bound`` (>= 0), as a float."""
    with np.errstate(over="ignore"):
        limit = dtype.type(bound)
    if float(limit) > bound:
        limit = np.nextafter(limit, dtype.type(0))
    return float(limit)


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
    # In float64 whatever the inputs' types (a float32 radius of 1e38 times
    # the bound overflows float32); a product beyond float64 is capped below.
    base = (
        float(feature_bound)
        * float(l1_radius)
        * n_samples
        * math.sqrt(8.0 * float(rho))
        / math.log(n_vertices)
    )
    steps = STEPS_FACTOR * base ** (2.0 / 3.0)
    # The cap before the rounding: math.ceil refuses an infinite count.
    return int(max(1, math.ceil(min(MAX_AUTO_STEPS, steps))))


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
    Z = raw_predictions(X, coef, 0.0 if intercept is None else intercept)
    return scores_from_predictions(
        X, y, loss, Z, coef, l1_radius=l1_radius,
        intercept_bound=intercept_bound if intercept is not None else None,
        alpha=alpha,
    )


def scores_from_predictions(
    X, y, loss, Z, coef, *, l1_radius, intercept_bound=None, alpha=0.0,
    weights=None, clip_weighted=True, limit=None,
):
    """Vertex scores from the linear predictions ``Z`` (see :func:`vertex_scores`).

    ``limit`` (see :func:`readable_coordinates`) clips the entries of a
    canonical CSR ``X`` as each block of rows is read; None: ``X`` is
    clipped already.

    ``weights`` (public, or None) multiply each record's raw gradient,
    which is then clipped back to the loss's ``[-1, 1]`` entries (unless
    ``clip_weighted`` is False, without privacy), so the score sensitivity
    stays that of :func:`score_sensitivity` whatever a record's weight.
    """
    n = X.shape[0]
    y = np.asarray(y)
    G = intercept_gradient = None
    # A CSR X is read by blocks of rows (its own entries, not copied), so that
    # R and its weighted and divided forms live one block at a time; a dense
    # or CSC X is one block (the same products, bit for bit, as before).
    csr = sp.issparse(X) and X.format == "csr"
    blocks = row_blocks(X) if csr else [slice(0, n)]
    for rows in blocks:
        # y in its own dtype: its labels are exact there (0, 1, ... K - 1).
        R = loss.raw_gradient(y[rows], Z[rows])
        if weights is not None:
            R = R * weights[rows, None]
            if clip_weighted:
                np.clip(R, -1.0, 1.0, out=R)
        # Each entry of R is in [-1/n, 1/n]: divided before the product so that
        # no partial sum exceeds the coordinate bound (no overflow whatever B is).
        R /= n
        part = (_csr_transposed_product(X, rows, R, limit) if csr
                else np.asarray(X.T @ R))
        G = part if G is None else G + part
        part = R.sum(axis=0)
        intercept_gradient = part if intercept_gradient is None else (
            intercept_gradient + part
        )
    if alpha:
        G = G + alpha * coef  # data independent: no sensitivity
    coef_scores = _ball_scores(G.ravel(), l1_radius)
    if intercept_bound is None:
        return coef_scores, None
    return coef_scores, _ball_scores(intercept_gradient, intercept_bound)


def _csr_transposed_product(X, rows, R, limit=None):
    """``X[rows]^T R`` for a CSR ``X``, its entries clipped to ``limit``.

    The block's transpose is the CSC matrix on the same stored entries
    (their slice, or its clipped copy; only ``indptr`` is shifted), built
    once: ``X[rows].T`` would build two matrices per block.
    """
    start, stop, _ = rows.indices(X.shape[0])
    indptr = X.indptr[start : stop + 1]
    first, last = int(indptr[0]), int(indptr[-1])
    transposed = sp.csc_matrix(
        (_clipped(X.data[first:last], limit), X.indices[first:last],
         indptr - indptr.dtype.type(first)),
        shape=(X.shape[1], stop - start), copy=False,
    )
    return np.asarray(transposed @ R)


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
    feature_bound=None,
):
    """Run ``n_steps`` of full-batch Frank-Wolfe with private vertex selection.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
        Features: clipped (see :func:`clip_coordinates`) unless
        ``feature_bound`` is given.
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
    feature_bound : float or None, default=None
        Clip the features to ``[-feature_bound, feature_bound]`` here (see
        :func:`readable_coordinates`: a CSR ``X`` is clipped as it is read,
        never copied whole); None: ``X`` is clipped already.

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
    limit = None
    if feature_bound is not None:
        X, limit = readable_coordinates(X, feature_bound)
    elif sp.issparse(X):
        # Clipped already; canonical (an entry a row at most in a column,
        # which the column update needs) with its duplicates summed.
        X = readable_coordinates(X, math.inf)[0]
    n, d = X.shape
    K = loss.n_outputs
    W = np.zeros((d, K))
    b = np.zeros(K)
    Z = np.zeros((n, K))
    clip_weighted = not math.isinf(mechanisms[0].epsilon)
    for t, mechanism in enumerate(mechanisms):
        scores, intercept_scores = scores_from_predictions(
            X, y, loss, Z, W, l1_radius=l1_radius,
            intercept_bound=intercept_bound, alpha=alpha,
            weights=sample_weight, clip_weighted=clip_weighted, limit=limit,
        )
        step = 2.0 / (t + 2.0)
        index, sign = _select(mechanism, scores, rng)
        j, k = divmod(index, K)
        move = step * sign * l1_radius
        W *= 1.0 - step
        W[j, k] += move
        Z *= 1.0 - step
        # z <- (1 - eta) z + eta <v, x>: only column j of X is touched.
        rows, values = _column(X, j, limit)
        Z[rows, k] += np.multiply(move, values, dtype=np.float64)
        if intercept_scores is not None:
            # Both blocks take the same step: Z already holds (1 - eta) b.
            index, sign = _select(intercept_mechanisms[t], intercept_scores, rng)
            b *= 1.0 - step
            b[index] += step * sign * intercept_bound
            Z[:, index] += step * sign * intercept_bound
    return FrankWolfeResult(W, b, len(mechanisms))


def _column(X, j, limit=None):
    """``(rows, values)`` of the stored entries of column ``j`` of ``X``.

    Dense: every row; CSC: its slice of the column's entries. CSR (canonical,
    as :func:`readable_coordinates` returns it: one entry a row at most): the
    positions of ``j`` among the column indices, an ``O(nnz)`` scan like one
    product, and their rows, from ``indptr``, the values clipped to
    ``limit`` (None: not clipped); no column-ordered copy of ``X`` is kept.
    """
    if not sp.issparse(X):
        return slice(None), X[:, j]
    if X.format == "csc":
        lo, hi = X.indptr[j], X.indptr[j + 1]
        return X.indices[lo:hi], X.data[lo:hi]
    # A Python int compares in the indices' own dtype (no int64 copy of them).
    positions = np.flatnonzero(X.indices == int(j))
    # Searched in indptr's own dtype (positions < nnz fit it): int64
    # positions would make searchsorted copy indptr to int64.
    rows = np.searchsorted(
        X.indptr, positions.astype(X.indptr.dtype), side="right"
    ) - 1
    return rows, _clipped(X.data[positions], limit)


def _select(mechanism, scores, rng):
    """``(position, sign)`` of the vertex selected among ``2 m`` (+ then -)."""
    size = scores.shape[0] // 2
    index = mechanism.select(scores, rng)
    return index % size, (1.0 if index < size else -1.0)
