# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate, estimate the group marginals, solve, describe: the FERMI fits.

:func:`fit_fermi` serves both estimators. Without ``privacy`` it is FERMI
(thesis Algorithm 9); with it, DP-FERMI under record-level add/remove
adjacency (spec ``fermi.md`` §4.6):

0. calibrate the noise *before* reading the data: one joint Gaussian for the
   primal and dual blocks of every step (noise multiplier
   ``sigma_eff = (sigma_theta^-2 + sigma_w^-2)^(-1/2)``), composed with the
   Gaussian histogram of the (block, group) cells;
1. release the noisy cell counts (add/remove sensitivity 1) and turn them
   into floored group marginals and block weights (post-processing);
2. run the noisy SGDA of :mod:`._sgda`, in the namespace and on the device
   of ``backend`` (labels, groups and the histogram stay on the host).

The :class:`~sklearn_dpfair.privacy.PrivacyRecord` describes exactly the
event given to the accountant. Its ``noise_multiplier`` is ``sigma_eff``
and its ``clip_norm`` the sensitivity of the jointly released pair once
the dual sum is rescaled to the primal noise scale,
``C sqrt(1 + (sigma_theta / sigma_w)^2)`` (noise std ``sigma_theta C``),
with ``sampling_probability`` ``q`` and ``steps`` ``T``; the mechanism text
names both blocks' clip norms and noise multipliers and the histogram's
noise multiplier (sensitivity 1). The event is then
``fermi_event(noise_multiplier, sampling_probability, steps, z_hist)``.

No exception or warning after input validation depends on the private
data: the budget checks read public inputs only, the floored-marginal
warning is issued by the non-private fit alone, and the solver gives a data
row whose logits overflow the fixed contribution 0 (no numpy warning).
"""

import functools
import math
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..._loss import SoftmaxLoss
from ...fairness._disparity import (
    disparity_from_counts,
    disparity_margin,
    hard_disparity,
    prediction_counts,
)
from ...fairness._ermi import ERMIRegularizer
from ...privacy._accounting import (
    composed_event,
    epsilon_of,
    gaussian_event,
    noisy_sgd_event,
    non_private_event,
)
from ...privacy import calibrate_noise, noise_multiplier_for_gaussian
from ...privacy._mechanism import GaussianMechanism
from ...privacy._record import PrivacyRecord, check_budget
from ...utils._array_api import NUMPY_BACKEND, array_namespace, from_host, to_numpy
from ...utils._validation import normalized_weights, warn_at_caller
from ._lbfgs import refine_full_batch
from .._schedules import sgd_schedule
from ._sgda import noisy_sgda, softmax_terms

__all__ = ["FERMIFit", "FairPrivacy", "fit_fermi"]

_WEIGHTS_CAVEAT = (
    "sample_weight is public; each record's weighted terms are clipped, so "
    "the guarantee is per record, not per unit of weight; the group "
    "histogram counts records unweighted"
)
_MECHANISM = (
    "DP-FERMI: noisy SGDA, {steps} steps at Poisson rate {q:.6g}; each step "
    "releases the per-example-clipped primal sum (clip {clip:.6g}, noise "
    "multiplier {sigma_theta:.6g})"
)
_DUAL = (
    " and dual sum (clip {dual_clip}, noise multiplier {sigma_w:.6g}), "
    "accounted as one Gaussian of noise multiplier "
    "(sigma_theta^-2 + sigma_w^-2)^(-1/2) = {sigma_eff:.6g} and sensitivity "
    "clip * sqrt(1 + (sigma_theta / sigma_w)^2) = {sensitivity:.6g}"
)
# The dual clip norm in the mechanism text when it is not a parameter: its
# value is post-processing of the released histogram, so it is named, not
# printed (the record stays a function of public inputs; the value is
# dual_clip_norm_).
_DUAL_CLIP_FROM_MARGINALS = "set by the box and the released marginals"

_MARGINALS = (
    " + Gaussian histogram of the group marginals (sensitivity 1, noise "
    "multiplier {z:.6g})"
)
_FLOORED = (
    "group(s) {labels} have a training frequency below min_group_frequency="
    "{floor:g}{where}; their marginals are floored at it (1/sqrt(P_s) would "
    "otherwise blow up the fairness gradients)."
)


@dataclass(frozen=True)
class FairPrivacy:
    """Public privacy inputs of a DP-FERMI fit (see ``DPFERMIClassifier``)."""

    epsilon: float
    delta: float
    noise_multiplier: float | None
    dual_noise_ratio: float
    marginal_noise_multiplier: float | None  # None: automatic (see below)
    public_marginals: np.ndarray | None
    accountant: str
    caveats: tuple = ()
    selection_noise_multiplier: float | None = None  # None: automatic


@dataclass
class FERMIFit:
    """Result of :func:`fit_fermi`, coefficients in scikit-learn's layout.

    ``coef``, ``intercept`` and ``dual`` are in the backend's output
    namespace (numpy unless array API dispatch kept the input's).
    """

    coef: object
    intercept: object
    dual: object
    group_marginals: np.ndarray | None
    n_steps: int
    loss_curve: list
    fairness_curve: list
    record: PrivacyRecord | None = None
    noise: dict = field(default_factory=dict)
    fairness_weight: float = 0.0
    stationarity: float | None = None
    converged: bool | None = None
    n_final_iter: int = 0
    disparity: float | None = None
    path: list = field(default_factory=list)
    step_sizes: tuple = (None, None)


# The automatic histogram noise: 20 (the value tuned on Adult at epsilon = 1,
# where it spends ~0.25 of the budget), raised at small budgets to the noise
# of a Gaussian that alone spends MARGINAL_BUDGET_SHARE of epsilon, so the
# model steps always keep most of the budget.
DEFAULT_MARGINAL_NOISE = 20.0
MARGINAL_BUDGET_SHARE = 0.25


def _marginal_noise(privacy):
    if privacy.marginal_noise_multiplier is not None:
        return privacy.marginal_noise_multiplier
    if math.isinf(privacy.epsilon):
        return DEFAULT_MARGINAL_NOISE
    share = noise_multiplier_for_gaussian(
        MARGINAL_BUDGET_SHARE * privacy.epsilon, privacy.delta, privacy.accountant
    )
    return max(DEFAULT_MARGINAL_NOISE, share)


@functools.lru_cache(maxsize=1024)
def calibrate_fermi_noise(
    target_epsilon,
    delta,
    sampling_probability,
    steps,
    marginal_noise,
    accountant,
    selection_noise=0.0,
):
    """Smallest joint noise multiplier ``sigma_eff`` meeting the budget.

    The event is ``Composed[Gaussian(marginal_noise),
    SelfComposed(PoissonSampled(q, Gaussian(sigma_eff)), T),
    Gaussian(selection_noise)]`` (the first part omitted when
    ``marginal_noise`` is 0: public or no marginals; the last without
    ``disparity_bound``). Memoized: it depends on public inputs only.
    """

    if marginal_noise > 0 or selection_noise > 0:
        fixed = [gaussian_event(z) for z in (marginal_noise, selection_noise) if z > 0]
        spent = epsilon_of(composed_event(fixed), delta, accountant)
        if spent >= target_epsilon:
            what = (
                f"The private group marginals alone (marginal_noise_multiplier="
                f"{marginal_noise:g})"
                if not selection_noise
                else f"The private group marginals (marginal_noise_multiplier="
                f"{marginal_noise:g}) and the selection of fairness_weight "
                f"(selection_noise_multiplier={selection_noise:g}) alone"
            )
            raise ValueError(
                f"{what} spend epsilon={spent:.3g} >= epsilon={target_epsilon:g}. "
                "Raise marginal_noise_multiplier (selection_noise_multiplier) or "
                "epsilon, or declare public group_marginals."
            )

    def make_event(sigma):
        return fermi_event(
            sigma, sampling_probability, steps, marginal_noise, selection_noise
        )

    return calibrate_noise(make_event, target_epsilon, delta, accountant)


def fermi_event(
    sigma_eff, sampling_probability, steps, marginal_noise, selection_noise=0.0
):
    """dp-accounting event of one DP-FERMI fit.

    ``selection_noise`` is the noise multiplier of the Gaussian release of
    the candidates' prediction counts that chooses ``fairness_weight``
    under ``disparity_bound`` (0: no selection).
    """
    if sigma_eff == 0:
        return non_private_event()
    sgda = noisy_sgd_event(sigma_eff, sampling_probability, steps)
    parts = [gaussian_event(marginal_noise)] if marginal_noise > 0 else []
    parts.append(sgda)
    if selection_noise > 0:
        parts.append(gaussian_event(selection_noise))
    return composed_event(parts) if len(parts) > 1 else sgda


def cell_counts(blocks, codes, n_blocks, n_groups):
    """Rows per (block, group) cell; rows without a block or a group are skipped."""
    keep = (blocks >= 0) & (codes >= 0)
    cells = blocks[keep] * n_groups + codes[keep]
    return np.bincount(cells, minlength=n_blocks * n_groups).reshape(n_blocks, n_groups)


def weighted_cell_counts(blocks, codes, n_blocks, n_groups, weights):
    """Total weight per (block, group) cell (the non-private fit's marginals)."""
    keep = (blocks >= 0) & (codes >= 0)
    cells = blocks[keep] * n_groups + codes[keep]
    return np.bincount(
        cells, weights=weights[keep], minlength=n_blocks * n_groups
    ).reshape(n_blocks, n_groups)


def marginals_from_counts(counts, n_total, floor):
    """Group marginals per block (floored, renormalized) and block frequencies.

    ``counts`` may be noisy (negative values are clipped to 0 first); both
    outputs are then post-processing of the released histogram.
    """
    counts = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    totals = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ps = np.where(totals[:, None] > 0, counts / totals[:, None], 0.0)
    ps = np.maximum(ps, floor)
    ps /= ps.sum(axis=1, keepdims=True)
    return ps, totals / max(float(n_total), 1.0)


def marginals_from_public(public, n_classes, n_groups, constraint):
    """Cell frequencies ``(n_blocks, n_groups)`` from user-declared public values.

    Demographic parity takes ``P(S = r)`` (shape ``(n_groups,)``); the
    label-conditional constraints take the joint ``P(Y = y, S = r)`` (shape
    ``(n_classes, n_groups)``). Rows are normalized to sum to 1 overall.
    """
    public = np.asarray(public, dtype=np.float64)
    dp = constraint.name == "demographic_parity"
    shape = (n_groups,) if dp else (n_classes, n_groups)
    if (
        public.shape != shape
        or not np.all(np.isfinite(public))
        or np.any(public < 0)
        or public.sum() <= 0
    ):
        raise ValueError(
            "group_marginals must be non-negative, finite, not all zero and of "
            f"shape {shape} for constraint={constraint.name!r}: "
            + ("P(S=r)" if dp else "the joint P(Y=y, S=r)")
            + f"; got shape {public.shape}."
        )
    joint = public / public.sum()
    if dp:
        return joint[None, :]
    if constraint.name == "equal_opportunity":
        return joint[[constraint.class_index]]
    return joint


def _warn_floored(counts, floor, group_labels, constraint):
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = counts / counts.sum(axis=1, keepdims=True)
    low = np.nan_to_num(freq, nan=0.0) < floor
    if np.any(low):
        names = list(group_labels.tolist())
        labels = sorted({repr(names[r]) for r in np.nonzero(low)[1]})
        where = "" if constraint.name == "demographic_parity" else " within a label"
        warn_at_caller(
            _FLOORED.format(labels=", ".join(labels[:10]), floor=floor, where=where),
            UserWarning,
        )


def _binary_layout(coef, intercept):
    """2-class softmax to one logit (of class 1): ``w = w_1 - w_0``."""
    xp = array_namespace(coef)
    return (
        xp.reshape(coef[:, 1] - coef[:, 0], (1, -1)),
        xp.reshape(intercept[1:2] - intercept[0:1], (1,)),
    )


_SELECTION = (
    " + Gaussian release of the (label, group, prediction) counts of the "
    "{k} candidate models of the fairness_weight path on the training data "
    "(L2 sensitivity sqrt({k}), noise multiplier {z:.6g}, count noise std "
    "{std:.6g}), from which disparity_bound selects the model"
)
_NOT_CONVERGED = (
    "FERMIClassifier's full-batch phase stopped at stationarity "
    "max|grad| = {stat:.3g} > tol = {tol:g} after {it} L-BFGS iterations. "
    "Increase max_full_batch_iter, or scale the features."
)

# Weights of the non-private disparity_bound search: 0, then doubling from
# 1/2 to 1024, then bisection (4 halvings of log2: the weight to ~4%).
BOUND_START, BOUND_MAX, BOUND_BISECTIONS = 0.5, 1024.0, 4
# Candidate weights of the private search: one SGDA stage each, in this
# order (continuation: each stage starts where the previous one ended).
PRIVATE_BOUND_WEIGHTS = (0.0, 2.0, 4.0, 8.0, 16.0, 32.0)
# Share of the T noisy steps spent on the candidate stages; the rest
# continues at the chosen weight.
SELECTION_SHARE = 0.5
# Quantiles of the training logits tried as the shared decision threshold
# of a binary model under disparity_bound (non-private).
THRESHOLD_GRID = 257


def auto_dual_step(regularizer, weight_scale):
    """``1 / L`` of the dual block: the exact smoothness of ``W -> Psi``.

    ``Psi`` is a concave quadratic in ``W`` whose Hessian is diagonal with
    entries ``-(2/n) sum_{i in b} w_i F_ij >= -2 max_b w_b`` (weights times
    ``weight_scale``): the ascent step ``1 / (2 max w)`` is stable whatever
    the model and the data. It reads the block weights only, functions of
    the (released or declared) marginals: public for DP-FERMI.
    """
    if regularizer is None:
        return 0.5
    return 0.5 / (float(np.max(regularizer.block_weights)) * weight_scale)


def _selection_noise(privacy):
    """Noise multiplier of the private selection (same rule as the histogram)."""
    if privacy.selection_noise_multiplier is not None:
        return privacy.selection_noise_multiplier
    return _marginal_noise(replace(privacy, marginal_noise_multiplier=None))


def _on_backend(a, like):
    return from_host(a, like) if isinstance(a, np.ndarray) else a


@dataclass
class _Problem:
    """The training problem as the full-batch phase and the selection see it."""

    X: object
    X_solver: object
    y: np.ndarray
    codes: np.ndarray
    blocks: np.ndarray
    n_classes: int
    n_groups: int
    constraint: object
    regularizer: object
    weight_scale: float
    alpha: float
    intercept_scaling: float
    tol: float
    final_max_iter: int
    sample_weight: object = None  # public, mean 1, or None

    def __post_init__(self):
        self.X_host = np.asarray(to_numpy(self.X), dtype=np.float64)
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
            alpha=self.alpha,
            intercept_scaling=self.intercept_scaling,
            coef=np.asarray(coef, dtype=np.float64),
            w0=np.asarray(w0, dtype=np.float64),
            tol=self.tol,
            max_iter=self.final_max_iter,
            sample_weight=self.sample_weight,
        )

    @np.errstate(over="ignore", invalid="ignore")
    def predict(self, coef, w0):
        raw = self.X_host @ np.asarray(coef) + self.intercept_scaling * np.asarray(w0)
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
        z = self.X_host @ (coef[:, 1] - coef[:, 0]) + self.intercept_scaling * (
            w0[1] - w0[0]
        )
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
            raw = self.X_host @ coef + self.intercept_scaling * w0
        # Rows whose logits overflow get probabilities 0, as in SGDA.
        proba, _, _ = softmax_terms(raw, self.y, with_loss=False)
        return self.regularizer.dual_maximizer(proba, blk, grp, wt)


def _bounded_path(problem, bound):
    """Most accurate model on the weight path whose training disparity is <= bound.

    Non-private. Each weight is solved to stationarity by the full-batch
    phase, warm-started at the previous solution (continuation). The path
    starts at 0 and doubles the weight from ``BOUND_START`` until the hard
    training disparity meets ``bound`` (or ``BOUND_MAX``), then bisects
    (geometrically) between the last weight above the bound and the first
    one below it. Why a search and not a Lagrangian dual step on the
    weight: the weight is the multiplier of the *soft* ERMI, not of the
    hard disparity being bounded, and at large weights the solution's hard
    disparity rises again while its soft ERMI keeps falling (predictions
    pushed towards the decision boundary, where tiny soft differences flip
    hard ones); a dual ascent on the hard violation has no fixed point to
    converge to there. Along the path the training loss grows with the
    weight (a property of penalized minimizers), so the smallest weight
    meeting the bound is the most accurate, which the bisection locates.
    Returns ``(coef, w0, W, extra)``; with no weight meeting the bound, the
    model of least disparity, with a warning.
    """
    d, m = problem.X_host.shape[1], problem.n_classes
    coef, w0 = np.zeros((d, m)), np.zeros(m)
    path = []

    def solve(lam, start):
        fit = problem.refine(lam, *start)
        pred = problem.predict(fit.coef, fit.w0)
        point = {
            "fairness_weight": float(lam),
            "training_error": float(np.mean(pred != problem.y)),
            "training_disparity": problem.disparity(fit.coef, fit.w0),
            "threshold": 0.0,
            "stationarity": fit.stationarity,
            "converged": fit.converged,
            "n_iter": fit.n_iter,
        }
        # The weight's own disparity (threshold 0) drives the search.
        point["disparity_at_zero_threshold"] = point["training_disparity"]
        if problem.n_classes == 2:
            shift, error, disparity = problem.best_threshold(fit.coef, fit.w0, bound)
            if disparity <= bound and (
                point["training_disparity"] > bound or error < point["training_error"]
            ):
                point.update(
                    threshold=shift, training_error=error, training_disparity=disparity
                )
        path.append(point)
        return point, (fit.coef, fit.w0)

    point, start = solve(0.0, (coef, w0))
    models = {0.0: start}
    lo = hi = None
    lam = 0.0
    if point["disparity_at_zero_threshold"] > bound:
        lam = BOUND_START
        while lam <= BOUND_MAX:
            lo = path[-1]["fairness_weight"]
            point, start = solve(lam, start)
            models[lam] = start
            if point["disparity_at_zero_threshold"] <= bound:
                hi = lam
                break
            lam *= 2.0
    if hi is not None and lo is not None:
        for _ in range(BOUND_BISECTIONS):
            mid = math.sqrt(lo * hi) if lo > 0 else hi / 2.0
            point, sol = solve(mid, models[lo])
            models[mid] = sol
            if point["disparity_at_zero_threshold"] <= bound:
                hi = mid
            else:
                lo = mid
    feasible = [p for p in path if p["training_disparity"] <= bound]
    if feasible:
        best = min(
            feasible, key=lambda p: (p["training_error"], p["training_disparity"])
        )
    else:
        best = min(path, key=lambda p: p["training_disparity"])
        warn_at_caller(
            _BOUND_NOT_MET.format(
                bound=bound,
                best=best["training_disparity"],
                lam=best["fairness_weight"],
            ),
            UserWarning,
        )
    coef, w0 = models[best["fairness_weight"]]
    lam = best["fairness_weight"]
    # The chosen shared threshold t on the logit of class 1: predict 1 iff
    # (x coef_1 + b_1) - (x coef_0 + b_0) > t.
    w0 = w0 + np.array([0.5, -0.5]) * best["threshold"] if best["threshold"] else w0
    extra = {
        "fairness_weight": lam,
        "stationarity": best["stationarity"],
        "converged": best["converged"],
        "n_final_iter": sum(p["n_iter"] for p in path),
        "disparity": best["training_disparity"],
        "path": path,
    }
    return coef, w0, problem.dual_at(lam, coef, w0), extra


_BOUND_NOT_MET = (
    "No fairness_weight up to 1024 gives a training disparity <= "
    "disparity_bound={bound:g}; returning the model of least training "
    "disparity ({best:.4g}, fairness_weight={lam:g})."
)


def _private_selection(problem, bound, sgda_common, *, n_steps, epochs, z_sel, rng):
    """Private choice of the weight: a staged SGDA path, a noisy selection, a finish.

    The ``T`` noisy steps (fixed in advance) are used in two phases. The
    first ``SELECTION_SHARE`` of them is split into one stage per weight of
    ``PRIVATE_BOUND_WEIGHTS`` (increasing), each warm-started where the
    previous one ended; every stage's iterate is post-processing of the
    noisy sums, free. Choosing among them reads the data once more: the
    (label, group, prediction) counts of all ``K`` candidates on the
    training set are released with Gaussian noise (a record moves one cell
    of each table: L2 sensitivity ``sqrt(K)``, accounted as
    ``Gaussian(z_sel)`` in ``dp_event_``). The smallest weight whose noisy
    disparity plus a margin of two noise standard deviations of the
    smallest group's rate (:func:`disparity_margin`) is <= bound is chosen
    (least noisy disparity if none): along
    the path accuracy falls as the weight grows, so the smallest feasible
    weight is the most accurate, and this rule does not rest on noisy error
    estimates, whose differences between neighbouring weights are below
    their noise. The remaining steps continue at the chosen weight from the
    chosen candidate. The selection is adaptive, which the composition of
    the accountant covers.
    """
    weights = PRIVATE_BOUND_WEIGHTS
    k = len(weights)
    first = max(int(round(SELECTION_SHARE * n_steps)), k)
    cuts = np.round(np.linspace(0, first, k + 1)).astype(int)
    X_solver = problem.X_solver
    y_solver = from_host(problem.y, X_solver)
    stage_epochs = max(1, round(SELECTION_SHARE * epochs / k))
    s = problem.intercept_scaling
    loss_curve, fairness_curve = [], []

    def run(lam, steps, n_epochs, init):
        res = noisy_sgda(
            X_solver,
            y_solver,
            SoftmaxLoss(problem.n_classes),
            problem.regularizer,
            fairness_weight=lam,
            n_steps=max(int(steps), 1),
            epochs=n_epochs,
            init=init,
            **sgda_common,
        )
        loss_curve.extend(res.loss_curve)
        fairness_curve.extend(res.fairness_curve)
        w0 = res.intercept / s if s else res.intercept
        return (res.coef, w0, res.dual)

    init, candidates = None, []
    for lam, a, b in zip(weights, cuts[:-1], cuts[1:]):
        init = run(lam, b - a, stage_epochs, init)
        candidates.append(init)
    # One record moves one cell of each of the k tables: L2 sensitivity sqrt(k).
    tables = GaussianMechanism(clip_norm=math.sqrt(k), noise_multiplier=z_sel)
    std = tables.noise_std
    path = []
    for lam, (coef, w0, _) in zip(weights, candidates):
        counts = tables.privatize(problem.counts(to_numpy(coef), to_numpy(w0)), rng)
        total = max(float(np.maximum(counts, 0.0).sum()), 1.0)
        correct = float(np.maximum(np.einsum("yry->", counts), 0.0))
        path.append(
            {
                "fairness_weight": float(lam),
                "training_error": float(min(max(1.0 - correct / total, 0.0), 1.0)),
                "training_disparity": disparity_from_counts(counts, problem.constraint),
                "margin": disparity_margin(counts, problem.constraint, std),
            }
        )
    feasible = [
        i
        for i, p in enumerate(path)
        if p["training_disparity"] + p["margin"] <= bound
    ]
    best = (
        feasible[0]
        if feasible
        else min(range(k), key=lambda i: path[i]["training_disparity"])
    )
    lam = weights[best]
    rest = n_steps - first
    coef, w0, W = candidates[best]
    if rest > 0:
        rest_epochs = max(1, epochs - round(SELECTION_SHARE * epochs))
        coef, w0, W = run(lam, rest, rest_epochs, candidates[best])
    extra = {
        "fairness_weight": float(lam),
        "disparity": path[best]["training_disparity"],
        "path": path,
    }
    return coef, w0, W, (loss_curve, fairness_curve), extra


def fit_fermi(
    X,
    y,
    *,
    n_classes,
    codes,
    group_labels,
    constraint,
    fairness_weight,
    clip_norm,
    dual_clip_norm,
    batch_size,
    epochs,
    learning_rate,
    dual_learning_rate,
    alpha,
    fit_intercept,
    dual_update,
    dual_projection,
    min_group_frequency,
    return_iterate,
    record_curves,
    rng,
    privacy=None,
    backend=NUMPY_BACKEND,
    disparity_bound=None,
    final_phase=None,
    tol=1e-4,
    final_max_iter=1000,
    sample_weight=None,
):
    """Fit an ERMI-regularized softmax model by (noisy) SGDA.

    ``y`` (class indices) and ``codes`` (group codes, ``-1`` missing; only
    allowed without ``privacy``) are host numpy arrays; ``X`` is validated
    input, moved to ``backend`` (an
    :class:`~sklearn_dpfair.utils._array_api.ArrayBackend`) for the solver.
    Returns a :class:`FERMIFit` whose ``coef`` is ``(1, d)`` for two classes
    (logit of class 1) and ``(m, d)`` otherwise.

    Without ``privacy``, ``final_phase="lbfgs"`` ends the fit with the
    full-batch L-BFGS phase of :mod:`._fair_lbfgs` (warm-started at the SGDA
    result) and a ``ConvergenceWarning`` when its stationarity exceeds
    ``tol``. ``disparity_bound`` chooses ``fairness_weight`` itself: see
    :func:`_bounded_path` (non-private) and :func:`_private_selection`.

    ``sample_weight`` (public, non-negative, or None) is rescaled to mean 1
    and weights each record's whole term, loss and penalty, *before* the
    primal and dual clipping: one record's influence stays within the clip
    norms whatever its weight. Uniform weights take the unweighted path
    exactly. Without privacy the group marginals are weighted (a weight of
    2 is a duplicated row); with privacy the histogram counts records
    unweighted (sensitivity 1 per record). Not combined with
    ``disparity_bound``.
    """
    n_samples = X.shape[0]
    sample_weight = normalized_weights(sample_weight, n_samples)
    if sample_weight is not None and disparity_bound is not None:
        raise ValueError(
            "non-uniform sample_weight cannot be combined with disparity_bound: "
            "the weight selection is not weighted."
        )
    n_groups = len(group_labels)
    q, n_steps = sgd_schedule(n_samples, batch_size, epochs)
    blocks = constraint.block_index(y)
    n_blocks = constraint.n_blocks(n_classes)
    bounded = disparity_bound is not None and n_groups > 1
    active = (fairness_weight > 0 or bounded) and n_groups > 1
    noise, record = {}, None

    # 0. Calibrate before any data-dependent step.
    if privacy is not None:
        r = privacy.dual_noise_ratio
        # sigma_theta / sigma_eff; also the factor by which the primal clip
        # norm grows into the sensitivity of the jointly released pair.
        joint = math.sqrt(1.0 + r**-2) if active else 1.0
        # The histogram is noised whenever the fit is private: a finite budget,
        # or a user-given noise multiplier (whose epsilon_ is then reported).
        noisy = not math.isinf(privacy.epsilon) or privacy.noise_multiplier is not None
        private_marginals = active and privacy.public_marginals is None and noisy
        z_marg = _marginal_noise(privacy) if private_marginals else 0.0
        z_sel = _selection_noise(privacy) if bounded and noisy else 0.0
        if privacy.noise_multiplier is not None:
            sigma_theta = float(privacy.noise_multiplier)
            sigma_eff = sigma_theta / joint
        elif math.isinf(privacy.epsilon):
            sigma_theta = sigma_eff = 0.0
        else:
            sigma_eff = calibrate_fermi_noise(
                float(privacy.epsilon),
                float(privacy.delta),
                q,
                n_steps,
                z_marg,
                privacy.accountant,
                z_sel,
            )
            sigma_theta = sigma_eff * joint
        sigma_w = r * sigma_theta if active else 0.0
        if sigma_eff == 0:
            z_marg = z_sel = 0.0
        event = fermi_event(sigma_eff, q, n_steps, z_marg, z_sel)
        noise = {
            "primal": sigma_theta,
            "dual": sigma_w,
            "effective": sigma_eff,
            "marginal": z_marg,
            "selection": z_sel,
        }
    else:
        sigma_theta = sigma_w = 0.0
    floor = min_group_frequency

    # 1. Group marginals (private histogram, public values, or exact counts).
    regularizer, ps, weight_scale = None, None, 1.0
    if n_groups >= 1 and (active or privacy is None):
        if privacy is not None and privacy.public_marginals is not None:
            table = marginals_from_public(
                privacy.public_marginals, n_classes, n_groups, constraint
            )
            ps, block_freq = marginals_from_counts(table, 1.0, floor)
        else:
            counts = cell_counts(blocks, codes, n_blocks, n_groups).astype(np.float64)
            n_observed = int(np.count_nonzero(codes >= 0))
            if privacy is None and sample_weight is not None:
                # Weighted marginals: a weight of 2 counts as a duplicated row.
                counts = weighted_cell_counts(
                    blocks, codes, n_blocks, n_groups, sample_weight
                )
                n_observed = float(np.sum(sample_weight[codes >= 0]))
            if privacy is None:
                _warn_floored(counts, floor, group_labels, constraint)
            elif noise.get("marginal", 0.0) > 0:
                # A record moves one cell by one: sensitivity 1.
                histogram = GaussianMechanism(
                    clip_norm=1.0, noise_multiplier=noise["marginal"]
                )
                counts = histogram.privatize(counts, rng)
            ps, block_freq = marginals_from_counts(counts, n_observed, floor)
            weight_scale = n_samples / (n_observed if n_observed > 0 else 1)
        if active:
            regularizer = ERMIRegularizer(
                ps, constraint.block_weights(block_freq), n_classes
            )

    # Clip norms: the dual one defaults to the bound implied by the box
    # (computed from the released marginals: post-processing), i.e. no clipping.
    primal_clip = math.inf if clip_norm is None else float(clip_norm)
    if dual_clip_norm is not None:
        dual_clip = float(dual_clip_norm)
    elif privacy is not None and regularizer is not None:
        dual_clip = regularizer.dual_gradient_bound()
    else:
        dual_clip = math.inf

    if privacy is not None:
        sensitivity = primal_clip * joint
        mechanism = _MECHANISM.format(
            steps=n_steps, q=q, clip=primal_clip, sigma_theta=sigma_theta
        )
        if active:
            mechanism += _DUAL.format(
                dual_clip=(
                    f"{dual_clip:.6g}"
                    if dual_clip_norm is not None
                    else _DUAL_CLIP_FROM_MARGINALS
                ),
                sigma_w=sigma_w,
                sigma_eff=sigma_eff,
                sensitivity=sensitivity,
            )
        if noise["marginal"] > 0:
            mechanism += _MARGINALS.format(z=noise["marginal"])
        if noise["selection"] > 0:
            mechanism += _SELECTION.format(
                k=len(PRIVATE_BOUND_WEIGHTS),
                z=noise["selection"],
                std=noise["selection"] * math.sqrt(len(PRIVATE_BOUND_WEIGHTS)),
            )
        # Every field is what the accountant was given: the joint Gaussian's
        # multiplier and sensitivity (noise std sigma_theta * clip), q, T.
        record = PrivacyRecord.from_event(
            event,
            delta=privacy.delta,
            accountant=privacy.accountant,
            adjacency="add_remove",
            mechanism=mechanism,
            noise_multiplier=sigma_eff,
            clip_norm=sensitivity,
            sampling_probability=q,
            steps=n_steps,
            caveats=tuple(privacy.caveats)
            + (() if sample_weight is None else (_WEIGHTS_CAVEAT,)),
        )
        if privacy.noise_multiplier is None:
            check_budget(record, privacy.epsilon, calibrated=True)
        else:
            # The message names the multiplier the user passed (sigma_theta).
            check_budget(
                replace(record, noise_multiplier=sigma_theta),
                privacy.epsilon,
                calibrated=False,
            )
        noise["dual_clip_norm"] = dual_clip

    # "auto": 1/L of the dual block, from the public block weights.
    if dual_learning_rate == "auto":
        dual_learning_rate = auto_dual_step(
            regularizer,
            weight_scale * (1.0 if sample_weight is None else np.max(sample_weight)),
        )

    # 2. Solve (on the backend; batches and noise still come from rng).
    X_solver = backend.asarray(X)
    sgda_common = dict(
        blocks=blocks,
        codes=codes,
        weight_scale=weight_scale,
        primal_mechanism=GaussianMechanism(primal_clip, sigma_theta),
        dual_mechanism=GaussianMechanism(dual_clip, sigma_w),
        sampling_probability=q,
        learning_rate=learning_rate,
        dual_learning_rate=dual_learning_rate,
        alpha=alpha,
        intercept_scaling=1.0 if fit_intercept else 0.0,
        dual_update=dual_update,
        project_dual=dual_projection == "box",
        return_iterate=return_iterate,
        rng=rng,
        record_curves=record_curves,
        constraint=constraint,
        sample_weight=sample_weight,
    )
    problem = _Problem(
        X=X,
        X_solver=X_solver,
        y=np.asarray(y),
        codes=codes,
        blocks=blocks,
        n_classes=n_classes,
        n_groups=n_groups,
        constraint=constraint,
        regularizer=regularizer,
        weight_scale=weight_scale,
        alpha=alpha,
        intercept_scaling=1.0 if fit_intercept else 0.0,
        tol=tol,
        final_max_iter=final_max_iter,
        sample_weight=sample_weight,
    )
    extra = {
        "fairness_weight": float(fairness_weight),
        "step_sizes": (float(learning_rate), float(dual_learning_rate)),
    }
    if bounded and privacy is None:
        coef_m, w0_m, W, path_extra = _bounded_path(problem, float(disparity_bound))
        extra.update(path_extra)
        curves = ([], [])
    elif bounded:
        coef_m, w0_m, W, curves, path_extra = _private_selection(
            problem,
            float(disparity_bound),
            sgda_common,
            n_steps=n_steps,
            epochs=epochs,
            z_sel=noise["selection"],
            rng=rng,
        )
        extra.update(path_extra)
    else:
        result = noisy_sgda(
            X_solver,
            from_host(np.asarray(y), X_solver),
            SoftmaxLoss(n_classes),
            regularizer,
            fairness_weight=fairness_weight,
            n_steps=n_steps,
            epochs=epochs,
            **sgda_common,
        )
        s = 1.0 if fit_intercept else 0.0
        coef_m, W = result.coef, result.dual
        w0_m = result.intercept / s if s else result.intercept
        curves = (result.loss_curve, result.fairness_curve)
        if privacy is None and final_phase == "lbfgs":
            refined = problem.refine(fairness_weight, to_numpy(coef_m), to_numpy(w0_m))
            coef_m, w0_m = refined.coef, refined.w0
            W = problem.dual_at(fairness_weight, coef_m, w0_m)
            extra.update(
                stationarity=refined.stationarity,
                converged=refined.converged,
                n_final_iter=refined.n_iter,
            )
        if privacy is None:
            extra["disparity"] = problem.disparity(to_numpy(coef_m), to_numpy(w0_m))
    if privacy is None and extra.get("converged") is False:
        warn_at_caller(
            _NOT_CONVERGED.format(
                stat=extra["stationarity"], tol=tol, it=extra["n_final_iter"]
            ),
            ConvergenceWarning,
        )

    coef_m, w0_m = _on_backend(coef_m, X_solver), _on_backend(w0_m, X_solver)
    intercept = (1.0 if fit_intercept else 0.0) * w0_m
    coef = coef_m.T
    if n_classes == 2:
        coef, intercept = _binary_layout(coef_m, intercept)
    coef, intercept = backend.to_output(coef), backend.to_output(intercept)
    dual = (
        backend.to_output(_on_backend(W, X_solver))
        if regularizer is not None and W is not None and W.shape[0] > 0
        else backend.to_output(
            backend.xp.zeros(
                (n_blocks, n_groups, n_classes),
                dtype=backend.xp.float64,
                device=backend.device,
            )
        )
    )
    if constraint.name != "equalized_odds":
        dual = dual[0]
        ps = None if ps is None else ps[0]
    return FERMIFit(
        coef=coef,
        intercept=intercept,
        dual=dual,
        group_marginals=ps,
        n_steps=n_steps,
        loss_curve=curves[0],
        fairness_curve=curves[1],
        record=record,
        noise=noise,
        **extra,
    )
