# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Choosing ``fairness_weight`` under ``disparity_bound``.

:func:`bounded_path` (non-private) solves a path of weights to stationarity
and keeps the most accurate model meeting the bound on the training data;
:func:`private_selection` (DP-FERMI) runs one SGDA stage per candidate
weight of the :func:`selection_schedule` and chooses among them from one
Gaussian release of their (label, group, prediction) counts, drawn by the
selection mechanism of :class:`._privacy.FERMIMechanisms`. Both report
whether the bound was met (``bound_met``) and warn when it was not.
"""

import math
from dataclasses import dataclass

import numpy as np

from ...fairness._disparity import disparity_from_counts, disparity_margin
from ...utils._array_api import to_numpy
from ...utils._validation import warn_at_caller
from ._problem import run_sgda

__all__ = [
    "BOUND_BISECTIONS",
    "BOUND_MAX",
    "BOUND_START",
    "PRIVATE_BOUND_MAX",
    "POLISH_GAIN",
    "PRIVATE_BOUND_WEIGHTS",
    "SELECTION_SHARE",
    "STALL_DOUBLINGS",
    "SelectionSchedule",
    "bounded_path",
    "private_selection",
    "private_weights",
    "selection_schedule",
]

# Weights of the non-private disparity_bound search: 0, then doubling from
# 1/2 to the public maximum (FERMIClassifier's max_fairness_weight, 1024 by
# default), then bisection (4 halvings of log2: the weight to ~4%).
BOUND_START, BOUND_MAX, BOUND_BISECTIONS = 0.5, 1024.0, 4
# The doubling stops early once a feasible model is in hand and neither the
# hard disparity at threshold 0 nor the least error of a feasible model has
# improved for this many doublings: past its minimum the hard disparity
# rises again with the weight (the soft ERMI keeps falling while
# probabilities gather at the boundary), so larger weights only cost solves.
STALL_DOUBLINGS = 3
# Stalls count only from this weight on: below it the hard equalized-odds
# gap is not monotone even at stationary points (on B-spline Adult features
# it rises from 0.5 to 2 and falls again by 16), so an early exit there
# would stop before the weights that meet the bound.
STALL_FROM = 32.0
# The path's weights are solved to PATH_TOLERANCE times the stationarity
# target (enough to place the weight: the hard disparity of the looser
# solution differs by a few rows), and only the chosen model is then
# polished to the target, warm-started: about half the L-BFGS iterations.
PATH_TOLERANCE = 10.0
# The doubling weights (from 1/2 on) are solved looser still, to
# DOUBLING_TOLERANCE times the target: they only bracket the bound (and
# feed the stall test); the weight is placed by the bisection, at
# PATH_TOLERANCE, and the chosen one polished to the target. On Adult
# (StandardScaler on every column: demographic parity at bounds 0.05, 0.02,
# 0.01 and equalized odds at 0.02, 0.01; MinMax equalized odds 0.01; B-spline
# demographic parity 0.01) 40 instead of 10 chose the same weights, with
# test errors within 2e-4 and 6-29% fewer L-BFGS iterations (equalized
# odds 0.01: 105 instead of 131). The weight-0 solve stays at
# PATH_TOLERANCE: solved looser, the whole path starts elsewhere (on the
# B-spline features the bisection then settled on weight 8 instead of 5.7,
# 0.002 less accurate).
DOUBLING_TOLERANCE = 40.0
# The bisection stops once the most accurate feasible model is within this
# training error of the infeasible end of the bracket. On Adult (four feature
# representations, bounds 0.02 and 0.01, demographic parity and equalized
# odds) 2e-3 instead of 1e-3 chose the same or a more accurate training model
# in all 12 fits, with up to a quarter fewer L-BFGS iterations (DP 0.01 on
# standardized columns: 72 instead of 95): the bisection's midpoints, once
# this close, rarely beat the thresholded model already in hand.
BRACKET_GAIN = 2e-3
# A polished model (solved to tol) replaces the path's looser one at its
# weight only if it is feasible and its training error exceeds the looser
# one's by at most this much: the same few rows the bisection gives up
# (BRACKET_GAIN). A strict "no less accurate" would keep the looser,
# non-stationary model (and its ConvergenceWarning) for a difference of a
# row or two: it did on Adult (demographic parity, bound 0.05) and on 4 of
# 16 small synthetic fits, where this margin kept the polished model in all
# but one (a polished model 6e-3 less accurate, rejected).
POLISH_GAIN = BRACKET_GAIN
POLISHES = 2
# Default public maximum of the private search (DPFERMIClassifier's
# max_fairness_weight); its candidates are 0 and the doublings from 2.
PRIVATE_BOUND_MAX = 64.0
# Candidate weights of the private search with the default maximum: one
# SGDA stage each, in this order (continuation: each stage starts where the
# previous one ended).
PRIVATE_BOUND_WEIGHTS = (0.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
# Share of the T noisy steps spent on the candidate stages. All of them:
# the selected candidate is returned as it was measured, so its released
# disparity describes the returned model (a continuation after the
# selection would move it away from what was measured).
SELECTION_SHARE = 1.0


def bounded_path(problem, bound, max_weight=BOUND_MAX):
    """Most accurate model on the weight path whose training disparity is <= bound.

    Non-private. Each weight is solved by the full-batch phase,
    warm-started at the previous solution (continuation): the doubling
    weights to ``DOUBLING_TOLERANCE`` times ``tol``, 0 and the bisection's
    to ``PATH_TOLERANCE`` times, the chosen one then polished to ``tol``
    (stationarity). The path
    starts at 0 and doubles the weight from ``BOUND_START`` until the hard
    training disparity meets ``bound`` or ``max_weight`` (a public
    parameter) is passed, then bisects (geometrically) between the last
    weight above the bound and the first one below it. The doubling stops
    early once some model of the path (after its threshold) is feasible and
    the disparity at threshold 0 has not improved for ``STALL_DOUBLINGS``
    weights. Why a search and not a Lagrangian dual step on the
    weight: the weight is the multiplier of the *soft* ERMI, not of the
    hard disparity being bounded, and at large weights the solution's hard
    disparity rises again while its soft ERMI keeps falling (predictions
    pushed towards the decision boundary, where tiny soft differences flip
    hard ones); a dual ascent on the hard violation has no fixed point to
    converge to there. Along the path the training loss grows with the
    weight (a property of penalized minimizers), so the smallest weight
    meeting the bound is the most accurate, which the bisection locates.
    Returns ``(coef, w0, W, extra)``; ``extra["bound_met"]`` says whether a
    model met the bound. With none, the model of least disparity, polished
    to ``tol`` as the feasible one is (the polished model kept unless its
    disparity is larger), with a warning that names the bound, that
    disparity and what to try.

    Each point of ``extra["path"]`` records the tolerance its model was
    solved to (``tol``) and whether its stationarity meets the fit's
    ``tol`` (``converged``: only a polished point is expected to). The
    convergence diagnostics are the returned weight's (measured at its
    minimizer, before its threshold is added to the intercept: the shifted
    model is not a minimizer at that weight): ``stationarity``,
    ``converged``, ``weight_n_iter`` (the iterations of the solves at that
    weight), ``at_limit`` (the solve of the returned model stopped at the
    iteration limit), ``unpolished`` (the returned model is the path's
    looser solution) and ``polished`` (its weight was polished: the
    polished model was worse for the bound, i.e. infeasible or, when the
    path's model is feasible, less accurate on the training data;
    otherwise the ``POLISHES`` polishes went to other weights, chosen
    before it); ``n_final_iter``
    adds up every solve of the search.
    """
    coef, w0 = problem.start()
    path = []

    target = problem.params.tol
    path_tol = PATH_TOLERANCE * target
    doubling_tol = DOUBLING_TOLERANCE * target
    # Whether the solve that produced each weight's model stopped at the
    # iteration limit (the chosen one's names the remedy of its warning).
    at_limit = {}

    def solve(lam, start, tol=path_tol, second_order=False):
        fit = problem.refine(lam, *start, tol=tol, second_order=second_order)
        error, disparity = problem.measure(fit.coef, fit.w0)
        point = {
            "fairness_weight": float(lam),
            "training_error": error,
            "training_disparity": disparity,
            "threshold": 0.0,
            "stationarity": fit.stationarity,
            "tol": float(tol),
            # Against the fit's target, not the looser one of the path.
            "converged": bool(fit.stationarity <= target),
            "n_iter": fit.n_iter,
        }
        # The weight's own disparity (threshold 0) drives the search.
        point["disparity_at_zero_threshold"] = point["training_disparity"]
        point["error_at_zero_threshold"] = point["training_error"]
        # With a single group there is nothing to compare (every threshold
        # meets the bound): the model stays the loss minimizer, plain
        # logistic regression, rather than one re-tuned for 0-1 error.
        if problem.n_classes == 2 and problem.n_groups > 1:
            shift, error, disparity = problem.best_threshold(fit.coef, fit.w0, bound)
            if disparity <= bound and (
                point["training_disparity"] > bound or error < point["training_error"]
            ):
                point.update(
                    threshold=shift, training_error=error, training_disparity=disparity
                )
        path.append(point)
        return point, (fit.coef, fit.w0), bool(fit.at_limit)

    def keep(lam, sol, hit):
        models[lam], at_limit[lam] = sol, hit

    models = {}
    point, start, hit = solve(0.0, (coef, w0))
    keep(0.0, start, hit)
    lo = hi = None
    lam = 0.0
    if point["disparity_at_zero_threshold"] > bound and max_weight > 0:
        lam = min(BOUND_START, max_weight)
        least, stalled = point["disparity_at_zero_threshold"], 0
        best_error = _least_feasible_error(path, bound)
        while lam <= max_weight:
            lo = path[-1]["fairness_weight"]
            point, start, hit = solve(lam, start, doubling_tol)
            keep(lam, start, hit)
            if point["disparity_at_zero_threshold"] <= bound:
                hi = lam
                break
            error = _least_feasible_error(path, bound)
            if (
                lam < STALL_FROM
                or point["disparity_at_zero_threshold"] < least
                or error < best_error
            ):
                stalled = 0
            else:
                stalled += 1
            least = min(least, point["disparity_at_zero_threshold"])
            best_error = min(best_error, error)
            if (
                lam >= STALL_FROM
                and stalled >= STALL_DOUBLINGS
                and math.isfinite(best_error)
            ):
                break
            # The public maximum itself is the last weight tried.
            lam = max_weight if lam < max_weight < 2.0 * lam else 2.0 * lam
    if hi is not None and lo is not None:
        at = {p["fairness_weight"]: p for p in path}
        for _ in range(BOUND_BISECTIONS):
            # Early exit once the bound is bracketed this tightly: the
            # error of the model at ``lo`` (infeasible at threshold 0) is
            # what a weight inside the bracket could at best approach, and
            # the best feasible model already has it within BRACKET_GAIN.
            reach = at[lo]["error_at_zero_threshold"]
            if _least_feasible_error(path, bound) - reach <= BRACKET_GAIN:
                break
            mid = math.sqrt(lo * hi) if lo > 0 else hi / 2.0
            point, sol, hit = solve(mid, models[lo])
            keep(mid, sol, hit)
            at[mid] = point
            if point["disparity_at_zero_threshold"] <= bound:
                hi = mid
            else:
                lo = mid

    def most_accurate():
        feasible = [p for p in path if p["training_disparity"] <= bound]
        return min(
            feasible,
            key=lambda p: (p["training_error"], p["training_disparity"]),
            default=None,
        )

    def least_gap():
        return min(path, key=lambda p: p["training_disparity"])

    discarded, tried = 0, set()

    def polish(choose, better):
        # Polish the chosen weight to the stationarity target; its point
        # (threshold, error, disparity) is measured again on the polished
        # model, which replaces the path's where ``better(polished, point)``.
        # The point is then chosen again (at most POLISHES times: a
        # polished point may lose a few rows to a neighbour).
        nonlocal discarded
        best = choose()
        for _ in range(POLISHES):
            if best is None or best["fairness_weight"] in tried:
                break
            lam = best["fairness_weight"]
            tried.add(lam)
            # In the metric of the exact Hessian where it applies (binary
            # linear model): the same stationarity target in about half the
            # L-BFGS iterations at a large weight.
            polished, sol, hit = solve(lam, models[lam], target, second_order=True)
            path.pop()
            if better(polished, best):
                polished["n_iter"] += best["n_iter"]
                path[path.index(best)] = polished
                keep(lam, sol, hit)
            else:
                discarded += polished["n_iter"]
            best = choose()
        return best

    # A polished model replaces the path's only if it stays feasible and
    # within POLISH_GAIN of its training error: the search chose that weight
    # for the path model's error (after its threshold), and the polished
    # minimizer's best threshold may meet the bound only at a far worse
    # error (a model pushed to a constant prediction), which would return a
    # model much less accurate than a feasible one the path held. Rejected,
    # the path's looser solution is kept (``unpolished``, with its warning).
    # Every replacement is within POLISH_GAIN of the most accurate feasible
    # point, so the returned model is too.
    best = polish(
        most_accurate,
        lambda new, old: new["training_disparity"] <= bound
        and new["training_error"] <= old["training_error"] + POLISH_GAIN,
    )
    if best is None:
        # No weight meets the bound: the model of least disparity, polished
        # to tol too (kept unless polishing raised its disparity).
        best = polish(
            least_gap,
            lambda new, old: new["training_disparity"] <= old["training_disparity"],
        )
        # A polished model may meet the bound after all.
        best = most_accurate() or best
    feasible = best["training_disparity"] <= bound
    if not feasible:
        warn_at_caller(
            _BOUND_NOT_MET.format(
                bound=bound,
                best=best["training_disparity"],
                lam=best["fairness_weight"],
                top=max(p["fairness_weight"] for p in path),
            ),
            UserWarning,
        )
    coef, w0 = models[best["fairness_weight"]]
    lam = best["fairness_weight"]
    # The chosen shared threshold t on the logit of class 1: predict 1 iff
    # (x coef_1 + b_1) - (x coef_0 + b_0) > t. The output biases are the
    # last two entries of w0 (a network's too). The stationarity reported
    # stays the minimizer's (the solver's convergence), measured before the
    # shift, which moves the model off the minimizer.
    if best["threshold"]:
        w0 = np.array(w0, dtype=float)
        w0[-2:] += np.array([0.5, -0.5]) * best["threshold"]
    extra = {
        "fairness_weight": lam,
        "stationarity": best["stationarity"],
        "converged": best["converged"],
        "n_final_iter": sum(p["n_iter"] for p in path) + discarded,
        "disparity": best["training_disparity"],
        "bound_met": bool(feasible),
        "path": path,
        # The returned weight's own diagnostics (its ConvergenceWarning).
        "weight_n_iter": best["n_iter"],
        "at_limit": at_limit[lam],
        "unpolished": best["tol"] > target,
        # Whether the returned weight's model was polished at all (and the
        # polished one dropped as worse): the warning's remedy differs.
        "polished": lam in tried,
    }
    return coef, w0, problem.dual_at(lam, coef, w0), extra


def _least_feasible_error(path, bound):
    """Least training error of a feasible point of ``path`` (inf if none)."""
    errors = [p["training_error"] for p in path if p["training_disparity"] <= bound]
    return min(errors, default=math.inf)


# Messages are constants so that tests match them.
_BOUND_NOT_MET = (
    "disparity_bound={bound:g} is not met: no fairness_weight up to {top:g} "
    "gives a training disparity <= {bound:g}. The least training disparity "
    "reached is {best:.4g} (fairness_weight={lam:g}); that model is returned "
    "and bound_met_ is False. Try a larger max_fairness_weight, a looser "
    "bound, min_group_size to leave out groups too small to measure, or "
    "richer features."
)
_PRIVATE_BOUND_NOT_MET = (
    "disparity_bound={bound:g} is not met: no candidate fairness_weight up to "
    "{top:g} has a noisy training disparity plus its noise margin <= "
    "{bound:g}. The least noisy training disparity is {best:.3g} "
    "(fairness_weight={lam:g}, noise margin {margin:.3g}); that model is "
    "returned and bound_met_ is False. These are released noisy statistics, "
    "not exact values. Try a looser bound, a larger epsilon, a smaller "
    "selection_noise_multiplier (more of epsilon to the selection), a larger "
    "max_fairness_weight, or min_group_size to leave out groups too small to "
    "measure."
)


@dataclass(frozen=True)
class SelectionSchedule:
    """The steps of a private weight selection, fixed before the data are read.

    ``weights`` are the candidate weights (increasing), ``stage_steps`` the
    noisy SGDA steps of each candidate stage (each at least one),
    ``rest_steps`` the steps at the chosen weight; ``n_steps`` is their sum,
    the ``T`` of the accounted event. The epochs are the curves' (no privacy
    role).
    """

    weights: tuple
    stage_steps: tuple
    stage_epochs: int
    rest_steps: int
    rest_epochs: int

    @property
    def n_candidates(self):
        """Number of candidate models whose counts the selection releases."""
        return len(self.weights)

    @property
    def n_steps(self):
        """Noisy SGDA steps the selection runs in all."""
        return sum(self.stage_steps) + self.rest_steps


def private_weights(max_weight=PRIVATE_BOUND_MAX):
    """Candidate weights of the private search up to the public ``max_weight``.

    0, then the doublings from 2 below ``max_weight``, then ``max_weight``
    itself (a maximum below 2 gives ``(0, max_weight)``).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.fermi._weight_search import private_weights
    >>> private_weights(64.0)
    (0.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
    >>> private_weights(20.0)
    (0.0, 2.0, 4.0, 8.0, 16.0, 20.0)
    """
    max_weight = float(max_weight)
    weights, lam = [0.0], 2.0
    while lam < max_weight:
        weights.append(lam)
        lam *= 2.0
    if max_weight > 0:
        weights.append(max_weight)
    return tuple(weights)


def selection_schedule(n_steps, epochs, max_weight=PRIVATE_BOUND_MAX):
    """The :class:`SelectionSchedule` of ``n_steps`` noisy steps (public inputs only).

    DP-FERMI (thesis Algorithm 10) runs a number ``T`` of noisy SGDA steps
    fixed in advance, and the noise is calibrated to exactly ``T`` of them:
    the weight path only divides those ``T`` steps among its stages, so it
    never runs more. The ``K`` candidates are :func:`private_weights` of
    the public ``max_weight``. A stage needs one step to move away from its
    predecessor, so with fewer steps than ``K`` the path
    keeps ``min(K, T)`` candidates, spread over the whole range of weights
    (its first and last, so a bound the largest weight meets stays within
    reach), instead of giving each of the ``K`` stages a step the budget
    never paid for. The first ``max(round(SELECTION_SHARE T), k)`` steps are
    split evenly among the ``k`` stages; the remaining ones (none with the
    default share) continue at the chosen weight.

    Parameters
    ----------
    n_steps : int
        The public ``T`` of the fit (at least 1).
    epochs : int
        The public number of epochs (for the curves only).
    max_weight : float, default=PRIVATE_BOUND_MAX
        The public largest candidate weight.

    Returns
    -------
    schedule : SelectionSchedule

    Examples
    --------
    >>> from sklearn_dpfair._solvers.fermi._weight_search import selection_schedule
    >>> s = selection_schedule(3, 3)
    >>> s.weights, s.stage_steps, s.rest_steps
    ((0.0, 8.0, 64.0), (1, 1, 1), 0)
    >>> selection_schedule(20, 1).stage_steps
    (3, 3, 3, 2, 3, 3, 3)
    """
    n_steps = int(n_steps)
    if n_steps < 1:
        raise ValueError(f"A weight selection needs at least one step, got {n_steps}.")
    candidates = private_weights(max_weight)
    n_weights = len(candidates)
    k = min(n_weights, n_steps)
    picks = np.round(np.linspace(0, n_weights - 1, k)).astype(int) if k > 1 else [0]
    weights = tuple(candidates[i] for i in picks)
    first = min(max(int(round(SELECTION_SHARE * n_steps)), k), n_steps)
    cuts = np.round(np.linspace(0, first, k + 1)).astype(int)
    rest = n_steps - first
    return SelectionSchedule(
        weights=weights,
        stage_steps=tuple(int(b - a) for a, b in zip(cuts[:-1], cuts[1:])),
        stage_epochs=max(1, round(SELECTION_SHARE * epochs / k)),
        rest_steps=rest,
        rest_epochs=max(1, epochs - round(SELECTION_SHARE * epochs)) if rest else 0,
    )


def private_selection(problem, bound, sgda_common, *, schedule, tables, rng):
    """Private choice of the weight: a staged SGDA path and a noisy selection.

    The ``T`` noisy steps (fixed in advance) are divided as ``schedule``
    (:func:`selection_schedule`) says. One stage runs per candidate weight
    (increasing), each warm-started where the previous one ended; every
    stage's iterate is post-processing of the noisy sums, free. Choosing
    among them reads the data once more: the (label, group, prediction)
    counts of all ``k`` candidates on the training set are released with
    Gaussian noise (a record moves one cell of each table: L2 sensitivity
    ``sqrt(k)``, accounted as ``Gaussian(z_sel)`` in ``dp_event_``, drawn by
    ``tables``). The smallest weight whose noisy disparity plus a margin of
    two noise standard deviations of the smallest measured group's rate
    (:func:`disparity_margin`) is <= bound is chosen: along the path
    accuracy falls as the weight grows, so the smallest feasible weight is
    the most accurate, and this rule does not rest on noisy error
    estimates, whose differences between neighbouring weights are below
    their noise. With none, the least noisy disparity is chosen, and
    ``extra["bound_warning"]`` holds the warning to emit if that model is
    the one released (post-processing of the release: it prints released
    values only; a constant the fit then chooses instead meets every
    bound). The cells measured are ``problem.measured`` (from the released
    histogram or the declared marginals, public). The chosen candidate is
    returned as measured (``rest_steps`` 0 with the default share; any
    remaining steps continue at the chosen weight). The selection is
    adaptive, which the composition of the accountant covers.

    Returns ``(coef, w0, W, curves, extra)``; ``extra["bound_met"]`` says
    whether the chosen candidate passed the noisy test.
    """
    weights = schedule.weights
    k = len(weights)
    loss_curve, fairness_curve = [], []

    def run(lam, steps, n_epochs, init):
        coef, w0, W, res = run_sgda(problem, sgda_common, lam, steps, n_epochs, init)
        loss_curve.extend(res.loss_curve)
        fairness_curve.extend(res.fairness_curve)
        return (coef, w0, W)

    init, candidates = None, []
    for lam, steps in zip(weights, schedule.stage_steps):
        init = run(lam, steps, schedule.stage_epochs, init)
        candidates.append(init)
    # ``tables``: one record moves one cell of each of the k tables, L2
    # sensitivity sqrt(k) (FERMIMechanisms.selection): the k tables are the
    # blocks of one release.
    std = tables.noise_std
    noisy_tables = tables.privatize_blocks(
        [problem.counts(to_numpy(coef), to_numpy(w0)) for coef, w0, _ in candidates],
        rng,
    )
    measured = problem.measured
    path = []
    for lam, counts in zip(weights, noisy_tables):
        total = max(float(np.maximum(counts, 0.0).sum()), 1.0)
        correct = float(np.maximum(np.einsum("yry->", counts), 0.0))
        path.append(
            {
                "fairness_weight": float(lam),
                "training_error": float(min(max(1.0 - correct / total, 0.0), 1.0)),
                "training_disparity": disparity_from_counts(
                    counts, problem.constraint, measured
                ),
                "margin": disparity_margin(
                    counts, problem.constraint, std, measured
                ),
            }
        )
    feasible = [
        i
        for i, p in enumerate(path)
        if p["training_disparity"] + p["margin"] <= bound
    ]
    if feasible:
        best = feasible[0]
    else:
        best = min(range(k), key=lambda i: path[i]["training_disparity"])
    lam = weights[best]
    coef, w0, W = candidates[best]
    if schedule.rest_steps > 0:
        coef, w0, W = run(
            lam, schedule.rest_steps, schedule.rest_epochs, candidates[best]
        )
    extra = {
        "fairness_weight": float(lam),
        "disparity": path[best]["training_disparity"],
        "bound_met": bool(feasible),
        "path": path,
    }
    if not feasible:
        extra["bound_warning"] = _PRIVATE_BOUND_NOT_MET.format(
            bound=bound,
            top=weights[-1],
            best=path[best]["training_disparity"],
            lam=weights[best],
            margin=path[best]["margin"],
        )
    return coef, w0, W, (loss_curve, fairness_curve), extra
