# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Set up the privacy, estimate the group marginals, solve, describe: the FERMI fits.

:func:`fit_fermi` serves both estimators. Without ``privacy`` it is FERMI
(thesis Algorithm 9); with it, DP-FERMI under record-level add/remove
adjacency (thesis Algorithm 10):

0. the caller fixes the releases *before* the data are read
   (:func:`._plan.fermi_plan`, passed in as ``plan``: one joint Gaussian
   for the primal and dual blocks of every step, composed
   with the Gaussian histogram of the (block, group) cells and, under
   ``disparity_bound``, the selection's count release, with the steps of
   each stage of the weight path);
1. release the noisy cell counts through the histogram mechanism and turn
   them into floored group marginals and block weights (post-processing,
   :mod:`sklearn_dpfair.fairness._marginals`);
2. run the noisy SGDA of :mod:`._sgda`, in the namespace and on the device
   of ``backend`` (labels, groups and the histogram stay on the host);
3. :meth:`~sklearn_dpfair.privacy.PrivacyBudget.account` turns the composed
   event into the :class:`~sklearn_dpfair.privacy.PrivacyRecord` and checks
   the budget; every step's primal and dual noise is one joint release and
   the k count tables one release, so that the estimator's release check
   (:mod:`sklearn_dpfair.privacy._releases`) matches them against the event
   before the fit returns.

The record describes exactly the event given to the accountant. Its
``noise_multiplier`` is ``sigma_eff`` and its ``clip_norm`` the sensitivity
of the jointly released pair once the dual sum is rescaled to the primal
noise scale, ``C sqrt(1 + (sigma_theta / sigma_w)^2)`` (noise std
``sigma_theta C``), with ``sampling_probability`` ``q`` and ``steps`` ``T``;
the mechanism text names both blocks' clip norms and noise multipliers and
the histogram's noise multiplier (sensitivity 1). The event is
``fermi_event(noise_multiplier, sampling_probability, steps, z_hist)``.

No exception or warning after input validation depends on the private
data: the budget checks read public inputs only, the floored-marginal
warning is issued by the non-private fit alone, the ``min_group_size``
warning reads the released (or declared) counts only, and the solver gives a data
row whose logits overflow the fixed contribution 0 (no numpy warning).
"""

import math
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ...fairness._disparity import measured_cells
from ...fairness._ermi import ERMIRegularizer, code_dtype
from ...fairness._marginals import (
    cell_counts,
    marginals_from_counts,
    marginals_from_public,
    warn_floored_groups,
)
from ...privacy import PrivacyRecord, fit_weights
from ...privacy._record import WEIGHTS_CAVEAT
from ...utils._array_api import NUMPY_BACKEND, array_namespace, from_host, to_numpy
from ...utils._validation import warn_at_caller
from .._constant_choice import choice_mechanism, choose_constant, constant_comparison
from .._feature_scaling import fit_feature_scaling
from .._intercept_only import (
    constant_linear_model,
    intercept_only_model,
    label_counts,
)
from .._non_private import minimize_fair_objective
from ._model import initial_network, precondition_network
from ._privacy import (
    DEFAULT_MARGINAL_NOISE,
    MARGINAL_BUDGET_SHARE,
    FairPrivacy,
    FERMIMechanisms,
    FERMINoise,
    calibrate_fermi_noise,
    fermi_event,
    histogram_mechanism,
    histogram_noise,
)
from ._problem import FairProblem, run_sgda
from ._weight_search import (
    PRIVATE_BOUND_MAX,
    PRIVATE_BOUND_WEIGHTS,
    bounded_path,
    private_selection,
)

__all__ = [
    "DEFAULT_MARGINAL_NOISE",
    "MARGINAL_BUDGET_SHARE",
    "FERMIFit",
    "FERMIParams",
    "FERMISetup",
    "FairPrivacy",
    "PRIVATE_BOUND_WEIGHTS",
    "calibrate_fermi_noise",
    "fermi_event",
    "fermi_setup",
    "fit_fermi",
    "histogram_noise",
    "released_fit",
]

_MECHANISM = (
    "DP-FERMI: noisy SGDA, {steps} steps at Poisson rate {q:.6g}; each step "
    "releases the per-example-clipped primal sum (clip {clip:.6g}, noise "
    "multiplier {sigma_theta:.6g})"
)
_DUAL = (
    " and the per-(block, group) sums of the weighted predicted "
    "probabilities, the dual gradient's statistic (clip {dual_clip}, noise "
    "multiplier {sigma_w:.6g}), "
    "accounted as one Gaussian of noise multiplier "
    "(sigma_theta^-2 + sigma_w^-2)^(-1/2) = {sigma_eff:.6g} and sensitivity "
    "clip * sqrt(1 + (sigma_theta / sigma_w)^2) = {sensitivity:.6g}"
)
# The dual clip norm in the mechanism text when it is not a parameter: its
# value is post-processing of the released histogram, so it is named, not
# printed (the record stays a function of public inputs; the value is
# dual_clip_norm_).
_DUAL_CLIP_FROM_MARGINALS = "the largest block weight, from the released marginals"

_CHOICE = (
    "; then the private choice between the model and the constants: the "
    "model's training errors minus each constant's, one Gaussian release "
    "(L2 sensitivity sqrt(max(K - 1, 1)) under add/remove adjacency, noise "
    "multiplier {z:.6g}), the better constant released instead of the model "
    "when the noisy comparison finds one better (post-processing)"
)
_SELECTION = (
    " + Gaussian release of the (label, group, prediction) counts of the "
    "{k} candidate models of the fairness_weight path on the training data "
    "(L2 sensitivity sqrt({k}), noise multiplier {z:.6g}, count noise std "
    "{std:.6g}), from which disparity_bound selects the model"
)
_MARGINALS = (
    " + Gaussian histogram of the group marginals (sensitivity 1, noise "
    "multiplier {z:.6g})"
)


@dataclass(frozen=True)
class FERMIParams:
    """Public hyperparameters of a FERMI or DP-FERMI fit.

    The estimators map their parameters here (``epochs`` is ``max_iter``;
    ``final_phase``, ``tol`` and ``final_max_iter`` are the non-private
    full-batch phase's). ``constraint`` is a
    :func:`~sklearn_dpfair.fairness.make_constraint` object.
    ``small_budget="auto"`` lets a private fit release the intercept-only
    model when the public rule of :mod:`.._intercept_only` says the budget
    cannot buy more; ``"choose"`` never releases it outright but makes the
    private choice of :mod:`.._constant_choice` wherever its range is
    (``"fit"``: neither).
    """

    constraint: object
    fairness_weight: float = 4.0
    disparity_bound: float | None = None
    max_fairness_weight: float = PRIVATE_BOUND_MAX
    min_group_size: int = 0
    clip_norm: float | None = None
    dual_clip_norm: float | None = None
    batch_size: int | str = 512
    epochs: int = 20
    learning_rate: float = 1.0
    dual_learning_rate: float | str = 0.1
    alpha: float = 0.0
    fit_intercept: bool = True
    dual_update: str = "sgda"
    dual_projection: str | None = "box"
    min_group_frequency: float = 1e-3
    return_iterate: str = "average"
    record_curves: bool = False
    final_phase: str | None = None
    tol: float = 1e-4
    final_max_iter: int = 1000
    small_budget: str = "fit"
    hidden_layer_sizes: tuple = ()
    activation: str = "relu"

    @property
    def intercept_scaling(self):
        """Constant ``s`` of the augmented row ``[x, s]`` (0: no intercept)."""
        return 1.0 if self.fit_intercept else 0.0


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
    noise: FERMINoise = field(default_factory=FERMINoise)
    dual_clip_norm: float = math.inf
    fairness_weight: float = 0.0
    stationarity: float | None = None
    converged: bool | None = None
    n_final_iter: int = 0
    disparity: float | None = None
    bound_met: bool | None = None
    small_groups: tuple = ()
    path: list = field(default_factory=list)
    step_sizes: tuple = (None, None)
    intercept_only: bool = False
    n_samples: int | None = None
    # A network's weights and biases (lists, scikit-learn's MLPClassifier
    # layout); ``coef`` and ``intercept`` are then None.
    coefs: list | None = None
    intercepts: list | None = None
    # The released comparison of the model with the constants (None: not
    # made) and whether it chose a constant (:mod:`.._constant_choice`).
    constant_comparison: np.ndarray | None = None
    chose_constant: bool = False
    # Whether the exact weight path of disparity_bound solved the model: no
    # SGDA epoch ran, whatever ``n_steps`` counts (DP-FERMI's non-private
    # limit counts the path's L-BFGS iterations there).
    exact_path: bool = False


def _binary_layout(coef, intercept):
    """2-class softmax to one logit (of class 1): ``w = w_1 - w_0``."""
    xp = array_namespace(coef)
    return (
        xp.reshape(coef[:, 1] - coef[:, 0], (1, -1)),
        xp.reshape(intercept[1:2] - intercept[0:1], (1,)),
    )


_NOT_CONVERGED = (
    "{name}'s full-batch phase stopped at stationarity "
    "max|grad| = {stat:.3g} > tol = {tol:g} after {it} L-BFGS iterations"
    "{where}. {remedy}"
)
# Stationarity saturates at the largest float where the objective overflows.
_LARGEST_STATIONARITY = float(np.finfo(np.float64).max)
# Under disparity_bound the iterations are the returned weight's own.
_AT_WEIGHT = " at the chosen fairness_weight_ = {lam:g}"
# FERMIClassifier's remedy names the cause: the iteration limit, the
# round-off floor of L-BFGS (it stops once the objective no longer decreases
# in floating point, far below max_full_batch_iter: more iterations cannot
# help), an objective that overflows, a weight-path model kept unpolished
# (its polished model worse for the bound: infeasible, less accurate than a
# feasible path model, or of a larger disparity than an infeasible one; or
# never polished: the polishes went to other weights), or a non-smooth
# activation (L-BFGS, a method for smooth objectives, stalls on the kinks of
# ReLU).
_NOT_CONVERGED_REMEDY = {
    "limit": (
        "Its last L-BFGS run stopped at max_full_batch_iter={max_iter}, the "
        "limit of each run (the count above adds up the runs): increase "
        "max_full_batch_iter, or scale the features."
    ),
    "floor": (
        "L-BFGS stopped before max_full_batch_iter={max_iter} because the "
        "objective no longer decreases in floating point: tol is below the "
        "precision attainable on this problem (stationarity_ is what was "
        "reached). Raise tol, or scale the features."
    ),
    "overflow": (
        "The objective is not finite at the model (a row near the largest "
        "float): scale the features."
    ),
    "unpolished": (
        "The returned model is the weight path's solution at that weight, "
        "solved to {path_tol:g}: polishing it to tol made it worse for "
        "disparity_bound (over the bound, more than 0.002 less accurate on "
        "the training data, or of a larger training disparity). Fit "
        "fairness_weight={lam:g} without disparity_bound for a model solved "
        "to tol."
    ),
    "not_polished": (
        "The returned model is the weight path's solution at that weight, "
        "solved to {path_tol:g}: it was not polished to tol, the search's "
        "polishes having gone to other weights of the path. Fit "
        "fairness_weight={lam:g} without disparity_bound for a model solved "
        "to tol."
    ),
    "non_smooth": (
        "With activation='relu' the objective is not differentiable where a "
        "unit's input crosses 0, and L-BFGS, a method for smooth objectives, "
        "stalls on these kinks: it stopped before max_full_batch_iter="
        "{max_iter} (stationarity_ is what was reached). Use "
        "activation='tanh' or 'logistic' (smooth), or raise tol or "
        "max_full_batch_iter."
    ),
    "DPFERMIClassifier": (
        "Scale the features, or fit FERMIClassifier (the same non-private "
        "objective), whose max_full_batch_iter sets the limit."
    ),
}


def _not_converged(
    name, extra, params, *, at_limit, unpolished, polished, weight_n_iter
):
    """The ``ConvergenceWarning`` text of a non-private fit's full-batch phase.

    ``extra`` holds the returned model's ``stationarity`` and the phase's
    iterations (``n_final_iter``, or ``weight_n_iter``: the returned
    weight's own under ``disparity_bound``, where ``n_final_iter`` adds up
    the whole path). FERMIClassifier's remedy recommends
    ``max_full_batch_iter`` only when the solve of the returned model
    stopped at it (``at_limit``); a model kept at the path's tolerance
    (``unpolished``) says whether its polished model was worse for the
    bound (``polished``) or it was never polished; a ReLU network that
    stopped early is said to stall on the kinks, not on round-off.
    """
    stat = extra["stationarity"]
    bounded = weight_n_iter is not None
    if unpolished:
        # Either estimator: no limit was hit, the path's model was kept.
        cause = "unpolished" if polished else "not_polished"
    elif name != "FERMIClassifier":
        cause = name
    elif at_limit:
        cause = "limit"
    elif not stat < _LARGEST_STATIONARITY:
        cause = "overflow"
    elif params.hidden_layer_sizes and params.activation == "relu":
        cause = "non_smooth"
    else:
        cause = "floor"
    lam = extra.get("fairness_weight", params.fairness_weight)
    return _NOT_CONVERGED.format(
        name=name,
        stat=stat,
        tol=params.tol,
        it=weight_n_iter if bounded else extra["n_final_iter"],
        where=_AT_WEIGHT.format(lam=lam) if bounded else "",
        remedy=_NOT_CONVERGED_REMEDY[cause].format(
            max_iter=params.final_max_iter,
            path_tol=next(
                (
                    q["tol"]
                    for q in extra.get("path", ())
                    if q["fairness_weight"] == lam
                ),
                params.tol,
            ),
            lam=lam,
        ),
    )


_SMALL_GROUPS = (
    "group(s) {groups} have fewer than min_group_size={size} rows in a cell "
    "the constraint compares ({basis}): too few to measure, they are left out "
    "of {what} (their rows still enter the loss). Lower min_group_size to "
    "include them."
)
_ALONE_GROUPS = (
    " Group(s) {groups} are left out of it too, in the blocks where no other "
    "group is kept: a block with one group compares nothing."
)
_SMALL_WHAT = {
    (True, False): "the fairness penalty",
    (False, True): "the bounded training disparity",
    (True, True): "the fairness penalty and the bounded training disparity",
}
_SMALL_BASIS = {
    "exact": "training counts",
    "released": "by the released noisy group counts, not exact ones",
    "public": "by the declared group_marginals times n_samples",
}


# Most group labels a warning names: a sensitive feature of thousands of
# values (zip codes) would otherwise give a message of tens of kilobytes.
# The min_group_frequency floor's warning names as many.
_MAX_NAMED_GROUPS = 10


def _named_groups(groups):
    """``groups`` joined by commas, the first ``_MAX_NAMED_GROUPS`` only.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.fermi._fit import _named_groups
    >>> _named_groups(["a", "b"])
    'a, b'
    >>> _named_groups(range(12))
    '0, 1, 2, 3, 4, 5, 6, 7, 8, 9 (and 2 more)'
    """
    groups = [str(g) for g in groups]
    text = ", ".join(groups[:_MAX_NAMED_GROUPS])
    rest = len(groups) - _MAX_NAMED_GROUPS
    return f"{text} (and {rest} more)" if rest > 0 else text


def _small_groups(measured, group_labels):
    """Labels of the groups with a cell that ``measured`` leaves out."""
    if measured is None:
        return []
    return [g for g, kept in zip(group_labels, measured.all(axis=0)) if not kept]


def _warn_small_groups(setup, group_labels, min_group_size, basis, cells):
    """One warning naming the groups left out for their size (if any).

    Which groups is post-processing of public or released counts
    (:func:`penalty_cells`, the bound's ``measured`` cells, and ``cells``,
    the rows per cell they came from); the message prints their labels and
    the public size only. A group left out only because it is the one kept
    group of a block is named apart: its cells are not small. A cell of
    the exact counts without a row (of positive weight) that is not small
    (``min_group_size=0``) is absent from the data, not left out: it names
    no group (:func:`_penalty`).
    """
    kept = None if setup.regularizer is None else setup.regularizer.kept
    measured = None if cells is None else measured_cells(cells, min_group_size)
    if basis == "exact" and measured is not None:
        absent = measured & (np.asarray(cells) <= 0)
        kept = None if kept is None else kept | absent
    penalty = _small_groups(kept, group_labels)
    bound = _small_groups(setup.measured, group_labels)
    if not (penalty or bound):
        return
    # Sets: thousands of groups (zip codes) would make list lookups quadratic.
    out = set(penalty) | set(bound)
    left_out = [g for g in group_labels if g in out]
    small = set(_small_groups(measured, group_labels))
    text = ""
    if any(g in small for g in left_out):
        text = _SMALL_GROUPS.format(
            groups=_named_groups(g for g in left_out if g in small),
            size=min_group_size,
            basis=_SMALL_BASIS[basis],
            what=_SMALL_WHAT[bool(penalty), bool(bound)],
        )
    # A block keeps one group only when another is small there: the first
    # sentence is always written.
    alone = [g for g in left_out if g not in small]
    if alone:
        text += _ALONE_GROUPS.format(groups=_named_groups(alone))
    warn_at_caller(text.strip(), UserWarning)


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


def _on_backend(a, like):
    return from_host(a, like) if isinstance(a, np.ndarray) else a


def _penalty(
    privacy,
    params,
    n_classes,
    group_labels,
    *,
    n_samples,
    cell_table,
    histogram,
    active,
    rng,
):
    """The ERMI regularizer of the fit, its group marginals and weight scale.

    The marginals come from the declared public values, from the exact
    (weighted) cell counts of the non-private fit, or from the cell counts
    released by ``histogram`` (sensitivity 1; unweighted: one record, one
    count). ``cell_table()`` returns the exact ``(counts, n_observed,
    rows)`` (computed in memory, or added up from the partitions of a Dask
    collection): ``rows`` is None when ``counts`` count rows, and holds the
    rows of positive weight per cell when ``counts`` are the non-private
    fit's weighted ones. It is called only when the data's counts are
    needed. Returns ``(regularizer or None, marginals or None,
    weight_scale, cells or None)``; ``weight_scale`` is ``n / n_observed``
    and ``cells`` the ``(n_blocks, n_groups)`` rows per cell that
    ``min_group_size`` compares (public under privacy): the released noisy
    counts, or the declared frequencies times ``n``, under privacy; the
    exact rows of positive weight without it and at the non-private limit
    ``epsilon=inf``, which releases nothing (:func:`_counts_basis`).
    Without privacy the size is a number of rows, not a total weight, even
    though the marginals are weighted: ``min_group_size`` guards against
    rates measured on a handful of rows, which weights (a weight of 10 on 3
    rows, or every weight 2) make no less noisy; so uniform weights keep
    the unweighted fit, and a row of weight 0 is absent as it is from the
    loss.
    """
    n_groups = len(group_labels)
    constraint, floor = params.constraint, params.min_group_frequency
    if n_groups < 1 or not (active or privacy is None):
        return None, None, 1.0, None
    weight_scale, rows = 1.0, None
    if privacy is not None and privacy.public_marginals is not None:
        table = marginals_from_public(
            privacy.public_marginals, n_classes, n_groups, constraint
        )
        ps, block_freq = marginals_from_counts(table, 1.0, floor)
        counts = table * n_samples
    else:
        counts, n_observed, rows = cell_table()
        if privacy is not None:
            counts = histogram.privatize(counts, rng)
        ps, block_freq = marginals_from_counts(counts, n_observed, floor)
        weight_scale = n_samples / (n_observed if n_observed > 0 else 1)
    # What min_group_size compares: rows (the released or declared counts
    # under privacy, which count records), never a total weight.
    sizes = counts if rows is None else rows
    # On exact counts (no privacy, or the non-private limit epsilon=inf,
    # which releases nothing), a cell with no row of positive weight is not
    # in the data (a row of weight 0 is absent, as from the loss): it leaves
    # the penalty whatever min_group_size, as it does once those rows are
    # removed, instead of being floored at min_group_frequency and taking
    # that mass from the other groups' marginals; so DP-FERMI at epsilon=inf
    # is FERMI. When the counts are released (noisy) or declared,
    # min_group_size alone decides: whether a cell is empty in the data is
    # private, and reading it would be a release nobody accounted for.
    present = sizes > 0 if _counts_basis(privacy) == "exact" else None
    kept = penalty_cells(sizes, params.min_group_size, present) if active else None
    if privacy is None:
        # The floor warning reads the groups the penalty keeps (a left-out
        # group has its own warning): one warning per cause.
        cols = slice(None) if kept is None else kept.all(axis=0)
        warn_floored_groups(
            counts[:, cols], floor, np.asarray(group_labels)[cols], constraint
        )
    if kept is not None:
        ps = _kept_marginals(counts, kept, n_samples, floor)
    regularizer = (
        ERMIRegularizer(ps, constraint.block_weights(block_freq), n_classes, kept)
        if active
        else None
    )
    return regularizer, ps, weight_scale, sizes


def _counts_basis(privacy):
    """What the fit's cell counts are: "exact", "public" or "released".

    Declared ``group_marginals`` are "public"; otherwise the counts are
    "released" (a Gaussian histogram) only when the fit is private: the
    non-private limit (``epsilon=inf`` without a noise multiplier) adds no
    noise to them (its marginal noise multiplier is 0), so they are the
    exact training counts, as without privacy.
    """
    if privacy is None:
        return "exact"
    if privacy.public_marginals is not None:
        return "public"
    return "released" if privacy.budget.is_private else "exact"


def penalty_cells(counts, min_group_size, present=None):
    """The (block, group) cells of the ERMI penalty, or None for all of them.

    A cell with fewer than ``min_group_size`` rows (``counts``: exact, the
    released noisy ones, or the declared frequencies times ``n``; public
    under privacy) is left out, and so is a cell that ``present`` (bool,
    ``(n_blocks, n_groups)``, or None) marks as holding no row of the
    data, and every cell of a block with fewer than two kept cells. Why:
    the min-max form of ERMI (thesis Eq. (5.1),
    ``max_W -Tr(W P_yhat W^T) + 2 Tr(W P_{yhat,s} P_s^{-1/2}) - 1``) weighs
    group ``r`` by ``1 / sqrt(P_s(r))``, and the dual box and the dual clip
    norm grow as ``1 / sqrt(min_r P_s(r))``: a group of a handful of rows
    (or a noisy marginal floored near 0) turns the dual noise into a
    penalty ``-sum_r W[r, j]^2`` on a random class for every row, and
    pushes the model towards a constant, often the minority class. Merging
    the small groups into one would keep their rows in the penalty, but
    the merged cell's count is a sum of noisy counts that may itself be
    below the size; leaving them out keeps the objective an ERMI (of the
    prediction and the group conditional on a kept group,
    :class:`~sklearn_dpfair.fairness._ermi.ERMIRegularizer`), with
    marginals measured on at least ``min_group_size`` rows. A block with
    one kept group has ERMI 0 for every model: its dual would carry noise
    only.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._fit import penalty_cells
    >>> penalty_cells(np.array([[500.0, 4.0, 31.0], [40.0, 2.0, 9.0]]), 30).tolist()
    [[True, False, True], [False, False, False]]
    >>> penalty_cells(np.array([[500.0, 40.0]]), 30) is None
    True
    >>> counts = np.array([[500.0, 40.0, 0.0]])
    >>> penalty_cells(counts, 0, present=counts > 0).tolist()
    [[True, True, False]]
    """
    kept = measured_cells(counts, min_group_size)
    if present is not None:
        kept &= np.asarray(present, dtype=bool)
    kept &= kept.sum(axis=1, keepdims=True) >= 2
    return None if kept.all() else kept


def _kept_marginals(counts, kept, n_samples, floor):
    """Group marginals among the kept cells of each block (0 elsewhere).

    The floored marginals of :func:`marginals_from_counts` on the kept
    counts alone, renormalized over the kept cells: the law of the group
    given a kept group, as :class:`ERMIRegularizer` reads it.
    """
    ps, _ = marginals_from_counts(np.where(kept, counts, 0.0), n_samples, floor)
    ps = np.where(kept, ps, 0.0)
    totals = ps.sum(axis=1, keepdims=True)
    return np.divide(ps, totals, out=np.zeros_like(ps), where=totals > 0)


def _in_memory_cell_table(blocks, codes, n_blocks, n_groups, sample_weight, private):
    """``cell_table`` of :func:`_penalty` for in-memory labels and groups."""

    def cell_table():
        observed = codes >= 0
        if not private and sample_weight is not None:
            # Weighted marginals: a weight of 2 counts as a duplicated row;
            # min_group_size compares the rows of positive weight.
            counts = cell_counts(blocks, codes, n_blocks, n_groups, sample_weight)
            rows = cell_counts(blocks, codes, n_blocks, n_groups, sample_weight > 0)
            return counts, float(np.sum(sample_weight[observed])), rows
        counts = cell_counts(blocks, codes, n_blocks, n_groups)
        return counts, int(np.count_nonzero(observed)), None

    return cell_table


@dataclass
class FERMISetup:
    """What a FERMI fit fixes before its solver runs (:func:`fermi_setup`).

    The schedule ``q``, ``T``; whether there is a fairness term and a
    ``disparity_bound`` selection; the noise; the regularizer, marginals and
    weight scale (from the released histogram); the dual clip norm; the
    mechanisms; the record (None without privacy); the dual step size; the
    :class:`._plan.FERMIPlan` every release of the fit follows.
    """

    sampling_probability: float
    n_steps: int
    active: bool
    bounded: bool
    noise: FERMINoise
    regularizer: object
    group_marginals: np.ndarray | None
    weight_scale: float
    dual_clip_norm: float
    mechanisms: FERMIMechanisms
    record: PrivacyRecord | None
    dual_learning_rate: float
    plan: object = None
    measured: np.ndarray | None = None

    @property
    def fallback(self):
        """The intercept-only release of the plan, or None (:mod:`._plan`)."""
        return None if self.plan is None else self.plan.fallback


def fermi_setup(
    plan,
    privacy,
    params,
    *,
    group_labels,
    cell_table,
    weighted,
    max_weight,
    rng,
):
    """Private marginals, mechanisms and record of a FERMI fit that runs ``plan``.

    Steps 1 and 3 of :func:`fit_fermi` (the histogram release, the account),
    shared by the in-memory and the Dask fit. ``plan`` (a
    :class:`._plan.FERMIPlan` from :func:`._plan.fermi_plan`, made from
    public inputs before the data are read) fixes the schedule, the noise
    and the event; nothing here re-derives them. ``cell_table`` (see
    :func:`_penalty`) is the only access to the data. ``weighted`` says whether public weights were passed (whatever they
    hold); ``max_weight`` bounds them for the auto dual step (1 under
    privacy, which never reads the data's largest weight). Draws from ``rng``
    the histogram's noise only. When the plan releases the intercept-only
    model (``setup.fallback``), nothing is read and nothing drawn here.

    Returns
    -------
    setup : FERMISetup
    """
    p = params
    n_samples, n_classes = plan.shape[0], plan.n_classes
    q, n_steps, noise = plan.sampling_probability, plan.n_steps, plan.noise
    active, bounded = plan.key.active, plan.key.bounded
    if plan.fallback is not None:
        return FERMISetup(
            sampling_probability=q,
            n_steps=0,
            active=False,
            bounded=bounded,
            noise=noise,
            regularizer=None,
            group_marginals=None,
            weight_scale=1.0,
            dual_clip_norm=math.inf,
            mechanisms=None,
            # The counts are weighted (each weight capped at 1): said, as
            # the model's record says it.
            record=(
                replace(
                    plan.fallback.record,
                    caveats=(*plan.fallback.record.caveats, WEIGHTS_CAVEAT),
                )
                if weighted
                else plan.fallback.record
            ),
            dual_learning_rate=p.dual_learning_rate,
            plan=plan,
        )

    # 1. Group marginals (private histogram, public values, or exact counts).
    regularizer, ps, weight_scale, cells = _penalty(
        privacy,
        p,
        n_classes,
        group_labels,
        n_samples=n_samples,
        cell_table=cell_table,
        histogram=histogram_mechanism(noise),
        active=active,
        rng=rng,
    )

    # Clip norms: under privacy the dual one defaults to the bound on a
    # record's weighted prediction (the largest block weight, computed from
    # the released marginals: post-processing), i.e. no clipping of a record
    # of weight at most 1. The non-private limit (epsilon = inf without a
    # noise multiplier) releases nothing, so it clips nothing: a record of
    # weight above 1 keeps its whole dual term, as in FERMI.
    private = privacy is not None and privacy.budget.is_private
    primal_clip = math.inf if p.clip_norm is None else float(p.clip_norm)
    if p.dual_clip_norm is not None:
        dual_clip = float(p.dual_clip_norm)
    elif private and regularizer is not None:
        dual_clip = regularizer.cell_sum_bound()
    else:
        dual_clip = math.inf
    mechanisms = FERMIMechanisms.build(
        noise, primal_clip, dual_clip, max(plan.n_candidates, 1)
    )
    record = None
    if privacy is not None:
        # Every field is what the accountant was given: the joint Gaussian's
        # multiplier and sensitivity (noise std sigma_theta * clip), q, T.
        record = privacy.budget.account(
            mechanisms.joint,
            description=_describe(
                mechanisms,
                noise,
                q=q,
                n_steps=n_steps,
                active=active,
                # Printed when it is public: declared, or no clip at all.
                dual_clip_declared=p.dual_clip_norm is not None or not private,
                n_candidates=plan.n_candidates,
                scaling=privacy.scaling,
            ),
            adjacency="add_remove",
            sampling_probability=q,
            steps=n_steps,
            dp_event=plan.event,
            caveats=(WEIGHTS_CAVEAT,) if weighted else (),
        )

    # "auto": 1/L of the dual block, from the public block weights.
    dual_learning_rate = p.dual_learning_rate
    if dual_learning_rate == "auto":
        dual_learning_rate = auto_dual_step(
            regularizer, weight_scale * max_weight
        )
    setup = FERMISetup(
        sampling_probability=q,
        n_steps=n_steps,
        active=active,
        bounded=bounded,
        noise=noise,
        regularizer=regularizer,
        group_marginals=ps,
        weight_scale=weight_scale,
        dual_clip_norm=dual_clip,
        mechanisms=mechanisms,
        record=record,
        dual_learning_rate=dual_learning_rate,
        plan=plan,
        # One group compares nothing (the non-private bound with one
        # group): no cell to leave out, nor a warning about one.
        measured=(
            measured_cells(cells, p.min_group_size)
            if bounded and cells is not None and len(group_labels) > 1
            else None
        ),
    )
    _warn_small_groups(
        setup,
        group_labels,
        p.min_group_size,
        _counts_basis(privacy),
        cells,
    )
    return setup


def _describe(
    mechanisms,
    noise,
    *,
    q,
    n_steps,
    active,
    dual_clip_declared,
    n_candidates,
    scaling=None,
):
    """The record's mechanism text: every release, with its public parameters."""
    text = _MECHANISM.format(
        steps=n_steps,
        q=q,
        clip=mechanisms.primal.clip_norm,
        sigma_theta=noise.primal,
    )
    if active:
        text += _DUAL.format(
            dual_clip=(
                f"{mechanisms.dual.clip_norm:.6g}"
                if dual_clip_declared
                else _DUAL_CLIP_FROM_MARGINALS
            ),
            sigma_w=noise.dual,
            sigma_eff=noise.effective,
            sensitivity=mechanisms.joint.clip_norm,
        )
    if noise.marginal > 0:
        text += _MARGINALS.format(z=noise.marginal)
    if noise.selection > 0:
        text += _SELECTION.format(
            k=n_candidates,
            z=noise.selection,
            std=mechanisms.selection.noise_std,
        )
    if noise.choice > 0:
        text += _CHOICE.format(z=noise.choice)
    if scaling is not None and scaling.describe():
        text += "; " + scaling.describe()
    return text


def released_fit(
    coef_m,
    w0_m,
    W,
    setup,
    *,
    params,
    n_classes,
    n_groups,
    curves=([], []),
    extra=None,
    backend=NUMPY_BACKEND,
    like=None,
    scales=None,
    network=None,
):
    """The :class:`FERMIFit` of a solved model, in the estimators' layout.

    ``coef_m`` ``(d, m)`` and the intercept parameter ``w0_m`` become
    scikit-learn's ``(m, d)`` (``(1, d)``: the logit of class 1 for two
    classes) and ``(m,)``; ``W`` None (no fairness term) gives a zero dual.
    Without equalized odds the single block is returned unstacked. ``like``
    is an array where the solver ran (host arrays are moved next to it);
    ``setup`` (:class:`FERMISetup`) gives the marginals, noise and record,
    ``extra`` the fields the final phase or the weight selection set.
    ``scales`` (a
    :class:`~sklearn_dpfair._solvers._feature_scaling.FeatureScaling` or
    None) maps a model of the scaled columns back to the user's units.
    ``network`` (:class:`._model.NetworkFairModel` or None): ``coef_m`` and
    ``w0_m`` are its flat parameters, released as ``coefs`` and
    ``intercepts`` (:meth:`~._model.NetworkFairModel.release`).
    """
    coefs = intercepts = None
    if network is not None:
        coefs, intercepts = (
            [backend.to_output(backend.asarray(a)) for a in part]
            for part in network.release(coef_m, w0_m, n_classes, scales)
        )
        coef_m, w0_m, scales = None, None, None
    elif like is not None:
        coef_m, w0_m = _on_backend(coef_m, like), _on_backend(w0_m, like)
    coef = intercept = None
    if network is None:
        intercept = params.intercept_scaling * w0_m
        coef = coef_m.T
        if n_classes == 2:
            coef, intercept = _binary_layout(coef_m, intercept)
    if scales is not None:
        # Post-processing of the released model: w.(x - m)/s + b is linear
        # in the raw x.
        host = scales.coefficients_in_user_units(to_numpy(coef), to_numpy(intercept))
        coef, intercept = (
            host if like is None else (_on_backend(a, like) for a in host)
        )
    if network is None:
        coef, intercept = backend.to_output(coef), backend.to_output(intercept)
    if W is not None and W.shape[0] > 0:
        dual = backend.to_output(W if like is None else _on_backend(W, like))
    else:
        dual = backend.to_output(
            backend.xp.zeros(
                (params.constraint.n_blocks(n_classes), n_groups, n_classes),
                dtype=backend.xp.float64,
                device=backend.device,
            )
        )
    ps = setup.group_marginals
    if params.constraint.name != "equalized_odds":
        dual = dual[0]
        ps = None if ps is None else ps[0]
    return FERMIFit(
        coef=coef,
        intercept=intercept,
        dual=dual,
        group_marginals=ps,
        n_steps=setup.n_steps,
        loss_curve=curves[0],
        fairness_curve=curves[1],
        record=setup.record,
        noise=setup.noise,
        dual_clip_norm=setup.dual_clip_norm,
        coefs=coefs,
        intercepts=intercepts,
        **{
            "fairness_weight": float(params.fairness_weight),
            "step_sizes": (
                float(params.learning_rate),
                float(setup.dual_learning_rate),
            ),
            **(extra or {}),
        },
    )


def intercept_only_fit(
    setup, counts, *, params, n_features, n_classes, n_groups, rng, backend, dtype
):
    """The :class:`FERMIFit` of the intercept-only release (``setup.fallback``).

    ``counts`` are the exact class counts (in memory, or added up over a
    Dask collection's partitions). The noisy label histogram gives the
    intercepts (post-processing,
    :func:`~sklearn_dpfair._solvers._intercept_only.intercept_only_model`);
    the coefficients and the dual are 0. A constant model predicts one
    class for every row, so its training disparity is exactly 0 under every
    constraint: a ``disparity_bound`` is met whatever the data hold.
    """
    coef, intercept = intercept_only_model(setup.fallback, counts, rng, n_features)
    return FERMIFit(
        **_constant_model(
            coef,
            intercept,
            params=params,
            n_features=n_features,
            n_classes=n_classes,
            n_groups=n_groups,
            bounded=params.disparity_bound is not None,
            backend=backend,
            dtype=dtype,
        ),
        group_marginals=None,
        n_steps=0,
        loss_curve=[],
        fairness_curve=[],
        record=setup.record,
        noise=setup.noise,
        fairness_weight=0.0,
        step_sizes=(None, None),
        intercept_only=True,
        # The public row count the plan was made for (the counts weigh each
        # record by its weight capped at 1: not a count of rows).
        n_samples=setup.plan.shape[0],
    )


def _constant_model(
    coef, intercept, *, params, n_features, n_classes, n_groups, bounded, backend, dtype
):
    """The :class:`FERMIFit` fields of a constant model (post-processing).

    ``coef`` (zeros) and ``intercept`` in the linear layout become the
    network's when the fit has hidden layers (every weight 0, the output
    biases the intercepts); the dual is 0. A constant model predicts one
    class for every row, so its training disparity is exactly 0 under every
    constraint: a ``disparity_bound`` is met whatever the data hold.
    """
    dual = np.zeros((params.constraint.n_blocks(n_classes), n_groups, n_classes))
    if params.constraint.name != "equalized_odds":
        dual = dual[0]

    def out(a, dt):
        return backend.to_output(backend.asarray(a, dtype=dt))

    coefs = intercepts = None
    if params.hidden_layer_sizes:
        sizes = [n_features, *params.hidden_layer_sizes, coef.shape[0]]
        coefs = [out(np.zeros((a, b)), dtype) for a, b in zip(sizes[:-1], sizes[1:])]
        intercepts = [out(np.zeros(b), dtype) for b in sizes[1:-1]]
        intercepts.append(out(intercept, dtype))
        coef = intercept = None
    return dict(
        coef=None if coef is None else out(coef, dtype),
        intercept=None if intercept is None else out(intercept, dtype),
        coefs=coefs,
        intercepts=intercepts,
        dual=out(dual, np.float64),
        disparity=0.0 if bounded else None,
        bound_met=True if bounded else None,
    )


def privately_choose_constant(
    fit, comparison, n_samples, setup, *, params, n_features, n_classes, n_groups,
    rng, backend, dtype,
):
    """Release the comparison of ``fit`` with the constants; keep the better.

    ``comparison`` is the exact
    :func:`~.._constant_choice.constant_comparison` of the model's
    predictions on the ``n_samples`` training rows (in memory, or added up
    over a Dask collection's partitions). One Gaussian release
    (:mod:`.._constant_choice`, planned in the fit's event) of it; when the
    noisy comparison finds a constant better, that constant (intercepts from
    the same release) replaces the model. Everything after the release is
    post-processing.
    """
    mechanism = choice_mechanism(setup.noise.choice, n_classes)
    noisy = np.asarray(to_numpy(mechanism.privatize(comparison, rng)), dtype=np.float64)
    choice = choose_constant(noisy, n_samples)
    if choice.constant is None:
        return replace(fit, constant_comparison=noisy)
    coef, intercept = constant_linear_model(choice.log_frequencies, n_features)
    return replace(
        fit,
        **_constant_model(
            coef,
            intercept,
            params=params,
            n_features=n_features,
            n_classes=n_classes,
            n_groups=n_groups,
            bounded=params.disparity_bound is not None,
            backend=backend,
            dtype=dtype,
        ),
        intercept_only=True,
        chose_constant=True,
        constant_comparison=noisy,
        # A constant takes no fairness term.
        fairness_weight=0.0,
    )


def fit_fermi(
    X,
    y,
    codes,
    group_labels,
    plan,
    params,
    *,
    rng,
    privacy=None,
    backend=NUMPY_BACKEND,
    sample_weight=None,
    progress=None,
):
    """Fit an ERMI-regularized softmax model by (noisy) SGDA.

    Parameters
    ----------
    X : array or sparse matrix of shape (n_samples, n_features)
        Validated input, moved to ``backend`` (an
        :class:`~sklearn_dpfair.utils._array_api.ArrayBackend`) for the
        solver.
    y : ndarray of shape (n_samples,)
        Class indices ``0 .. n_classes - 1`` (host numpy).
    codes : ndarray of shape (n_samples,)
        Group codes (host numpy); ``-1`` is missing, only allowed without
        ``privacy``.
    group_labels : ndarray of shape (n_groups,)
        The (declared) group set.
    plan : FERMIPlan
        The releases of the fit, made before the data are read by
        :func:`._plan.fermi_plan` from ``privacy``, ``params`` and the public
        ``(n_samples, n_features, n_groups, n_classes)``; the fit refuses data
        of another shape (:meth:`._plan.FERMIPlan.check_data`) and runs the
        plan's schedule and noise.
    params : FERMIParams
        Public hyperparameters (those the plan was made from).
    rng : numpy.random.Generator
        Batches and every noise draw.
    privacy : FairPrivacy or None, default=None
        None is FERMI (non-private); otherwise DP-FERMI with this budget.
    backend : ArrayBackend, default=NUMPY_BACKEND
        Where the solver runs.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public, non-negative; used as given under privacy (rescaled to mean 1
        without it, :func:`~sklearn_dpfair.privacy.fit_weights`). It weights each record's
        whole term, loss and penalty, *before* the primal and dual clipping:
        one record's influence stays within the clip norms whatever its
        weight. Uniform weights take the unweighted path exactly. Without
        privacy the group marginals are weighted (a weight of 2 is a
        duplicated row) while ``min_group_size`` compares the rows of
        positive weight (:func:`_penalty`); with privacy the histogram
        counts records unweighted (sensitivity 1 per record). Not combined
        with ``disparity_bound``.
    progress : Progress or None, default=None
        ``verbose`` lines of the SGDA epochs (released values only; see
        :func:`._sgda.noisy_sgda`).

    Returns
    -------
    fit : FERMIFit
        ``coef`` is ``(1, d)`` for two classes (logit of class 1) and
        ``(m, d)`` otherwise.

    Notes
    -----
    Without ``privacy``, ``final_phase="lbfgs"`` ends the fit with the
    full-batch L-BFGS phase of :mod:`._lbfgs` (warm-started at the SGDA
    result) and a ``ConvergenceWarning`` when its stationarity exceeds
    ``tol``. ``disparity_bound`` chooses ``fairness_weight`` itself: see
    :func:`._weight_search.bounded_path` (non-private) and
    :func:`._weight_search.private_selection`.
    """
    p = params
    n_samples = X.shape[0]
    plan.check_data(n_samples, X.shape[1], len(group_labels))
    n_classes = plan.n_classes
    private = privacy is not None and privacy.budget.is_private
    # Whether weights were passed (public), never what they hold, decides
    # the refusal and the record.
    weighted = sample_weight is not None
    if weighted and p.disparity_bound is not None:
        raise ValueError(
            "sample_weight cannot be combined with disparity_bound: the weight "
            "selection is not weighted."
        )
    sample_weight = fit_weights(sample_weight, n_samples, private=private)
    n_groups = len(group_labels)
    constraint = p.constraint
    n_blocks = constraint.n_blocks(n_classes)
    # One small code a row (block_index gives intp), held for the whole fit.
    blocks = constraint.block_index(y).astype(code_dtype(n_blocks))
    setup = fermi_setup(
        plan,
        privacy,
        p,
        group_labels=group_labels,
        # Weighted at the non-private limit (a weight of 2 is a duplicated
        # row, as in FERMI); counts of records under privacy.
        cell_table=_in_memory_cell_table(
            blocks, codes, n_blocks, n_groups, sample_weight, private
        ),
        weighted=weighted,
        # The dual step's smoothness bound reads the largest weight only
        # without privacy; a private fit assumes weights of at most 1
        # (every weighted dual term is clipped whatever its weight).
        max_weight=(
            1.0
            if sample_weight is None or private
            else float(np.max(sample_weight))
        ),
        rng=rng,
    )
    # What a constant model's fields need (the small-budget releases; the
    # column scaling below keeps X's width and dtype).
    constant = dict(
        params=p,
        n_features=X.shape[1],
        n_classes=n_classes,
        n_groups=n_groups,
        rng=rng,
        backend=backend,
        dtype=X.dtype,
    )
    if setup.fallback is not None:
        return intercept_only_fit(
            setup, label_counts(to_numpy(y), n_classes, sample_weight), **constant
        )
    # Private per-column scales (public bounds, or private quantiles the
    # plan's event composes first): the SGDA steps' fixed clip norms and
    # step sizes assume unit-scale columns.
    scaling = None if privacy is None else privacy.scaling
    # The columns predict is given (a non-private network is measured on them).
    user_X = X
    scales = None if scaling is None else fit_feature_scaling(X, scaling, rng)
    if scales is not None:
        X = scales.transform(X)
    q, n_steps, bounded = setup.sampling_probability, setup.n_steps, setup.bounded
    regularizer, weight_scale = setup.regularizer, setup.weight_scale
    mechanisms, dual_learning_rate = setup.mechanisms, setup.dual_learning_rate
    # The network of hidden_layer_sizes (None: the linear model), its start
    # drawn from a child of rng (no draw of rng's own stream).
    network = initial_network(p, X.shape[1], n_classes, rng)
    noiseless = not private or privacy.budget.noise_multiplier == 0
    if network is not None and scales is None and noiseless:
        # Without privacy a network solves on preconditioned columns (its
        # objective unchanged); the first layer is mapped back on release.
        # Also the private loop run without noise (noise_multiplier=0,
        # which claims nothing), so that it is FERMIClassifier's fit.
        X, scales, network = precondition_network(
            network, X, sample_weight, center=bool(p.intercept_scaling)
        )

    # 2. Solve (on the backend; batches and noise still come from rng).
    problem = FairProblem(
        X=X,
        # Sparse X stays a scipy matrix (host numpy, never densified).
        X_solver=X if sp.issparse(X) else backend.asarray(X),
        y=np.asarray(y),
        codes=codes,
        blocks=blocks,
        n_classes=n_classes,
        n_groups=n_groups,
        regularizer=regularizer,
        weight_scale=weight_scale,
        params=p,
        sample_weight=sample_weight,
        measured=setup.measured,
        network=network,
        # Where the solver's columns are the user's, the disparities it
        # measures (training_disparity_, the bound's selection) are those of
        # the released model, cast to X's dtype and scored as predict scores
        # it: a float32 model's predictions are not its float64 solution's.
        # So for a non-private network, on the user's columns: its first
        # layer is mapped back from the solver's (preconditioned) ones, and
        # a float32 bias cancelling an offset of 1e6 is rounded. A private
        # fit's network is measured as the solver sees it (its measurements
        # are noised or compared privately, on the scaled columns).
        released_columns=scales is None if network is None else not private,
        user_X=user_X if network is not None and not private else None,
        column_scaling=scales if network is not None and not private else None,
    )
    sgda_common = dict(
        blocks=blocks,
        codes=codes,
        weight_scale=weight_scale,
        primal_mechanism=mechanisms.primal,
        dual_mechanism=mechanisms.dual,
        sampling_probability=q,
        learning_rate=p.learning_rate,
        dual_learning_rate=dual_learning_rate,
        alpha=p.alpha,
        intercept_scaling=p.intercept_scaling,
        dual_update=p.dual_update,
        project_dual=p.dual_projection == "box",
        return_iterate=p.return_iterate,
        rng=rng,
        record_curves=p.record_curves,
        constraint=constraint,
        sample_weight=sample_weight,
        progress=progress,
        model=network,
    )
    extra = {}
    bound_warning = None  # of a private selection that met no bound
    # The returned model's own convergence diagnostics (its warning).
    diagnosis = {
        "at_limit": False,
        "unpolished": False,
        "polished": False,
        "weight_n_iter": None,
    }
    # DP-FERMI's non-private limit releases nothing: it solves the weight
    # path exactly, as FERMI does (the staged constant-step SGDA of the
    # private selection does not converge on raw columns).
    exact_path = privacy is None or (not private and p.final_phase == "lbfgs")
    if bounded and exact_path:
        coef_m, w0_m, W, path_extra = bounded_path(
            problem, float(p.disparity_bound), float(p.max_fairness_weight)
        )
        diagnosis = {key: path_extra.pop(key) for key in diagnosis}
        extra.update(path_extra)
        curves = ([], [])
    elif bounded:
        coef_m, w0_m, W, curves, path_extra = private_selection(
            problem,
            float(p.disparity_bound),
            sgda_common,
            schedule=setup.plan.selection,
            tables=mechanisms.selection,
            rng=rng,
        )
        bound_warning = path_extra.pop("bound_warning", None)
        extra.update(path_extra)
    else:
        coef_m, w0_m, W, result = run_sgda(
            problem, sgda_common, p.fairness_weight, n_steps, p.epochs
        )
        curves = (result.loss_curve, result.fairness_curve)
        if not private and p.final_phase == "lbfgs":
            lam = p.fairness_weight
            # DP-FERMI's non-private limit: its objective on any columns.
            # A network's phase is its own (on the preconditioned columns).
            refine = (
                problem.refine
                if privacy is None or network is not None
                else partial(minimize_fair_objective, problem)
            )
            refined = refine(
                lam, *problem.better_start(lam, to_numpy(coef_m), to_numpy(w0_m))
            )
            coef_m, w0_m = refined.coef, refined.w0
            W = problem.dual_at(lam, coef_m, w0_m)
            extra.update(
                stationarity=refined.stationarity,
                converged=refined.converged,
                n_final_iter=refined.n_iter,
            )
            diagnosis["at_limit"] = refined.at_limit
        if privacy is None:
            extra["disparity"] = problem.disparity(to_numpy(coef_m), to_numpy(w0_m))
    # Non-private fits only (FERMI, and DP-FERMI at epsilon = inf): a
    # private fit's warning would be a bit about its data.
    if not private and extra.get("converged") is False:
        name = "FERMIClassifier" if privacy is None else "DPFERMIClassifier"
        warn_at_caller(_not_converged(name, extra, p, **diagnosis), ConvergenceWarning)

    fit = released_fit(
        coef_m,
        w0_m,
        W if regularizer is not None else None,
        setup,
        params=p,
        n_classes=n_classes,
        n_groups=n_groups,
        curves=curves,
        extra=extra,
        backend=backend,
        like=problem.y_solver,
        scales=scales,
        network=network,
    )
    if plan.key.constant_choice:
        # The training predictions of the released model, computed where
        # the solver ran (its columns, by blocks of rows).
        predicted = problem.predict(to_numpy(coef_m), to_numpy(w0_m))
        fit = privately_choose_constant(
            fit,
            constant_comparison(to_numpy(y), predicted, n_classes),
            predicted.shape[0],
            setup,
            **constant,
        )
    if bounded and exact_path:
        # The exact weight path ran no SGDA step: FERMI counts none, and
        # DP-FERMI's non-private limit counts its solver's iterations, as its
        # record's steps do (and DPLogisticRegression's at epsilon = inf).
        fit = replace(
            fit,
            n_steps=0 if privacy is None else fit.n_final_iter,
            exact_path=True,
        )
    if bound_warning is not None and not fit.chose_constant:
        warn_at_caller(bound_warning, UserWarning)
    if p.disparity_bound is not None and not bounded:
        # DP-FERMI with one group (the plan has no selection: nothing to
        # compare, nothing released about it). Every model's disparity is
        # exactly 0, so the bound is met, and no fairness term was fitted:
        # post-processing of public facts, as FERMI's one-point path says.
        fit = replace(fit, bound_met=True, disparity=0.0, fairness_weight=0.0)
    return fit
