# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Noisy stochastic gradient descent-ascent (SGDA) for ERMI-regularized models.

Thesis Algorithm 9 (FERMI) and its private version (thesis Algorithm 10),
in one loop; the non-private fit is the same loop with zero noise. Order of
calls in :func:`noisy_sgda`, per step ``t = 1..T``:

1. sample a Poisson batch ``B_t`` (each row with probability ``q``);
2. logits ``Z = X_B Theta + s w_0`` (or a network's output, :mod:`._model`)
   and probabilities ``F = softmax(Z)``;
3. (``dual_update="exact"``, full batch only) set ``W`` to its maximiser;
4. logit-space gradient ``G = (F - e_y) + lambda w_i F * (c - <c, F>)``;
5. primal block, a linear model on ``[x_i, s]``
   (:class:`~sklearn_dpfair._solvers._linear.LinearModel`): clip factors
   from ``||G_i|| ||[x_i, s]||``, clipped sum ``[X_B, s]^T (a * G)``,
   Gaussian noise, divide by ``q n``, L2 step (a network: its layers'
   errors by backpropagation of ``G``, clip factors from the ghost norms of
   every example's gradient over all the layers, the same release);
6. dual block (simultaneous: it uses ``Theta_t`` and ``W_t``): per-sample
   dual gradients clipped by their factorized norms, summed, noised, divided
   by ``q n``; projected ascent step (NOT scaled by lambda: same fixed
   point, stable for ``dual_learning_rate <= 1/2``);
7. accumulate the per-epoch curves (optional: mean batch loss and the ERMI
   of the epoch's batch predictions, soft) and the tail average.

The primal and dual noisy sums are released together on the same batch; the
caller accounts them as one Gaussian mechanism (each block scaled by its
noise: :mod:`._privacy`).

The loop is written once, against the array API (as :mod:`._sgd`): it runs
in the namespace and on the device of ``X`` (numpy, or torch on a GPU).
Poisson batches and noise are drawn on the host from ``rng`` in the same
order on every backend; labels, groups and blocks are encoded on the host and
their per-row constants copied to the device once. The optional curves are
diagnostics: each batch's probabilities are copied to the host for them.

Whatever one record holds, its terms in both noisy sums are finite and
within their clip bounds. A row whose logits ``x_i Theta + s w_0`` overflow
(a huge but finite feature, see :func:`softmax_terms`) contributes exactly 0
to the primal sum, to the dual sum and to the curves: a fixed,
data-independent value. Finite rows keep their exact values. numpy's
floating-point warnings (overflow, invalid value) are silenced inside the
loop, since whether they fire would depend on the private data.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ...fairness._ermi import block_tables, ermi_from_tables
from ...privacy._clipping import clip_factors_from_norms, clip_margin
from ...privacy._releases import joint_release
from ...utils._array_api import (
    array_namespace,
    device_of,
    from_host,
    row_max,
    row_sums,
    rowwise_dot,
    to_numpy,
)
from .._linear import as_rows, take_rows
from .._private_fit import weights_in_dtype
from .._rows import finite_rows_mask
from .._sampling import poisson_batch
from .._sgd import tail_averaged
from ._model import fair_model, logits

__all__ = [
    "SGDAResult",
    "SGDAStepConfig",
    "fair_terms",
    "logits",
    "noisy_sgda",
    "sgda_step",
    "softmax_probabilities",
    "softmax_terms",
]


@dataclass
class SGDAResult:
    """What :func:`noisy_sgda` returns.

    ``coef`` has shape ``(n_features, n_classes)``, ``intercept`` shape
    ``(n_classes,)``, ``dual`` the last dual iterate, all three in the
    namespace and on the device of ``X``; the curves are per epoch (lists of
    floats, empty when not recorded).
    """

    coef: object
    intercept: object
    dual: object
    n_steps: int
    loss_curve: list = field(default_factory=list)
    fairness_curve: list = field(default_factory=list)


@np.errstate(over="ignore", invalid="ignore")
def softmax_terms(raw, y, *, with_loss=True):
    """Probabilities, cross-entropy gradient ``F - e_y`` and per-sample loss.

    One pass of a stable log-softmax: the same values as
    :class:`~sklearn_dpfair._loss.SoftmaxLoss` (``raw_gradient``, ``loss``,
    up to rounding) at a fraction of the cost of SciPy's generic array-API
    wrappers and of numpy's reductions along a short axis, which dominate the
    step time for batches of a few hundred rows. ``raw`` and the
    class indices ``y`` are arrays of one namespace and device.

    The label entries are selected with a one-hot indicator (the array API
    has no fancy-index assignment): subtracting 0 and adding ``0 * x`` are
    exact, so the values equal the indexed form bit for bit. With
    ``with_loss=False`` (no curves recorded) the loss is not computed and
    ``None`` is returned in its place.

    A row of ``raw`` that is not finite (logits that overflowed, or
    ``inf - inf`` inside the product ``x_i Theta`` for a huge but finite
    row) gets probabilities, gradient and loss exactly 0: the row then
    contributes nothing to any sum of the step (primal, dual, curves), a
    fixed value that does not depend on what the record holds. Finite rows
    are unchanged bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._sgda import softmax_terms
    >>> raw = np.array([[0.0, 0.0], [np.inf, -np.inf]])
    >>> proba, grad, loss = softmax_terms(raw, np.array([1, 0]))
    >>> proba
    array([[0.5, 0.5],
           [0. , 0. ]])
    >>> grad
    array([[ 0.5, -0.5],
           [ 0. ,  0. ]])
    >>> loss.round(4)
    array([0.6931, 0.    ])
    """
    xp = array_namespace(raw)
    finite, zero, shifted, total, proba = _softmax_parts(raw)
    classes = xp.arange(raw.shape[1], dtype=y.dtype, device=device_of(raw))
    onehot = xp.astype(y[:, None] == classes[None, :], raw.dtype)
    grad = xp.where(finite, proba - onehot, zero)
    if not with_loss:
        return proba, grad, None
    # A gap of -inf (two finite logits ~1.8e308 apart) would make the one-hot
    # selection 0 * -inf = nan: floored at the largest float, which no
    # ordinary gap reaches (only the diagnostic loss reads it).
    gaps = xp.clip(shifted, -float(xp.finfo(raw.dtype).max), None)
    loss = xp.log(total) - rowwise_dot(gaps, onehot)
    return proba, grad, xp.where(finite[:, 0], loss, zero[:, 0])


def _softmax_parts(raw):
    # The stable softmax of softmax_terms: the finite-row mask, zeros,
    # shifted logits, row sums of their exponentials and the probabilities.
    xp = array_namespace(raw)
    finite = finite_rows_mask(raw)[:, None]
    zero = xp.zeros_like(raw)
    shifted = raw - row_max(raw)
    exp = xp.exp(shifted)
    total = row_sums(exp)
    proba = xp.where(finite, exp / total[:, None], zero)
    return finite, zero, shifted, total, proba


@np.errstate(over="ignore", invalid="ignore")
def softmax_probabilities(raw):
    """The probabilities of :func:`softmax_terms` alone (bit for bit).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._sgda import softmax_probabilities
    >>> softmax_probabilities(np.array([[0.0, 0.0], [np.inf, -np.inf]]))
    array([[0.5, 0.5],
           [0. , 0. ]])
    """
    return _softmax_parts(raw)[-1]


def _epoch_ends(n_steps, epochs):
    """Step indices after which an epoch ends (``epochs`` equal shares of T)."""
    ends = np.round(np.arange(1, epochs + 1) * n_steps / epochs).astype(int) - 1
    return set(np.maximum(ends, 0).tolist())


def fair_terms(
    regularizer, W, proba, grad, constants, *, fairness_weight, dual_clip_norm
):
    """The ERMI part of one batch: logit gradient and clipped cell sums.

    Adds ``lambda w_i F_i * (c_i - <c_i, F_i>)`` to the logit-space gradient
    ``grad`` (step 4) and, unless ``dual_clip_norm`` is None (the exact dual
    update), returns the dual gradient's sufficient statistic: the
    per-(block, group) sums of the weighted predictions ``w_i F_i``, each
    term clipped to ``dual_clip_norm`` (step 6, before noise;
    :meth:`~sklearn_dpfair.fairness._ermi.ERMIRegularizer.dual_gradient_from_cells`
    turns the noisy sums into the ascent direction). Releasing these sums
    rather than the clipped dual gradients ``h_i`` (thesis Algorithm 10)
    is the same Gaussian release at the same noise multiplier, with a
    sensitivity of ``max w_i`` instead of ``||h_i||``'s bound
    ``2 w sqrt(sum_r 1 / P_s(r))``, and the noise then reaches each group's
    row of the dual scaled by its own ``1 / sqrt(P_s(r))`` rather than the
    sum over groups. ``constants`` are the batch rows' ``(block, group,
    weight, 1/sqrt(Ps))``. Shared by the in-memory loop and the partitions
    of a Dask fit.

    Returns
    -------
    grad : array of shape (batch, m)
    cell_sums : array of the shape of ``W``, or None
    """
    blk, grp, wt, isq = constants
    xp = array_namespace(wt)
    # A public weight near float64's largest times a block weight above 1
    # (1 / P(Y = a) for equal opportunity) overflows to inf: capped at the
    # largest float, every product below stays a number, and the clip
    # below bounds the record's term as any other's.
    wt = xp.minimum(wt, xp.asarray(xp.finfo(wt.dtype).max, dtype=wt.dtype))
    c = regularizer.coefficients(W, blk, grp, isq)
    grad = grad + fairness_weight * regularizer.raw_gradient(proba, c, wt)
    if dual_clip_norm is None:
        return grad, None
    if math.isinf(dual_clip_norm):
        factor = wt
    else:
        norms = regularizer.cell_term_norms(proba, wt)
        # The norms are float64 (the weights are), the terms w_i c_i F_i are
        # made of proba's values: the margin of their dtype (float32: the
        # terms' last roundings stay inside the clip; float64: 1).
        bound = dual_clip_norm * clip_margin(proba)
        clip = clip_factors_from_norms(norms, dual_clip_norm, margin=clip_margin(proba))
        # A norm w_i ||F_i|| that is not finite has clip factor 0: the
        # record's term is dropped (0, within the bound), not w_i * 0
        # (inf * 0 = NaN in the released sum).
        factor = xp.where(clip > 0, wt * clip, xp.zeros_like(clip))
        factor = _rescued_dual_factors(xp, factor, clip, wt, norms, bound)
    return grad, regularizer.cell_sums(proba, blk, grp, factor)


def _rescued_dual_factors(xp, factor, clip, wt, norms, bound):
    # Factor 0 also comes from a clip factor C / (w_i ||F_i||) below the
    # smallest normal float, which the privacy core sets to 0: a weight near
    # the largest float (w_i ||F_i|| above C / 2.2e-308). That term is not
    # to be dropped: its weight raises it only up to C. Its factor is
    # min(w_i, C / ||F_i||) directly (||F_i|| >= 1 / sqrt(m) on the simplex,
    # so the quotient is at most C sqrt(m)), which never forms the product
    # w_i ||F_i||: the term has norm min(w_i ||F_i||, C) up to rounding. One
    # n-length test in the usual case.
    lost = (clip == 0) & (wt > 0) & (norms > 0) & xp.isfinite(norms)
    if not bool(xp.any(lost)):
        return factor
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        direct = xp.minimum(wt, bound / (norms / wt))
    return xp.where(lost, direct, factor)


@dataclass(frozen=True)
class SGDAStepConfig:
    """Public constants of an SGDA step (:func:`sgda_step`)."""

    primal_mechanism: object
    dual_mechanism: object
    denominator: float
    learning_rate: float
    dual_learning_rate: float
    alpha: float
    project_dual: bool

    @property
    def joint_noise_multiplier(self):
        """``(sigma_theta^-2 + sigma_w^-2)^(-1/2)``: one step's accounted noise.

        The primal and the rescaled dual blocks with their own noise
        multipliers are one Gaussian release of this multiplier (their
        Renyi divergences add); ``sigma_theta`` alone without a dual block.
        """
        precision = sum(
            m.noise_multiplier**-2
            for m in (self.primal_mechanism, self.dual_mechanism)
            if m is not None and m.noise_multiplier > 0
        )
        return precision**-0.5 if precision > 0 else 0.0


def sgda_step(model, coef, w0, W, sums, *, regularizer, config, rng):
    """The private update of one SGDA step from its clipped sums (steps 5-6).

    ``sums`` is ``(g_coef, g_w0, cell_sums)``: the clipped primal sum of the
    batch and its clipped cell sums (:func:`fair_terms`; None without an
    ascent step), computed
    in memory or added up from the partitions of a Dask collection. The
    primal block is noised and stepped by the linear layer
    (:meth:`~sklearn_dpfair._solvers._linear.LinearModel.private_step`),
    then the dual block gets its noise and the projected ascent step; the
    noise draws are in that order. ``regularizer`` None: no dual update.

    Returns
    -------
    coef, w0, W : arrays
    """
    g_coef, g_w0, cell_sums = sums
    # The primal and the rescaled dual sums are one Gaussian release, as the
    # fit accounts them (the joint noise multiplier), also on a step of the
    # weight path that skips the dual block (it then releases less).
    with joint_release(config.joint_noise_multiplier):
        new_coef, new_w0 = model.private_step(
            coef,
            w0,
            g_coef,
            g_w0,
            mechanism=config.primal_mechanism,
            denominator=config.denominator,
            learning_rate=config.learning_rate,
            alpha=config.alpha,
            rng=rng,
        )
        noisy_cells = None
        if regularizer is not None and cell_sums is not None:
            noisy_cells = config.dual_mechanism.privatize(cell_sums, rng)
    if math.isinf(config.primal_mechanism.clip_norm):
        # Without clipping (the non-private fit) the sum over several rows
        # near the float64 limit can overflow although each term is
        # finite: the coordinates it would make non-finite keep their
        # value. A clipped sum is at most n C: never taken.
        xp = array_namespace(coef)
        new_coef = xp.where(xp.isfinite(new_coef), new_coef, coef)
        new_w0 = xp.where(xp.isfinite(new_w0), new_w0, w0)
    if noisy_cells is not None:
        # The released cell sums (noise on a cell no record can reach set
        # back to its exact 0: post-processing) give the ascent direction.
        noisy_cells = regularizer.hold_left_out(noisy_cells)
        direction = regularizer.dual_gradient_from_cells(W, noisy_cells)
        W = W + config.dual_learning_rate * (direction / config.denominator)
        if config.project_dual:
            W = regularizer.project(W)
        else:
            W = regularizer.hold_left_out(W)
    return new_coef, new_w0, W


# Whether numpy warns of an overflow or an invalid value depends on the
# private data (a huge record): silenced for the whole solve.
@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def noisy_sgda(
    X,
    y,
    loss,
    regularizer,
    *,
    blocks,
    codes,
    weight_scale,
    fairness_weight,
    primal_mechanism,
    dual_mechanism,
    sampling_probability,
    n_steps,
    epochs,
    learning_rate,
    dual_learning_rate,
    alpha,
    intercept_scaling,
    dual_update,
    project_dual,
    return_iterate,
    rng,
    record_curves,
    constraint=None,
    tail_fraction=0.5,
    init=None,
    sample_weight=None,
    progress=None,
    model=None,
):
    """Run (noisy) SGDA on ``min_theta max_W mean_i [l_i + lambda psi_i]``.

    Parameters
    ----------
    X : array or sparse matrix of shape (n_samples, n_features)
        numpy or any array-API array (e.g. a torch tensor on a GPU); the
        solver computes in its namespace and on its device, in X's dtype
        (float32 stays float32). A scipy sparse matrix (CSR, or CSC
        converted to CSR once) runs on the host with numpy ``y``: batch
        gathers, logits and the clipped primal sum use its stored entries
        only, ``O(nnz(X_B) m)`` per step, and ``X`` is never made dense.
    y : array of shape (n_samples,)
        Class indices (integers), same namespace and device as ``X``.
    loss : SoftmaxLoss
        The softmax cross-entropy (its ``n_outputs`` gives the number of
        classes; values are computed by :func:`softmax_terms`).
    regularizer : ERMIRegularizer or None
        None (or ``fairness_weight == 0``) runs plain (noisy) SGD: no dual.
    blocks, codes : ndarray of shape (n_samples,)
        Block and group of each row (``-1``: no penalty term), host numpy.
    weight_scale : float
        Multiplies every penalty weight (``n / n_observed``).
    fairness_weight : float
        lambda.
    primal_mechanism, dual_mechanism : GaussianMechanism
        Clip norm and noise multiplier of the two blocks (noise 0: no noise).
    sampling_probability : float
        Poisson rate ``q``; 1 is full batch.
    n_steps, epochs : int
        Number of steps ``T`` and of epochs (for the curves).
    learning_rate, dual_learning_rate : float
        Constant step sizes.
    alpha : float
        L2 penalty on the coefficients (not on the intercept).
    intercept_scaling : float
        Constant ``s`` of the augmented row; 0 fits no intercept.
    dual_update : {"sgda", "exact"}
        Ascent step, or exact maximiser (full batch only).
    project_dual : bool
        Apply the box projection after each ascent step.
    return_iterate : {"last", "average"}
        Last iterate, or the average of the last ``tail_fraction`` of them.
    rng : numpy.random.Generator
        Batches and noise.
    record_curves : bool
        Record per-epoch training loss and ERMI (reads the training data).
    constraint : object, default=None
        Constraint object, needed to evaluate the ERMI curve.
    tail_fraction : float, default=0.5
        Fraction of the iterates averaged by ``return_iterate="average"``.
    init : tuple of arrays, default=None
        Warm start ``(coef, w0, W)`` (a previous result's ``coef``,
        ``intercept / intercept_scaling`` and ``dual``); None starts at 0.
        A ``W`` of another shape (a stage without fairness term) is ignored.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public per-record weights (host numpy). A record's whole term
        ``w_i (l_i + lambda psi_i)`` is weighted: its loss gradient is
        multiplied by ``w_i`` and its penalty weight too, *before* the primal
        and the dual terms are clipped, so one record's influence stays
        within the clip norms whatever its weight. None is unweighted.
    progress : Progress or None, default=None
        Prints about one line an epoch
        (:mod:`sklearn_dpfair._solvers._progress`): the norm of the released
        model update divided by the step size, post-processing of the noisy
        primal sum (no private value).
    model : NetworkFairModel or None, default=None
        The primal block (:mod:`._model`): None is the linear model on
        ``[x_i, s]``; a network starts at its initialization, and ``coef``
        and ``intercept`` are then its flattened weights and biases.

    Returns
    -------
    result : SGDAResult
    """
    sparse = sp.issparse(X)
    if sparse:
        if not isinstance(y, np.ndarray):
            raise TypeError(
                "Sparse input X runs on the host (numpy) only; got labels on "
                f"device {device_of(y)!r}. Use device='cpu' or a dense X."
            )
        # Canonical CSR once (batches are row gathers); never densified.
        X = as_rows(X)
        xp, device = np, "cpu"
    else:
        xp = array_namespace(X)
        device = device_of(X)
    n_samples = X.shape[0]
    m = loss.n_outputs
    dtype = X.dtype
    # The primal block: a linear model on the augmented rows [x_i, s] (its
    # clipped, noisy gradient and step are the linear layer's), or a network
    # (_model: ghost-norm clipping of all its layers jointly).
    if model is not None and sparse:
        raise TypeError("A network (hidden_layer_sizes) needs a dense X.")
    model = fair_model(model, m, intercept_scaling)
    coef, w0 = model.zeros(X)
    s = model.intercept_scaling
    row_norms = model.stored_row_norms(X)
    # Divide by the expected batch size, a public constant: the realised size
    # of a Poisson batch depends on the data set (add/remove one record).
    denominator = sampling_probability * n_samples
    full_batch = sampling_probability >= 1.0

    fair = regularizer is not None and fairness_weight > 0
    if fair:
        W = xp.zeros(
            (regularizer.n_blocks, regularizer.n_groups, m), dtype=dtype, device=device
        )
        # One cell code a row (smallest integer dtype), copied to X's device
        # once; a batch looks up its rows' (block, group, weight, 1/sqrt(Ps))
        # in per-cell tables (ERMIRegularizer.batch_constants), so no n-long
        # float copy of them is held. A record's weight multiplies its
        # penalty weight (every ERMI term is linear in it), so the penalty
        # and dual terms are weighted too.
        cells = from_host(regularizer.row_cells(blocks, codes), y)
    else:
        W = xp.zeros((0, 0, m), dtype=dtype, device=device)
    if init is not None:
        coef = xp.astype(init[0], dtype, copy=True)
        w0 = xp.astype(init[1], dtype, copy=True)
        if tuple(init[2].shape) == tuple(W.shape):
            W = xp.astype(init[2], dtype, copy=True)
    dual_clip = dual_mechanism.clip_norm if fair else math.inf
    step_config = SGDAStepConfig(
        primal_mechanism=primal_mechanism,
        dual_mechanism=dual_mechanism,
        denominator=denominator,
        learning_rate=learning_rate,
        dual_learning_rate=dual_learning_rate,
        alpha=alpha,
        project_dual=project_dual,
    )

    # Per-row data a batch gathers: the labels and cells (small integer
    # codes) and the public weights.
    # Saturated at the largest float of X's dtype (a float32 fit: 3.4e38),
    # as DP-SGD does (weights_in_dtype): a larger weight cast to float32
    # would be inf, and the record's primal term, no longer finite, would
    # be dropped instead of clipped. The loss and the penalty of a record
    # keep one weight, so its gradient keeps its direction.
    sw = (
        None
        if sample_weight is None
        else from_host(weights_in_dtype(np.asarray(sample_weight), dtype), y)
    )

    ends = _epoch_ends(n_steps, epochs)
    if progress is not None:
        progress = progress.per(n_steps, epochs)
    loss_curve, fairness_curve = [], []
    epoch_loss, epoch_count = 0.0, 0
    # The ERMI curve is measured whenever there are groups, also in a stage
    # whose fairness weight is 0 (the first stage of a weight path), so it
    # keeps one entry an epoch, as the loss curve does.
    track_fairness = (
        record_curves and regularizer is not None and constraint is not None
    )
    if track_fairness:
        observed = codes >= 0
        tables = np.zeros((regularizer.n_blocks, regularizer.n_groups, m))
        n_observed = 0
    def step(t, coef, w0):
        # The dual variable and the curves are the loop's state beside
        # (coef, w0).
        nonlocal W, tables, epoch_loss, epoch_count, n_observed
        # Host indices (for the host-side curves) and their device copy.
        idx = poisson_batch(rng, n_samples, sampling_probability)
        if full_batch:
            # q = 1 takes every row without drawing: no copy of X is needed.
            Xb, norms_b, yb, sw_b = X, row_norms, y, sw
            if row_norms is None:
                norms_b = model.row_norms(X)
            cells_b = cells if fair else None
        else:
            idx_d = idx if sparse else from_host(idx, y)
            Xb = take_rows(X, idx_d)
            norms_b = model.row_norms_of(Xb, idx_d, row_norms)
            yb = xp.take(y, idx_d, axis=0)
            cells_b = xp.take(cells, idx_d, axis=0) if fair else None
            sw_b = None if sw is None else xp.take(sw, idx_d, axis=0)
        if fair:
            b_blk, b_grp, b_wt, b_isq = regularizer.batch_constants(
                cells_b, weight_scale if sw_b is None else weight_scale * sw_b
            )
        raw, cache = model.forward(Xb, coef, w0)
        proba, grad, sample_loss = softmax_terms(raw, yb, with_loss=record_curves)
        if sw_b is not None:
            # Weighted before it is clipped (model.noisy_gradient).
            grad = grad * xp.astype(sw_b, grad.dtype)[:, None]
        if record_curves:
            epoch_loss += float(xp.sum(sample_loss))
            epoch_count += idx.size
            if track_fairness:
                tables += block_tables(
                    to_numpy(proba), blocks[idx], codes[idx], *tables.shape[:2]
                )
                n_observed += int(np.count_nonzero(observed[idx]))
        cell_sums = None
        if fair:
            if dual_update == "exact":
                W = regularizer.dual_maximizer(proba, b_blk, b_grp, b_wt)
            grad, cell_sums = fair_terms(
                regularizer,
                W,
                proba,
                grad,
                (b_blk, b_grp, b_wt, b_isq),
                fairness_weight=fairness_weight,
                dual_clip_norm=dual_clip if dual_update != "exact" else None,
            )

        g_coef, g_w0 = model.primal_sum(
            Xb, grad, norms_b, cache, primal_mechanism.clip_norm
        )
        new_coef, new_w0, W = sgda_step(
            model,
            coef,
            w0,
            W,
            (g_coef, g_w0, cell_sums),
            regularizer=regularizer if fair else None,
            config=step_config,
            rng=rng,
        )
        if progress is not None:
            progress.moved(t + 1, (coef, w0), (new_coef, new_w0), learning_rate)
        coef, w0 = new_coef, new_w0

        if record_curves and t in ends:
            loss_curve.append(epoch_loss / max(epoch_count, 1))
            epoch_loss, epoch_count = 0.0, 0
            if track_fairness:
                fairness_curve.append(
                    ermi_from_tables(tables, n_observed, constraint)[0]
                )
                tables[:] = 0.0
                n_observed = 0
        return coef, w0

    last, average = tail_averaged(
        step, coef, w0, n_steps=n_steps, tail_fraction=tail_fraction
    )
    coef, w0 = average if return_iterate == "average" else last
    return SGDAResult(
        coef=coef,
        intercept=s * w0,
        dual=W,
        n_steps=n_steps,
        loss_curve=loss_curve,
        fairness_curve=fairness_curve,
    )
