# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The non-private limit: a deterministic full-batch solver, on any columns.

A private fit whose budget is not private (``epsilon=inf`` and no user
``noise_multiplier``) releases nothing private, so it may read the data's
statistics and iterate until it converges: it is the *non-private
counterpart* of the estimator, the minimizer of the same weighted objective
the private solver approximates,

``F(coef, b) = (1/n) sum_i w_i l(y_i, x_i coef + b)
+ (alpha/2) ||coef||^2 + l1 ||coef||_1``

(the intercept is never penalized). A private solver's step size and clip
are public quantities chosen for data of unit scale; on raw columns (a
year, an income, a lab value: offsets and scales from 1e-3 to 1e5) the same
loop run without noise diverges or stalls, which is not what ``epsilon=inf``
promises.

The solver (:func:`minimize_linear`) is scipy's L-BFGS-B on ``F``, its
gradient from the linear layer
(:meth:`~sklearn_dpfair._solvers._linear.LinearModel.loss_gradient`, so
dense, CSR and float32 ``X`` are read as by every other solver, never
densified nor cast as a whole). It is scale-free: it runs in standardized
coordinates ``beta = coef * sd`` and ``c = b + mu . coef`` (``mu``, ``sd``
the weighted column means and standard deviations, read from the data:
nothing is private here), so that the raw predictions are
``(X - mu) (beta / sd) + c`` without ever centring ``X``; the coefficients
are mapped back to the user's units. An l1 term is handled by splitting
``beta = p - m`` with ``p, m >= 0`` (L-BFGS-B's bounds). With an
unpenalized intercept, a regression loss is solved on the target less its
best constant (the weighted mean for the squared loss, the median or
quantile for the robust ones), which the intercept absorbs, starting from
that constant, with the objective divided by the constant model's and the
coordinates by the target's spread, so that the tolerances depend neither
on the target's offset from 0 nor on its units
(:func:`minimize_standardized`); a classification loss's objective is
divided by its value at the start. Nonsmooth losses (absolute, pinball) are
linear programs and are solved exactly by :func:`minimize_pinball` (HiGHS,
as scikit-learn's ``QuantileRegressor``); with an L2 penalty, quadratic
programs, whose L-BFGS-B point is refined to the exact minimizer by its
optimality conditions (:func:`minimize_regression`). A constraint ``||coef||_1 <= r``
(the l1 ball of private Frank-Wolfe) is met through its Lagrangian
(:func:`minimize_l1_ball`): the l1-penalized minimizer at the multiplier
whose solution lies on the sphere.

When the solver stops before it converges (:data:`MAX_ITER` iterations, or
a line search that fails, or an iteration that no longer decreases the
objective, away from a stationary point) it warns with a
:class:`~sklearn.exceptions.ConvergenceWarning`, as scikit-learn's lbfgs
solvers do. That warning depends on the data; it is raised only in the
non-private limit, where nothing is private.

A limit of an iterative solve on the float64 objective: sample weights
whose ratio exceeds about ``1e20`` (one row weighing ``1e30`` times the
others) leave the light rows' terms below the objective's rounding, so the
solver fits the heavy rows alone and may return coefficients far from the
weighted minimizer, without a warning (at ``1e24`` they are still within
``1e-9``). A direct least-squares solve on the square-root-weighted rows
(scikit-learn's ``LinearRegression``) resolves such weights for the squared
loss; cap such weights before a fit.
"""

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
import scipy.optimize
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .._loss import AbsoluteLoss, HuberLoss, PinballLoss, SquaredLoss
from ..utils._numeric import (
    SQRT_SMALLEST_NORMAL,
    constant_columns,
    power_of_two_magnitudes,
)
from ..utils._validation import warn_at_caller
from ._linear import LinearModel, as_rows
from ._rows import entry_blocks

__all__ = [
    "L1_BALL_SOLVER",
    "LBFGS_SOLVER",
    "MAX_ITER",
    "NON_PRIVATE_DESCRIPTION",
    "POLISH_MAX_PARAMS",
    "TOL",
    "NonPrivateFit",
    "column_moments",
    "minimize_fair_objective",
    "minimize_l1_ball",
    "minimize_linear",
    "minimize_pinball",
    "minimize_regression",
    "minimize_standardized",
    "non_private_record",
]

#: Iteration cap of the L-BFGS-B solve (an internal constant: the private
#: estimators' ``max_iter`` counts noisy steps or epochs, not solver
#: iterations).
MAX_ITER = 1000

#: L-BFGS-B's tolerance on the projected gradient of the normalized
#: objective ``F / F(start)`` in standardized coordinates (its largest entry).
#: Tight, so that a weight of ``k`` and ``k`` duplicated rows give the same
#: model to the precision scikit-learn's sample-weight checks ask.
TOL = 1e-10

#: Problems with at most this many parameters end with a few
#: Newton steps on the gradient (:func:`_newton_polish`): L-BFGS-B's line
#: search stops where the objective's rounding hides its decrease.
POLISH_MAX_PARAMS = 128

# The polish stops at a gradient this small (float64 rounding of the sums).
_POLISHED = 1e-14

# A failed line search (L-BFGS-B's "ABNORMAL" stop) at a gradient this small
# is the end of float64 progress, not a failure to converge.
_STATIONARY = 1e-6

# The objective's normalizer is at least this fraction of the null model's
# value (:func:`minimize_standardized`): the gradient's rounding, about
# 1e-16 of that value's scale, then stays 1e-8 of the normalized gradient,
# far below _STATIONARY.
_NORM_FLOOR = 1e-8

# Entries per block of the dense moments (2 MB of float64):
# no n x d float64 temporary of a float32 X.
_BLOCK_ENTRIES = 1 << 18
# Stored entries per block of the sparse moments: their temporaries (values,
# weights, squares) stay far below a fit's budget of twice the storage.
_SPARSE_BLOCK_ENTRIES = 1 << 12


@dataclass
class NonPrivateFit:
    """The minimizer: ``coef`` ``(n_features, K)`` and ``intercept`` ``(K,)``.

    float64; ``n_iter`` the solver's iterations, ``converged`` whether it
    met its tolerance, ``gradient`` the largest entry of the final gradient
    in the solver's coordinates (NaN where the solver does not report one).
    """

    coef: np.ndarray
    intercept: np.ndarray
    n_iter: int
    converged: bool
    gradient: float = math.nan


def column_moments(X, sample_weight=None, *, center=True):
    """Weighted column means and standard deviations of ``X`` (float64).

    Two passes (the mean, then the centred squares), so that a column
    shifted by ``1e5`` with a spread of ``1e-3`` keeps its spread (the
    one-pass ``E[x^2] - E[x]^2`` would cancel to noise). Each column is
    first divided by a power of two above its largest magnitude
    (:func:`~sklearn_dpfair.utils._numeric.power_of_two_magnitudes`,
    exact), as a scaled sum of squares (LAPACK's ``dnrm2``) is, so that a
    column whose spread is beyond ``1e154`` does not overflow its squares
    to ``inf``. Without ``center``
    the means are 0 and the scales the root mean squares. A constant (or
    empty) column, one whose variance is zero within rounding
    (:func:`~sklearn_dpfair.utils._numeric.constant_columns`), gets the
    scale 1. Dense or sparse ``X`` (:func:`_sparse_column_moments`: stored
    entries only, never densified); a float32 ``X`` is cast a block at a
    time.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._non_private import column_moments
    >>> X = np.array([[1e5 + 1e-3, 2.0], [1e5 - 1e-3, 2.0]])
    >>> mean, scale = column_moments(X)
    >>> scale
    array([0.001, 1.   ])
    >>> column_moments(np.array([[1e200], [-1e200]]))[1]
    array([1.e+200])
    """
    n = X.shape[0]
    if sp.issparse(X):
        moments = _sparse_column_moments(as_rows(X), sample_weight, center)
    else:
        moments = _dense_column_moments(X, sample_weight, center)
    magnitude, mean, second, total = moments
    var = np.maximum(second, 0.0) / total
    # A constant column's rounding-level variance (0.1 on every row: 1e-34)
    # is zero, as in scikit-learn's StandardScaler. The test is homogeneous
    # of degree 2 in the mean and the spread: it reads the scaled moments.
    constant = constant_columns(var, mean, n) if center else var == 0
    scale = np.sqrt(var) * magnitude
    # A spread whose square is below the smallest normal float (a column of
    # values near 1e-300) is constant, as scikit-learn's StandardScaler
    # finds it (its squares underflow to 0): dividing by it would overflow
    # the callers' 1 / scale and coefficients.
    tiny = ~(scale >= _SMALLEST_SPREAD)
    scale[constant | tiny | ~np.isfinite(scale)] = 1.0
    return mean * magnitude, scale


# The smallest spread whose square is a normal float64 (about 1.5e-154).
_SMALLEST_SPREAD = SQRT_SMALLEST_NORMAL


def _dense_column_moments(X, sample_weight, center):
    """Magnitudes, scaled weighted means and centred second moments, total weight.

    A block of rows at a time (:data:`_BLOCK_ENTRIES`): no ``n x d`` float64
    temporary of a float32 ``X``. Three reads of ``X`` (the magnitudes, the
    mean, the centred squares); the means and second moments are those of
    the columns divided by their magnitudes.
    """
    n, d = X.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    total = w.sum()
    step = max(1, _BLOCK_ENTRIES // max(d, 1))
    starts = range(0, n, step)
    largest = np.zeros(d)
    # Over the rows of positive weight only: a row of weight 0 is absent
    # from every moment, and its magnitude must not set the columns' (one
    # at 1e300 would underflow the others' squares to a spread of 0).
    positive = None if sample_weight is None else w > 0
    for start in starts:
        block = np.abs(np.asarray(X[start : start + step]))
        if positive is not None:
            block = block[positive[start : start + step]]
        if block.size:
            largest = np.maximum(largest, block.max(axis=0))
    magnitude = power_of_two_magnitudes(largest)

    def scaled(start):
        # The block's rows of positive weight, and their weights.
        rows = slice(start, start + step)
        block = np.asarray(X[rows], dtype=np.float64) / magnitude
        if positive is None:
            return w[rows], block
        keep = positive[rows]
        return w[rows][keep], block[keep]

    mean = np.zeros(d)
    if center:
        for start in starts:
            weights, block = scaled(start)
            mean += weights @ block
        mean /= total
    second = np.zeros(d)
    for start in starts:
        weights, block = scaled(start)
        block = block - mean
        second += weights @ (block * block)
    return magnitude, mean, second, total


def _sparse_column_moments(X, sample_weight, center):
    """Magnitudes, scaled means and centred second moments, total weight, of CSR ``X``.

    Read a block of stored entries at a time (:data:`_SPARSE_BLOCK_ENTRIES`),
    so that the temporaries stay far below the matrix (a float64 copy of a
    float32 matrix's values, as a sparse product makes, weighs as much as
    its storage). The stored values are divided by their column's magnitude
    (:func:`~sklearn_dpfair.utils._numeric.power_of_two_magnitudes`, from
    a first pass) before they are summed or squared. Two passes and no
    cancellation: the centred squares of a column are its stored entries'
    ``(x - mu)^2`` plus ``mu^2`` for each row where it is not stored, all
    non-negative, so a column of offset
    ``1e5`` and spread ``1e-3`` stored on every row keeps its spread
    (subtracting ``n mu^2`` from a sum of stored-entry terms, the one-pass
    form, would leave rounding noise).
    """
    n, d = X.shape
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    total = float(n) if w is None else float(w.sum())
    indptr = X.indptr
    blocks = list(entry_blocks(indptr, _SPARSE_BLOCK_ENTRIES))

    def stored_of_positive_rows(row, end, values):
        # Entries of rows of weight 0 read as 0: such a row adds nothing,
        # and a huge entry must neither set its column's magnitude nor
        # overflow a square that its weight 0 then multiplies (0 * inf).
        if w is None:
            return values
        counts = np.diff(indptr[row : end + 1])
        return np.where(np.repeat(w[row:end] > 0, counts), values, 0.0)

    largest = np.zeros(d)
    for row, end in blocks:
        lo, hi = indptr[row], indptr[end]
        values = stored_of_positive_rows(row, end, np.abs(X.data[lo:hi]))
        np.maximum.at(largest, X.indices[lo:hi], values)
    magnitude = power_of_two_magnitudes(largest)

    def scaled(row, end):
        lo, hi = indptr[row], indptr[end]
        cols = X.indices[lo:hi]
        values = X.data[lo:hi].astype(np.float64) / magnitude[cols]
        return cols, stored_of_positive_rows(row, end, values)

    mean = np.zeros(d)
    if center:
        for row, end in blocks:
            cols, values = scaled(row, end)
            if w is not None:
                values *= np.repeat(w[row:end], np.diff(indptr[row : end + 1]))
            mean += np.bincount(cols, weights=values, minlength=d)
        mean /= total
    squares = np.zeros(d)
    # Weight of the rows where each column is not stored (they hold 0).
    unstored = np.zeros(d)
    for row, end in blocks:
        cols, values = scaled(row, end)
        centred = values - mean[cols]
        counts = np.bincount(cols, minlength=d)
        if w is None:
            squares += np.bincount(cols, weights=centred * centred, minlength=d)
            unstored += (end - row) - counts
            continue
        weights = np.repeat(w[row:end], np.diff(indptr[row : end + 1]))
        squares += np.bincount(cols, weights=weights * centred**2, minlength=d)
        stored = np.bincount(cols, weights=weights, minlength=d)
        # Exactly 0 where the column is stored on every row of the block: a
        # difference of weight sums would round there, and times mu^2 the
        # rounding can exceed a small spread's whole variance.
        unstored += np.where(
            counts == end - row, 0.0, np.maximum(w[row:end].sum() - stored, 0.0)
        )
    return magnitude, mean, squares + unstored * mean**2, total


# A column whose standard deviation exceeds this many times its robust
# scale (interquartile range over the normal's 1.349) is dominated by a few
# values (one record at 1e12 among values near 1e3): standardized by the
# standard deviation, its bulk would vary by 1e-8 of a unit, a direction of
# curvature 1e-16 that L-BFGS-B's tolerance and the Newton polish's rcond
# both ignore. Ordinary columns (normal: 1; heavy tails: a few) stay as they
# were.
_DOMINATED = 100.0
# The robust statistics are read on at most this many evenly spaced rows:
# they only condition the solve (any positive scale has the same
# minimizer), so a sample of the bulk serves.
_ROBUST_ROWS = 10_000


def _robust_moments(X, mean, scale):
    """``mean`` and ``scale``, with the median and robust scale of dominated columns.

    The robust scale is the larger of the interquartile range over 1.349
    and the root mean square deviation from the median of all but the
    farthest 1% of the rows (at least one): the latter sees the bulk of a
    mostly-zero column, whose quartiles are 0. A column whose standard
    deviation is more than :data:`_DOMINATED` times it is located at its
    median and scaled by it, so that its bulk has unit scale in the
    solver's coordinates (the outliers then lie far out, where their loss
    saturates); every other column keeps its moments. Dense ``X`` only;
    reads at most :data:`_ROBUST_ROWS` rows. A change of coordinates: the
    minimizer is the same.
    """
    n = X.shape[0]
    if n < 2:
        return mean, scale
    step = max(1, -(-n // _ROBUST_ROWS))
    rows = np.asarray(X[::step], dtype=np.float64)
    # An all-NaN column has no quartiles: its moments stay. It is read as
    # zeros (robust scale 0: never dominated) rather than letting numpy
    # warn "All-NaN slice" inside warnings.catch_warnings, which swaps the
    # process-wide filters (not thread-safe); np.errstate is per thread.
    observed = ~np.all(np.isnan(rows), axis=0)
    rows = np.where(observed, rows, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        q25, median, q75 = np.nanpercentile(rows, [25, 50, 75], axis=0)
        deviation = np.sort(np.abs(rows - median), axis=0)
        # NaN sorts last: kept rows are the nearest of the observed ones.
        kept = deviation[: rows.shape[0] - max(1, rows.shape[0] // 100)]
        counted = np.sum(~np.isnan(kept), axis=0)
        squares = np.nansum(kept * kept, axis=0)
        trimmed = np.where(
            counted > 0, np.sqrt(squares / np.maximum(counted, 1)), np.nan
        )
    robust = np.fmax((q75 - q25) / 1.3489795003921634, trimmed)
    dominated = (robust > 0) & np.isfinite(robust) & (scale > _DOMINATED * robust)
    if not dominated.any():
        return mean, scale
    return np.where(dominated, median, mean), np.where(dominated, robust, scale)


def _constant_prediction(y, loss, sample_weight=None, *, fit_intercept=True):
    """A regression loss's best constant prediction and the target's spread about it.

    The null model, from which the non-private solve starts and which sets
    its scales (:func:`minimize_standardized`'s ``intercept_start`` and
    ``target_scale``): for the squared loss the weighted mean of ``y`` and
    its weighted standard deviation; for the Huber, absolute and pinball
    losses the weighted median (the pinball loss's ``tau``-quantile, its
    exact minimizer; near the Huber loss's) and the weighted mean absolute
    deviation from it. Without an intercept the null model is 0, and the
    spread is about 0 (the root mean square of ``y``, or its mean absolute
    value). Read from the data: the non-private limit releases nothing
    private.

    Returns
    -------
    location : ndarray of shape (1,) or None
        None without an intercept, for another loss (the classification
        losses, whose targets are class codes with no offset), or where the
        spread is not finite or positive.
    spread : float
        1.0 where ``location`` is None but for a spread about 0.
    constant : bool
        Whether ``y`` is constant within rounding: the null model then
        predicts it exactly, the minimizer of every regression loss.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import AbsoluteLoss, SquaredLoss
    >>> from sklearn_dpfair._solvers._non_private import _constant_prediction
    >>> y = np.array([1e9, 1e9 + 2.0, 1e9 + 4.0, 1e9 + 10.0])
    >>> location, spread, _ = _constant_prediction(y, SquaredLoss())
    >>> float(location[0] - 1e9), round(float(spread), 4)
    (4.0, 3.7417)
    >>> location, spread, _ = _constant_prediction(y, AbsoluteLoss())
    >>> float(location[0] - 1e9), float(spread)
    (2.0, 3.0)
    >>> _constant_prediction(np.full(3, 0.1), SquaredLoss())
    (array([0.1]), 1.0, True)
    """
    if isinstance(loss, SquaredLoss):
        quantile = None
    elif isinstance(loss, (HuberLoss, AbsoluteLoss)):
        quantile = 0.5
    elif isinstance(loss, PinballLoss):
        quantile = loss.quantile
    else:
        return None, 1.0, False
    y = np.asarray(y, dtype=np.float64).ravel()
    n = y.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    total = float(w.sum())
    if n == 0 or not total > 0:
        return None, 1.0, False
    constant = False
    with np.errstate(all="ignore"):
        if not fit_intercept:
            location = 0.0
            if quantile is None:
                spread = math.sqrt(float(w @ np.square(y)) / total)
            else:
                spread = float(w @ np.abs(y)) / total
        elif quantile is None:
            location = float(w @ y) / total
            var = float(w @ np.square(y - location)) / total
            constant = bool(constant_columns([var], [location], n)[0])
            spread = math.sqrt(var) if var >= 0 else math.nan
        else:
            location = float(
                np.quantile(y, quantile, weights=w, method="inverted_cdf")
            )
            spread = float(w @ np.abs(y - location)) / total
            constant = spread == 0
    if constant and math.isfinite(location):
        return np.array([location]), 1.0, True
    if not (math.isfinite(spread) and spread > 0):
        return None, 1.0, False
    return (np.array([location]) if fit_intercept else None), spread, False


def minimize_linear(
    X,
    y,
    loss,
    *,
    n_outputs=1,
    alpha=0.0,
    l1=0.0,
    fit_intercept=True,
    sample_weight=None,
    coef_init=None,
    intercept_init=None,
    penalize_intercept=False,
    max_iter=None,
    tol=None,
    warn=True,
):
    """Minimize ``F`` (module docstring) with L-BFGS-B in standardized coordinates.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Dense numpy or CSR/CSC; float32 stays float32 (read by blocks).
    y : ndarray of shape (n_samples,)
        Targets (class codes for the classification losses).
    loss : object
        With ``loss(y, raw)`` and ``raw_gradient(y, raw)``; smooth (see
        :func:`minimize_pinball` for the piecewise-linear ones).
    n_outputs : int, default=1
        ``K``.
    alpha : float, default=0.0
        L2 penalty on the coefficients.
    l1 : float, default=0.0
        l1 penalty on the coefficients.
    fit_intercept : bool, default=True
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Weights of the losses (the non-private limit's: mean 1,
        :func:`~sklearn_dpfair.privacy.fit_weights`).
    coef_init, intercept_init : ndarray or None, default=None
        Warm start (in the user's units); zeros when None.
    penalize_intercept : bool, default=False
        Add ``(alpha/2) b^2`` (the objective of output perturbation, which
        needs it strongly convex in every coordinate).
    max_iter : int, default=None
        :data:`MAX_ITER` when None.
    tol : float, default=None
        :data:`TOL` when None.
    warn : bool, default=True
        Warn when the solve stops short (``False``: the caller reads
        ``converged``).

    Returns
    -------
    fit : NonPrivateFit

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SquaredLoss
    >>> from sklearn_dpfair._solvers._non_private import minimize_linear
    >>> X = np.array([[1000.0], [1001.0], [1002.0]])
    >>> fit = minimize_linear(X, np.array([1.0, 3.0, 5.0]), SquaredLoss())
    >>> np.round(fit.coef.ravel(), 6), np.round(fit.intercept, 3)
    (array([2.]), array([-1999.]))
    """
    X = as_rows(X)
    y = np.asarray(y)
    K = int(n_outputs)
    model = LinearModel(n_outputs=K, intercept_scaling=1.0 if fit_intercept else 0.0)
    location, spread, constant = (
        _constant_prediction(y, loss, sample_weight, fit_intercept=fit_intercept)
        if K == 1 and not (penalize_intercept and alpha)
        else (None, 1.0, False)
    )
    if constant:
        # The null model predicts a constant target exactly: the minimizer
        # of every regression loss, its penalties 0. A solve would start at
        # it with nothing to normalize by (a target exactly 1e9 was fitted
        # with coefficients of -1.8 and predictions 15 off, no warning).
        return NonPrivateFit(np.zeros((X.shape[1], 1)), location, 0, True, 0.0)
    shift = 0.0
    if location is not None:
        # The regression losses read raw - y only, so the intercept absorbs
        # a shift of the target: the solve runs on y less its best constant
        # and adds it back. Its residuals are then computed near the
        # target's spread, not near its offset: of a target near 1e12 every
        # residual would carry a rounding of 1e-4, and their sums a
        # gradient noise above the stationarity test. Not with a penalized
        # intercept (nor its scales), whose penalty is not shift-invariant.
        shift = float(location[0])
        y = np.asarray(y, dtype=np.float64) - shift
        location = np.zeros(1)
        if intercept_init is not None:
            intercept_init = np.asarray(intercept_init, dtype=np.float64) - shift

    def data_term(rows, coef, intercept):
        W = np.vstack([coef, intercept[None, :]])
        value, grad = model.loss_gradient(
            W, rows, y, loss, alpha=0.0, sample_weight=sample_weight
        )
        return value, grad[:-1], grad[-1]

    fit = minimize_standardized(
        data_term,
        X,
        n_outputs=K,
        alpha=alpha,
        l1=l1,
        fit_intercept=fit_intercept,
        sample_weight=sample_weight,
        coef_init=coef_init,
        intercept_init=intercept_init,
        penalize_intercept=penalize_intercept,
        max_iter=max_iter,
        tol=tol,
        intercept_start=location,
        target_scale=spread,
        # Robust coordinates for losses of bounded gradient (logistic,
        # Huber, absolute, pinball), not for the squared loss.
        robust_scale=bool(np.isfinite(loss.raw_lipschitz)),
        warn=warn,
    )
    if shift:
        fit = replace(fit, intercept=fit.intercept + shift)
    return fit


def minimize_standardized(
    data_term,
    X,
    *,
    n_outputs=1,
    alpha=0.0,
    l1=0.0,
    fit_intercept=True,
    sample_weight=None,
    coef_init=None,
    intercept_init=None,
    penalize_intercept=False,
    max_iter=None,
    tol=None,
    robust_scale=True,
    warn=True,
    intercept_start=None,
    target_scale=1.0,
):
    """L-BFGS-B on ``data_term + penalties`` in standardized coordinates.

    The driver of :func:`minimize_linear`, for any objective of a linear
    model's predictions: ``data_term(rows, coef, intercept)`` returns the
    value at the predictions ``rows coef + intercept`` and its gradients
    ``(value, g_coef (d, K), g_intercept (K,))``. The solver runs in
    ``beta = coef * sd`` and ``c = b + mu . coef`` (``mu``, ``sd`` from
    :func:`column_moments` of ``X``, weighted, ``sd`` at least
    ``sqrt(alpha)`` without an l1 penalty so that the L2 penalty's
    curvature stays ~1; with an intercept and
    ``robust_scale``, a dense column whose ``sd`` a few extreme values
    dominate takes its median and interquartile range instead,
    :func:`_robust_moments`: right for a loss whose gradient is bounded,
    where the extreme rows' terms saturate; a squared loss's would grow with
    them and condition the problem worse), adds
    ``(alpha/2) ||coef||^2 + l1 ||coef||_1`` (and ``(alpha/2) b^2`` with
    ``penalize_intercept``), and maps the minimizer back.

    A dense ``X`` is centred once (a float64 copy, ``rows = X - mu``, with
    the intercept ``c``): the products ``x coef`` of a column with offset
    ``1e5`` and spread ``1e-3`` would otherwise round at ``1e-6`` of a
    prediction and stall the line search. A sparse ``X`` is never densified
    (``rows = X``, the intercept ``c - mu . coef``).

    The objective is divided by its value at the start, or at the null
    model ``intercept_start`` (``(K,)``, the best constant prediction, as
    :func:`_constant_prediction` finds it) where that is smaller, and the
    solver's coordinates ``beta`` and ``c`` by ``target_scale`` (the
    target's spread about that constant), so that the gradient tolerance is
    relative to the target's spread, not to its offset from 0 or its units:
    divided by its value at a start of 0, the objective of a target near
    ``1e9`` is ``1e18`` times a row, and once the intercept had found the
    target its gradient fell below the tolerance with the coefficients
    still far from the minimizer. The divisor is at least
    :data:`_NORM_FLOOR` times the null model's value (coefficients 0, the
    intercept ``intercept_start`` or 0): a warm start that fits exactly
    (``F(start)`` ~ ``1e-30``) would otherwise leave the gradient's rounding
    above the tolerance at the minimizer and warn. Without a warm intercept
    (``intercept_init``) the solve starts at ``intercept_start`` too.

    A solve that stops short warns with a ``ConvergenceWarning`` unless
    ``warn=False`` (a caller that words its own warning from
    ``converged`` and ``gradient``).

    Returns
    -------
    fit : NonPrivateFit

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._non_private import minimize_standardized
    >>> X = np.array([[1e5], [1e5 + 1e-3]])
    >>> def term(rows, coef, b):  # sum_i (x_i . coef + b - i)^2 / 2
    ...     r = rows @ coef + b - np.array([[0.0], [1.0]])
    ...     return 0.5 * float(np.sum(r * r)), rows.T @ r, r.sum(axis=0)
    >>> fit = minimize_standardized(term, X)
    >>> np.round(X @ fit.coef[:, 0] + fit.intercept[0], 6)
    array([0., 1.])
    """
    n, d = X.shape
    K = int(n_outputs)
    with np.errstate(all="ignore"):
        mean, scale = column_moments(X, sample_weight, center=fit_intercept)
        if robust_scale and fit_intercept and not sp.issparse(X):
            mean, scale = _robust_moments(X, mean, scale)
    if alpha and not l1:
        # The penalty (alpha/2) coef^2 has curvature alpha / sd^2 in beta:
        # 1e9 for a column in units of 1e-6 at alpha = 1e-3, against the
        # loss' at most ~1 (unit-variance columns), a conditioning on which
        # L-BFGS-B stalls far from the minimum. Scaling such a column by
        # sqrt(alpha) instead bounds both curvatures by ~1 (a change of
        # coordinates: the minimizer is the same); a column with
        # sd >= sqrt(alpha) keeps its coordinates. Not with an l1 penalty:
        # there the split p - m (bounded below by 0) in the new coordinates
        # made L-BFGS-B stop on "no decrease" at a gradient of ~1e-6, where
        # the unfloored coordinates solve to tol.
        scale = np.maximum(scale, math.sqrt(alpha))
    split = l1 > 0
    n_beta = d * K

    def unpack(x):
        if split:
            beta = (x[:n_beta] - x[n_beta : 2 * n_beta]).reshape(d, K)
            rest = x[2 * n_beta :]
        else:
            beta = x[:n_beta].reshape(d, K)
            rest = x[n_beta:]
        c = rest if fit_intercept else np.zeros(K)
        return beta, c

    def to_user(beta, c):
        coef = beta / scale[:, None]
        return coef, c - mean @ coef

    if fit_intercept and not sp.issparse(X):
        with np.errstate(all="ignore"):
            rows = np.asarray(X, dtype=np.float64) - mean
        offset = np.zeros(d)
    else:
        rows, offset = X, mean

    def objective(x):
        beta, c = unpack(x)
        coef = beta / scale[:, None]
        value, g_coef, g_int = data_term(rows, coef, c - offset @ coef)
        # Chain rule through coef = beta / sd and the intercept c - offset . coef.
        g_beta = (g_coef - offset[:, None] * g_int[None, :]) / scale[:, None]
        if alpha:
            value += 0.5 * alpha * float(np.sum(coef * coef))
            g_beta = g_beta + alpha * coef / scale[:, None]
        if penalize_intercept and fit_intercept and alpha:
            # (alpha/2) b^2 of the user's intercept b = c - mu . coef.
            b = c - mean @ coef
            value += 0.5 * alpha * float(b @ b)
            g_int = g_int + alpha * b
            g_beta = g_beta - alpha * mean[:, None] * b[None, :] / scale[:, None]
        if split:
            p, m = x[:n_beta], x[n_beta : 2 * n_beta]
            weight = np.repeat(l1 / scale, K)
            value += float(weight @ (p + m))
            g_beta = g_beta.ravel()
            parts = [g_beta + weight, -g_beta + weight]
        else:
            parts = [g_beta.ravel()]
        if fit_intercept:
            parts.append(g_int)
        return value, np.concatenate(parts)

    coef0 = np.zeros((d, K))
    if coef_init is not None:
        coef0 = np.asarray(coef_init, dtype=np.float64).reshape(d, K)
    beta0 = coef0 * scale[:, None]
    if intercept_init is not None:
        c0 = np.asarray(intercept_init, dtype=np.float64).reshape(K) + mean @ coef0
    elif intercept_start is not None:
        # The null model's prediction at the mean row.
        c0 = np.asarray(intercept_start, dtype=np.float64).reshape(K)
    else:
        c0 = mean @ coef0

    def stacked(beta, c):
        if split:
            parts = [np.maximum(beta, 0.0).ravel(), np.maximum(-beta, 0.0).ravel()]
        else:
            parts = [beta.ravel()]
        if fit_intercept:
            parts.append(c)
        return np.concatenate(parts)

    # Only the split's parts are bounded (below by 0), in any units.
    bounds = None
    if split:
        bounds = [(0.0, None)] * (2 * n_beta) + [(None, None)] * (K * fit_intercept)
    x0 = stacked(beta0, c0)
    # The null model: coefficients 0 and the best constant (or 0).
    null = np.zeros(K)
    if fit_intercept and intercept_start is not None:
        null = np.asarray(intercept_start, dtype=np.float64).reshape(K)
    with np.errstate(all="ignore"):
        start_value = objective(x0)[0]
        null_value = objective(stacked(np.zeros((d, K)), null))[0]
    values = [start_value]
    if fit_intercept and intercept_start is not None:
        values.append(null_value)
    # F / min(F(start), F(null model)), in units of the target's spread:
    # tolerances independent of the target's offset and scale.
    values = [v for v in values if np.isfinite(v) and v > 0]
    norm = min(values) if values else 1.0
    if np.isfinite(null_value) and null_value > 0:
        # A warm start that fits (nearly) exactly, F(start) ~ 1e-30, would
        # divide the gradient's float64 rounding (~1e-16 of F(null)'s
        # scale) by 1e-30 and fail the stationarity test at the minimizer:
        # the normalizer is at least _NORM_FLOOR of the null model's F.
        norm = max(norm, _NORM_FLOOR * null_value)
    unit = float(target_scale)

    def normalized(u):
        value, grad = objective(u * unit)
        return value / norm, grad * (unit / norm)

    with np.errstate(all="ignore"):
        # A huge record may overflow the objective (its squares, inf - inf):
        # the solver then stops, and a non-finite point is not returned.
        result = _lbfgs(normalized, x0 / unit, bounds, max_iter, tol)
    # u: the solver's point, in units of target_scale.
    u = result.x
    finite = bool(np.all(np.isfinite(u)))
    if not finite:
        u = x0 / unit
    jac = result.jac
    if split:
        # L-BFGS-B's projected gradient: at the bound 0 of p or m, a
        # positive partial derivative points out of the feasible set.
        jac = jac.copy()
        bounded = slice(0, 2 * n_beta)
        jac[bounded] = np.where(
            jac[bounded] > 0, np.minimum(jac[bounded], u[bounded]), jac[bounded]
        )
    gradient = np.max(np.abs(jac)) if jac.size else 0.0
    # Not along a flat direction (an unpenalized softmax's common shift),
    # which the steps could wander along.
    small = u.size <= POLISH_MAX_PARAMS
    flat = K > 1 and not alpha
    if finite and not flat and not split and 0 < gradient and small:
        with np.errstate(all="ignore"):
            u, gradient = _newton_polish(normalized, u, result.jac)
    # Judged by the gradient too, not by scipy's status alone: with ftol = 0
    # its status 0 also means "no decrease of F in an iteration" (the
    # relative reduction test at factr = 0), which an ill-conditioned
    # problem meets far from a stationary point. A stop there or at a failed
    # line search (status 2) is float64's end of progress only at a small
    # gradient; the iteration cap (status 1) is a stop short, as in
    # scikit-learn's lbfgs solvers.
    stationary = max(_STATIONARY, TOL if tol is None else float(tol))
    converged = (
        finite and result.status in (0, 2) and bool(gradient <= stationary)
    )
    if warn and not converged:
        warn_at_caller(
            "The non-private (epsilon=inf) full-batch L-BFGS-B solve did not "
            f"converge after {result.nit} iterations ({result.message}); "
            "the data may be separable, overflow float64, or the penalty be "
            "too small.",
            ConvergenceWarning,
        )
    coef, intercept = to_user(*unpack(u * unit))
    return NonPrivateFit(
        coef, intercept, int(result.nit), bool(converged), float(gradient)
    )


# The l1-ball solve stops when ||coef||_1 is within this relative distance
# of the radius (inside it), or when the multiplier's bracket is this narrow.
_L1_BALL_RTOL = 1e-6
# Multipliers tried at most (bracketing, then bisection in log scale).
_L1_BALL_MAX_SOLVES = 80


def minimize_l1_ball(
    X,
    y,
    loss,
    radius,
    *,
    n_outputs=1,
    alpha=0.0,
    fit_intercept=True,
    sample_weight=None,
):
    """Minimize ``F`` (module docstring, ``l1 = 0``) over ``{||coef||_1 <= radius}``.

    The objective of private Frank-Wolfe without its privacy: the
    (weighted) loss plus ``(alpha/2) ||coef||^2`` over the l1 ball of the
    coefficients in the user's units (all ``d K`` entries), the intercept
    free. If the unconstrained minimizer (:func:`minimize_linear`) lies in
    the ball it is the answer; otherwise the constraint binds and, by
    Lagrange duality for this convex problem, the constrained minimizer is
    the l1-penalized one ``coef(lam)`` at the multiplier ``lam`` with
    ``||coef(lam)||_1 = radius``. ``||coef(lam)||_1`` does not increase with
    ``lam`` (it is 0 from ``lam = ||grad_coef F(0, b_0)||_inf`` on), so
    ``lam`` is bracketed by doubling and found by bisection in log scale,
    each solve warm-started at the last; the feasible end of the bracket is
    returned, within a relative ``1e-6`` of the sphere. Each solve is
    :func:`minimize_linear`'s, so the columns' scales do not matter; one
    that stops short warns with a ``ConvergenceWarning`` (once).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        Smooth loss, as :func:`minimize_linear` takes it.
    radius : float
        The l1 radius ``r > 0`` of the coefficients' ball.
    n_outputs, alpha, fit_intercept, sample_weight
        As in :func:`minimize_linear`.

    Returns
    -------
    fit : NonPrivateFit
        ``n_iter`` sums the iterations of every solve.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SquaredLoss
    >>> from sklearn_dpfair._solvers._non_private import minimize_l1_ball
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> fit = minimize_l1_ball(X, np.array([2.0, 1.0, 3.0]), SquaredLoss(), 1.5,
    ...                        fit_intercept=False)
    >>> np.round(fit.coef.ravel(), 4)
    array([1.25, 0.25])
    """
    radius = float(radius)
    n_iter = 0
    stopped_short = []

    def solve(l1, coef=None, intercept=None):
        nonlocal n_iter
        # Each solve's own warning (warn=False) is replaced by one for the
        # whole solve.
        fit = minimize_linear(
            X, y, loss, n_outputs=n_outputs, alpha=alpha, l1=l1,
            fit_intercept=fit_intercept, sample_weight=sample_weight,
            coef_init=coef, intercept_init=intercept, warn=False,
        )
        n_iter += fit.n_iter
        return fit

    def l1_norm(fit):
        return float(np.sum(np.abs(fit.coef)))

    free = solve(0.0)
    if l1_norm(free) <= radius:
        if not free.converged:
            stopped_short.append(True)
        result = free
    else:
        # The l1 path from above: lam_hi (feasible) and lam_lo (outside).
        lo_fit, lam_lo = free, 0.0
        # A first multiplier of the size of the loss' gradient at 0 (in the
        # user's units: the scale the penalty acts in).
        lam = _gradient_scale(X, y, loss, n_outputs, fit_intercept, sample_weight)
        hi_fit = None
        for _ in range(_L1_BALL_MAX_SOLVES):
            fit = solve(lam, lo_fit.coef, lo_fit.intercept)
            if l1_norm(fit) <= radius:
                hi_fit, lam_hi = fit, lam
                break
            lo_fit, lam_lo = fit, lam
            lam *= 4.0
        if hi_fit is None:
            # Not bracketed (an overflowing objective): the zero model is in
            # the ball.
            stopped_short.append(True)
            K = int(n_outputs)
            result = NonPrivateFit(
                np.zeros((X.shape[1], K)), np.zeros(K), n_iter, False
            )
        else:
            for _ in range(_L1_BALL_MAX_SOLVES):
                if l1_norm(hi_fit) >= (1.0 - _L1_BALL_RTOL) * radius:
                    break
                if lam_lo > 0 and lam_hi / lam_lo <= 1.0 + _L1_BALL_RTOL:
                    break
                lam = math.sqrt(lam_lo * lam_hi) if lam_lo > 0 else 0.25 * lam_hi
                fit = solve(lam, hi_fit.coef, hi_fit.intercept)
                if l1_norm(fit) <= radius:
                    hi_fit, lam_hi = fit, lam
                else:
                    lam_lo = lam
            result = hi_fit
            if not hi_fit.converged:
                stopped_short.append(True)
    if stopped_short:
        warn_at_caller(
            "The non-private (epsilon=inf) l1-ball solve did not converge "
            "(an L-BFGS-B solve of its Lagrangian stopped short); the data may "
            "be separable, overflow float64, or the penalty be too small.",
            ConvergenceWarning,
        )
    return NonPrivateFit(result.coef, result.intercept, n_iter, not stopped_short)


def _gradient_scale(X, y, loss, n_outputs, fit_intercept, sample_weight):
    """``||grad_coef F(0, 0)||_inf``, the data term's gradient at the zero model."""
    K = int(n_outputs)
    model = LinearModel(n_outputs=K, intercept_scaling=1.0 if fit_intercept else 0.0)
    W = np.zeros((X.shape[1] + 1, K))
    with np.errstate(all="ignore"):
        _, grad = model.loss_gradient(
            W, as_rows(X), np.asarray(y), loss, alpha=0.0, sample_weight=sample_weight
        )
    value = float(np.max(np.abs(grad[:-1]))) if grad[:-1].size else 0.0
    return value if np.isfinite(value) and value > 0 else 1.0


def _newton_polish(fun, x, grad, steps=3):
    """A few Newton steps on the gradient alone, from L-BFGS-B's end point.

    L-BFGS-B's line search reads the objective, whose float64 rounding
    (about ``1e-16`` of it) stops it near a gradient of ``1e-8``; the
    gradient itself is accurate far below that. Newton's step
    ``-H^{-1} g`` with ``H`` from central differences of the gradient
    (``2 p`` gradients for ``p`` parameters, so at most
    :data:`POLISH_MAX_PARAMS` of them; usually one step) is kept
    while it shrinks the gradient, so that two fits of the same objective
    (a weight of 2 and a duplicated row) agree to near float64 precision.
    """
    p = x.size
    best = float(np.max(np.abs(grad)))
    for _ in range(steps):
        if best <= _POLISHED:
            break
        h = 1e-5 * np.maximum(1.0, np.abs(x))
        H = np.empty((p, p))
        for j in range(p):
            e = np.zeros(p)
            e[j] = h[j]
            H[:, j] = (fun(x + e)[1] - fun(x - e)[1]) / (2 * h[j])
        H = 0.5 * (H + H.T)
        try:
            # Directions of curvature below 1e-8 of the largest (a softmax's
            # common shift, the differences' rounding) are left alone.
            step = np.linalg.lstsq(H, grad, rcond=1e-8)[0]
        except np.linalg.LinAlgError:
            break
        candidate = x - step
        new_grad = fun(candidate)[1]
        size = float(np.max(np.abs(new_grad)))
        if not (np.all(np.isfinite(candidate)) and size < best):
            break
        x, grad, best = candidate, new_grad, size
    return x, best


def _lbfgs(fun, x0, bounds, max_iter, tol):
    """scipy's L-BFGS-B with the module's tolerances."""
    max_iter = MAX_ITER if max_iter is None else max_iter
    tol = TOL if tol is None else tol
    return scipy.optimize.minimize(
        fun,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={
            "maxiter": int(max_iter),
            "maxfun": 2 * int(max_iter) + 20,
            "gtol": float(tol),
            # No stop on a small decrease: only the gradient tolerance (or
            # the cap, or a line search that fails at float64 precision).
            "ftol": 0.0,
        },
    )


def minimize_pinball(
    X, y, quantile, *, l1=0.0, fit_intercept=True, sample_weight=None
):
    """Exact minimizer of the weighted pinball loss (a linear program).

    ``(1/n) sum_i w_i rho_q(y_i - x_i coef - b) + l1 ||coef||_1``, solved by
    HiGHS as scikit-learn's ``QuantileRegressor`` does (the absolute loss is
    twice the pinball loss of ``quantile=0.5``: its objective with ``l1`` is
    twice this one with ``l1 / 2``, which :func:`minimize_regression`
    passes). Exact up
    to HiGHS' tolerances and free of any step size; ``X`` dense or sparse
    (the constraint matrix stays sparse). A solve that fails warns with a
    :class:`~sklearn.exceptions.ConvergenceWarning` and returns zeros.

    Returns
    -------
    fit : NonPrivateFit
        ``coef`` of shape ``(n_features, 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._non_private import minimize_pinball
    >>> X = np.arange(5.0)[:, None]
    >>> fit = minimize_pinball(X, 2 * X.ravel() + 1, 0.5)
    >>> np.round(fit.coef.ravel(), 6), np.round(fit.intercept, 6)
    (array([2.]), array([1.]))
    """
    n, d = X.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    # Standardized coordinates, as minimize_linear's: beta = coef * sd and
    # the intercept c = b + mu . coef (_standardized_rows).
    keep = w > 0
    # Rows of weight 0 do not enter the program (as in QuantileRegressor).
    mean, scale, Xs = _standardized_rows(X, w, fit_intercept, keep)
    y, w = np.asarray(y, dtype=np.float64)[keep], w[keep]
    Xs = sp.csr_matrix(Xs)
    m = Xs.shape[0]
    # p = [beta, (c)] = p+ - p-, and [p+, p-, u+, u-] >= 0 with
    # Xs beta + c + u+ - u- = y.
    penalty = float(l1) * n / scale
    if fit_intercept:
        A = sp.hstack([Xs, np.ones((m, 1))], format="csr")
        penalty = np.concatenate([penalty, [0.0]])
    else:
        A = Xs
    n_par = A.shape[1]
    eye = sp.eye(m, format="csr")
    A_eq = sp.hstack([A, -A, eye, -eye], format="csr")
    cost = np.concatenate([penalty, penalty, quantile * w, (1.0 - quantile) * w]) / n
    b_eq = y
    result = scipy.optimize.linprog(
        c=cost, A_eq=A_eq, b_eq=b_eq, method="highs", bounds=(0, None)
    )
    if not result.success:
        warn_at_caller(
            "The non-private (epsilon=inf) quantile regression linear program "
            f"did not solve ({result.message}).",
            ConvergenceWarning,
        )
        return NonPrivateFit(np.zeros((d, 1)), np.zeros(1), 0, False)
    params = result.x[:n_par] - result.x[n_par : 2 * n_par]
    coef = (params[:d] / scale).reshape(d, 1)
    # The raw predictions are (X - mu) coef + c.
    intercept = params[d] - mean @ coef[:, 0] if fit_intercept else 0.0
    return NonPrivateFit(
        coef, np.asarray(intercept, float).reshape(1), int(result.nit), True
    )


def _standardized_rows(X, sample_weight, fit_intercept, rows=None):
    """``(mean, scale, Xs)``: rows of ``X`` in standardized coordinates.

    The coordinates of :func:`minimize_pinball` and of the ridge's
    refinement (:func:`_piecewise_linear_ridge`), ``Xs = (X - mean) / scale``
    with the raw predictions ``Xs (coef * scale) + c - mean . coef``. With an
    intercept the columns are centred: HiGHS' own scaling does not undo an
    offset of 1e5 under a spread of 1e-3, whose column is then collinear
    with the intercept's to its tolerances (a coefficient of 0 and a loss
    35% above the minimum). A sparse ``X`` stays CSR, a float64 copy of its
    selected rows: its columns stored on every one of those rows are centred
    in place (no entry is added), the others keep the mean 0 and are scaled
    by their root mean square, as centring them would densify them (a
    column with unstored zeros is not collinear with the intercept).
    ``rows`` (a mask or index) selects rows; None keeps them all.
    """
    if not sp.issparse(X):
        mean, scale = column_moments(X, sample_weight, center=fit_intercept)
        X = np.asarray(X, dtype=np.float64)
        return mean, scale, ((X if rows is None else X[rows]) - mean) / scale
    X = as_rows(X)
    Xs = sp.csr_matrix(X if rows is None else X[rows], dtype=np.float64, copy=True)
    mean, scale = column_moments(X, sample_weight, center=False)
    if fit_intercept and Xs.shape[0]:
        # Canonical CSR (as_rows): one stored entry per row and column.
        full = np.bincount(Xs.indices, minlength=X.shape[1]) == Xs.shape[0]
        if full.any():
            centred_mean, centred_scale = column_moments(
                X, sample_weight, center=True
            )
            mean = np.where(full, centred_mean, 0.0)
            scale = np.where(full, centred_scale, scale)
            Xs.data -= mean[Xs.indices]
    Xs.data /= scale[Xs.indices]
    return mean, scale, Xs


def minimize_regression(
    X, y, loss, *, alpha=0.0, l1=0.0, fit_intercept=True, sample_weight=None
):
    """The non-private minimizer of a regression loss: smooth or piecewise linear.

    The pinball and absolute losses (``raw_smoothness`` infinite) without an
    L2 penalty are linear programs, solved exactly by
    :func:`minimize_pinball` (the absolute loss at ``quantile=0.5``, half of
    it, with half the l1 strength: the same minimizer); every other case by
    :func:`minimize_linear`.
    With an L2 penalty (and no l1) a nonsmooth loss is a quadratic program:
    L-BFGS-B on its subgradient stops at a kink, short of its tolerance, and
    its point is then refined to the exact minimizer by an active-set
    solution of the optimality conditions
    (:func:`_piecewise_linear_ridge`), certified by checking every one of
    them; only where no certified minimizer is found does the fit keep
    L-BFGS-B's point, with a ``ConvergenceWarning`` if it stopped short.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import AbsoluteLoss
    >>> from sklearn_dpfair._solvers._non_private import minimize_regression
    >>> X = np.arange(5.0)[:, None]
    >>> y = np.array([0.0, 1.0, 20.0, 3.0, 4.0])
    >>> fit = minimize_regression(X, y, AbsoluteLoss())
    >>> float(np.round(fit.coef[0, 0], 6))
    1.0
    """
    if np.isinf(loss.raw_smoothness) and not alpha:
        # The absolute loss is twice the pinball loss of level 0.5: its
        # objective mean|r| + l1 ||coef||_1 is twice that of the pinball
        # loss with half the l1 strength (the same minimizer only then).
        pinball_l1 = l1 / 2 if isinstance(loss, AbsoluteLoss) else l1
        return minimize_pinball(
            X,
            y,
            getattr(loss, "quantile", 0.5),
            l1=pinball_l1,
            fit_intercept=fit_intercept,
            sample_weight=sample_weight,
        )
    piecewise = np.isinf(loss.raw_smoothness) and not l1
    fit = minimize_linear(
        X,
        y,
        loss,
        alpha=alpha,
        l1=l1,
        fit_intercept=fit_intercept,
        sample_weight=sample_weight,
        warn=not piecewise,
    )
    if not piecewise:
        return fit
    # L-BFGS-B on a piecewise-linear loss stops at a kink, short of its
    # tolerance, whatever its accuracy: the minimizer is then read off the
    # optimality conditions exactly, where they single it out.
    exact = _piecewise_linear_ridge(
        X, y, loss, alpha, fit.coef[:, 0], float(fit.intercept[0]),
        fit_intercept=fit_intercept, sample_weight=sample_weight,
    )
    # The certificate reads the conditions to a tolerance: the refined point
    # is kept where it is at least as good as L-BFGS-B's (an ill-conditioned
    # active-set solve was once 7e-9 worse), within their evaluation's
    # rounding: a relative 1e-10, and the rounding of the raw predictions
    # (of a column at 1e8, 1e-8 a row: more than the two points differ).
    if exact is not None:
        magnitudes = _mean_abs_columns(X, sample_weight)
        value, rounding = _penalized_loss(
            X, y, loss, alpha, exact, sample_weight, magnitudes
        )
        reference, reference_rounding = _penalized_loss(
            X, y, loss, alpha, fit, sample_weight, magnitudes
        )
        if value <= reference * (1 + 1e-10) + rounding + reference_rounding:
            return replace(exact, n_iter=fit.n_iter)
    if not fit.converged:
        warn_at_caller(
            "The non-private (epsilon=inf) solve of a piecewise-linear loss "
            f"with an L2 penalty stopped after {fit.n_iter} L-BFGS-B "
            "iterations without an exact minimizer; the data may overflow "
            "float64 or the penalty be too small.",
            ConvergenceWarning,
        )
    return fit


def _penalized_loss(X, y, loss, alpha, fit, sample_weight, magnitudes):
    """``F`` (module docstring, no l1) of a one-output ``fit``, and its rounding.

    In float64; the rounding bounds the error of the raw predictions
    ``x_i coef + b``, a few ulps of the terms they sum, ``|x_i| |coef| +
    |b|``, times the loss' slope, averaged as ``F`` averages
    (``magnitudes``: the weighted column means of ``|X|``,
    :func:`_mean_abs_columns`).
    """
    mean_weight = 1.0 if sample_weight is None else float(np.mean(sample_weight))
    with np.errstate(all="ignore"):
        raw = np.asarray(X @ fit.coef, dtype=np.float64) + fit.intercept
        terms = loss.loss(np.asarray(y, dtype=np.float64), raw)
        if sample_weight is not None:
            terms = terms * sample_weight
        coef = fit.coef[:, 0]
        size = magnitudes @ np.abs(coef) + mean_weight * abs(fit.intercept[0])
        rounding = 4 * np.finfo(np.float64).eps * loss.raw_lipschitz * size
        return float(np.mean(terms) + 0.5 * alpha * coef @ coef), float(rounding)


def _mean_abs_columns(X, sample_weight):
    """``(1/n) sum_i w_i |x_ij|`` for each column ``j``, in float64.

    A block of rows (dense) or of stored entries (sparse) at a time, as
    :func:`column_moments` reads them: no copy of ``X``.
    """
    n, d = X.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    total = np.zeros(d)
    with np.errstate(all="ignore"):
        if sp.issparse(X):
            X = as_rows(X)
            indptr = X.indptr
            for row, end in entry_blocks(indptr, _SPARSE_BLOCK_ENTRIES):
                lo, hi = indptr[row], indptr[end]
                weights = np.repeat(w[row:end], np.diff(indptr[row : end + 1]))
                values = np.abs(X.data[lo:hi].astype(np.float64)) * weights
                total += np.bincount(X.indices[lo:hi], weights=values, minlength=d)
        else:
            step = max(1, _BLOCK_ENTRIES // max(d, 1))
            for start in range(0, n, step):
                block = np.abs(np.asarray(X[start : start + step], dtype=np.float64))
                total += w[start : start + step] @ block
    return total / max(n, 1)


# Residuals taken as zero at the start of the active-set refinement
# (:func:`_piecewise_linear_ridge`), in units of the target's spread: the
# L-BFGS-B point is accurate to about 1e-6, and a start that does not lead to
# the minimizer within a few pivots is replaced by the next.
_ZERO_RESIDUAL_LEVELS = (1e-8, 1e-6, 1e-5, 1e-4, 1e-3)
# Pivots of one refinement; one that has not settled by then gives up.
_MAX_PIVOTS = 20


def _piecewise_linear_ridge(
    X, y, loss, alpha, coef, intercept, *, fit_intercept=True, sample_weight=None
):
    """The exact minimizer of a piecewise-linear loss plus an L2 penalty, or None.

    ``F = (1/n) sum_i w_i rho(y_i - x_i coef - b) + (alpha/2) ||coef||^2``
    with ``rho(r) = a max(r, 0) + c max(-r, 0)`` (the absolute loss:
    ``a = c = 1``; the pinball loss of level ``q``: ``a = q``, ``c = 1 - q``):
    a strongly convex quadratic program. Its minimizer satisfies, with
    ``u_i`` a subgradient of the ``i``-th term (``w_i a / n`` where the
    residual is positive, ``-w_i c / n`` where it is negative, any value
    between them where it is zero), ``alpha coef = X^T u`` and, with an
    intercept, ``sum_i u_i = 0`` (its KKT conditions). Given the set ``Z``
    of zero residuals and the signs of the others, these are a linear
    system in ``coef``, ``b`` and ``u_Z``, of size ``|Z| + 1`` once
    ``coef = X^T u / alpha`` is substituted. ``Z`` and the signs start from
    the approximate minimizer (``coef``, ``intercept``: L-BFGS-B's), whose
    residuals below a threshold (:data:`_ZERO_RESIDUAL_LEVELS` of the
    target's spread, at most ``d + 1`` of them) are taken as zero, and
    are refined by pivoting, as an active-set method does: a ``u_i`` beyond
    its bounds leaves ``Z`` with the sign of the bound it passed, and the
    residual of most violated sign joins ``Z``. A solution that satisfies
    every condition (``u_Z`` within its bounds, the other residuals of their
    signs) is the minimizer, certified; None when no start leads to one
    within :data:`_MAX_PIVOTS` pivots (the caller keeps the approximate
    point).
    Solved in standardized columns, as :func:`minimize_linear` solves.
    """
    n, d = X.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    one = np.ones(1)
    above = float(loss.loss(one, np.zeros((1, 1)))[0])
    below = float(loss.loss(np.zeros(1), np.ones((1, 1)))[0])
    with np.errstate(all="ignore"):
        mean, scale, Xs = _standardized_rows(X, w, fit_intercept)
        # The penalty (alpha/2) ||coef||^2 in beta = coef * scale.
        curvature = alpha / (scale * scale)
        y = np.asarray(y, dtype=np.float64)
        beta0 = np.asarray(coef, dtype=np.float64) * scale
        c0 = intercept + mean @ coef
        residual = y - np.asarray(Xs @ beta0).ravel() - c0
    if not (np.all(np.isfinite(residual)) and np.all(np.isfinite(curvature))):
        return None
    if not np.all(curvature > 0):
        return None
    spread = float(np.max(np.abs(y - np.median(y)))) or 1.0
    # Rows of weight 0 have u_i = 0 whatever their residual: never in Z.
    upper, lower = w * above / n, -w * below / n
    positive = w > 0
    most = d + 1 if fit_intercept else d
    tol = 1e-12 * spread
    slack = 1e-9 * float(np.max(upper - lower))
    # L-BFGS-B's point first; where no start from it settles (pivoting from
    # a point whose small residuals are not the minimizer's can cycle), the
    # points of smoothed problems, whose small residuals are the zero set.
    starts = itertools.chain(
        [residual],
        _smoothed_residuals(
            Xs, y, w, above, below, curvature, fit_intercept, beta0, c0, spread
        ),
    )
    for start in starts:
        order = np.argsort(np.abs(start))
        order = order[positive[order]]
        tried = set()
        for level in _ZERO_RESIDUAL_LEVELS:
            # At most d + 1 zero residuals (d without an intercept) determine
            # the rest: more would be a degenerate start.
            k = min(int(np.searchsorted(np.abs(start[order]), level * spread)), most)
            if k in tried:
                continue
            tried.add(k)
            sign = np.where(start > 0, 1.0, -1.0)
            found = _pivoted_kkt(
                Xs, y, order[:k], sign, upper, lower, curvature, fit_intercept,
                positive, tol, slack,
            )
            if found is not None:
                beta, c = found
                coef_user = beta / scale
                b = c - mean @ coef_user
                return NonPrivateFit(
                    coef_user.reshape(d, 1), np.array([b]), 0, True, 0.0
                )
    return None


# Smoothing widths of the continuation that replaces an L-BFGS-B start from
# which no pivoting settles (:func:`_smoothed_residuals`), in units of the
# target's spread.
_SMOOTHING_LEVELS = tuple(10.0**-k for k in range(2, 11))


def _smoothed_residuals(
    Xs, y, w, above, below, curvature, fit_intercept, beta, c, spread
):
    """Residuals of smoothed problems of decreasing width: starts to refine.

    Each kink of ``rho`` is smoothed by Nesterov's smoothing ("Smooth
    minimization of non-smooth functions", Math. Program. 2005, eq. (2.5))
    of width ``mu``: ``rho_mu(r) = max_{-below <= s <= above} (s r - mu s^2
    / 2)``, quadratic where ``-mu below <= r <= mu above`` and ``rho`` less
    a constant elsewhere, with derivative ``clip(r / mu, -below, above)``.
    Its minimizer is within ``O(mu)`` of the exact one, so the rows of zero
    residual are those with ``|r| <= mu max(above, below)`` and the others
    have their signs, once ``mu`` is below the smallest nonzero residual.
    Solved by L-BFGS-B in ``(beta, c)``, ``mu`` from 1e-2 to 1e-10 of the
    target's spread, each warm-started at the last: the condition number
    grows as ``1/mu``, which a cold start at the smallest width would not
    survive. Yields the residuals after each width: only starts, which the
    caller certifies.
    """
    n, d = Xs.shape
    weight = w / n

    def residuals(params):
        raw = np.asarray(Xs @ params[:d]).ravel()
        return y - raw - (params[d] if fit_intercept else 0.0)

    params = np.append(beta, c if fit_intercept else 0.0)
    for level in _SMOOTHING_LEVELS:
        mu = level * spread

        def objective(params):
            r = residuals(params)
            s = np.clip(r / mu, -below, above)
            value = weight @ (s * r - 0.5 * mu * s * s)
            coef = params[:d]
            value += 0.5 * coef @ (curvature * coef)
            grad = np.empty_like(params)
            grad[:d] = curvature * coef - np.asarray(Xs.T @ (weight * s)).ravel()
            grad[d] = -float(weight @ s) if fit_intercept else 0.0
            return float(value), grad

        with np.errstate(all="ignore"):
            result = scipy.optimize.minimize(
                objective, params, jac=True, method="L-BFGS-B",
                options={"maxiter": 500, "ftol": 1e-15, "gtol": 1e-14},
            )
            r = residuals(result.x)
        if not (np.all(np.isfinite(result.x)) and np.all(np.isfinite(r))):
            return
        params = result.x
        yield r


def _pivoted_kkt(
    Xs, y, zero, sign, upper, lower, curvature, fit_intercept, positive, tol, slack
):
    """``(beta, c)`` satisfying every KKT condition, pivoting from ``zero``; or None."""
    for _ in range(_MAX_PIVOTS):
        solved = _kkt_solution(
            Xs, y, zero, sign, upper, lower, curvature, fit_intercept
        )
        if solved is None:
            return None
        beta, c, u_zero, r, u_sum = solved
        # Violations: u_Z beyond its bounds; another residual of the wrong
        # sign (or a zero residual that is not zero).
        high = u_zero > upper[zero] + slack
        low = u_zero < lower[zero] - slack
        wrong = positive & (sign * r < -tol)
        wrong[zero] = False
        if not (high.any() or low.any() or wrong.any()):
            # The equations hold too (a least-squares solution of a
            # singular system may miss them): zero residuals, sum(u) = 0.
            balanced = not fit_intercept or abs(u_sum) <= slack * max(1, len(y))
            exact = np.all(np.abs(r[zero]) <= 1e3 * tol) and balanced
            return (beta, c) if exact else None
        if high.any() or low.any():
            sign[zero[high]], sign[zero[low]] = 1.0, -1.0
            zero = zero[~(high | low)]
        else:
            worst = int(np.argmax(np.where(wrong, -sign * r, -np.inf)))
            zero = np.append(zero, worst)
    return None


def _kkt_solution(Xs, y, zero, sign, upper, lower, curvature, fit_intercept):
    """``(beta, c, u_Z, residuals, sum(u))`` of the KKT system of ``zero``, ``sign``.

    The residuals of ``zero`` are 0 and every other row's subgradient is
    fixed by its ``sign``; None if the solution is not finite.
    """
    fixed = np.where(sign > 0, upper, lower)
    fixed[zero] = 0.0
    k = len(zero)
    with np.errstate(all="ignore"):
        g = np.asarray(Xs.T @ fixed).ravel()
        XZ = Xs[zero].toarray() if sp.issparse(Xs) else Xs[zero]
        # beta = (g + XZ^T uZ) / curvature; XZ beta + c = yZ; sum(uZ) = -sum(fixed).
        A = (XZ / curvature) @ XZ.T
        rhs = y[zero] - XZ @ (g / curvature)
        if fit_intercept:
            A = np.block([[A, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
            rhs = np.concatenate([rhs, [-fixed.sum()]])
        sol = np.linalg.lstsq(A, rhs, rcond=None)[0] if A.size else np.zeros(0)
        # Two steps of iterative refinement (Higham, *Accuracy and Stability
        # of Numerical Algorithms*, 2nd ed., Section 12.1) on the equations as
        # the residuals evaluate them: with a small penalty A is
        # ill-conditioned, and one solve leaves the zero residuals at 1e-7 of
        # the target's spread, where the certificate reads 1e-9.
        for refinement in range(3):
            u_zero = sol[:k]
            c = float(sol[k]) if fit_intercept else 0.0
            beta = (g + XZ.T @ u_zero) / curvature
            missed = y[zero] - XZ @ beta - c
            if fit_intercept:
                missed = np.concatenate([missed, [-fixed.sum() - u_zero.sum()]])
            if refinement == 2 or not A.size or not np.all(np.isfinite(missed)):
                break
            sol = sol + np.linalg.lstsq(A, missed, rcond=None)[0]
        r = y - np.asarray(Xs @ beta).ravel() - c
    if not (np.all(np.isfinite(beta)) and np.isfinite(c) and np.all(np.isfinite(r))):
        return None
    return beta, c, u_zero, r, float(fixed.sum() + u_zero.sum())


#: How a record of the non-private limit describes what ran.
NON_PRIVATE_DESCRIPTION = (
    "non-private limit (epsilon=inf, no noise_multiplier): nothing is "
    "released privately, so the fit is solved by the deterministic "
    "full-batch solver of the same objective ({solver}), with no noise and "
    "no clipping in it; the private mechanism it stands for: {private}"
)

#: The solver :func:`minimize_linear` runs, as records name it.
LBFGS_SOLVER = (
    "L-BFGS-B in standardized columns, coefficients mapped back to the "
    "user's units"
)


#: The solver :func:`minimize_l1_ball` runs, as records name it.
L1_BALL_SOLVER = (
    "L-BFGS-B on the Lagrangian of the l1 ball (the l1-penalized objective "
    "at the multiplier that puts the solution on the ball's surface, found by "
    "bisection), in standardized columns, coefficients mapped back to the "
    "user's units"
)


def non_private_record(record, steps, solver=LBFGS_SOLVER, *, sampling=None):
    """``record`` re-described for the non-private limit (event unchanged).

    The event stays the ``NonPrivateDpEvent`` the accountant was given; the
    mechanism text says that the full-batch solver ``solver`` ran, and
    ``steps`` (at the sampling rate ``sampling``; None: full batch) are the
    iterations that ran.

    Examples
    --------
    >>> import math
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._non_private import non_private_record
    >>> budget = PrivacyBudget(math.inf, 1e-5)
    >>> record = budget.account(
    ...     budget.gaussian(1.0), description="DP-SGD", adjacency="add_remove",
    ...     sampling_probability=0.1, steps=10)
    >>> new = non_private_record(record, 7)
    >>> new.steps, new.sampling_probability, new.mechanism[:17]
    (7, None, 'non-private limit')
    """
    return replace(
        record,
        mechanism=NON_PRIVATE_DESCRIPTION.format(
            solver=solver, private=record.mechanism
        ),
        sampling_probability=sampling,
        steps=int(steps),
    )


def minimize_fair_objective(
    problem, fairness_weight, coef, w0, *, tol=None, max_iter=None
):
    """DP-FERMI's non-private limit: its full-batch objective, minimized.

    The soft-ERMI-regularized loss with the dual at its closed-form maximiser
    (:func:`~sklearn_dpfair._solvers.fermi._lbfgs.exact_dual_objective`, the
    objective FERMI's own full-batch phase minimizes), by
    :func:`minimize_standardized` warm-started at ``(coef, w0)``: centred and
    scaled columns, so that an offset of ``1e5`` under a spread of ``1e-3``
    does not hide a coefficient from the solver (a root-mean-square scaling
    leaves that column collinear with the intercept).

    Parameters
    ----------
    problem : FairProblem
        The fit's problem (rows, labels, cells, weights, regularizer).
    fairness_weight : float
    coef : ndarray of shape (n_features, n_classes)
    w0 : ndarray of shape (n_classes,)
    tol, max_iter : float and int, default=None
        :func:`minimize_standardized`'s (None: this module's ``TOL`` and
        ``MAX_ITER``).

    Returns
    -------
    result : FullBatchResult
        ``stationarity`` is 0 when the solve converged to its tolerance,
        inf otherwise (:func:`minimize_standardized` then raised the
        ``ConvergenceWarning``).
    """
    # Imported here: the FERMI solvers import this module's siblings.
    from .fermi._lbfgs import FullBatchResult, exact_dual_objective

    X = problem.X_host
    s = float(problem.intercept_scaling)
    d, m = np.shape(coef)

    def data_term(rows, coef_, intercept):
        w0_ = intercept / s if s else np.zeros(m)
        value, grad = exact_dual_objective(
            np.concatenate([coef_.ravel(), w0_]),
            rows,
            problem.y,
            regularizer=problem.regularizer,
            cells=problem.cells,
            fairness_weight=fairness_weight,
            alpha=problem.params.alpha,
            intercept_scaling=s,
            weight_scale=problem.weight_scale,
            sample_weight=problem.sample_weight,
        )
        g_int = grad[d * m :] / s if s else np.zeros(m)
        return value, grad[: d * m].reshape(d, m), g_int

    fit = minimize_standardized(
        data_term,
        X,
        n_outputs=m,
        fit_intercept=bool(s),
        sample_weight=problem.sample_weight,
        coef_init=np.asarray(coef, dtype=np.float64),
        intercept_init=s * np.asarray(w0, dtype=np.float64),
        tol=tol,
        max_iter=max_iter,
        # DP-FERMI's own ConvergenceWarning says it, with the gradient.
        warn=False,
    )
    return FullBatchResult(
        coef=fit.coef,
        w0=fit.intercept / s if s else np.zeros(m),
        # The final gradient in standardized coordinates (inf where the
        # solve ended on non-finite values).
        stationarity=0.0
        if fit.converged
        else (fit.gradient if math.isfinite(fit.gradient) else math.inf),
        converged=fit.converged,
        n_iter=fit.n_iter,
        objective=float("nan"),
    )
