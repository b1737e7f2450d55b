# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Noisy clipped minibatch SGD for linear models (DP-SGD).

Order of calls in :func:`noisy_sgd`, per step ``t = 1..T``:

1. sample a Poisson batch ``B_t`` (each row with probability ``q``);
2. raw predictions ``X_B W + s w_0`` (rows that overflow are recomputed
   by a scaled product and saturated, so every prediction is finite) and
   raw-space gradients ``R_B``;
3. clip factors from factorized norms ``||r_i|| * ||[x_i, s]||`` (a row
   whose gradient is still not finite contributes 0);
4. clipped sum ``[X_B, s]^T (c * R_B)``;
5. Gaussian noise of std ``sigma * C`` on that sum (the only private step);
6. divide by the *expected* batch size ``q n`` (a public constant: dividing
   by the realized ``|B_t|`` would leak it under add/remove adjacency);
7. add the data-independent L2 term and update;
8. accumulate the tail average (post-processing).

Steps 2-7 are the linear-model layer's
(:class:`~sklearn_dpfair._solvers._linear.LinearModel`: ``raw_predictions``,
``clipped_gradient_sum``, ``private_step``), which also handles sparse rows and
public sample weights (multiplied into ``R_B`` before clipping). With
``noise_multiplier = 0`` and ``clip_norm = inf`` the same loop is plain
minibatch SGD, which is how ``epsilon = inf`` shares the code path.

The loop is written once, against the array API: it runs in the namespace
and on the device of ``X`` (numpy, or torch on a GPU). Batches and noise are
drawn on the host from ``rng`` in the same order on every backend, so a seed
gives the same batches and the same noise everywhere; only the floating-point
round-off of the arithmetic differs between backends. Memory beyond the data:
one batch of rows (``q n x d``), the ``n`` row norms and ``O(d K)``
parameters; no per-sample gradient is ever materialized.

Steps 5-8 are :func:`sgd_loop`, which takes steps 1-4 as a function (the
clipped sum of step ``t``): in memory here, or added up from the partitions
of a Dask collection (:mod:`._distributed`). The noise, the division and
the update are then the same code on the same driver.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..utils._array_api import array_namespace, device_of, from_host
from ..utils._validation import warn_at_caller
from ._feature_scaling import proximal_l2_factors
from ._linear import LinearModel, as_rows, take_rows, weighted_raw_gradient
from ._sampling import BallsAndBinsBatches, poisson_batch
from ._schedules import tail_start

__all__ = ["NoisySGDResult", "noisy_sgd", "sgd_loop", "tail_averaged"]


@dataclass
class NoisySGDResult:
    """What :func:`noisy_sgd` returns.

    ``coef`` has shape ``(n_features, n_outputs)``, ``intercept`` shape
    ``(n_outputs,)``, both in the namespace and on the device of ``X``;
    ``n_steps`` is the number of noisy updates ``T``.
    """

    coef: object
    intercept: object
    n_steps: int


def noisy_sgd(
    X,
    y,
    loss,
    *,
    mechanism,
    sampling_probability,
    n_steps,
    learning_rate,
    alpha,
    intercept_scaling,
    rng,
    tail_fraction=0.5,
    sample_weight=None,
    progress=None,
    batches_per_epoch=None,
):
    """Run DP-SGD on a linear model and return the tail-averaged iterate.

    Parameters
    ----------
    X : array or sparse matrix of shape (n_samples, n_features)
        numpy or any array-API array (e.g. a torch tensor on a GPU); the
        solver computes in its namespace and on its device. A scipy sparse
        matrix (CSR, or CSC converted to CSR once) runs on the host with
        numpy ``y``: batches, predictions and the clipped sum use its stored
        entries only, ``O(nnz(X_B) + d K)`` per step, and ``X`` is never
        made dense.
    y : array of shape (n_samples,)
        Encoded targets as the loss expects them, same namespace and device
        as ``X``.
    loss : object
        Pointwise loss with ``n_outputs`` and ``raw_gradient(y, raw)``.
    mechanism : GaussianMechanism
        Clip norm and noise multiplier of each step.
    sampling_probability : float
        Poisson sampling rate ``q`` in (0, 1].
    n_steps : int
        Number of steps ``T``, fixed before looking at the data.
    learning_rate : float
        Constant step size.
    alpha : float
        L2 penalty on the coefficients (not on the intercept).
    intercept_scaling : float
        Constant ``s`` appended to each row; 0 fits no intercept.
    rng : numpy.random.Generator
        Source of the batches and of the noise.
    tail_fraction : float, default=0.5
        Fraction of the last iterates that are averaged.
    sample_weight : array of shape (n_samples,) or None, default=None
        Public per-record weights, same namespace and device as ``X``. Each
        record's raw gradient is multiplied by its weight *before* clipping,
        so a record's clipped term stays within the clip norm whatever its
        weight. None is the unweighted loop.
    progress : Progress or None, default=None
        Called after every step (:func:`sgd_loop`).
    batches_per_epoch : int or None, default=None
        None: Poisson batches at rate ``sampling_probability``. An int ``t``:
        balls-and-bins batches instead (each row in exactly one of the ``t``
        batches of every epoch, :class:`~._sampling.BallsAndBinsBatches`),
        with ``sampling_probability = 1 / t`` giving the public expected
        batch size ``n / t`` the sums are divided by.

    Returns
    -------
    result : NoisySGDResult
    """
    if sp.issparse(X) and not isinstance(y, np.ndarray):
        raise TypeError(
            "Sparse input X runs on the host (numpy) only; got targets on "
            f"device {device_of(y)!r}. Use device='cpu' or a dense X."
        )
    X = as_rows(X)
    xp = np if sp.issparse(X) else array_namespace(X, y)
    n_samples = X.shape[0]
    model = LinearModel(loss.n_outputs, float(intercept_scaling))
    # The intercept is parametrized as b = s * w0 so that the augmented row
    # [x, s] is what gets clipped; with s = 0 it stays at zero.
    coef, w0 = model.zeros(X)
    full_batch = sampling_probability >= 1.0
    # q = 1 uses every row's norm at every step: computed once.
    row_norms = model.row_norms(X) if full_batch else model.stored_row_norms(X)

    if batches_per_epoch is None:

        def draw_batch(rng, t, like):
            return poisson_batch(rng, n_samples, sampling_probability, like=like)

    else:
        draw_batch = BallsAndBinsBatches(n_samples, batches_per_epoch)

    def clipped_sum(t, coef, w0):
        if full_batch:
            # q = 1 takes every row without drawing: no copy of X is needed.
            Xb, yb, norms_b, wb = X, y, row_norms, sample_weight
        else:
            idx = draw_batch(rng, t, like=y)
            Xb = take_rows(X, idx)
            yb = xp.take(y, idx, axis=0)
            norms_b = model.row_norms_of(Xb, idx, row_norms)
            wb = None if sample_weight is None else xp.take(sample_weight, idx, axis=0)
        raw_grad = loss.raw_gradient(yb, model.raw_predictions(Xb, coef, w0))
        # Weight first, clip after: one record's influence is bounded by the
        # clip norm, not by C times its weight.
        raw_grad = weighted_raw_gradient(raw_grad, wb)
        return model.clipped_gradient_sum(Xb, raw_grad, norms_b, mechanism.clip_norm)

    return sgd_loop(
        clipped_sum,
        model,
        coef,
        w0,
        mechanism=mechanism,
        n_steps=n_steps,
        denominator=sampling_probability * n_samples,
        learning_rate=learning_rate,
        alpha=alpha,
        rng=rng,
        tail_fraction=tail_fraction,
        progress=progress,
    )


def sgd_loop(
    clipped_sum,
    model,
    coef,
    w0,
    *,
    mechanism,
    n_steps,
    denominator,
    learning_rate,
    alpha,
    rng,
    tail_fraction=0.5,
    progress=None,
    column_alpha=None,
):
    """The DP-SGD loop around a clipped-sum function (steps 5-8).

    Parameters
    ----------
    clipped_sum : callable
        ``clipped_sum(t, coef, w0) -> (g_coef, g_w0)``: the sum over the
        Poisson batch of step ``t`` of the per-example gradients clipped to
        ``mechanism.clip_norm``, whether computed in memory or added up
        from the partitions of a distributed collection. It draws its batch
        before the step's noise is drawn.
    model : LinearModel
        The linear-model layer (outputs, intercept scaling).
    coef, w0 : arrays
        Initial parameters; their namespace, device and dtype are kept.
    mechanism : GaussianMechanism
        Noise of each step.
    n_steps : int
        Number of steps ``T``, fixed before looking at the data.
    denominator : float
        The *expected* batch size ``q n`` (public).
    learning_rate, alpha : float
        Constant step size and L2 penalty on the coefficients.
    rng : numpy.random.Generator
        Source of the noise.
    tail_fraction : float, default=0.5
        Fraction of the last iterates that are averaged.
    progress : Progress or None, default=None
        ``progress(t + 1, proxy)`` after step ``t``, with ``proxy`` the norm
        of the released update divided by the step size (the noisy
        gradient, penalty included): computed from released iterates only.
    column_alpha : array of shape (n_features,) or None, default=None
        Per-column L2 strengths ``alpha_j``, in place of ``alpha`` (which
        must then be 0): the penalty ``sum_j (alpha_j / 2) ||coef_j||^2``,
        taken by its exact proximal step, ``coef_j <- (coef_j - eta g_j) /
        (1 + eta alpha_j)`` (proximal gradient descent, Parikh and Boyd,
        *Proximal Algorithms*, 2014, Sec. 4.2), whose fixed point is the
        penalized minimizer whatever ``eta alpha_j``: an explicit step
        diverges beyond ``eta alpha_j = 2``, and ``alpha_j`` may be huge
        (the user-unit penalty of a model fitted on standardized columns,
        ``alpha / scale_j^2``; ``inf`` holds the coefficient at 0). Data
        independent. None: the explicit step of ``alpha`` (the private
        fits').

    Returns
    -------
    result : NoisySGDResult
    """
    shrink = None
    if column_alpha is not None:
        if alpha:
            raise ValueError("column_alpha replaces alpha: pass alpha=0.")
        shrink = from_host(proximal_l2_factors(learning_rate, column_alpha), like=coef)

    def step(t, coef, w0):
        g_coef, g_w0 = clipped_sum(t, coef, w0)
        new = model.private_step(
            coef,
            w0,
            g_coef,
            g_w0,
            mechanism=mechanism,
            denominator=denominator,
            learning_rate=learning_rate,
            alpha=alpha,
            rng=rng,
        )
        if shrink is not None:
            # The penalty's proximal map after the loss' gradient step.
            xp = array_namespace(new[0])
            new = (xp.astype(new[0] * shrink, new[0].dtype, copy=False), new[1])
        if progress is not None:
            progress.moved(t + 1, (coef, w0), new, learning_rate)
        return new

    # A step too large for the noise overflows the iterates to infinities,
    # then NaNs: not warned about step by step, refused once at the end.
    with np.errstate(over="ignore", invalid="ignore"):
        _, (coef, w0) = tail_averaged(
            step, coef, w0, n_steps=n_steps, tail_fraction=tail_fraction
        )
    xp = array_namespace(coef)
    if not (bool(xp.all(xp.isfinite(coef))) and bool(xp.all(xp.isfinite(w0)))):
        # Warned, not raised: the model is released (and accounted) as it
        # is, and the warning says what its coefficients show, nothing more
        # (post-processing of the noisy steps). An exception would withhold
        # the model but not its divergence, which the fit's record, and a
        # ledger, would then not account.
        warn_at_caller(
            "DP-SGD's iterates left the float range: they diverged at "
            f"learning_rate={learning_rate!r}, and the model's coefficients "
            "are not finite. Lower learning_rate, or leave it 'auto'."
        )
    return NoisySGDResult(coef=coef, intercept=model.intercept(w0), n_steps=n_steps)


def tail_averaged(step, coef, w0, *, n_steps, tail_fraction=0.5):
    """Run ``coef, w0 = step(t, coef, w0)`` for ``t < T``; last and tail-averaged.

    The average of the last ``tail_fraction`` of the iterates is
    post-processing of the released steps. It is their sum divided by their
    count; an entry whose sum overflows (finite iterates beyond ``max /
    count``, as a step size near float64's largest makes them) takes the sum
    of the iterates each divided by the count instead, which stays within the
    largest iterate. Both are accumulated, so that every entry whose sum is
    finite is the plain average, bit for bit.

    Returns
    -------
    last : tuple of arrays
        ``(coef, w0)`` after the last step.
    average : tuple of arrays
        Their average over the steps ``t >= tail_start(T, tail_fraction)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._sgd import tail_averaged
    >>> def step(t, coef, w0):  # coef: 1e308, 1.2e308, 1.4e308, 1.6e308
    ...     return np.full(1, (1.0 + 0.2 * t) * 1e308), w0 - 1.0
    >>> last, (coef, w0) = tail_averaged(step, np.zeros(1), np.zeros(1), n_steps=4)
    >>> round(float(coef[0]) / 1e308, 9), w0.tolist()
    (1.5, [-3.5])
    """
    xp = array_namespace(coef)
    tail_from = tail_start(n_steps, tail_fraction)
    n_avg = n_steps - tail_from
    coef_sum = xp.zeros_like(coef)
    w0_sum = xp.zeros_like(w0)
    # The overflow-free accumulation, read only where a sum is not finite.
    coef_scaled = xp.zeros_like(coef)
    w0_scaled = xp.zeros_like(w0)
    for t in range(n_steps):
        coef, w0 = step(t, coef, w0)
        if t >= tail_from:
            # An overflowing sum is expected there and replaced at the end:
            # not warned about.
            with np.errstate(over="ignore", invalid="ignore"):
                coef_sum = coef_sum + coef
                w0_sum = w0_sum + w0
            coef_scaled = coef_scaled + coef / n_avg
            w0_scaled = w0_scaled + w0 / n_avg
    return (coef, w0), (
        _finite_average(xp, coef_sum, coef_scaled, n_avg),
        _finite_average(xp, w0_sum, w0_scaled, n_avg),
    )


def _finite_average(xp, total, scaled, count):
    """``total / count``, or ``scaled`` (the terms' sum / count) where not finite."""
    average = total / count
    finite = xp.isfinite(total)
    if bool(xp.all(finite)):
        return average
    return xp.where(finite, average, scaled)
