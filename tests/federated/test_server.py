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
