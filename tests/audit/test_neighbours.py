# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring datasets differ in exactly the canary, under each relation."""

import numpy as np
import pandas as pd
import pytest

from sklearn_dpfair.audit import make_canary, make_neighbours


@pytest.fixture
def base():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    y = np.array([0, 1, 0, 1, 1, 1])
    s = np.array(["a", "b", "a", "b", "a", "b"])
    return X, y, s


def test_add_remove_adds_exactly_the_canary(base):
    X, y, s = base
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([9.0, 0, 0]), 0),
        fit_params={"sensitive_features": s, "n_epochs": 3},
        canary_fit_params={"sensitive_features": "b"},
    )
    assert nb.adjacency == "add_remove"
    assert nb.without.X is X and nb.without.y is y
    np.testing.assert_array_equal(nb.with_canary.X[:-1], X)
    np.testing.assert_array_equal(nb.with_canary.X[-1], [9.0, 0, 0])
    assert nb.with_canary.y[-1] == 0
    assert list(nb.with_canary.fit_params["sensitive_features"]) == [*s, "b"]
    # Not per record: passed through unchanged.
    assert nb.with_canary.fit_params["n_epochs"] == 3


def test_replace_one_differs_in_one_row(base):
    X, y, s = base
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([9.0, 0, 0]), 0),
        adjacency="replace_one",
        fit_params={"sensitive_features": s},
        canary_fit_params={"sensitive_features": "b"},
    )
    X0, X1 = nb.without.X, nb.with_canary.X
    assert X0.shape == X1.shape == (7, 3)
    assert np.flatnonzero(np.any(X0 != X1, axis=1)).tolist() == [6]
    # Default replacement: a copy of the first record, attributes included.
    np.testing.assert_array_equal(X0[6], X[0])
    assert nb.without.y[6] == y[0]
    assert nb.without.fit_params["sensitive_features"][6] == s[0]


def test_attribute_neighbours_differ_only_in_the_attribute(base):
    X, y, s = base
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([9.0, 0, 0]), 0),
        adjacency="attribute",
        fit_params={"sensitive_features": s},
        canary_fit_params={"sensitive_features": "a"},
        attribute="sensitive_features",
        alternative_value="b",
    )
    np.testing.assert_array_equal(nb.without.X, nb.with_canary.X)
    np.testing.assert_array_equal(nb.without.y, nb.with_canary.y)
    s0 = nb.without.fit_params["sensitive_features"]
    s1 = nb.with_canary.fit_params["sensitive_features"]
    assert np.flatnonzero(s0 != s1).tolist() == [6]
    assert (s0[6], s1[6]) == ("a", "b")


def test_pandas_inputs_keep_their_type():
    X = pd.DataFrame({"u": [0.0, 1.0], "v": [1.0, 0.0]})
    y = pd.Series([0, 1], name="label")
    nb = make_neighbours(X, y, canary=([5.0, 5.0], 1))
    assert isinstance(nb.with_canary.X, pd.DataFrame)
    assert list(nb.with_canary.X.columns) == ["u", "v"]
    assert nb.with_canary.X.iloc[-1].tolist() == [5.0, 5.0]
    assert nb.with_canary.y.tolist() == [0, 1, 1]


def test_bad_neighbour_requests_are_explained(base):
    X, y, s = base
    with pytest.raises(ValueError, match="adjacency must be one of"):
        make_neighbours(X, y, canary=(np.zeros(3), 0), adjacency="swap")
    with pytest.raises(ValueError, match="canary has 2 features"):
        make_neighbours(X, y, canary=(np.zeros(2), 0))
    with pytest.raises(ValueError, match="canary_fit_params"):
        make_neighbours(
            X, y, canary=(np.zeros(3), 0), fit_params={"sensitive_features": s}
        )
    with pytest.raises(ValueError, match="attribute="):
        make_neighbours(X, y, canary=(np.zeros(3), 0), adjacency="attribute")


def test_make_canary_is_an_outlier_on_the_least_used_feature():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    X[:, 2] *= 0.01
    y = np.r_[np.zeros(90, int), np.ones(10, int)]
    cx, cy = make_canary(X, y)
    assert np.flatnonzero(cx).tolist() == [2]
    assert cx[2] >= 10 * np.abs(X).max()
    assert cy == 1  # the rarer label
    cx, cy = make_canary(X, rng.normal(size=100))
    assert cy >= 10  # regression: an outlying target
