# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP-FERMI on Dask collections: the rows stay on the workers.

The private fit of :func:`._fit.fit_fermi` (thesis Algorithm 10 under
record-level add/remove adjacency) decomposes over the rows as DP-SGD does
(:mod:`.._distributed`):

1. the (block, group) cell counts are counted on each partition and added
   on the driver, which releases them *once* through the fit's histogram
   mechanism (sensitivity 1: one record moves one cell by one);
2. per SGDA step, each partition draws its own Poisson rows (each with
   probability ``q``, from ``SeedSequence(root, spawn_key=(p, t))``),
   computes their logit gradients with the ERMI term, and returns its
   clipped primal sum (clip ``C``) and its clipped cell sums of the
   weighted predictions, the dual's statistic (clip ``C_w``);
3. the driver adds the partition sums and applies :func:`._sgda.sgda_step`,
   the in-memory update: the primal noise, then the dual noise, once each,
   divided by the expected batch size ``q n``.

The released values are the same functions of the same noisy sums as in
memory, so :func:`._fit.fermi_setup` gives the same mechanisms, event and
record. Only the SGDA path with the ascent step is distributed: the exact
dual update, the non-private full-batch phase, the ``disparity_bound``
selection and the training curves read the whole training set at once and
are refused on Dask input by the estimator.

Without privacy the steps run on mapped columns (the exact standardization,
or declared bounds) and the L2 penalty is that of the documented objective,
on the coefficients in the user's units: ``alpha / scale_j^2`` on the fitted
coefficients of column ``j``, by its exact proximal step (as DP-SGD's
:func:`.._distributed.fit_dp_sgd_dask`).
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from ...fairness._marginals import cell_counts
from ...utils._array_api import NUMPY_BACKEND
from .._distributed import (
    as_run_record,
    partition_constant_comparison,
    partition_label_counts,
    partition_rng,
    sum_over_partitions,
)
from .._feature_scaling import penalty_in_scaled_units, proximal_l2_factors
from .._linear import LinearModel
from .._private_fit import weights_in_dtype
from .._sampling import poisson_batch
from .._sgd import tail_averaged
from ._fit import (
    fermi_setup,
    intercept_only_fit,
    privately_choose_constant,
    released_fit,
)
from ._sgda import SGDAStepConfig, fair_terms, logits, sgda_step, softmax_terms

__all__ = ["fit_fermi_dask"]


@dataclass(frozen=True)
class _FairStepConfig:
    """Public constants every partition step needs (sent with each step)."""

    model: LinearModel
    regularizer: object  # ERMIRegularizer, or None without fairness term
    constraint: object
    fairness_weight: float
    weight_scale: float
    sampling_probability: float
    clip_norm: float
    dual_clip_norm: float
    entropy: int


def _partition_cells(part, index, *, constraint, n_blocks, n_groups, weighted):
    """Worker task: the (block, group) counts of one partition, and its rows.

    Returns ``(counts, n_observed, rows)``. ``weighted`` (the non-private
    limit with weights): the counts and the total are of the weights, a
    weight of 2 counting as a duplicated row, and ``rows`` the rows of
    positive weight per cell (what ``min_group_size`` compares), as in
    memory; otherwise ``rows`` is ``counts``.
    """
    blocks = constraint.block_index(part.y.astype(np.intp))
    if weighted and part.weights is not None:
        counts = cell_counts(blocks, part.codes, n_blocks, n_groups, part.weights)
        rows = cell_counts(blocks, part.codes, n_blocks, n_groups, part.weights > 0)
        return counts, np.array(np.sum(part.weights[part.codes >= 0])), rows
    counts = cell_counts(blocks, part.codes, n_blocks, n_groups)
    n_observed = np.array(np.count_nonzero(part.codes >= 0), dtype=np.int64)
    return counts, n_observed, counts


@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def partition_sgda_sums(part, coef, w0, W, *, config, rng):
    """Clipped primal and dual sums of one partition's Poisson-sampled rows.

    The same per-row computation as the in-memory loop of
    :func:`._sgda.noisy_sgda` (logits, softmax terms, public weight, ERMI
    term, clipping); whatever one record holds, its terms are finite and
    within ``clip_norm`` (primal) and ``dual_clip_norm`` (dual).

    Returns
    -------
    g_coef, g_w0, cell_sums : ndarray
        Shapes ``(n_features, m)``, ``(m,)`` and that of ``W``.
    """
    model = config.model
    if config.sampling_probability >= 1.0:
        idx = slice(None)
    else:
        idx = poisson_batch(rng, part.X.shape[0], config.sampling_probability)
    Xb, norms_b = part.X[idx], part.row_norms[idx]
    yb = part.y[idx].astype(np.intp)
    # Saturated at the largest float of the rows' dtype, as the in-memory
    # loop does (weights_in_dtype): a weight beyond it (1e300 in a float32
    # fit) cast to that dtype would be inf, and the record's term, no
    # longer finite, would be dropped instead of clipped.
    wb = (
        None
        if part.weights is None
        else weights_in_dtype(part.weights[idx], part.X.dtype)
    )
    raw = logits(Xb, coef, w0, model.intercept_scaling)
    proba, grad, _ = softmax_terms(raw, yb, with_loss=False)
    if wb is not None:
        # Weighted before it is clipped.
        grad = grad * wb.astype(grad.dtype)[:, None]
    cell_sums = np.zeros_like(W)
    regularizer = config.regularizer
    if regularizer is not None:
        scale = config.weight_scale if wb is None else config.weight_scale * wb
        constants = regularizer.sample_constants(
            config.constraint.block_index(yb), part.codes[idx], scale
        )
        grad, cell_sums = fair_terms(
            regularizer,
            W,
            proba,
            grad,
            constants,
            fairness_weight=config.fairness_weight,
            dual_clip_norm=config.dual_clip_norm,
        )
    g_coef, g_w0 = model.clipped_gradient_sum(Xb, grad, norms_b, config.clip_norm)
    return g_coef, g_w0, cell_sums


def _partition_step(part, index, *, coef, w0, W, step, config):
    """Worker task: the sums of partition ``index`` at step ``step``."""
    rng = partition_rng(config.entropy, index, step)
    return partition_sgda_sums(part, coef, w0, W, config=config, rng=rng)


def fit_fermi_dask(data, plan, params, privacy, *, group_labels, rng, progress=None):
    """DP-FERMI on persisted Dask partitions; every noise added once on the driver.

    Parameters
    ----------
    data : DaskTrainingData
        From :func:`~sklearn_dpfair._solvers._distributed.distribute_training_data`
        with ``sensitive_features`` (or without: one group, no fairness term).
    plan : FERMIPlan
        The releases of the fit (:func:`._plan.fermi_plan`, public inputs
        only); data of another shape are refused before any row is read.
    params : FERMIParams
        Public hyperparameters (``dual_update="sgda"``, no final phase, no
        ``disparity_bound``, no curves).
    privacy : FairPrivacy
        The privacy inputs.
    group_labels : ndarray
        The group set.
    rng : numpy.random.Generator
        The fit's generator: the histogram's and the steps' noise, and the
        root of the partitions' streams.
    progress : Progress or None, default=None
        Told about once per epoch with the norm of the released primal move
        over the step size, as in the in-memory SGDA loop.

    Returns
    -------
    fit : FERMIFit

    Notes
    -----
    Without privacy (``data.private`` False) the steps run on mapped columns
    (``data.scaling``: the exact standardization, or declared bounds) and
    minimize the documented objective in the user's units: the penalty
    ``(alpha/2) sum_k ||w_k||^2`` is on the returned coefficients ``w``, so
    on the fitted ones it is :func:`.._feature_scaling.penalty_in_scaled_units`,
    taken by its exact proximal step after each descent step,
    ``coef_j <- coef_j / (1 + eta alpha_j)`` (proximal gradient descent,
    Parikh and Boyd, *Proximal Algorithms*, 2014, Sec. 4.2): its fixed point
    is the penalized minimizer whatever ``eta alpha_j``, where an explicit
    step diverges beyond ``eta alpha_j = 2`` (a column in units of 0.01 at
    ``alpha = 0.01`` has ``alpha_j = 100``). There is no full-batch phase
    (it would need the rows on the driver), so the result is the tail
    average of the noiseless steps. A private fit penalizes
    the coefficients of the mapped columns, as its plan and the in-memory
    private fit do.
    """
    p = params
    constraint = p.constraint
    n_groups = len(group_labels)
    plan.check_data(data.n_samples, data.n_features, n_groups)
    n_classes = plan.n_classes
    n_blocks = constraint.n_blocks(n_classes)

    def cell_table():
        counts, n_observed, rows = sum_over_partitions(
            data,
            _partition_cells,
            constraint=constraint,
            n_blocks=n_blocks,
            n_groups=n_groups,
            # Counts of records under privacy; weighted without it.
            weighted=not data.private,
        )
        if not data.private and data.weighted:
            return counts, float(n_observed), rows
        return counts, int(n_observed), None

    setup = fermi_setup(
        plan,
        privacy,
        p,
        group_labels=group_labels,
        cell_table=cell_table,
        weighted=data.weighted,
        max_weight=data.max_weight,
        rng=rng,
    )
    # What a constant model's fields need (the small-budget releases).
    constant = dict(
        params=p,
        n_features=data.n_features,
        n_classes=n_classes,
        n_groups=n_groups,
        rng=rng,
        backend=NUMPY_BACKEND,
        dtype=data.dtype,
    )
    if setup.fallback is not None:
        # The planned label histogram, from the partitions' class counts.
        return intercept_only_fit(
            setup, partition_label_counts(data, n_classes), **constant
        )
    regularizer = setup.regularizer if setup.active else None
    mechanisms = setup.mechanisms
    model = LinearModel(n_classes, p.intercept_scaling)
    q, n_steps = setup.sampling_probability, setup.n_steps
    config = _FairStepConfig(
        model=model,
        regularizer=regularizer,
        constraint=constraint,
        fairness_weight=float(p.fairness_weight),
        weight_scale=setup.weight_scale,
        sampling_probability=q,
        # The non-private limit releases nothing, so it clips nothing (as
        # DP-SGD's limit on Dask): with no full-batch phase to finish the
        # fit, clipped steps would settle away from the minimizer (log-loss
        # 0.556 at clip_norm=1 against 0.529 in memory).
        clip_norm=mechanisms.primal.clip_norm if data.private else math.inf,
        dual_clip_norm=mechanisms.dual.clip_norm,
        # Root of every partition's stream, from the fit's private generator.
        entropy=int.from_bytes(rng.bytes(16), "little"),
    )
    alpha, shrink = p.alpha, None
    if not data.private and data.scaling is not None and p.alpha > 0:
        # The documented penalty (alpha/2) ||w||^2 is on the coefficients in
        # the user's units, w_j = v_j / scale_j: on the fitted ones v it is
        # (alpha / scale_j^2) / 2 ||v_j||^2, taken by its exact proximal
        # step (Parikh and Boyd 2014, Sec. 4.2), which a tiny scale cannot
        # make diverge (inf holds the coefficient at 0). A private fit keeps
        # its steps as planned (the penalty on the scaled coefficients).
        shrink = proximal_l2_factors(
            p.learning_rate, penalty_in_scaled_units(p.alpha, data.scaling)
        )
        alpha = 0.0
    step_config = SGDAStepConfig(
        primal_mechanism=mechanisms.primal,
        dual_mechanism=mechanisms.dual,
        denominator=q * data.n_samples,
        learning_rate=p.learning_rate,
        dual_learning_rate=setup.dual_learning_rate,
        alpha=alpha,
        project_dual=p.dual_projection == "box",
    )
    dtype = data.dtype
    coef = np.zeros((data.n_features, n_classes), dtype=dtype)
    w0 = np.zeros(n_classes, dtype=dtype)
    W = np.zeros(
        (0, 0, n_classes) if regularizer is None else (n_blocks, n_groups, n_classes),
        dtype=dtype,
    )

    if progress is not None:
        progress = progress.per(n_steps, p.epochs)

    def step(t, coef, w0):
        # The dual variable is the loop's state beside (coef, w0).
        nonlocal W
        sums = sum_over_partitions(
            data, _partition_step, coef=coef, w0=w0, W=W, step=t, config=config
        )
        if regularizer is None:
            sums = (sums[0], sums[1], None)
        new_coef, new_w0, W = sgda_step(
            model,
            coef,
            w0,
            W,
            sums,
            regularizer=regularizer,
            config=step_config,
            rng=rng,
        )
        if shrink is not None:
            # The penalty's proximal map after the loss' gradient step.
            new_coef = (new_coef * shrink).astype(new_coef.dtype, copy=False)
        if progress is not None:
            progress.moved(t + 1, (coef, w0), (new_coef, new_w0), p.learning_rate)
        return new_coef, new_w0

    last, average = tail_averaged(step, coef, w0, n_steps=n_steps)
    coef, w0 = average if p.return_iterate == "average" else last
    fit = released_fit(
        coef,
        w0,
        W if regularizer is not None else None,
        setup,
        params=p,
        n_classes=n_classes,
        n_groups=n_groups,
        # Partitions mapped by a public scaling: the model in raw units.
        scales=data.scaling,
    )
    fit = replace(fit, record=as_run_record(fit.record, data))
    if plan.key.constant_choice:
        # The in-memory fit's private choice; the workers count the
        # released model's errors and their rows' classes.
        fit = privately_choose_constant(
            fit,
            partition_constant_comparison(data, model, coef, w0, n_classes),
            data.n_samples,
            setup,
            **constant,
        )
    return fit
