# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The FERMI solver's network model: gradients, ghost norms, clipping, full batch."""

import warnings
from dataclasses import replace

import numpy as np
import pytest
from scipy.special import log_softmax

from sklearn_dpfair._solvers.fermi._fit import FERMIParams
from sklearn_dpfair._solvers.fermi._model import (
    LinearFairModel,
    NetworkFairModel,
    initial_network,
    precondition_network,
)
from sklearn_dpfair._solvers.fermi._problem import FairProblem
from sklearn_dpfair._solvers.fermi._sgda import fair_terms, softmax_terms
from sklearn_dpfair.fairness import make_constraint
from sklearn_dpfair.fairness._ermi import ERMIRegularizer
from sklearn_dpfair.neural._network import backward, forward

M = 2


def _network(activation="tanh", hidden=(4, 3), d=3, m=M, seed=0, intercept=True):
    params = FERMIParams(
        constraint=None,
        hidden_layer_sizes=hidden,
        activation=activation,
        fit_intercept=intercept,
    )
    return initial_network(params, d, m, np.random.default_rng(seed))


def _regularizer(m=M):
    return ERMIRegularizer(np.array([[0.3, 0.7]]), np.ones(1), m)


def _per_example_objective(net, theta, x, y, reg, W, lam, cells):
    """``l_i + lambda psi_i`` at fixed ``W``, by the regularizer's own value."""
    nw = net.n_weights
    weights, biases = net.unflatten(theta[:nw], theta[nw:])
    raw = forward(x[None, :], weights, biases, net.activation)[2]
    proba = np.exp(log_softmax(raw, axis=1))
    loss = -log_softmax(raw, axis=1)[0, y]
    blk, grp, wt, isq = cells
    c = reg.coefficients(W, blk, grp, isq)
    return loss + lam * float(reg.value(proba, c, wt)[0])


@pytest.mark.parametrize("activation", ["tanh", "logistic", "identity"])
def test_per_example_gradient_matches_finite_differences(activation):
    # Each example's primal gradient of the FERMI objective (cross-entropy
    # plus the ERMI term at a fixed dual W), as the SGDA step forms it (the
    # logit gradient of softmax_terms + fair_terms, backpropagated by
    # primal_sum with no clipping), against central differences.
    rng = np.random.default_rng(1)
    net = _network(activation)
    X = rng.normal(size=(5, 3))
    y = np.array([0, 1, 1, 0, 1])
    codes = np.array([0, 1, 0, 1, 1])
    reg = _regularizer()
    W = np.array([[[0.4, 1.1], [0.9, 0.2]]])
    lam = 3.0
    cells_all = reg.batch_constants(reg.row_cells(np.zeros(5, int), codes), 1.0)
    coef, w0 = net.host_start()
    theta = np.concatenate([coef, w0])
    for i in range(X.shape[0]):
        cells = tuple(a[i : i + 1] for a in cells_all)
        raw, cache = net.forward(X[i : i + 1], coef, w0)
        proba, grad, _ = softmax_terms(raw, y[i : i + 1])
        grad, _ = fair_terms(
            reg, W, proba, grad, cells, fairness_weight=lam, dual_clip_norm=None
        )
        g_coef, g_w0 = net.primal_sum(X[i : i + 1], grad, None, cache, np.inf)
        analytic = np.concatenate([g_coef, g_w0])
        h = 1e-6
        numeric = np.empty_like(theta)
        for k in range(theta.size):
            e = np.zeros_like(theta)
            e[k] = h
            numeric[k] = (
                _per_example_objective(net, theta + e, X[i], y[i], reg, W, lam, cells)
                - _per_example_objective(net, theta - e, X[i], y[i], reg, W, lam, cells)
            ) / (2 * h)
        # Central differences of a smooth function in float64: error
        # O(h^2 f''') + O(eps / h) ~ 1e-9 on values of order 1.
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7)


def _explicit_gradients(net, X, grad, coef, w0):
    """Every example's full gradient, materialized (the reference)."""
    weights, biases = net.unflatten(coef, w0)
    inputs, pre, _ = forward(X, weights, biases, net.activation)
    deltas = backward(inputs, pre, weights, grad, net.activation)
    rows = []
    for i in range(X.shape[0]):
        gw = [np.outer(a[i], d[i]).ravel() for a, d in zip(inputs, deltas)]
        gb = [d[i] for d in deltas]
        rows.append(np.concatenate([*gw, *gb]))
    return np.array(rows)


def test_ghost_norms_and_clipping_match_explicit_gradients():
    rng = np.random.default_rng(2)
    net = _network("relu", hidden=(5,), d=4)
    X = rng.normal(size=(30, 4)) * 3.0
    coef, w0 = net.host_start()
    raw, cache = net.forward(X, coef, w0)
    grad = rng.normal(size=raw.shape)
    G = _explicit_gradients(net, X, grad, coef, w0)
    clip = 0.5
    norms = np.linalg.norm(G, axis=1)
    assert np.any(norms > clip)
    expected = (G * np.minimum(1.0, clip / norms)[:, None]).sum(axis=0)
    g_coef, g_w0 = net.primal_sum(X, grad, None, cache, clip)
    # Sums of a few tens of float64 terms: rounding ~1e-15 relative.
    np.testing.assert_allclose(np.concatenate([g_coef, g_w0]), expected, rtol=1e-10)


@pytest.mark.parametrize(
    "record", [1e300, np.finfo(np.float64).max, -np.finfo(np.float64).max, 1e-300]
)
def test_adversarial_record_contribution_within_clip_norm(record):
    # One record's term in the clipped primal sum stays finite and within
    # clip_norm, whatever its features hold.
    rng = np.random.default_rng(3)
    net = _network("relu", hidden=(6,), d=3)
    X = rng.normal(size=(8, 3))
    coef, w0 = net.host_start()
    clip = 1.0

    y = np.arange(X.shape[0]) % 2

    def total(X, y=y):
        raw, cache = net.forward(X, coef, w0)
        _, grad, _ = softmax_terms(raw, y)
        return np.concatenate(net.primal_sum(X, grad, None, cache, clip))

    with warnings.catch_warnings():
        # No warning depends on the record.
        warnings.simplefilter("error")
        base = total(X)
        bad = X.copy()
        bad[0] = [record, -record, record]
        moved = total(bad)
    assert np.all(np.isfinite(moved))
    # Replacing one record moves the sum by at most 2 C; removing it by C.
    assert np.linalg.norm(moved - base) <= 2 * clip * (1 + 1e-12)
    assert np.linalg.norm(total(X[1:], y[1:]) - total(bad)) <= clip * (1 + 1e-12)


@pytest.mark.parametrize(
    "row, weight",
    [
        ([3.0, 4.0, 1.0], 1e308),
        ([3.0, 4.0, 1.0], np.finfo(np.float64).max),
        ([1.7e308, 1.0, -1.0], 1.0),
        ([1e200, 1e200, 1e200], 1e200),
    ],
)
def test_record_whose_factor_cannot_be_formed_is_clipped_not_dropped(row, weight):
    # A public weight near the largest float (or a row near it) makes the
    # record's gradient norm overflow: its clip factor cannot be formed, but
    # the term is still clipped to C (as DPMLPClassifier's sum does), not
    # given norm 0, so a weight raises a term only up to the clip norm.
    net = _network("relu", hidden=(6,), d=3)
    coef, w0 = net.host_start()
    X = np.array([row])
    raw, cache = net.forward(X, coef, w0)
    # Class 0: the logit gradient is nonzero (the network does not put
    # probability 1 on it for any of these rows).
    _, grad, _ = softmax_terms(raw, np.array([0]))
    grad = grad * weight
    assert np.all(np.isfinite(grad))
    clip = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning depends on the record
        term = np.concatenate(net.primal_sum(X, grad, None, cache, clip))
    # The term's norm is C up to the rescue's rounding.
    np.testing.assert_allclose(np.linalg.norm(term), clip, rtol=1e-12)


def test_linear_model_forward_is_the_linear_logits():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(6, 3))
    coef, w0 = rng.normal(size=(3, 2)), rng.normal(size=2)
    raw, cache = LinearFairModel(2, 1.0).forward(X, coef, w0)
    assert cache is None
    np.testing.assert_allclose(raw, X @ coef + w0, rtol=1e-12)


def test_flatten_round_trip_and_initialization_from_seed():
    net = _network("relu", hidden=(4,), d=3)
    coef, w0 = net.host_start()
    weights, biases = net.unflatten(coef, w0)
    assert [W.shape for W in weights] == [(3, 4), (4, 2)]
    assert [b.shape for b in biases] == [(4,), (2,)]
    back = net.flatten(weights, biases)
    assert np.array_equal(back[0], coef) and np.array_equal(back[1], w0)
    # Same seed, same start; another seed, another start.
    again = _network("relu", hidden=(4,), d=3).host_start()
    assert np.array_equal(again[0], coef)
    other = _network("relu", hidden=(4,), d=3, seed=1).host_start()
    assert not np.array_equal(other[0], coef)
    # No intercept: every bias is 0.
    assert not np.any(_network(intercept=False).host_start()[1])


def test_initialization_leaves_the_stream_of_the_generator():
    # The start comes from a child generator: the batches and noise drawn
    # from rng afterwards are those of the linear fit of the same seed.
    rng = np.random.default_rng(7)
    params = FERMIParams(constraint=None, hidden_layer_sizes=(3,))
    initial_network(params, 2, 2, rng)
    assert rng.random() == np.random.default_rng(7).random()


def _problem(net, X, y, codes, lam_reg=True, alpha=0.0):
    constraint = make_constraint("demographic_parity")
    blocks = constraint.block_index(y)
    reg = _regularizer() if lam_reg else None
    return FairProblem(
        X=X,
        X_solver=X,
        y=y,
        codes=codes,
        blocks=blocks,
        n_classes=2,
        n_groups=2,
        regularizer=reg,
        weight_scale=1.0,
        params=FERMIParams(
            constraint=constraint,
            alpha=alpha,
            tol=1e-6,
            final_max_iter=500,
            hidden_layer_sizes=net.sizes[1:-1],
        ),
        network=net,
    )


@pytest.mark.parametrize("input_scale", [None, np.array([1e-2, 30.0])])
def test_full_batch_objective_gradient_matches_finite_differences(input_scale):
    # The exact-dual objective over the flattened network (Danskin: the
    # gradient at the dual's maximiser), with the L2 term (the first
    # layer's in the user's units where the columns were scaled).
    rng = np.random.default_rng(5)
    net = replace(_network("tanh", hidden=(3,), d=2), input_scale=input_scale)
    X = rng.normal(size=(40, 2))
    y = rng.integers(0, 2, 40)
    codes = rng.integers(0, 2, 40)
    problem = _problem(net, X, y, codes, alpha=0.1)
    theta = np.concatenate(net.host_start())
    _, grad = net.objective(theta, problem, 2.0)
    h = 1e-6
    numeric = np.array(
        [
            (
                net.objective(theta + h * e, problem, 2.0)[0]
                - net.objective(theta - h * e, problem, 2.0)[0]
            )
            / (2 * h)
            for e in np.eye(theta.size)
        ]
    )
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_divided_columns_keep_the_objective_in_the_users_units():
    # The non-private fit solves on columns centred and divided by
    # input_scale (a preconditioning): its objective at the parameters of
    # those columns is the given columns' objective at the same model in
    # the user's units, L2 term included.
    rng = np.random.default_rng(7)
    scale, location = np.array([1e-3, 40.0]), np.array([1e5, 1990.0])
    Z = rng.normal(size=(60, 2))
    X = Z * scale + location
    y = (Z[:, 0] + Z[:, 1] ** 2 > 1).astype(int)
    codes = rng.integers(0, 2, 60)
    net = _network("tanh", hidden=(3,), d=2)
    coef, w0 = net.host_start()
    weights, biases = net.unflatten(coef, w0)
    first = weights[0] / scale[:, None]
    user = net.flatten([first, weights[1]], [biases[0] - location @ first, biases[1]])
    standardized = replace(net, input_scale=scale)
    for lam in (0.0, 2.0):
        ours = standardized.objective(
            np.concatenate([coef, w0]), _problem(standardized, Z, y, codes, alpha=0.1),
            lam,
        )[0]
        given = net.objective(
            np.concatenate(user), _problem(net, X, y, codes, alpha=0.1), lam
        )[0]
        np.testing.assert_allclose(ours, given, rtol=1e-9)


@pytest.mark.parametrize("center", [True, False])
def test_preconditioning_shrinks_wide_columns_and_keeps_narrow_ones(center):
    # Columns wider than unit scale are brought to unit spread; a one-hot
    # column keeps its 0/1 values' spread (dividing it by its spread would
    # make the user-units L2 term on it stiff); weights count as repeats.
    rng = np.random.default_rng(8)
    X = np.column_stack(
        [rng.normal(1990, 30, 200), rng.random(200) < 0.02, rng.uniform(-1, 1, 200)]
    )
    weights = rng.integers(1, 4, 200)
    net = _network("relu", hidden=(2,), d=3, intercept=center)
    mapped, scaling, conditioned = precondition_network(
        net, X, weights, center=center
    )
    repeated = np.repeat(X, weights, axis=0)
    location = repeated.mean(axis=0) if center else np.zeros(3)
    spread = np.sqrt(((repeated - location) ** 2).mean(axis=0))
    np.testing.assert_allclose(scaling.location, location)
    np.testing.assert_allclose(scaling.scale, [spread[0], 1.0, 1.0])
    np.testing.assert_allclose(mapped, (X - location) / scaling.scale)
    assert conditioned.input_scale is scaling.scale and net.input_scale is None


def test_refine_reaches_stationarity_and_lowers_the_objective():
    rng = np.random.default_rng(6)
    net = _network("tanh", hidden=(4,), d=2)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    codes = rng.integers(0, 2, 80)
    problem = _problem(net, X, y, codes, alpha=0.01)
    coef, w0 = problem.start()
    start = net.objective(np.concatenate([coef, w0]), problem, 1.0)[0]
    fit = problem.refine(1.0, coef, w0)
    assert fit.objective < start
    assert fit.converged and fit.stationarity <= 1e-6
    # The dual at the refined model is the exact maximiser: finite, of W's shape.
    W = problem.dual_at(1.0, fit.coef, fit.w0)
    assert W.shape == (1, 2, 2) and np.all(np.isfinite(W))
    # Predictions and counts read the network.
    pred = problem.predict(fit.coef, fit.w0)
    raw = net.host_logits(X, fit.coef, fit.w0, slice(None))
    assert np.array_equal(pred, np.argmax(raw, axis=1))


def test_release_layout_binary_and_multiclass():
    net = _network("relu", hidden=(4,), d=3, m=2)
    coef, w0 = net.host_start()
    weights, biases = net.release(coef, w0, 2)
    full_w, full_b = net.unflatten(coef, w0)
    assert [W.shape for W in weights] == [(3, 4), (4, 1)]
    np.testing.assert_array_equal(weights[1][:, 0], full_w[1][:, 1] - full_w[1][:, 0])
    np.testing.assert_array_equal(biases[1], full_b[1][1:] - full_b[1][:1])
    net3 = _network("relu", hidden=(4,), d=3, m=3)
    weights, _ = net3.release(*net3.host_start(), 3)
    assert weights[-1].shape == (4, 3)


def test_network_model_is_not_linear():
    assert NetworkFairModel.is_network and not LinearFairModel.is_network
