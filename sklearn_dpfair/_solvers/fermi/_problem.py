# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The FERMI training problem as the full-batch phase and the weight search see it.

:class:`FairProblem` holds the data (on the host and where the solver runs),
the encoded labels, groups and blocks, the ERMI regularizer and the public
hyperparameters; it refines a model by the full-batch phase of
:mod:`._lbfgs`, measures hard predictions and their disparity, and gives the
exact dual of a model. :func:`run_sgda` runs the (noisy) SGDA of
:mod:`._sgda` on it. ``X`` may be dense or scipy sparse (never densified).
"""

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..._base import _dense_linear_scores, _sparse_linear_scores
from ..._loss import BinaryLogisticLoss, SoftmaxLoss
from ...fairness._disparity import (
    disparities,
    disparity_from_counts,
    prediction_counts,
)
from ...fairness._ermi import code_dtype
from ...neural._network import network_scores
from ...utils._array_api import from_host, to_numpy
from .._non_private import column_moments, minimize_fair_objective
from .._row_blocks import float64_product
from ._lbfgs import (
    FullBatchPenalty,
    FullBatchResult,
    block_logits,
    column_scales,
    column_square_sums,
    dominated_column_moments,
    exact_dual,
    exact_dual_objective,
    reach_candidates,
    refine_full_batch,
    row_slices,
    term_rows,
)
from ._sgda import noisy_sgda, softmax_probabilities

__all__ = ["THRESHOLD_GRID", "FairProblem", "run_sgda"]

# The full-batch phase continues in standardized coordinates where its
# point's gradient there exceeds this many times tol: the root-mean-square
# scaling conditions centred or 0/1 columns to within a small factor (Adult
# with min-max scaled numeric columns and one-hot ones: 1.3 to 1.8 times
# tol), and hides a column of large offset and small spread by orders of
# magnitude (raw columns: 60 to 1,000 times).
HIDDEN_GRADIENT_FACTOR = 10.0

# The one-pass column moments (:meth:`FairProblem._one_pass_moments`) stand
# for column_moments' two-pass ones only where each column's variance is at
# least this share of its mean square (no offset far above the spread,
# which the one-pass formula would cancel) ...
_ONE_PASS_SHARE = 1e-2
# ... and then within this relative error of them: the rounding of sums of
# n terms, at most n eps of their size, amplified at most 1 / _ONE_PASS_SHARE
# times by the difference, stays far below it up to ~1e9 rows.
_ONE_PASS_ERROR = 1e-4

# Quantiles of the training logits tried as the shared decision threshold
# of a binary model under disparity_bound (non-private).
THRESHOLD_GRID = 257


@dataclass
class FairProblem:
    """The training problem as the full-batch phase and the selection see it."""

    X: object
    X_solver: object
    y: np.ndarray
    codes: np.ndarray
    blocks: np.ndarray
    n_classes: int
    n_groups: int
    regularizer: object
    weight_scale: float
    params: object  # FERMIParams: the public hyperparameters
    sample_weight: object = None  # public, mean 1, or None
    # (n_blocks, n_groups) cells a disparity bound measures (None: all);
    # from public or released counts under privacy.
    measured: object = None
    # The network of a fit with hidden layers (_model.NetworkFairModel),
    # None for the linear model; (coef, w0) are then its flat parameters.
    network: object = None
    # Whether hard predictions are those of the model the estimator
    # releases, in X's dtype, scored as its ``predict`` scores them: the
    # linear model where ``X`` is the user's own columns
    # (:meth:`released_linear`), a non-private network on the user's
    # columns ``user_X`` (:meth:`released_network`). False: the solver's
    # float64 model on ``X`` (a private fit's scaled columns).
    released_columns: bool = False
    # A network's columns as the user gave them, where ``X`` is their map
    # by ``column_scaling`` (a FeatureScaling, which the released first
    # layer is mapped back by); None: ``X`` is the user's columns.
    user_X: object = None
    column_scaling: object = None

    @property
    def constraint(self):
        return self.params.constraint

    @property
    def intercept_scaling(self):
        return self.params.intercept_scaling

    def __post_init__(self):
        # Labels where the solver runs (host numpy for a sparse X); also the
        # array the results are moved next to.
        self.y_solver = (
            self.y if sp.issparse(self.X_solver) else from_host(self.y, self.X_solver)
        )
        # The full-batch phase and the selection read X on the host, sparse
        # or dense, in its own dtype (their products are float64).
        self.X_host = self.X if sp.issparse(self.X) else to_numpy(self.X)
        # Rows per block of the full-batch terms and predictions: their
        # temporaries stay a fraction of X's storage.
        self.rows = term_rows(self.X_host, self.n_classes)
        # One small code a row for the penalty (ERMIRegularizer.row_cells):
        # a record's weight multiplies its penalty weight (the ERMI terms
        # are linear in it); the loss terms are weighted in the L-BFGS
        # objective.
        self.cells = (
            None
            if self.regularizer is None
            else self.regularizer.row_cells(self.blocks, self.codes)
        )

    def _parts(self):
        return row_slices(self.X_host.shape[0], self.rows)

    def refine(self, lam, coef, w0, tol=None, second_order=False):
        """The full-batch phase at weight ``lam`` from ``(coef, w0)``.

        ``tol`` (default: the parameters') is its stationarity target;
        ``second_order`` searches in the metric of the exact Hessian where
        it applies (:mod:`._newton_polish`). The linear model's phase is
        :meth:`refine_scaled`, continued by :meth:`refine_standardized`
        where a column's offset hid a gradient from it, then checked (and
        continued) by :meth:`refine_robust` where a few rows dominate a
        column's scale.
        """
        if self.network is not None:
            return self.network.refine(self, lam, coef, w0, tol)
        tol = self.params.tol if tol is None else tol
        scaled = self.refine_scaled(lam, coef, w0, tol, second_order=second_order)
        return self.refine_robust(lam, self.refine_standardized(lam, scaled, tol), tol)

    def refine_scaled(self, lam, coef, w0, tol, second_order=False):
        """The linear model's L-BFGS in root-mean-square scaled coordinates.

        :func:`~._lbfgs.refine_full_batch` on this problem.
        """
        return refine_full_batch(
            self.X_host,
            self.y,
            fairness_weight=lam,
            coef=np.asarray(coef, dtype=np.float64),
            w0=np.asarray(w0, dtype=np.float64),
            tol=tol,
            max_iter=self.params.final_max_iter,
            second_order=second_order,
            **self._objective_terms(),
        )

    def _objective_terms(self):
        # The linear objective's public terms besides the rows and labels.
        return dict(
            regularizer=self.regularizer,
            cells=self.cells,
            alpha=self.params.alpha,
            intercept_scaling=self.intercept_scaling,
            weight_scale=self.weight_scale,
            sample_weight=self.sample_weight,
        )

    def _flat(self, coef, w0):
        return np.concatenate(
            [
                np.ravel(np.asarray(coef, dtype=np.float64)),
                np.ravel(np.asarray(w0, dtype=np.float64)),
            ]
        )

    def _linear_objective(self, lam, coef, w0):
        return exact_dual_objective(
            self._flat(coef, w0),
            self.X_host,
            self.y,
            fairness_weight=lam,
            **self._objective_terms(),
        )

    @cached_property
    def _column_moments(self):
        # Read once a fit: a weight path checks every point it solves.
        center = bool(self.intercept_scaling)
        return column_moments(self.X_host, self.sample_weight, center=center)

    @cached_property
    def _hidden_gradient_bound(self):
        """How far the standardized gradient can exceed :meth:`refine_scaled`'s.

        A coordinate ``j`` of the standardized gradient is
        ``(g_j - mu_j g_b) / sd_j`` with ``|g_j| <= G rms_j`` and
        ``|g_b| <= G / s`` when every coordinate of :meth:`refine_scaled`'s
        (coefficients times root mean squares, and the intercept parameter)
        is at most ``G``: so at most ``G max_j (rms_j + |mu_j| / s) / sd_j``
        (and ``G / s`` for the intercept).
        """
        mean, scale = self._column_moments
        s = float(self.intercept_scaling)
        if not s:
            # Uncentred: the scales are the root mean squares themselves.
            return 1.0
        # hypot: a column near the largest float (a row of 1e300) would
        # overflow ``scale**2`` although the root mean square is finite.
        rms = np.hypot(scale, mean)
        with np.errstate(all="ignore"):
            ratio = float(np.max((rms + np.abs(mean) / s) / scale, initial=1.0 / s))
        return ratio if np.isfinite(ratio) else np.inf

    @cached_property
    def _one_pass_moments(self):
        """Column means, standard deviations and root mean squares in one pass each.

        A product ``X^T w`` and the sums of squares of :func:`column_scales`
        (BLAS and ``einsum``, no float64 copy of ``X``), about a tenth of the
        time of :func:`~.._non_private.column_moments`' blocked passes. None
        where a column's variance is below ``_ONE_PASS_SHARE`` of its mean
        square (or any is not finite): the moments are then
        :attr:`_column_moments`'. Elsewhere they are within
        ``_ONE_PASS_ERROR`` of those (relative; the means within that share
        of the root mean square).
        """
        X, w = self.X_host, self.sample_weight
        n, d = X.shape
        total = float(n) if w is None else float(np.sum(w))
        if not (n and total > 0):
            return None
        with np.errstate(all="ignore"):
            ones = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
            sums = np.asarray(float64_product(X, ones, transpose_a=True)).ravel()
            squares = column_square_sums(X, w)
            mean, mean_square = sums / total, squares / total
            var = mean_square - mean * mean
            # The smallest mean square keeps the spread far above the
            # smallest one column_moments treats as a constant column.
            usable = (var >= _ONE_PASS_SHARE * mean_square) & (mean_square >= 1e-280)
        if not (np.all(usable) and np.all(np.isfinite(mean_square))):
            return None
        return mean, np.sqrt(var), np.sqrt(mean_square)

    @cached_property
    def _one_pass_gradient_bound(self):
        """:attr:`_hidden_gradient_bound` or more, from :attr:`_one_pass_moments`.

        Each column's ``(rms + |mu| / s) / sd`` with the root mean square and
        the mean raised, and the standard deviation lowered, by
        ``_ONE_PASS_ERROR``: where it meets the test of
        :meth:`refine_standardized`, the exact bound does, and the two-pass
        moments are not read (well-conditioned columns; otherwise ``inf``).
        """
        s = float(self.intercept_scaling)
        if not s:
            return 1.0
        moments = self._one_pass_moments
        if moments is None:
            return np.inf
        mean, sd, rms = moments
        e = _ONE_PASS_ERROR
        with np.errstate(all="ignore"):
            high = (1 + e) * rms + (np.abs(mean) + e * rms) / s
            ratio = float(np.max(high / ((1 - e) * sd), initial=1.0 / s))
        return (1 + e) * ratio if np.isfinite(ratio) else np.inf

    def standardized_stationarity(self, lam, coef, w0):
        """``max |grad|`` of the linear model's objective in standardized coordinates.

        The coordinates of :func:`~.._non_private.minimize_standardized`:
        ``beta = coef * sd`` and the intercept at the column means, so that
        a column far from 0 relative to its spread (a year near 2000, a
        price near 1e5 varying by 1e-3) is not collinear with the
        intercept, as it is after a root-mean-square scaling alone.
        """
        s = float(self.intercept_scaling)
        coef = np.asarray(coef, dtype=np.float64)
        d, m = coef.shape
        mean, scale = self._column_moments
        with np.errstate(all="ignore"):
            grad = self._linear_objective(lam, coef, w0)[1]
            g_coef = grad[: d * m].reshape(d, m)
            g_int = grad[d * m :] / s if s else np.zeros(m)
            g_beta = (g_coef - mean[:, None] * g_int[None, :]) / scale[:, None]
            value = max(
                float(np.max(np.abs(g_beta), initial=0.0)),
                float(np.max(np.abs(g_int), initial=0.0)),
            )
        return value if np.isfinite(value) else np.inf

    def refine_standardized(self, lam, refined, tol=None):
        """Continue a linear full-batch phase in standardized coordinates if needed.

        :meth:`refine_scaled` preconditions by each column's root mean square,
        which leaves a column of large offset and small spread collinear
        with the intercept: L-BFGS meets ``tol`` there in its coordinates
        while the column's coefficient is still far from its minimizer
        (raw columns: log-loss 6% above the minimum). Where ``refined``'s
        gradient in centred, standardized coordinates
        (:meth:`standardized_stationarity`) exceeds
        ``HIDDEN_GRADIENT_FACTOR * tol``, L-BFGS continues there to ``tol``
        (:func:`~.._non_private.minimize_fair_objective`: a sparse ``X`` is
        centred implicitly there, never densified; ``tol`` defaults to the
        parameters'); elsewhere ``refined`` is returned as it is, and so is
        a point whose standardized gradient is not finite (rows near the
        largest float). The stationarity of a continued point is its
        standardized one, which a ``ConvergenceWarning`` reports when above
        ``tol``.
        """
        tol = self.params.tol if tol is None else tol
        limit = HIDDEN_GRADIENT_FACTOR * tol
        if refined.stationarity * self._one_pass_gradient_bound <= limit:
            # Well-conditioned columns: the check cannot fail, as the exact
            # bound below would find (without reading the two-pass moments).
            return refined
        if refined.stationarity * self._hidden_gradient_bound <= limit:
            # Well-conditioned columns: the check cannot fail (no pass).
            return refined
        stationarity = self.standardized_stationarity(lam, refined.coef, refined.w0)
        if not limit < stationarity < np.inf:
            return refined
        # Silent (it warns nothing): its convergence is judged below, in
        # this phase's own terms.
        polished = minimize_fair_objective(
            self,
            lam,
            refined.coef,
            refined.w0,
            tol=tol,
            max_iter=self.params.final_max_iter,
        )
        value = self.objective(lam, polished.coef, polished.w0)
        finite = np.all(np.isfinite(polished.coef)) and np.all(np.isfinite(polished.w0))
        if not (finite and value <= self.objective(lam, refined.coef, refined.w0)):
            return refined
        stationarity = self.standardized_stationarity(lam, polished.coef, polished.w0)
        return FullBatchResult(
            coef=polished.coef,
            w0=polished.w0,
            stationarity=stationarity,
            converged=bool(stationarity <= tol),
            n_iter=refined.n_iter + polished.n_iter,
            objective=value,
            at_limit=polished.n_iter >= int(self.params.final_max_iter),
        )

    @cached_property
    def _dominated_moments(self):
        """``(location, scale)`` of :meth:`refine_robust` (None: no dominated column).

        :func:`~._lbfgs.dominated_column_moments` of the standardized
        coordinates' moments (with an intercept; without one, of the root
        mean squares :meth:`refine_scaled` scales by). Read once a fit.
        """
        X, w = self.X_host, self.sample_weight
        extremes = None
        if self.intercept_scaling:
            quick = self._one_pass_moments
            if quick is not None:
                # Which columns may be dominated, by the one-pass moments
                # and their error: usually none, and the two-pass moments
                # are not read. The columns' extremes it reads are kept for
                # the exact test below (one pass over X, not two).
                mean, sd, rms = quick
                candidates, extremes = reach_candidates(
                    X, mean, sd, w, mean_error=_ONE_PASS_ERROR * rms,
                    scale_error=_ONE_PASS_ERROR,
                )
                if not candidates.size:
                    return None
            mean, scale = self._column_moments
        else:
            mean, scale = np.zeros(X.shape[1]), column_scales(X, w)
        return dominated_column_moments(
            X, mean, scale, w, center=bool(self.intercept_scaling),
            extremes=extremes,
        )

    def refine_robust(self, lam, refined, tol=None):
        """Check a linear full-batch point in robust coordinates, continuing there.

        Both earlier phases measure a column's gradient in units of its root
        mean square or standard deviation; a few extreme rows (a sentinel
        999999 in an age column, one record at 1e6) make those thousands of
        times the spread of the column's other rows, whose gradient then
        looks like 0: L-BFGS stops at once, far above the minimum (log-loss
        0.67 for 0.60), reporting convergence. Where a column is dominated
        so (:func:`~._lbfgs.dominated_column_moments`), the stationarity is
        measured in coordinates standardized by the robust location and
        scale of those columns (a change of coordinates: the minimizer is
        the same; the extreme rows only add positive semi-definite terms to
        the log-loss's Hessian, so that, as on the bulk alone, a small
        gradient there means a point near the minimizer), and where it
        exceeds ``tol`` the phase continues
        there: :func:`~._lbfgs.refine_full_batch` in those coordinates, a
        binary model polished in the metric of its exact Hessian
        (:mod:`._newton_polish`; the extreme rows add curvature by orders of
        magnitude along their own directions, where a diagonal scaling
        cannot follow). The returned stationarity is the one measured
        there, so that a point still above ``tol`` raises the fit's
        ``ConvergenceWarning``. Without a dominated column ``refined`` is
        returned as it is (one pass over ``X`` a fit, for the columns'
        extremes).
        """
        moments = self._dominated_moments
        if moments is None:
            return refined
        tol = self.params.tol if tol is None else tol
        location, scale = moments
        robust = refine_full_batch(
            self.X_host,
            self.y,
            fairness_weight=lam,
            coef=np.asarray(refined.coef, dtype=np.float64),
            w0=np.asarray(refined.w0, dtype=np.float64),
            tol=tol,
            max_iter=self.params.final_max_iter,
            second_order=True,
            scale=scale,
            center=location,
            **self._objective_terms(),
        )
        stationarity = robust.stationarity
        # Where the phase did not move (or did no better), the stationarity
        # is ``refined``'s, up to the rounding of the change of coordinates:
        # its point is kept bit for bit.
        moved = robust.n_iter and robust.objective < refined.objective
        point = robust if moved else refined
        return FullBatchResult(
            coef=point.coef,
            w0=point.w0,
            stationarity=stationarity,
            converged=bool(stationarity <= tol),
            n_iter=refined.n_iter + robust.n_iter,
            objective=point.objective,
            at_limit=point.at_limit,
        )

    def objective(self, lam, coef, w0):
        """The full-batch objective at weight ``lam`` (``inf`` where not finite).

        What :meth:`refine` minimizes, at one point: the loss plus ``lam``
        times the soft ERMI at its closed-form dual, plus the L2 penalty.
        """
        with np.errstate(all="ignore"):
            if self.network is not None:
                value = self.network.objective(self._flat(coef, w0), self, lam)[0]
            else:
                value = self._linear_objective(lam, coef, w0)[0]
        value = float(value)
        return value if np.isfinite(value) else np.inf

    def better_start(self, lam, coef, w0):
        """``(coef, w0)``, or :meth:`start` where its objective is lower.

        A warm start is worth taking only when it is better than the cold
        one: constant-step SGDA on columns of large magnitude (a year near
        2000, an income) overshoots to saturated logits, where the
        full-batch phase's gradients vanish and L-BFGS stops at once, far
        from the minimizer it reaches from the start.
        """
        cold = self.start()
        if self._start_objective(lam) < self.objective(lam, coef, w0):
            return cold
        return coef, w0

    def _start_objective(self, lam):
        """:meth:`objective` at :meth:`start`.

        The linear model's start, 0, predicts every class with probability
        ``1 / m`` whatever the row: a mean loss of ``log m`` (the weights
        have mean 1), no dependence on the group (an ERMI of 0) and no
        penalty. A network's is computed.
        """
        if self.network is None:
            return math.log(self.n_classes)
        return self.objective(lam, *self.start())

    def start(self):
        """The model the non-private weight path starts from (host float64)."""
        if self.network is not None:
            return self.network.host_start()
        d, m = self.X_host.shape[1], self.n_classes
        return np.zeros((d, m)), np.zeros(m)

    def _block_logits(self, coef, w0, rows):
        if self.network is not None:
            return self.network.host_logits(self.X_host, coef, w0, rows)
        return block_logits(self.X_host, coef, w0, self.intercept_scaling, rows)

    def _block_predictions(self, coef, w0, rows):
        return np.argmax(self._block_logits(coef, w0, rows), axis=1)

    @property
    def _scores_released(self):
        # Whether hard predictions are the released model's own.
        return self.released_columns

    @cached_property
    def user_X_host(self):
        """The user's columns on the host (those ``predict`` is given)."""
        if self.user_X is None:
            return self.X_host
        return to_numpy(self.user_X)

    @property
    def output_dtype(self):
        """The dtype of the released model: that of the user's ``X`` (on the host)."""
        return self.user_X_host.dtype

    def released_linear(self, coef, w0):
        """The linear model ``(coef_, intercept_)`` as the estimator stores it.

        The layout of :func:`._fit.released_fit` (the intercept ``s w0``;
        two classes: the one logit of class 1, ``w_1 - w_0`` and
        ``b_1 - b_0``), computed in float64 as it is there, then cast to
        :attr:`output_dtype` as the estimator casts it. The cast matters: a
        float32 model of a column of offset 500 in units of 1e-3 has an
        intercept near 1e5, which float32 rounds by up to 2**-8, and its
        scores are float32 sums of products of that size, so that its
        predictions are not the float64 model's.
        """
        coef = np.asarray(coef, dtype=np.float64)
        intercept = self.intercept_scaling * np.asarray(w0, dtype=np.float64)
        if self.n_classes == 2:
            coef = (coef[:, 1] - coef[:, 0]).reshape(1, -1)
            intercept = intercept[1:2] - intercept[0:1]
        else:
            coef = coef.T
        return coef.astype(self.output_dtype), intercept.astype(self.output_dtype)

    def _released_scores(self, coef, intercept, rows=slice(None)):
        """``decision_function`` of a released model on training rows.

        ``coef`` ``(m', d)`` and ``intercept`` ``(m',)`` as
        :meth:`released_linear` gives them; the scores, ``(n, m')``, come
        from the functions ``decision_function`` calls, in the model's
        dtype, so that each row's score is the one ``predict`` computes on
        the same rows: a dense ``X`` in one product over every row (a
        product by blocks of rows may round a row differently), a sparse
        one on ``rows`` (a CSR product computes each row's score alone, so
        a block's are the whole product's, and only a block's are held:
        ``n m'`` scores beside a sparse ``X`` would exceed its storage).
        """
        X = self.X_host
        if sp.issparse(X):
            # (Indexing by the whole slice would copy the matrix.)
            block = X if rows == slice(None) else X[rows]
            scores = _sparse_linear_scores(block, coef, intercept)
            return np.reshape(scores, (block.shape[0], -1))
        scores = _dense_linear_scores(np, X, coef.T, intercept)
        return np.reshape(scores, (X.shape[0], -1))

    def released_network(self, coef, w0):
        """A network's ``(coefs_, intercepts_)`` as the estimator stores them.

        :meth:`~._model.NetworkFairModel.release` (the first layer mapped
        back to the user's units by ``column_scaling``, two classes' output
        layer the one logit of class 1), computed in float64 as
        :func:`._fit.released_fit` computes it, then cast to
        :attr:`output_dtype` as the estimator casts it. Both matter: the
        first layer of a column of offset 1e6 and spread 10 has a bias that
        cancels ``w . 1e6 / 10``, and float32 rounds that sum by about
        0.03, so that the released network's predictions on the raw
        columns are not the solver's on its centred ones.
        """
        weights, biases = self.network.release(
            coef, w0, self.n_classes, self.column_scaling
        )
        dtype = self.output_dtype
        return [W.astype(dtype) for W in weights], [b.astype(dtype) for b in biases]

    def _released_network_scores(self, weights, biases):
        """``decision_function`` of a released network on the training rows.

        ``(n, m')`` scores of one pass over every row of the user's columns
        by the function the estimator's ``decision_function`` calls
        (:func:`~sklearn_dpfair.neural._network.network_scores`), so that
        each row's score is the one ``predict`` computes on the same rows.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            return network_scores(
                self.user_X_host, weights, biases, self.network.activation
            )

    def _released_predictions(self, coef, w0):
        # The estimator's predict: the class of largest probability.
        loss = (
            BinaryLogisticLoss() if self.n_classes == 2 else SoftmaxLoss(self.n_classes)
        )
        pred = np.empty(self.X_host.shape[0], dtype=code_dtype(self.n_classes))
        sparse = sp.issparse(self.X_host)
        if self.network is not None:
            scores = self._released_network_scores(*self.released_network(coef, w0))
        else:
            coef_r, intercept = self.released_linear(coef, w0)
            scores = None if sparse else self._released_scores(coef_r, intercept)
        for rows in self._parts():
            block = (
                self._released_scores(coef_r, intercept, rows)
                if sparse
                else scores[rows]
            )
            pred[rows] = np.argmax(loss.predict_proba(block), axis=1)
        return pred

    def predict(self, coef, w0):
        """Hard predictions (class indices, one small code a row).

        With ``released_columns``, those of the model the estimator releases,
        as its ``predict`` makes them on the training rows.
        """
        if self._scores_released:
            return self._released_predictions(coef, w0)
        coef, w0 = np.asarray(coef), np.asarray(w0)
        pred = np.empty(self.X_host.shape[0], dtype=code_dtype(self.n_classes))
        for rows in self._parts():
            pred[rows] = self._block_predictions(coef, w0, rows)
        return pred

    def counts(self, coef, w0, weights=None, scale=1.0):
        """Counts ``N[y, r, j]`` of the hard predictions, added block by block.

        ``weights`` (per row, or None: one count a row) gives the weighted
        counts instead: each row adds its weight over ``scale`` to its cell
        (divided block by block).
        """
        pred = self.predict(coef, w0)
        total = np.zeros((self.n_classes, self.n_groups, self.n_classes))
        for rows in self._parts():
            # Codes widened per block: the cell index of the counts may
            # not fit the small dtype of the labels and groups.
            args = (
                pred[rows].astype(np.intp),
                self.y[rows].astype(np.intp),
                self.codes[rows].astype(np.intp),
            )
            if weights is None:
                total += prediction_counts(*args, self.n_classes, self.n_groups)
            else:
                total += _weighted_prediction_counts(
                    *args, weights[rows] / scale, self.n_classes, self.n_groups
                )
        return total

    def measure(self, coef, w0):
        """``(training error, disparity)`` of the hard predictions, in one pass."""
        pred = self.predict(coef, w0)
        counts = prediction_counts(
            pred,
            self.y.astype(np.intp),
            self.codes.astype(np.intp),
            self.n_classes,
            self.n_groups,
        )
        error = float(np.mean(pred != self.y))
        return error, disparity_from_counts(counts, self.constraint, self.measured)

    def disparity(self, coef, w0):
        """Disparity of the hard training predictions (``training_disparity_``).

        Non-private. With ``sample_weight`` the rates are weighted, as
        fairlearn's metrics with ``sample_weight`` compute them: a row of
        weight ``k`` counts ``k`` times and a row of weight 0 not at all
        (it is absent from the fit too). The weights are divided by a
        common scale first, which leaves every rate unchanged
        (:func:`_count_scale`): their least positive value, so
        that a cell holding any positive weight has a total of at least 1
        (:func:`~sklearn_dpfair.fairness._disparity.disparity_from_counts`
        treats a cell below 1 as empty), unless the weights span more than
        the float range allows (a subnormal weight beside weights near 1).
        """
        weights, scale = self.sample_weight, 1.0
        if weights is not None:
            scale = _count_scale(weights)
        return disparity_from_counts(
            self.counts(coef, w0, weights, scale), self.constraint, self.measured
        )

    @np.errstate(over="ignore", invalid="ignore")
    def best_threshold(self, coef, w0, bound):
        """Shared decision threshold of a binary model meeting ``bound``, least error.

        The threshold ``t`` on the logit of class 1 is the same for every
        group (prediction never reads the group). Candidates: 0 (the model
        as is), all-one-class, and midpoints between ``THRESHOLD_GRID``
        quantiles of the training logits. Returns ``(t, error, disparity)``
        of the feasible candidate of least training error (``t`` = 0 on
        ties), or of least disparity when none is feasible. Without an
        intercept the only candidate is 0: the threshold is released through
        the intercept.

        With ``released_columns`` each candidate is judged by the model that
        releasing it gives: ``t`` moves the intercept parameter as
        :func:`._weight_search.bounded_path` moves it, and the released
        intercept is rounded to the output dtype (float32 moves an
        intercept near 1e5 by up to 2**-8, which a threshold between two
        quantiles may not survive). A row's released score
        ``fl(p + b)``, ``p`` its product with the released coefficients
        (a network's: its last hidden layer's product with the released
        output weights, on the user's columns), is positive exactly when
        ``p > -b``; the chosen candidate's error
        and disparity are then measured on its released predictions
        (:meth:`measure`), so that they are those of ``predict``.
        """
        released = self._scores_released
        s = self.intercept_scaling
        if self.network is not None and released:
            weights, biases = self.released_network(coef, w0)
            # The output layer's product part, as forward computes it
            # before adding the output bias (the released network's scores
            # are fl(p + b)).
            intercept = biases[-1]
            biases[-1] = np.zeros_like(intercept)
            p = self._released_network_scores(weights, biases)[:, 0]
            p = p.astype(np.float64)
            z = p + float(intercept[0])
        elif self.network is not None:
            raw = self._block_logits(coef, w0, slice(None))
            z = raw[:, 1] - raw[:, 0]
        elif released:
            coef_r, intercept = self.released_linear(coef, w0)
            # The product part of the released scores, as decision_function
            # computes it before adding the intercept.
            p = self._released_scores(coef_r, np.zeros_like(intercept))[:, 0]
            p = p.astype(np.float64)
            z = p + float(intercept[0])
        else:
            z = float64_product(self.X_host, coef[:, 1] - coef[:, 0])
            z = z + s * (w0[1] - w0[0])
        z = np.where(np.isfinite(z), z, 0.0)
        q = np.unique(np.quantile(z, np.linspace(0.0, 1.0, THRESHOLD_GRID)))
        cands = np.concatenate(
            [[0.0, q[0] - 1.0, q[-1] + 1.0], (q[:-1] + q[1:]) / 2.0]
        )
        if not s:
            # Without an intercept (a network's output biases are fixed at 0
            # too) no released parameter carries a threshold: the model as is.
            cands = cands[:1]
        if released:
            # The released intercept of each candidate: the parameter moved
            # by t / s (a threshold t on the logit) as bounded_path moves
            # it, laid out and cast as released_linear (released_network:
            # the output biases are the last two) does.
            shifts = cands / s if s else cands
            w = np.repeat(np.asarray(w0, dtype=np.float64)[None, :], cands.size, 0)
            w[:, -2:] += shifts[:, None] * np.array([0.5, -0.5])
            b = s * w[:, -2:]
            b = (b[:, 1] - b[:, 0]).astype(self.output_dtype)
            # fl(p + b) > 0 exactly when p > -b: rounding keeps the sign.
            z, cuts = p, -b.astype(np.float64)
            z = np.where(np.isfinite(z), z, 0.0)
        else:
            shifts, cuts = cands, cands
        # Rows with z > t, per (label, group) cell, for every candidate.
        keep = self.codes >= 0
        counts = np.zeros((cands.size, 2, self.n_groups, 2))
        for label in (0, 1):
            for r in range(self.n_groups):
                cell = np.sort(z[keep & (self.y == label) & (self.codes == r)])
                above = cell.size - np.searchsorted(cell, cuts, side="right")
                counts[:, label, r, 1] = above
                counts[:, label, r, 0] = cell.size - above
        # Training errors: negatives above t plus positives at or below it.
        neg = np.sort(z[self.y == 0])
        pos = np.sort(z[self.y == 1])
        wrong_neg = neg.size - np.searchsorted(neg, cuts, side="right")
        errors = wrong_neg + np.searchsorted(pos, cuts, side="right")
        errors = errors / max(self.y.size, 1)
        disp = disparities(counts, self.constraint, self.measured)
        feasible = disp <= bound
        if np.any(feasible):
            i = int(np.argmin(np.where(feasible, errors, np.inf)))
            if feasible[0] and errors[0] <= errors[i]:
                i = 0
        else:
            i = int(np.argmin(disp))
        if released:
            # predict's own rows: its probabilities can tie (a score within
            # about 1e-7 of 0 in float32 predicts class 0).
            error, disparity = self.measure(coef, w[i])
            return float(shifts[i]), error, disparity
        return float(cands[i]), float(errors[i]), float(disp[i])

    def dual_at(self, lam, coef, w0):
        if self.regularizer is None or lam <= 0:
            return None
        if self.network is not None:
            return FullBatchPenalty(
                self.regularizer, self.cells, self.weight_scale, block=self.rows
            ).dual(
                lambda rows: softmax_probabilities(self._block_logits(coef, w0, rows)),
                self.X_host.shape[0],
                self.sample_weight,
            )
        return exact_dual(
            self.X_host,
            np.asarray(coef),
            np.asarray(w0),
            intercept_scaling=self.intercept_scaling,
            penalty=FullBatchPenalty(
                self.regularizer, self.cells, self.weight_scale, block=self.rows
            ),
            sample_weight=self.sample_weight,
        )


def _count_scale(weights):
    """Common divisor of ``weights`` for weighted counts of hard predictions.

    The least positive weight, so that a cell holding any positive weight
    totals at least 1 (the rule of
    :func:`~sklearn_dpfair.fairness._disparity.disparity_from_counts`),
    unless dividing by it would overflow a count: one weight of 1e-310
    beside weights near 1 (a count then adds ratios of 1e310). The scale
    is then the least one that keeps every count (a sum of at most ``n``
    ratios) below a quarter of the largest float: a cell whose weights are
    all below about ``4 n / 1.8e308`` times the largest weight then counts
    as empty.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._problem import _count_scale
    >>> _count_scale(np.array([0.5, 2.0, 0.0]))
    0.5
    >>> bool(np.isfinite(2.0 / _count_scale(np.array([1e-310, 2.0]))))
    True
    """
    weights = np.asarray(weights, dtype=np.float64)
    largest = float(np.max(weights, initial=0.0))
    if not largest > 0.0:
        return 1.0
    least = float(np.min(weights, where=weights > 0, initial=largest))
    # In this order nothing overflows: 4 n / max is tiny, and the product
    # can only underflow (to a scale below ``least`` then).
    floor = largest * (4.0 * weights.size / np.finfo(np.float64).max)
    return max(least, floor)


def _weighted_prediction_counts(y_pred, y, codes, weights, n_classes, n_groups):
    """Total weight ``N[y, r, j]`` of rows of label y, group r and prediction j.

    The weighted form of
    :func:`~sklearn_dpfair.fairness._disparity.prediction_counts` (rows
    with a missing group, code ``-1``, are skipped).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._problem import (
    ...     _weighted_prediction_counts)
    >>> counts = _weighted_prediction_counts(
    ...     np.array([1, 0, 1]), np.array([1, 1, 0]), np.array([0, 0, -1]),
    ...     np.array([2.0, 0.0, 5.0]), 2, 1)
    >>> counts[1, 0].tolist()
    [0.0, 2.0]
    """
    keep = codes >= 0
    cells = (y[keep] * n_groups + codes[keep]) * n_classes + y_pred[keep]
    counts = np.bincount(
        cells, weights=weights[keep], minlength=n_classes * n_groups * n_classes
    )
    return counts.reshape(n_classes, n_groups, n_classes).astype(np.float64)


def run_sgda(problem, sgda_common, fairness_weight, n_steps, epochs, init=None):
    """One (noisy) SGDA run on ``problem``; returns ``(coef, w0, W, result)``.

    ``w0`` is the intercept parameter (``intercept / s``), the form a warm
    start takes.
    """
    result = noisy_sgda(
        problem.X_solver,
        problem.y_solver,
        SoftmaxLoss(problem.n_classes),
        problem.regularizer,
        fairness_weight=fairness_weight,
        n_steps=n_steps,
        epochs=epochs,
        init=init,
        **sgda_common,
    )
    s = problem.intercept_scaling
    w0 = result.intercept / s if s else result.intercept
    return result.coef, w0, result.dual, result
