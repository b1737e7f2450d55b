# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A dense feed-forward network: forward pass, backward pass, ghost norms.

The network has layers ``l = 1..L`` with weights ``W_l`` of shape
``(n_{l-1}, n_l)`` and biases ``b_l`` of shape ``(n_l,)``. For a batch of
rows ``A_0 = X``, ``Z_l = A_{l-1} W_l + b_l`` and ``A_l = f(Z_l)`` for the
hidden layers (``f`` the activation); the last layer's ``Z_L`` are the raw
scores the loss reads (logits).

Per-example gradients without materializing them. Backpropagation gives,
for every example ``i`` and layer ``l``, the error ``delta_{l,i}``
(``dloss_i / dZ_{l,i}``, shape ``(n_l,)``). Example ``i``'s gradient with
respect to ``[W_l; b_l]`` is the outer product ``a~_{l-1,i} delta_{l,i}^T``
of the augmented activation ``a~ = [a, 1]`` and the error, whose Frobenius
norm factorizes:

    ``||a~ delta^T||_F = ||a~|| ||delta||``

(the "ghost norm" identity, Goodfellow 2015, "Efficient per-example gradient
computations"; Li et al. 2022, "Large language models can be strong
differentially private learners", Sec. 4). The norm of example ``i``'s
*full* gradient, all layers jointly, is therefore

    ``sqrt(sum_l (||a_{l-1,i}||^2 + 1) ||delta_{l,i}||^2)``,

``O(sum_l n_l)`` per example, computed with the privacy core's overflow-
and underflow-safe row norms. With the clip factors
``c_i = min(1, C / ||g_i||)`` the clipped sum of layer ``l`` is one matrix
product, ``A_{l-1}^T (c * Delta_l)`` (and ``sum_i c_i delta_{l,i}`` for the
bias): the per-example gradients (``n_params`` numbers per example) are
never formed.

Every function takes arrays of one namespace (numpy, or torch through
``array-api-compat``) and computes there. Whatever a record holds, its
clipped term is finite and within the clip norm: pre-activations that
overflow are recomputed by a scaled product and saturated
(:func:`~sklearn_dpfair.utils._array_api.finite_linear_scores`), and a record
whose gradient norm is not finite (an error that overflowed in the backward
pass, a product of norms beyond the largest float) gets clip factor 0.
:func:`clipped_network_sums` (DP-SGD's clipped sum) does not leave such a
record at 0: a finite record whose factor cannot be formed (a public weight
near the largest float, inputs or activations near it, a factor ``C / norm``
below the smallest normal float) is clipped to ``C`` like any other, its
errors recomputed from its loss derivative divided by a power of two and
every layer's block scaled by powers of two, so that its term has norm
``min(||g_i||, C)`` up to rounding, in float64 as in float32.
"""

import math
from itertools import pairwise
from numbers import Integral

import numpy as np

from .._solvers._rows import (
    _wide_squared_row_norms,
    finite_rows_mask,
    stable_row_norms,
)
from ..privacy._clipping import _is_narrow, clip_factors_from_norms
from ..utils._array_api import (
    array_namespace,
    arrays_like,
    finite_linear_scores,
    from_host,
    to_numpy,
)
from ..utils._numeric import MAX_FLOAT64_ENTRIES

__all__ = [
    "ACTIVATIONS",
    "backward",
    "check_hidden_layer_sizes",
    "clip_factors",
    "clipped_gradient_sums",
    "clipped_network_sums",
    "forward",
    "init_parameters",
    "layer_sizes",
    "n_parameters",
    "network_scores",
    "per_example_norms",
]

#: The hidden-layer activations, scikit-learn's ``MLPClassifier`` names.
ACTIVATIONS = ("identity", "logistic", "tanh", "relu")


def check_hidden_layer_sizes(hidden_layer_sizes):
    """``hidden_layer_sizes`` as a tuple of positive ints (``()``: no hidden layer).

    scikit-learn's ``MLPClassifier`` convention: an int is one layer. The
    widths are public, so they are refused here, before any data are read,
    when even the smallest network they make (one feature, one output) has
    more parameters than one float64 numpy array holds
    (:data:`~sklearn_dpfair.utils._numeric.MAX_FLOAT64_ENTRIES`, about
    ``1.15e18``): its weights could
    not be allocated whatever the data (:func:`layer_sizes` checks the
    network of the actual numbers of features and outputs).

    Raises
    ------
    ValueError
        If a width is not a positive integer, or the widths are too large
        (the message names the parameter).

    Examples
    --------
    >>> from sklearn_dpfair.neural._network import check_hidden_layer_sizes
    >>> check_hidden_layer_sizes(8), check_hidden_layer_sizes([16, 4])
    ((8,), (16, 4))
    >>> check_hidden_layer_sizes(True)
    Traceback (most recent call last):
    ...
    ValueError: hidden_layer_sizes must be positive integers; got True.
    """
    sizes = hidden_layer_sizes
    # A bool is refused, alone or as a width: Python counts it as an int
    # (True would build a layer of one unit); MLPClassifier refuses it too.
    scalar = isinstance(sizes, (Integral, np.bool_)) or np.ndim(sizes) == 0
    sizes = [sizes] if scalar else list(sizes)
    if not all(
        isinstance(h, Integral) and not isinstance(h, (bool, np.bool_)) and h > 0
        for h in sizes
    ):
        raise ValueError(
            "hidden_layer_sizes must be positive integers; got "
            f"{hidden_layer_sizes!r}."
        )
    sizes = tuple(int(h) for h in sizes)
    _check_network_fits(layer_sizes(1, sizes, 1, check=False), hidden_layer_sizes)
    return sizes


def _check_network_fits(sizes, hidden_layer_sizes):
    # Python ints: the count of a network of absurd widths (10**30) is exact,
    # and compared before numpy sees any shape.
    if n_parameters(sizes) > MAX_FLOAT64_ENTRIES:
        raise ValueError(
            f"hidden_layer_sizes={hidden_layer_sizes!r} is too large: with "
            f"{sizes[0]} input column(s) and {sizes[-1]} output(s) the network "
            "has more parameters than one float64 numpy array holds "
            f"({MAX_FLOAT64_ENTRIES}). Pass smaller widths."
        )


def layer_sizes(n_features, hidden_layer_sizes, n_outputs, *, check=True):
    """``[n_features, *hidden_layer_sizes, n_outputs]``: the widths of the layers.

    Raises
    ------
    ValueError
        Naming ``hidden_layer_sizes``, unless ``check=False``: when the
        network has more parameters than one float64 numpy array holds
        (:data:`~sklearn_dpfair.utils._numeric.MAX_FLOAT64_ENTRIES`).

    Examples
    --------
    >>> from sklearn_dpfair.neural._network import layer_sizes
    >>> layer_sizes(4, (8, 3), 1)
    [4, 8, 3, 1]
    """
    sizes = [int(n_features), *(int(h) for h in hidden_layer_sizes), int(n_outputs)]
    if check:
        _check_network_fits(sizes, tuple(hidden_layer_sizes))
    return sizes


def n_parameters(sizes):
    """Number of weights and biases of a network with layer widths ``sizes``.

    Examples
    --------
    >>> from sklearn_dpfair.neural._network import n_parameters
    >>> n_parameters([4, 8, 1])
    49
    """
    return sum((fan_in + 1) * fan_out for fan_in, fan_out in pairwise(sizes))


def init_parameters(sizes, activation, rng, dtype=np.float64):
    """Glorot-uniform weights and biases, drawn on the host from ``rng``.

    The initialization of scikit-learn's ``MLPClassifier`` (Glorot and
    Bengio, 2010): every weight and bias uniform on ``[-r, r]`` with
    ``r = sqrt(6 / (fan_in + fan_out))`` (``sqrt(2 / ...)`` for the logistic
    activation). It reads the layer widths only, never the data, and is
    drawn on the host from a generator the fit derives from its seed, so a
    seed gives the same start on every backend.

    Parameters
    ----------
    sizes : list of int
        Layer widths (:func:`layer_sizes`).
    activation : str
        One of :data:`ACTIVATIONS`.
    rng : numpy.random.Generator
        The fit's generator.
    dtype : numpy dtype, default=np.float64

    Returns
    -------
    weights, biases : lists of ndarray
        ``weights[l]`` of shape ``(sizes[l], sizes[l + 1])``, ``biases[l]`` of
        shape ``(sizes[l + 1],)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.neural._network import init_parameters
    >>> W, b = init_parameters([3, 5, 1], "relu", np.random.default_rng(0))
    >>> [w.shape for w in W], [v.shape for v in b]
    ([(3, 5), (5, 1)], [(5,), (1,)])
    """
    factor = 2.0 if activation == "logistic" else 6.0
    weights, biases = [], []
    for fan_in, fan_out in pairwise(sizes):
        bound = math.sqrt(factor / (fan_in + fan_out))
        weights.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(dtype))
        biases.append(rng.uniform(-bound, bound, fan_out).astype(dtype))
    return weights, biases


def _activate(xp, z, activation):
    if activation == "relu":
        return xp.maximum(z, xp.zeros_like(z))
    if activation == "tanh":
        return xp.tanh(z)
    if activation == "logistic":
        # 1 / (1 + exp(-z)) overflows (harmlessly, to 0) for z < -709; the
        # tanh form is exact and never overflows.
        return 0.5 * (xp.tanh(0.5 * z) + 1.0)
    return z


def _derivative(xp, z, a, activation):
    """``f'(z)`` from the pre-activation ``z`` and the activation ``a = f(z)``."""
    if activation == "relu":
        return xp.astype(z > 0, z.dtype)
    if activation == "tanh":
        return 1.0 - a * a
    if activation == "logistic":
        return a * (1.0 - a)
    return xp.ones_like(z)


def network_scores(X, coefs, intercepts, activation):
    """A fitted network's output scores for ``X``, in ``X``'s namespace.

    The parameters move to ``X``'s namespace and device, wherever they were
    fitted (a numpy model scores torch input under dispatch, and back;
    :func:`~sklearn_dpfair.utils._array_api.arrays_like`). The pass runs in
    the wider of ``X``'s and the parameters' precisions, as scikit-learn's
    MLP promotes: a float64 network narrowed to float32 input would turn
    its weights beyond float32's range (a column in units of 1e-39) into
    ``inf``, and every prediction into NaN.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Validated rows (numpy or another array-API namespace).
    coefs, intercepts : lists of arrays
        The fitted weights and biases, layer by layer.
    activation : str
        Activation of the hidden layers.

    Returns
    -------
    raw : array of shape (n_samples, n_outputs)
        The output layer's scores (finite for finite ``X``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.neural._network import network_scores
    >>> W = [np.array([[1e40]]), np.array([[1.0]])]
    >>> b = [np.zeros(1), np.zeros(1)]
    >>> X = np.array([[1e-40]], dtype=np.float32)  # subnormal: ~5 digits
    >>> np.round(network_scores(X, W, b, "relu"), 4)
    array([[1.]])
    """
    xp = array_namespace(X)
    weights = arrays_like(X, *coefs)
    biases = arrays_like(X, *intercepts)
    dtype = xp.result_type(X, *weights, *biases)
    return forward(
        xp.astype(X, dtype),
        [xp.astype(W, dtype) for W in weights],
        [xp.astype(b, dtype) for b in biases],
        activation,
    )[2]


def forward(X, weights, biases, activation):
    """Forward pass: every layer's input and the raw output scores.

    Pre-activations that overflow (or are ``inf - inf``) are recomputed by a
    scaled product and saturated to the largest float, so every returned
    array is finite for finite ``X`` and parameters.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
    weights, biases : lists of arrays
        The parameters, in ``X``'s namespace.
    activation : str
        Activation of the hidden layers.

    Returns
    -------
    inputs : list of arrays
        ``inputs[l]`` is the input of layer ``l + 1``: ``X``, then the
        hidden activations.
    pre_activations : list of arrays
        ``Z_l`` of the hidden layers (what the activation derivative reads).
    raw : array of shape (n_samples, n_outputs)
        The output layer's scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.neural._network import forward
    >>> W = [np.array([[1.0, -1.0]]), np.array([[1.0], [1.0]])]
    >>> b = [np.zeros(2), np.zeros(1)]
    >>> _, _, raw = forward(np.array([[2.0], [-3.0]]), W, b, "relu")
    >>> raw.ravel()
    array([2., 3.])
    """
    xp = array_namespace(X)
    inputs, pre_activations = [X], []
    a = X
    n_layers = len(weights)
    for layer, (W, b) in enumerate(zip(weights, biases)):
        with np.errstate(over="ignore", invalid="ignore"):
            z = xp.matmul(a, W) + b
        z = finite_linear_scores(z, a, W, b)
        if layer == n_layers - 1:
            return inputs, pre_activations, z
        a = _activate(xp, z, activation)
        pre_activations.append(z)
        inputs.append(a)
    raise ValueError("A network needs at least one layer.")


def backward(inputs, pre_activations, weights, raw_gradient, activation):
    """Backpropagation: every layer's per-example errors ``delta_l``.

    Parameters
    ----------
    inputs, pre_activations : lists of arrays
        From :func:`forward`.
    weights : list of arrays
        The weights (biases do not enter the backward pass).
    raw_gradient : array of shape (n_samples, n_outputs)
        ``dloss_i / dZ_L``, the loss derivative of every example (already
        multiplied by its public weight, if any).
    activation : str
        Activation of the hidden layers.

    Returns
    -------
    deltas : list of arrays
        ``deltas[l]`` of shape ``(n_samples, n_{l+1})``: example ``i``'s
        error at the output of layer ``l + 1``. Rows are not necessarily
        finite for an extreme record (a product of saturated values may
        overflow); :func:`clip_factors` gives such rows factor 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.neural._network import backward, forward
    >>> W = [np.array([[1.0, -1.0]]), np.array([[1.0], [1.0]])]
    >>> b = [np.zeros(2), np.zeros(1)]
    >>> inputs, pre, raw = forward(np.array([[2.0]]), W, b, "relu")
    >>> [d.tolist() for d in backward(inputs, pre, W, np.ones((1, 1)), "relu")]
    [[[1.0, 0.0]], [[1.0]]]
    """
    xp = array_namespace(raw_gradient)
    delta = raw_gradient
    deltas = [delta]
    for layer in range(len(weights) - 1, 0, -1):
        z, a = pre_activations[layer - 1], inputs[layer]
        with np.errstate(over="ignore", invalid="ignore"):
            delta = xp.matmul(delta, xp.permute_dims(weights[layer], (1, 0)))
            delta = delta * _derivative(xp, z, a, activation)
        deltas.append(delta)
    return deltas[::-1]


def per_example_norms(inputs, deltas):
    """``||g_i||`` of every example's full gradient, by the ghost-norm identity.

    ``sqrt(sum_l ||[a_{l-1,i}, 1]||^2 ||delta_{l,i}||^2)``: the Frobenius
    norm of the stacked per-example gradients of every weight and bias,
    computed from the layers' inputs and errors only. Each factor is an
    overflow- and underflow-safe row norm of the privacy core
    (:func:`~sklearn_dpfair._solvers._rows.stable_row_norms`; float32 rows
    accumulated in float64 and kept there: the clipped sums are float64
    products of those values, :func:`clipped_gradient_sums`, so a float32
    row whose norm exceeds float32's largest float still has a finite
    norm), the layers' products are float64, and their combination is
    again a stable norm, so the result is the norm of the values actually
    summed (within float64 rounding, never 0 for a nonzero term whose
    squares underflow), or ``inf``. A layer whose error is exactly 0
    contributes 0 whatever its input (never ``inf * 0``).

    Parameters
    ----------
    inputs : list of arrays
        The layers' inputs (:func:`forward`).
    deltas : list of arrays
        The layers' errors (:func:`backward`).

    Returns
    -------
    norms : array of shape (n_samples,)
        float64; ``inf`` for an example whose gradient has a non-finite
        entry or a norm beyond the largest float.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.neural._network import per_example_norms
    >>> a = [np.array([[3.0, 4.0], [3e200, 4e200]])]
    >>> d = [np.array([[2.0], [1e-200]])]
    >>> per_example_norms(a, d)  # sqrt(26) * 2, sqrt(25e400 + 1) * 1e-200
    array([10.19803903,  5.        ])
    """
    return _ghost_norms(inputs, deltas)[0]


def _ghost_norms(inputs, deltas):
    # per_example_norms, and the largest ||[a_{l-1,i}, 1]|| of each example
    # over the layers (float64), which clipped_network_sums compares with
    # C / tiny.
    xp = array_namespace(deltas[0])
    layer_norms, error_norms, input_norms = [], [], None
    # A row with a non-finite entry gets a non-finite norm here (the stable
    # norm's rescaling computes inf / inf for it, silently: a warning would
    # depend on the record), and norm inf below. Checking the norms, not
    # the activations, costs O(n L) instead of a pass over every layer.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for a, delta in zip(inputs, deltas):
            a_norms = _wide_row_norms(xp, a)
            a_norms = xp.hypot(a_norms, xp.ones_like(a_norms))
            delta_norms = _wide_row_norms(xp, delta)
            # ||[a, 1]|| ||delta||: inf past the largest float, nan for a
            # norm beyond it times 0 (fixed below).
            layer_norms.append(a_norms * delta_norms)
            error_norms.append(delta_norms)
            input_norms = (
                a_norms if input_norms is None else xp.maximum(input_norms, a_norms)
            )
    stacked = xp.stack(layer_norms, axis=1)
    ok = finite_rows_mask(stacked)
    if not bool(xp.all(ok)):
        # A layer whose error is 0 has a zero block, whatever its input's
        # norm (a saturated tanh layer's errors beneath a huge input): 0,
        # not nan, which would drop the record's other layers.
        # (Only on a finite input row: 0 * inf would reach the sums.)
        zero_error = (xp.stack(error_norms, axis=1) == 0) & xp.stack(
            [finite_rows_mask(a) for a in inputs], axis=1
        )
        stacked = xp.where(zero_error, xp.zeros_like(stacked), stacked)
        ok = finite_rows_mask(stacked)
        stacked = xp.where(ok[:, None], stacked, xp.zeros_like(stacked))
    norms = stable_row_norms(stacked)
    return xp.where(ok, norms, xp.full_like(norms, math.inf)), input_norms


def _wide_row_norms(xp, a):
    # Float64 row norms: the stable norms of float64 rows; float32 rows'
    # squares accumulated in float64 (exact, neither overflow nor
    # underflow), not rounded back to float32.
    if _is_narrow(xp, a.dtype):
        return xp.sqrt(_wide_squared_row_norms(a))
    return _float64(xp, stable_row_norms(a))


def clip_factors(norms, clip_norm, *, margin=1.0):
    """``c_i = min(1, C / ||g_i||)``; 0 where the norm is not finite.

    The privacy core's factors
    (:func:`~sklearn_dpfair.privacy._clipping.clip_factors_from_norms`),
    with ``margin`` on the bound for terms made of lower-precision values.
    ``clip_norm = inf`` (the non-private limit) gives 1 for every finite
    norm. A record whose gradient norm is not finite contributes nothing:
    its term is then 0, within any clip norm.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.neural._network import clip_factors
    >>> clip_factors(np.array([0.5, 2.0, 0.0, np.inf, np.nan]), 1.0)
    array([1. , 0.5, 1. , 0. , 0. ])
    """
    if math.isinf(clip_norm):
        xp = array_namespace(norms)
        finite = xp.isfinite(norms)
        return xp.where(finite, xp.ones_like(norms), xp.zeros_like(norms))
    return clip_factors_from_norms(norms, clip_norm, margin=margin)


def clipped_gradient_sums(inputs, deltas, factors):
    """``sum_i c_i a~_{l-1,i} delta_{l,i}^T`` for every layer: the clipped sum.

    Computed in float64 (the precision of the factors and the noise). Rows
    with factor 0 are zeroed in both operands first, so a record whose norm
    was not finite contributes exactly 0 (never ``0 * inf``). For the
    others each product ``|a_j c delta_k| <= c ||a~|| ||delta|| <= C``:
    every term is finite.

    Parameters
    ----------
    inputs, deltas : lists of arrays
        From :func:`forward` and :func:`backward`.
    factors : array of shape (n_samples,)
        Clip factors (:func:`clip_factors`).

    Returns
    -------
    weight_sums, bias_sums : lists of float64 arrays
        Shapes of the weights and biases. Changing one example moves the
        stacked sums by at most the clip norm in Euclidean norm.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.neural._network import clipped_gradient_sums
    >>> a = [np.array([[3.0, 4.0], [1.0, 0.0]])]
    >>> d = [np.array([[2.0], [1.0]])]
    >>> gW, gb = clipped_gradient_sums(a, d, np.array([0.5, 0.0]))
    >>> gW[0].ravel(), gb[0]
    (array([3., 4.]), array([1.]))
    """
    xp = array_namespace(factors)
    factors = _float64(xp, factors)
    keep = factors > 0
    all_kept = bool(xp.all(keep))
    keep = keep[:, None]
    weight_sums, bias_sums = [], []
    for a, delta in zip(inputs, deltas):
        delta, a = _float64(xp, delta), _float64(xp, a)
        if not all_kept:
            delta = xp.where(keep, delta, xp.zeros_like(delta))
            a = xp.where(keep, a, xp.zeros_like(a))
        scaled = delta * factors[:, None]
        weight_sums.append(xp.matmul(xp.permute_dims(a, (1, 0)), scaled))
        bias_sums.append(xp.sum(scaled, axis=0))
    return weight_sums, bias_sums


def clipped_network_sums(
    inputs, pre_activations, weights, raw_gradient, activation, clip_norm, *,
    margin=1.0,
):
    """Backward pass and clipped sum of every example's full gradient.

    :func:`backward`, the ghost norms (:func:`per_example_norms`), the clip
    factors (:func:`clip_factors`) and :func:`clipped_gradient_sums`, with
    the terms that a factor cannot carry clipped too rather than dropped.
    Factor 0 on a finite record (its norm overflowed: a public weight near
    the largest float, an error that overflowed in the backward pass, an
    input or activation near the largest float; or ``C / ||g_i||`` below
    the smallest normal float), or a clipped term whose ``c_i delta_i``
    would be subnormal (an input above ``C / tiny``, whose digits those
    lost ones multiply), is recomputed on the host in float64: the errors
    from ``r_i / 2^e`` (``2^e`` the power of two above ``max_k |r_ik|``),
    each layer's input and error divided by the power of two above its
    largest entry, and the layers' blocks rescaled by the powers of two
    left (:func:`_rescued_sums`). Its term then has norm
    ``min(||g_i||, C')`` up to rounding (``C' = margin C``), so that a
    weight can raise a record's term only up to the clip norm
    (:mod:`sklearn_dpfair.privacy._weights`), in float64 as in float32.
    Such records are rare: the usual batch costs one more ``n``-length test.

    Parameters
    ----------
    inputs, pre_activations : lists of arrays
        From :func:`forward`.
    weights : list of arrays
        The weights.
    raw_gradient : array of shape (n_samples, n_outputs)
        ``dloss_i / dZ_L`` times the public weights.
    activation : str
        Activation of the hidden layers.
    clip_norm : float
        ``C``; ``inf``: no clipping (a record whose gradient is not finite
        contributes 0).
    margin : float, default=1.0
        Factor on ``C`` for terms made of lower-precision values
        (:func:`~sklearn_dpfair.privacy._clipping.clip_margin`).

    Returns
    -------
    weight_sums, bias_sums : lists of float64 arrays
        As :func:`clipped_gradient_sums`: one record moves the stacked sums
        by at most ``C``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.neural._network import clipped_network_sums, forward
    >>> W, b = [np.array([[1.0], [1.0]])], [np.zeros(1)]
    >>> inputs, pre, raw = forward(np.array([[3.0, 4.0]]), W, b, "relu")
    >>> gW, gb = clipped_network_sums(inputs, pre, W, np.array([[1e308]]),
    ...                               "relu", 1.0)
    >>> round(float(np.sqrt(np.sum(gW[0] ** 2) + np.sum(gb[0] ** 2))), 12)
    1.0
    """
    deltas = backward(inputs, pre_activations, weights, raw_gradient, activation)
    norms, input_norms = _ghost_norms(inputs, deltas)
    factors = clip_factors(norms, clip_norm, margin=margin)
    if math.isinf(clip_norm):
        return clipped_gradient_sums(inputs, deltas, factors)
    xp = array_namespace(factors)
    bound = clip_norm * margin
    lost = factors == 0
    # An input row above C / tiny: a clipped c_i delta_ik may be subnormal,
    # and its lost digits are multiplied by that input's entries.
    subnormal_above = bound / float(np.finfo(np.float64).smallest_normal)
    if not math.isinf(subnormal_above):
        lost = lost | ((input_norms > subnormal_above) & (factors < 1))
    if bool(xp.any(lost)):
        # A zero loss derivative has a zero term; a non-finite one keeps the
        # fixed contribution 0.
        lost = lost & finite_rows_mask(raw_gradient)
        lost = lost & ~xp.all(raw_gradient == 0, axis=1)
    if not bool(xp.any(lost)):
        return clipped_gradient_sums(inputs, deltas, factors)
    factors = xp.where(lost, xp.zeros_like(factors), factors)
    weight_sums, bias_sums = clipped_gradient_sums(inputs, deltas, factors)
    extra_weights, extra_biases = _rescued_sums(
        [_host64(a[lost]) for a in inputs],
        [_host64(z[lost]) for z in pre_activations],
        [_host64(W) for W in weights],
        _host64(raw_gradient[lost]),
        activation,
        bound,
    )
    weight_sums = [g + from_host(e, g) for g, e in zip(weight_sums, extra_weights)]
    bias_sums = [g + from_host(e, g) for g, e in zip(bias_sums, extra_biases)]
    return weight_sums, bias_sums


def _host64(a):
    return np.asarray(to_numpy(a), dtype=np.float64)


def _rescued_sums(inputs, pre_activations, weights, raw_gradient, activation, bound):
    """Clipped sums of the records :func:`clipped_network_sums` rescues (host).

    Every argument is host float64, restricted to those records. Record
    ``i``'s loss derivative is ``2^e r'_i`` with ``|r'_ik| < 1``; the
    errors ``delta'`` of ``r'`` are those of ``r`` divided by ``2^e``
    (backpropagation is linear in ``r``). Layer ``l``'s input is
    ``[a, 1] = 2^p u`` and its error ``delta' = 2^q v`` with ``u``, ``v``
    of largest entry in ``[1/2, 1)``, so its block is
    ``2^(E_l) u v^T`` with ``E_l = p + q + e`` and the norm of the whole
    gradient is ``2^E g`` with ``E = max_l E_l`` and
    ``g^2 = sum_l ||u||^2 ||v||^2 4^(E_l - E)`` in ``[1/16, n_params]``:
    nothing overflows, and the clipped block is ``u v^T t_l`` with
    ``t_l = min(2^E_l, 2^(E_l - E) C' / g)``. The bound is lowered by the
    absolute rounding of a subnormal ``v t_l`` (at most one subnormal step
    an entry), a no-op unless ``C'`` is itself near the smallest normal
    float. A record whose errors are not finite even so (weights beyond
    the float range) keeps the fixed contribution 0.
    """
    n_params = sum((W.shape[0] + 1) * W.shape[1] for W in weights)
    bound = max(bound - math.sqrt(n_params) * float(np.nextafter(0.0, 1.0)), 0.0)
    _, e = np.frexp(np.max(np.abs(raw_gradient), axis=1))
    with np.errstate(all="ignore"):
        deltas = backward(
            inputs, pre_activations, weights, np.ldexp(raw_gradient, -e[:, None]),
            activation,
        )
    ok = np.ones(raw_gradient.shape[0], dtype=bool)
    for a, delta in zip(inputs, deltas):
        ok &= np.all(np.isfinite(a), axis=1) & np.all(np.isfinite(delta), axis=1)
    # Non-finite rows are zeroed here (their contribution is 0, below).
    inputs = [np.where(ok[:, None], a, 0.0) for a in inputs]
    deltas = [np.where(ok[:, None], d, 0.0) for d in deltas]
    units, errors, exponents, squares = [], [], [], []
    for a, delta in zip(inputs, deltas):
        _, p = np.frexp(np.maximum(np.max(np.abs(a), axis=1), 1.0))
        top = np.max(np.abs(delta), axis=1)
        _, q = np.frexp(top)
        u, bias_u = np.ldexp(a, -p[:, None]), np.ldexp(1.0, -p)
        v = np.ldexp(delta, -q[:, None])
        # A zero layer (its error is 0) takes no part in E (int64 sums:
        # never near an integer overflow).
        exponents.append(
            np.where(top > 0, p.astype(np.int64) + q + e, _NO_EXPONENT)
        )
        u_squares = np.sum(u * u, axis=1) + bias_u * bias_u
        squares.append(u_squares * np.sum(v * v, axis=1))
        units.append((u, bias_u))
        errors.append(v)
    top_exponent = np.max(np.stack(exponents), axis=0)
    with np.errstate(under="ignore"):
        g = np.sqrt(
            sum(
                _times_power_of_two(sq, 2 * (E - top_exponent))
                for sq, E in zip(squares, exponents)
            )
        )
    # The output layer's error r' is nonzero: g >= 1/4 but on the rows left
    # at 0 above (g = 0), whose t is 0 anyway; no division by 0.
    g = np.where(ok, g, 1.0)
    weight_sums, bias_sums = [], []
    with np.errstate(over="ignore", under="ignore"):
        for (u, bias_u), v, E in zip(units, errors, exponents):
            t = np.minimum(
                _times_power_of_two(1.0, E),
                _times_power_of_two(bound / g, E - top_exponent),
            )
            scaled = v * np.where(ok, t, 0.0)[:, None]
            weight_sums.append(u.T @ scaled)
            bias_sums.append(bias_u @ scaled)
    return weight_sums, bias_sums


# The exponent of a layer whose error is 0 (below any other's).
_NO_EXPONENT = -(1 << 20)


def _times_power_of_two(x, exponents):
    # x 2^k (exact but for over- and underflow) for int64 exponents, clipped
    # to +-4096, past which x 2^k is already 0 or inf for any finite nonzero
    # float x (ldexp takes 32-bit exponents).
    return np.ldexp(x, np.clip(exponents, -4096, 4096).astype(np.int32))


def _float64(xp, a):
    """``a`` in float64, without a copy when it already is."""
    return a if a.dtype == xp.float64 else xp.astype(a, xp.float64)

