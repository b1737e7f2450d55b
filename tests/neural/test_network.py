# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The network layer: per-example gradients, ghost norms, clipped sums.

Checked against gradients computed without the ghost-norm identity: central
finite differences of the per-example loss (numpy, always run) and PyTorch
autograd one example at a time (skipped without torch).
"""

import numpy as np
import pytest

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair.neural._network import (
    ACTIVATIONS,
    backward,
    check_hidden_layer_sizes,
    clip_factors,
    clipped_gradient_sums,
    forward,
    init_parameters,
    layer_sizes,
    network_scores,
    per_example_norms,
)
from sklearn_dpfair.neural._sgd import clipped_network_gradient


def _problem(seed, n_outputs, hidden=(5, 4), n=7, d=3, activation="tanh"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 2.0
    if n_outputs == 1:
        loss, y = BinaryLogisticLoss(), rng.integers(0, 2, n).astype(float)
    else:
        loss, y = SoftmaxLoss(n_outputs), rng.integers(0, n_outputs, n).astype(float)
    W, b = init_parameters(layer_sizes(d, hidden, n_outputs), activation, rng)
    # Biases away from 0, so that relu's kinks are not at the probes.
    b = [v + 0.3 for v in b]
    return X, y, loss, W, b


def _per_example_terms(X, y, loss, W, b, activation, weight=None):
    """Every example's gradient blocks, from the outer products (materialized)."""
    inputs, pre, raw = forward(X, W, b, activation)
    r = loss.raw_gradient(y, raw)
    if weight is not None:
        r = r * weight[:, None]
    deltas = backward(inputs, pre, W, r, activation)
    grads = []
    for i in range(X.shape[0]):
        blocks = [np.outer(a[i], d[i]).ravel() for a, d in zip(inputs, deltas)]
        blocks += [d[i] for d in deltas]
        grads.append(np.concatenate(blocks))
    return np.array(grads), inputs, deltas


def _finite_difference_gradients(X, y, loss, W, b, activation, h=1e-6):
    params = [*W, *b]
    grads = np.zeros((X.shape[0], sum(p.size for p in params)))
    col = 0
    for p in params:
        for j in range(p.size):
            old = p.flat[j]
            p.flat[j] = old + h
            up = loss.loss(y, forward(X, W, b, activation)[2])
            p.flat[j] = old - h
            down = loss.loss(y, forward(X, W, b, activation)[2])
            p.flat[j] = old
            grads[:, col] = (up - down) / (2 * h)
            col += 1
    return grads


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("n_outputs", [1, 3], ids=["binary", "softmax"])
def test_per_example_gradients_match_finite_differences(activation, n_outputs):
    X, y, loss, W, b = _problem(0, n_outputs, activation=activation)
    explicit, inputs, deltas = _per_example_terms(X, y, loss, W, b, activation)
    numeric = _finite_difference_gradients(X, y, loss, W, b, activation)
    # Central differences with h = 1e-6 on O(1) losses: error ~1e-9.
    np.testing.assert_allclose(explicit, numeric, rtol=1e-6, atol=1e-7)
    ghost = per_example_norms(inputs, deltas)
    np.testing.assert_allclose(
        ghost, np.linalg.norm(numeric, axis=1), rtol=1e-6, atol=1e-10
    )


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("n_outputs", [1, 4], ids=["binary", "softmax"])
def test_ghost_norms_match_autograd(activation, n_outputs):
    torch = pytest.importorskip("torch")
    X, y, loss, W, b = _problem(1, n_outputs, hidden=(6,), activation=activation)
    inputs, pre, raw = forward(X, W, b, activation)
    deltas = backward(inputs, pre, W, loss.raw_gradient(y, raw), activation)
    ghost = per_example_norms(inputs, deltas) ** 2
    act = {
        "identity": lambda z: z,
        "logistic": torch.sigmoid,
        "tanh": torch.tanh,
        "relu": torch.relu,
    }[activation]
    for i in range(X.shape[0]):
        Wt = [torch.tensor(w, requires_grad=True) for w in W]
        bt = [torch.tensor(v, requires_grad=True) for v in b]
        a = torch.tensor(X[i : i + 1])
        for layer, (w, v) in enumerate(zip(Wt, bt)):
            a = a @ w + v
            if layer < len(Wt) - 1:
                a = act(a)
        if n_outputs == 1:
            target = torch.tensor([[y[i]]])
            value = torch.nn.functional.binary_cross_entropy_with_logits(a, target)
        else:
            value = torch.nn.functional.cross_entropy(a, torch.tensor([int(y[i])]))
        value.backward()
        squared = sum(float((p.grad**2).sum()) for p in [*Wt, *bt])
        assert ghost[i] == pytest.approx(squared, rel=1e-10, abs=1e-14)


def test_clipped_sum_is_the_sum_of_clipped_per_example_gradients():
    X, y, loss, W, b = _problem(2, 3, activation="relu")
    weight = np.array([0.0, 1.0, 2.5, 1.0, 1e3, 0.5, 1.0])
    explicit, _, _ = _per_example_terms(X, y, loss, W, b, "relu", weight)
    clip = 0.3
    norms = np.linalg.norm(explicit, axis=1)
    expected = (explicit * np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, None]).sum(0)
    gW, gb = clipped_network_gradient(
        X, y, loss, W, b, activation="relu", clip_norm=clip, sample_weight=weight
    )
    got = np.concatenate([*(g.ravel() for g in gW), *gb])
    # Same layout as _per_example_terms: weight blocks first, then biases.
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_non_private_limit_clips_nothing():
    X, y, loss, W, b = _problem(3, 1)
    explicit, _, _ = _per_example_terms(X, y, loss, W, b, "tanh")
    gW, gb = clipped_network_gradient(
        X, y, loss, W, b, activation="tanh", clip_norm=np.inf
    )
    got = np.concatenate([*(g.ravel() for g in gW), *gb])
    np.testing.assert_allclose(got, explicit.sum(0), rtol=1e-12, atol=1e-14)


_BIG = np.finfo(np.float64).max
ADVERSARIAL = [
    # (features, label, weight)
    ([1e300, -1e300, 1e300], 1, 1.0),
    ([_BIG, _BIG, -_BIG], 0, 1.0),
    ([5e-324, 0.0, -5e-324], 1, 1.0),
    ([3.0, -2.0, 1.0], 1, 1e308),
    ([1e150, 1e150, 0.0], 0, 1e300),
    ([0.5, 0.5, 0.5], 2, 0.0),
    ([-1e200, 2.0, 3.0], 2, 7.0),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("record", ADVERSARIAL, ids=lambda r: f"{r[0][0]:g}-w{r[2]:g}")
def test_one_adversarial_record_moves_the_sum_by_at_most_the_clip(
    activation, record, dtype
):
    X, y, loss, W, b = _problem(4, 3, n=20, activation=activation)
    X = X.astype(dtype)
    W, b = [v.astype(dtype) for v in W], [v.astype(dtype) for v in b]
    weight = np.ones(X.shape[0])
    features, label, w = record
    # The record's extremes in the data's dtype (float32: up to 3.4e38).
    big = float(np.finfo(dtype).max)
    features = np.clip(features, -big, big).astype(dtype)
    X1 = np.vstack([X, features])
    y1 = np.append(y, float(label))
    w1 = np.append(weight, w)
    clip = 0.7
    # No floating-point warning may depend on a record: overflows inside
    # the passes are handled where they occur, so none escapes (as errors).
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        base = clipped_network_gradient(
            X, y, loss, W, b, activation=activation, clip_norm=clip, sample_weight=weight
        )
        added = clipped_network_gradient(
            X1, y1, loss, W, b, activation=activation, clip_norm=clip, sample_weight=w1
        )
    flat0 = np.concatenate([g.ravel() for part in base for g in part])
    flat1 = np.concatenate([g.ravel() for part in added for g in part])
    assert np.all(np.isfinite(flat1))
    # The difference is the added record's clipped term: norm <= C up to
    # the round-off of the sums (relative 1e-12).
    assert np.linalg.norm(flat1 - flat0) <= clip * (1 + 1e-9)


def test_clip_factors_zero_the_records_that_overflow():
    inputs = [np.array([[1e300, 0.0], [1.0, 1.0]])]
    deltas = [np.array([[1e10], [1.0]])]
    norms = per_example_norms(inputs, deltas)
    assert norms[0] == np.inf and norms[1] == pytest.approx(np.sqrt(3.0))
    factors = clip_factors(norms, 1.0)
    np.testing.assert_allclose(factors, [0.0, 1 / np.sqrt(3.0)])
    gW, gb = clipped_gradient_sums(inputs, deltas, factors)
    np.testing.assert_allclose(gW[0].ravel(), [1 / np.sqrt(3.0)] * 2)
    np.testing.assert_allclose(gb[0], [1 / np.sqrt(3.0)])


def _exact_norm(v):
    # Scaled first: no overflow or underflow of the squares.
    v = np.asarray(v, dtype=np.float64)
    m = np.max(np.abs(v)) if v.size else 0.0
    return 0.0 if m == 0 else m * np.sqrt(np.sum((v / m) ** 2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clipped_terms_within_the_bound_at_extreme_magnitudes(dtype):
    # Activations and errors whose squares overflow or underflow (the plain
    # sum of squares would give norm inf, or 0 for a nonzero term): every
    # clipped term, its norm computed exactly from the values summed, is
    # within the clip norm, and no term that could be computed is dropped.
    rng = np.random.default_rng(0)
    info = np.finfo(dtype)
    top, bottom = np.log10(float(info.max)) / 2 + 1, np.log10(float(info.tiny)) / 2 - 1
    n = 400
    a = (rng.choice([-1, 1], (n, 3)) * 10.0 ** rng.uniform(bottom, top, (n, 3))).astype(dtype)
    d1 = (rng.choice([-1, 1], (n, 2)) * 10.0 ** rng.uniform(bottom, top, (n, 2))).astype(dtype)
    h = (rng.choice([-1, 1], (n, 2)) * 10.0 ** rng.uniform(bottom, 1, (n, 2))).astype(dtype)
    d2 = (rng.choice([-1, 1], (n, 1)) * 10.0 ** rng.uniform(bottom, 0, (n, 1))).astype(dtype)
    inputs, deltas = [a, h], [d1, d2]
    clip = 1.0
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        norms = per_example_norms(inputs, deltas)
        factors = clip_factors(norms, clip, margin=1.0 - 2 * float(info.eps))
    exact = np.array(
        [
            np.hypot(
                _exact_norm([*a[i], 1.0]) * _exact_norm(d1[i]),
                _exact_norm([*h[i], 1.0]) * _exact_norm(d2[i]),
            )
            for i in range(n)
        ]
    )
    finite = np.isfinite(exact)
    assert finite.sum() > n // 2  # the test covers computable terms
    # The computed norm bounds the exact one (float64 rounding at most).
    assert np.all(norms[finite] >= exact[finite] * (1 - 1e-14))
    assert np.all(factors[finite] > 0)
    assert np.all(factors * np.where(finite, exact, 0.0) <= clip * (1 + 1e-14))


def test_forward_is_finite_for_any_finite_input():
    rng = np.random.default_rng(0)
    W, b = init_parameters([3, 8, 8, 2], "relu", rng)
    X = np.array([[_BIG, -_BIG, _BIG], [1e300, 1e300, 1e300], [1.0, 2.0, 3.0]])
    with np.errstate(all="ignore"):
        inputs, pre, raw = forward(X, W, b, "relu")
    for a in [*inputs, *pre, raw]:
        assert np.all(np.isfinite(a))


@pytest.mark.parametrize(
    "sizes", [True, np.bool_(True), (True,), (4, False), np.array([True])]
)
def test_boolean_hidden_layer_sizes_are_refused(sizes):
    # Python counts a bool as an int: True would build one hidden unit.
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        check_hidden_layer_sizes(sizes)


@pytest.mark.parametrize(
    "sizes", [10**30, 2**60, (2**30, 2**30), (2**29,) * 5, (8, 10**19)]
)
def test_widths_no_numpy_array_holds_are_refused_before_any_data(sizes):
    # Even with one input and one output the network's parameters exceed
    # one float64 array: numpy would refuse ("Maximum allowed dimension
    # exceeded") only once the fit initializes it, naming nothing.
    with pytest.raises(ValueError, match="hidden_layer_sizes=.* is too large"):
        check_hidden_layer_sizes(sizes)


def test_layer_sizes_refuses_the_network_of_the_actual_inputs():
    from sklearn_dpfair.utils._numeric import MAX_FLOAT64_ENTRIES

    # One hidden layer of 2**58 units: 3 * 2**58 + 1 parameters with one
    # input and one output, 11 * 2**58 + 2 with ten inputs and two outputs.
    hidden = (2**58,)
    assert 3 * 2**58 + 1 <= MAX_FLOAT64_ENTRIES < 11 * 2**58 + 2
    assert check_hidden_layer_sizes(hidden) == hidden
    assert layer_sizes(1, hidden, 1) == [1, 2**58, 1]
    with pytest.raises(ValueError, match="with 10 input column.* and 2 output"):
        layer_sizes(10, hidden, 2)
    assert check_hidden_layer_sizes((64, 32)) == (64, 32)


def test_network_scores_float32_input_keep_a_network_beyond_float32():
    # A column in units of 1e-40 needs a first-layer weight near 1e40: cast
    # to the input's float32 it was inf, and every score NaN.
    W = [np.array([[1e40, 0.0], [0.0, 1.0]]), np.array([[1.0], [-1.0]])]
    b = [np.zeros(2), np.zeros(1)]
    X = np.array([[1e-40, 2.0], [3e-40, 0.5]])
    expected = network_scores(X, W, b, "tanh")
    scores = network_scores(X.astype(np.float32), W, b, "tanh")
    assert np.all(np.isfinite(scores))
    # (1e-40 is subnormal in float32: about 5 significant digits.)
    np.testing.assert_allclose(scores, expected, rtol=1e-3)


def _term_norm(blocks):
    # Exact norm of a stacked sum (scaled first: no overflow or underflow).
    return _exact_norm(np.concatenate([np.ravel(g) for part in blocks for g in part]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("hidden", [(), (5, 4)], ids=str)
@pytest.mark.parametrize(
    "features, weight",
    [([3.0, 4.0, 0.0], 1e308), ([1.0, -1.0, 0.5], 1.7e308), ([1.0, -1.0, 0.0], None)],
    ids=["weight-1e308", "weight-1.7e308", "row-near-the-largest-float"],
)
def test_a_record_whose_factor_cannot_be_formed_is_clipped_not_dropped(
    features, weight, hidden, activation, dtype
):
    # A public weight near the largest float (its norm, or its errors in
    # the backward pass, overflow) or a row near the largest float (C /
    # norm below the smallest normal float) gave the record factor 0: its
    # term was dropped (norm 0) where a weight or a row can raise it only up
    # to the clip norm. Its true norm here exceeds C (the output bias
    # block alone is |r| >= C), so the term must have norm C (float32:
    # C (1 - 2 eps)), in float64 as in float32.
    from sklearn_dpfair._solvers._private_fit import weights_in_dtype

    big = float(np.finfo(dtype).max)
    X = np.array([features], dtype=np.float64)
    if weight is None:
        X *= big  # [max, -max, max / 2]: activations saturate
    X = X.astype(dtype)
    loss = BinaryLogisticLoss()
    W, b = init_parameters(
        layer_sizes(3, hidden, 1), activation, np.random.default_rng(0), dtype
    )
    # The label against the prediction: |r| >= 1/2 (times the weight).
    proba = 1 / (1 + np.exp(-np.clip(forward(X, W, b, activation)[2][0, 0], -50, 50)))
    y = np.array([0.0 if proba >= 0.5 else 1.0], dtype=dtype)
    sw = None
    if weight is not None:
        sw = weights_in_dtype(np.array([weight]), dtype).astype(dtype)
    clip = 0.1
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        sums = clipped_network_gradient(
            X, y, loss, W, b, activation=activation, clip_norm=clip, sample_weight=sw
        )
    norm = _term_norm(sums)
    assert clip * (1 - 1e-6) <= norm <= clip * (1 + 1e-14)


def test_a_subnormal_clipped_error_under_a_huge_input_is_within_the_clip():
    # A tiny weight under a row near the largest float: the factor
    # C / ||g|| is normal but c r, which the row's entries multiply, is
    # subnormal (digits lost): the term reached 1.01 C. Rescued from its
    # largest entries, it is C up to float64 rounding.
    X = np.array([[5.243249640835815e301, 0.0]])
    W, b = [np.zeros((2, 1))], [np.zeros(1)]
    clip = 1e-20
    sums = clipped_network_gradient(
        X, np.array([1.0]), BinaryLogisticLoss(), W, b, activation="relu",
        clip_norm=clip, sample_weight=np.array([1.0629106583474847e-14]),
    )
    assert clip * (1 - 1e-12) <= _term_norm(sums) <= clip * (1 + 1e-15)


def test_ghost_norms_of_float32_rows_beyond_float32_and_of_zero_errors():
    # Float32 rows whose norm exceeds float32's largest float have a finite
    # float64 norm (the sums are float64): not inf (factor 0, term dropped).
    a32 = [np.array([[3e38, 3e38]], dtype=np.float32)]
    d32 = [np.array([[1e-30]], dtype=np.float32)]
    norm = per_example_norms(a32, d32)[0]
    exact = _exact_norm([*a32[0][0], 1.0]) * float(d32[0][0, 0])
    assert norm == pytest.approx(exact, rel=1e-12)
    # A layer whose error is 0 under an input whose norm overflows adds 0
    # (a saturated tanh layer): not inf * 0 = nan, which dropped the
    # record's other layers.
    inputs = [np.array([[1.7e308, 1.7e308]]), np.array([[0.5, -0.5]])]
    deltas = [np.zeros((1, 2)), np.array([[2.0]])]
    with np.errstate(over="raise", invalid="raise"):
        norms = per_example_norms(inputs, deltas)
    np.testing.assert_allclose(norms, [2.0 * np.sqrt(1.5)])
