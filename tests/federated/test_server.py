# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Server: public-weight averaging, order independence, protocol checks."""

import numpy as np
import pytest

from sklearn_dpfair.federated import FederationConfig, Server, SiloMessage

CONFIG = FederationConfig(
    rounds=4, sampling_probability=0.1, learning_rate=0.5, tail_fraction=0.5
)


def _msgs(r, grads):
    return [SiloMessage(s, r, g) for s, g in grads.items()]


def test_weighted_step_and_tail_average():
    server = Server(1, 1, config=CONFIG, weights={"a": 1.0, "b": 3.0})
    models = []
    for r in range(4):
        grads = {"a": np.full((2, 1), 1.0 + r), "b": np.full((2, 1), -1.0)}
        before = server.model
        server.step(_msgs(r, grads))
        expected = before - 0.5 * (0.25 * grads["a"] + 0.75 * grads["b"])
        np.testing.assert_allclose(server.model, expected)
        models.append(server.model)
    coef, intercept = server.coefficients()
    tail = (models[2] + models[3]) / 2
    np.testing.assert_allclose(coef, tail[:-1].T)
    np.testing.assert_allclose(intercept, tail[-1])
    with pytest.raises(RuntimeError, match="all were run"):
        server.step(_msgs(4, {"a": np.zeros((2, 1))}))


def test_arrival_order_does_not_change_the_floats():
    rng = np.random.default_rng(0)
    weights = {s: rng.uniform(0.1, 1) for s in range(7)}
    grads = {s: rng.normal(size=(4, 2)) for s in range(7)}
    a = Server(3, 2, config=CONFIG, weights=weights)
    b = Server(3, 2, config=CONFIG, weights=weights)
    a.step(_msgs(0, grads))
    b.step(_msgs(0, dict(reversed(list(grads.items())))))
    assert np.array_equal(a.model, b.model)


def test_missing_silos_renormalize_the_weights():
    server = Server(1, 1, config=CONFIG, weights={"a": 1.0, "b": 1.0, "c": 2.0})
    server.step(_msgs(0, {"a": np.ones((2, 1)), "b": 3 * np.ones((2, 1))}))
    np.testing.assert_allclose(server.model, -0.5 * 2 * np.ones((2, 1)))


@pytest.mark.parametrize(
    "messages, match",
    [
        ([SiloMessage("z", 0, np.zeros((2, 1)))], "unexpected"),
        ([SiloMessage("a", 1, np.zeros((2, 1)))], "expected 0"),
        ([SiloMessage("a", 0, np.zeros((3, 1)))], "shape"),
        (
            [
                SiloMessage("a", 0, np.zeros((2, 1))),
                SiloMessage("a", 0, np.zeros((2, 1))),
            ],
            "repeated",
        ),
        ([], "no silo answered"),
    ],
)
def test_protocol_violations_are_refused(messages, match):
    server = Server(1, 1, config=CONFIG, weights={"a": 1.0})
    with pytest.raises(ValueError, match=match):
        server.step(messages)


def test_only_messages_are_accepted():
    server = Server(1, 1, config=CONFIG, weights={"a": 1.0})
    with pytest.raises(TypeError, match="SiloMessage"):
        server.step([np.zeros((2, 1))])


def test_server_needs_a_numeric_step_and_valid_weights():
    auto = FederationConfig(rounds=2, sampling_probability=0.1)
    with pytest.raises(ValueError, match="numeric learning_rate"):
        Server(1, 1, config=auto, weights={"a": 1.0})
    with pytest.raises(ValueError, match="positive"):
        Server(1, 1, config=CONFIG, weights={"a": 0.0})


def test_weights_near_the_float_maximum_are_normalized():
    # Their sum is past the largest float; the weights are scaled first.
    server = Server(1, 1, config=CONFIG, weights={"a": 1e308, "b": 1e308})
    assert server.weights == {"a": 0.5, "b": 0.5}


def test_a_diverging_step_is_refused_and_leaves_the_server_as_it_was():
    # The model is post-processing of the messages: a step that leaves the
    # float range is refused by the server, naming learning_rate, rather
    # than broadcast to silos that would refuse it.
    config = FederationConfig(rounds=2, sampling_probability=0.1, learning_rate=1e300)
    server = Server(1, 1, config=config, weights={"a": 1.0})
    server.step(_msgs(0, {"a": np.ones((2, 1))}))
    before = server.model
    with pytest.raises(ValueError, match="not finite.*lower learning_rate"):
        server.step(_msgs(1, {"a": np.full((2, 1), -1e10)}))
    np.testing.assert_array_equal(server.model, before)
    assert server.round_index == 1


def test_column_alpha_is_the_exact_proximal_step_of_the_penalty():
    # w_j <- (w_j - eta g_j) / (1 + eta alpha_j) on the coefficient rows; the
    # intercept row is not penalized. eta * alpha_j = 5e6 (an explicit step
    # would multiply w_j by 1 - 5e6) shrinks, inf holds w_j at 0; the fixed
    # point of a constant message g is the ridge solution -g_j / alpha_j.
    config = FederationConfig(
        rounds=200, sampling_probability=1.0, learning_rate=0.5,
        column_alpha=[0.0, 1e7, np.inf, 0.25],
    )
    assert config.column_alpha == (0.0, 1e7, np.inf, 0.25)
    server = Server(4, 2, config=config, weights={"a": 1.0})
    g = np.arange(10.0).reshape(5, 2) - 4.0
    server.step(_msgs(0, {"a": g}))
    shrink = 1.0 / (1.0 + 0.5 * np.array([0.0, 1e7, np.inf, 0.25, 0.0]))
    np.testing.assert_allclose(server.model, -0.5 * g * shrink[:, None], rtol=1e-12)
    constant = np.ones((5, 2))
    for r in range(1, 200):
        server.step(_msgs(r, {"a": constant}))
    np.testing.assert_allclose(server.model[1:4], [[-1e-7] * 2, [0.0] * 2, [-4.0] * 2])
    np.testing.assert_array_equal(server.model[2], 0.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(column_alpha=[0.1, -1.0]), "floats >= 0"),
        (dict(column_alpha=[0.1, np.nan]), "floats >= 0"),
        (dict(column_alpha="ab"), "floats >= 0"),
        (dict(column_alpha=[0.1], alpha=0.1), "replaces alpha"),
        (dict(column_alpha=[0.1], local_steps=2), "replaces alpha"),
    ],
)
def test_column_alpha_is_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FederationConfig(rounds=2, sampling_probability=0.1, **kwargs)


def test_column_alpha_needs_one_strength_per_coefficient_row():
    config = FederationConfig(
        rounds=2, sampling_probability=0.1, learning_rate=1.0, column_alpha=[1.0]
    )
    with pytest.raises(ValueError, match="one strength per coefficient row"):
        Server(2, 1, config=config, weights={"a": 1.0})
