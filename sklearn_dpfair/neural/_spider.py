# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clipped per-example gradient differences of a dense network (SPIDER).

A difference round of ISRL-DP FedProx-SPIDER (Lowy's thesis, Alg. 4,
line 11) sums, over a silo's batch, every record's
``d_i = clip_C(g_i(w_r)) - clip_C(g_i(w_{r-1}))``. For a non-smooth network
``||d_i||`` is bounded by ``2C`` only, so each ``d_i`` is clipped again, to
the round's public ``c_r`` (:mod:`sklearn_dpfair.federated._spider`). The
norm of a difference of two rank-one layer gradients has no ghost-norm
shortcut that is exact in floating point (``||a d^T - a' d'^T||^2`` by the
identity cancels catastrophically when the two are close, which is when
``c_r`` is small), so the per-example gradients are formed, a chunk of rows
at a time, in the broadcast layout (every layer's weights row-major, then
every layer's biases), and the norm is taken of the difference actually
summed.
"""

import math

import numpy as np

from .._solvers._rows import finite_rows_mask, stable_row_norms
from ._network import (
    _ghost_norms,
    backward,
    clip_factors,
    clipped_network_sums,
    forward,
)

__all__ = ["clipped_difference_sum", "clipped_per_example_gradients"]

# Rows per chunk times parameters: the per-example gradients of a chunk,
# twice, stay near 2 x 32 MiB of float64.
_CHUNK_ENTRIES = 1 << 22


def clipped_per_example_gradients(
    X, y, loss, weights, biases, *, activation, clip_norm
):
    """Every row's full gradient clipped to ``clip_norm``, flat.

    The clip factors are the central fit's (ghost norms,
    :func:`~sklearn_dpfair.neural._network.per_example_norms` and
    :func:`~sklearn_dpfair.neural._network.clip_factors`), and every entry of
    a clipped row is a product ``a_j (c delta_k)`` with
    ``|a_j c delta_k| <= C``: finite. A finite row whose factor cannot be
    formed (its gradient norm overflowed: inputs or activations near the
    largest float; or ``C / ||g_i||`` below the smallest normal float) is
    clipped to ``C`` like any other, as the central fit's sum clips it
    (:func:`~sklearn_dpfair.neural._network.clipped_network_sums`, on that
    row alone), not dropped; a row whose loss derivative is not finite is
    0.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
    y : ndarray of shape (n_rows,)
        Encoded targets.
    loss : object
        Pointwise loss with ``raw_gradient``.
    weights, biases : lists of ndarray
        The parameters.
    activation : str
        Activation of the hidden layers.
    clip_norm : float
        ``C`` (``inf``: finite rows unclipped).

    Returns
    -------
    gradients : ndarray of shape (n_rows, n_params)
        float64, in the broadcast layout.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair.neural._spider import clipped_per_example_gradients
    >>> W, b = [np.array([[1.0], [2.0]])], [np.zeros(1)]
    >>> G = clipped_per_example_gradients(np.array([[3.0, 4.0]]), np.array([0.0]),
    ...     BinaryLogisticLoss(), W, b, activation="relu", clip_norm=1.0)
    >>> G.shape, bool(np.linalg.norm(G) <= 1.0)
    ((1, 3), True)
    """
    inputs, pre_activations, raw = forward(X, weights, biases, activation)
    raw_gradient = loss.raw_gradient(y, raw)
    deltas = backward(inputs, pre_activations, weights, raw_gradient, activation)
    norms, input_norms = _ghost_norms(inputs, deltas)
    factors = clip_factors(norms, clip_norm)
    keep = (factors > 0)[:, None]
    all_kept = bool(keep.all())
    n = X.shape[0]
    sizes = [a.shape[1] * d.shape[1] for a, d in zip(inputs, deltas)]
    out = np.empty((n, sum(sizes) + sum(d.shape[1] for d in deltas)))
    start, bias_start = 0, sum(sizes)
    for a, delta, size in zip(inputs, deltas, sizes):
        a = np.asarray(a, dtype=np.float64)
        scaled = np.asarray(delta, dtype=np.float64)
        if not all_kept:
            # Zero the dropped rows in both operands first: never 0 * inf.
            a, scaled = np.where(keep, a, 0.0), np.where(keep, scaled, 0.0)
        scaled = scaled * factors[:, None]
        # Row i's block is a_i (c_i delta_i)^T, row-major: written in place.
        block = out[:, start : start + size].reshape(n, a.shape[1], scaled.shape[1])
        np.multiply(a[:, :, None], scaled[:, None, :], out=block)
        out[:, bias_start : bias_start + scaled.shape[1]] = scaled
        start += size
        bias_start += scaled.shape[1]
    for i in _rescue_candidates(raw_gradient, factors, input_norms, clip_norm):
        # The central fit's rescue on this row alone: the sum of one row is
        # its clipped gradient, min(||g_i||, C) up to rounding.
        rows = slice(i, i + 1)
        g_weights, g_biases = clipped_network_sums(
            [a[rows] for a in inputs],
            [z[rows] for z in pre_activations],
            weights,
            raw_gradient[rows],
            activation,
            clip_norm,
        )
        out[i] = np.concatenate(
            [np.ravel(g) for g in g_weights] + [np.ravel(g) for g in g_biases]
        )
    return out


def _rescue_candidates(raw_gradient, factors, input_norms, clip_norm):
    # The rows clipped_network_sums would not scale by their factor: factor 0
    # on a finite nonzero loss derivative (a norm that overflowed, or a
    # factor C / norm below the smallest normal float), and a clipped row
    # with an input above C / tiny (its c_i delta_i may be subnormal). Rare:
    # one n-length test in the usual case.
    if math.isinf(clip_norm):
        return np.empty(0, dtype=np.intp)
    lost = factors == 0
    subnormal_above = clip_norm / float(np.finfo(np.float64).smallest_normal)
    if not math.isinf(subnormal_above):
        lost |= (input_norms > subnormal_above) & (factors < 1)
    if not lost.any():
        return np.empty(0, dtype=np.intp)
    lost &= finite_rows_mask(raw_gradient) & ~np.all(raw_gradient == 0, axis=1)
    return np.flatnonzero(lost)


def clipped_difference_sum(
    X,
    y,
    loss,
    now,
    before,
    *,
    activation,
    clip_norm,
    difference_clip,
):
    """``sum_i clip_{c_r}(clip_C(g_i(w_r)) - clip_C(g_i(w_{r-1})))``.

    Adding or removing one row moves the sum by at most ``difference_clip``
    whatever the row holds: each difference is finite (two clipped
    gradients, or 0 for a row dropped at either model; ``C = inf`` drops a
    row whose difference is not finite) and its own stable norm gives its
    factor ``min(1, c_r / ||d_i||)``.

    Parameters
    ----------
    X, y, loss, activation
        As in :func:`clipped_per_example_gradients`.
    now, before : tuple of (weights, biases)
        The models ``w_r`` and ``w_{r-1}``.
    clip_norm : float
        ``C``, each gradient's clip.
    difference_clip : float
        ``c_r``, each difference's clip (0: the sum is 0; ``inf``: no clip).

    Returns
    -------
    total : ndarray of shape (n_params,)
        float64, in the broadcast layout.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair.neural._spider import clipped_difference_sum
    >>> X, y = np.array([[3.0, 4.0], [1e300, -1e300]]), np.array([0.0, 1.0])
    >>> now = ([np.array([[1.0], [2.0]])], [np.zeros(1)])
    >>> before = ([np.array([[-1.0], [0.5]])], [np.ones(1)])
    >>> d = clipped_difference_sum(X, y, BinaryLogisticLoss(), now, before,
    ...     activation="relu", clip_norm=1.0, difference_clip=0.25)
    >>> bool(np.linalg.norm(d) <= 2 * 0.25)
    True
    """
    n_params = sum(W.size for W in now[0]) + sum(b.size for b in now[1])
    total = np.zeros(n_params)
    if difference_clip == 0:
        return total
    chunk = max(1, _CHUNK_ENTRIES // n_params)
    for start in range(0, X.shape[0], chunk):
        rows = slice(start, start + chunk)
        kwargs = {"activation": activation, "clip_norm": clip_norm}
        with np.errstate(over="ignore", invalid="ignore"):
            # C = inf only: a difference of unclipped gradients may overflow;
            # its norm is then inf and its factor 0 (no warning on a record).
            d = clipped_per_example_gradients(X[rows], y[rows], loss, *now, **kwargs)
            d -= clipped_per_example_gradients(
                X[rows], y[rows], loss, *before, **kwargs
            )
            factors = clip_factors(stable_row_norms(d), difference_clip)
        if not bool(np.all(factors > 0)):
            d[factors == 0] = 0.0  # may hold inf or nan (C = inf only)
        total += factors @ d
    return total
