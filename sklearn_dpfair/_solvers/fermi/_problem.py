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

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..._loss import SoftmaxLoss
from ...fairness._disparity import (
    disparity_from_counts,
    hard_disparity,
    prediction_counts,
)
from ...utils._array_api import from_host, to_numpy
from ._lbfgs import float64_product, refine_full_batch
from ._sgda import noisy_sgda, softmax_terms

__all__ = ["THRESHOLD_GRID", "FairProblem", "run_sgda"]

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
        # A record's weight multiplies its penalty weight (the ERMI terms are
        # linear in it); the loss terms are weighted in the L-BFGS objective.
        scale = (
            self.weight_scale
            if self.sample_weight is None
            else self.weight_scale * self.sample_weight
        )
        self.constants = (
            None
            if self.regularizer is None
            else self.regularizer.sample_constants(self.blocks, self.codes, scale)
        )

    def refine(self, lam, coef, w0):
        return refine_full_batch(
            self.X_host,
            self.y,
            regularizer=self.regularizer,
            constants=self.constants,
            fairness_weight=lam,
            alpha=self.params.alpha,
            intercept_scaling=self.intercept_scaling,
            coef=np.asarray(coef, dtype=np.float64),
            w0=np.asarray(w0, dtype=np.float64),
            tol=self.params.tol,
            max_iter=self.params.final_max_iter,
            sample_weight=self.sample_weight,
        )

    @np.errstate(over="ignore", invalid="ignore")
    def predict(self, coef, w0):
        raw = float64_product(self.X_host, np.asarray(coef)) + (
            self.intercept_scaling * np.asarray(w0)
        )
        return np.argmax(raw, axis=1)

    def counts(self, coef, w0):
        return prediction_counts(
            self.predict(coef, w0), self.y, self.codes, self.n_classes, self.n_groups
        )

    def disparity(self, coef, w0):
        return hard_disparity(
            self.predict(coef, w0),
            self.y,
            self.codes,
            self.constraint,
            self.n_classes,
            self.n_groups,
        )

    @np.errstate(over="ignore", invalid="ignore")
    def best_threshold(self, coef, w0, bound):
        """Shared decision threshold of a binary model meeting ``bound``, least error.

        The threshold ``t`` on the logit of class 1 is the same for every
        group (prediction never reads the group). Candidates: 0 (the model
        as is), all-one-class, and midpoints between ``THRESHOLD_GRID``
        quantiles of the training logits. Returns ``(t, error, disparity)``
        of the feasible candidate of least training error (``t`` = 0 on
        ties), or of least disparity when none is feasible.
        """
        z = float64_product(self.X_host, coef[:, 1] - coef[:, 0])
        z = z + self.intercept_scaling * (w0[1] - w0[0])
        z = np.where(np.isfinite(z), z, 0.0)
        q = np.unique(np.quantile(z, np.linspace(0.0, 1.0, THRESHOLD_GRID)))
        cands = np.concatenate(
            [[0.0, q[0] - 1.0, q[-1] + 1.0], (q[:-1] + q[1:]) / 2.0]
        )
        # Rows with z > t, per (label, group) cell, for every candidate.
        keep = self.codes >= 0
        counts = np.zeros((cands.size, 2, self.n_groups, 2))
        for label in (0, 1):
            for r in range(self.n_groups):
                cell = np.sort(z[keep & (self.y == label) & (self.codes == r)])
                above = cell.size - np.searchsorted(cell, cands, side="right")
                counts[:, label, r, 1] = above
                counts[:, label, r, 0] = cell.size - above
        # Training errors: negatives above t plus positives at or below it.
        neg = np.sort(z[self.y == 0])
        pos = np.sort(z[self.y == 1])
        wrong_neg = neg.size - np.searchsorted(neg, cands, side="right")
        errors = wrong_neg + np.searchsorted(pos, cands, side="right")
        errors = errors / max(self.y.size, 1)
        disp = np.array([disparity_from_counts(c, self.constraint) for c in counts])
        feasible = disp <= bound
        if np.any(feasible):
            i = int(np.argmin(np.where(feasible, errors, np.inf)))
            if feasible[0] and errors[0] <= errors[i]:
                i = 0
        else:
            i = int(np.argmin(disp))
        return float(cands[i]), float(errors[i]), float(disp[i])

    def dual_at(self, lam, coef, w0):
        if self.regularizer is None or lam <= 0:
            return None
        blk, grp, wt, _ = self.constants
        with np.errstate(over="ignore", invalid="ignore"):
            raw = float64_product(self.X_host, coef) + self.intercept_scaling * w0
        # Rows whose logits overflow get probabilities 0, as in SGDA.
        proba, _, _ = softmax_terms(raw, self.y, with_loss=False)
        return self.regularizer.dual_maximizer(proba, blk, grp, wt)


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
