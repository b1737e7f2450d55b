# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validation of the public silo metadata (ids, budgets, weights, sizes)."""

import math

import numpy as np
import pandas as pd
import pytest

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.federated import FederationConfig
from sklearn_dpfair.federated._silos import (
    check_silo_delta,
    check_silo_size,
    per_silo_budget,
    resolve_server_weights,
    split_by_silo,
)


def test_split_by_silo_groups_rows():
    ids, rows = split_by_silo(np.array(["b", "a", "b", "c", "a"]), 5)
    assert ids == ["a", "b", "c"]
    assert [r.tolist() for r in rows] == [[1, 4], [0, 2], [3]]


@pytest.mark.parametrize(
    "silos, match",
    [
        (np.zeros(4), "one silo id per row"),
        (np.zeros((5, 1)), "one silo id per row"),
        (np.array([0, 1, np.nan, 1, 0]), "NaN"),
        (np.array(["a", None, "b", "a", "b"], dtype=object), "missing"),
        # A missing date or duration (NaT) and a complex NaN once became a
        # silo of their own (named None, and nan+0j).
        (np.array(["2020-01-01", "NaT"] * 2 + ["NaT"], "datetime64[D]"), "NaT"),
        (pd.Series(pd.to_datetime(["2020-01-01", None] * 2 + [None])), "NaT"),
        (np.array([1, "NaT", 2, 1, 2], "timedelta64[D]"), "NaT"),
        (np.array([1 + 1j, complex(np.nan, 0), 2j, 1 + 1j, 2j]), "NaN"),
        # pandas' string dtype holds pd.NA, whose truth value raises.
        (
            pd.array(["a", None, "b", "a", "b"], dtype="string"),
            "missing",
        ),
    ],
)
def test_split_by_silo_refuses_bad_ids(silos, match):
    with pytest.raises(ValueError, match=match):
        split_by_silo(silos, 5)


@pytest.mark.parametrize("container", [list, tuple, lambda ids: np.array(ids, object)])
def test_split_by_silo_refuses_numbers_beside_strings_in_any_container(container):
    # numpy reads the list [1, "1"] as the strings ["1", "1"]: two
    # organisations' rows became one silo, and a budget mapping keyed by
    # the int 1 was refused for a silo "1" the user never named.
    with pytest.raises(TypeError, match="silos: silo ids must be mutually comparable"):
        split_by_silo(container([1, "1", 1, "1", 2]), 5)
    ids, _ = split_by_silo(container(["b", "a", "b", "a", "b"]), 5)
    assert ids == ["a", "b"]
    ids, _ = split_by_silo(container([2, 1, 2, 1, 2]), 5)
    assert ids == [1, 2] and all(type(i) is int for i in ids)


def test_per_silo_budget_scalar_mapping_and_errors():
    assert per_silo_budget(2, [1, 2], name="e", kind="epsilon") == {1: 2.0, 2: 2.0}
    budgets = per_silo_budget(
        {1: 0.5, 2: math.inf, 9: 3.0}, [1, 2], name="e", kind="epsilon"
    )
    assert budgets == {1: 0.5, 2: math.inf}
    with pytest.raises(ValueError, match=r"silo_epsilon is a mapping without .*\[2\]"):
        per_silo_budget(
            {1: 0.5}, [1, 2], name="silo_epsilon", kind="epsilon"
        )
    with pytest.raises(ValueError, match="silo_delta of silo 2"):
        per_silo_budget(
            {1: 1e-6, 2: 1.5}, [1, 2], name="silo_delta", kind="delta"
        )
    with pytest.raises(ValueError, match="silo_epsilon of silo 1"):
        per_silo_budget(0.0, [1], name="silo_epsilon", kind="epsilon")
    # An int beyond the largest float has no float budget (OverflowError).
    with pytest.raises(ValueError, match="silo_epsilon of silo 2"):
        per_silo_budget(
            {1: 1.0, 2: 10**400}, [1, 2], name="silo_epsilon", kind="epsilon"
        )


def test_server_weights():
    sizes = {"a": 100, "b": 300}
    assert resolve_server_weights("uniform", sizes) == {"a": 0.5, "b": 0.5}
    assert resolve_server_weights("size", sizes) == {"a": 0.25, "b": 0.75}
    assert resolve_server_weights({"a": 2, "b": 6, "c": 1}, sizes) == {
        "a": 0.25,
        "b": 0.75,
    }
    with pytest.raises(ValueError, match="without an entry for silos"):
        resolve_server_weights({"a": 1.0}, sizes)
    with pytest.raises(ValueError, match="positive and finite"):
        resolve_server_weights({"a": 1.0, "b": -1.0}, sizes)


def test_server_weights_near_the_float_maximum_do_not_overflow():
    # Their sum is past the largest float; the weights are scaled first.
    sizes = {"a": 100, "b": 300}
    weights = resolve_server_weights({"a": 1e308, "b": 1e308}, sizes)
    assert weights == {"a": 0.5, "b": 0.5}
    weights = resolve_server_weights({"a": 1e308, "b": 1.5e308}, sizes)
    assert weights == pytest.approx({"a": 0.4, "b": 0.6}, rel=1e-15)


def test_check_silo_size():
    check_silo_size("ok", 1000, 1e-5, 0.01)
    with pytest.raises(
        ValueError, match="silo 'x' has 100 rows, too many for its silo_delta"
    ):
        check_silo_size("x", 100, 0.01, 0.5)
    with pytest.raises(ValueError, match="expected batch"):
        check_silo_size("x", 100, 1e-5, 0.005)


def test_an_expected_batch_of_exactly_one_record_is_accepted():
    # q = 2 / 98 over 49 rows is one record, but computes as 1 - 2**-53.
    q = 2 / 98
    assert q * 49 < 1.0
    check_silo_size("a", 49, 1e-5, q)
    with pytest.raises(ValueError) as err:
        check_silo_size("a", 48, 1e-5, q)
    message = str(err.value)
    assert "has 48 rows" in message and "needs at least 49 rows" in message
    assert "< 1" not in message


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(rounds=0), "rounds"),
        (dict(sampling_probability=0.0), "sampling_probability"),
        (dict(clip_norm=-1.0), "clip_norm"),
        (dict(learning_rate="fast"), "learning_rate"),
        (dict(local_steps=1.5), "local_steps"),
        (dict(tail_fraction=0.0), "tail_fraction"),
        (dict(accountant="gdp"), "accountant"),
    ],
)
def test_config_validation(kwargs, match):
    base = dict(rounds=3, sampling_probability=0.1)
    with pytest.raises(ValueError, match=match):
        FederationConfig(**{**base, **kwargs})


def test_a_silo_too_large_for_its_delta_is_told_to_lower_it():
    # delta * n_i >= 1 means too MANY rows for the delta: the fix is a
    # smaller silo_delta, never a merge (which would make it worse).
    with pytest.raises(ValueError, match="too many for its silo_delta") as info:
        check_silo_delta("x", 100_000, 1e-5)
    assert "Lower silo_delta" in str(info.value)
    assert "merge" not in str(info.value)
    # A silo that releases nothing private makes no promise to check.
    check_silo_delta("x", 100_000, 1e-5, private=False)
    check_silo_size("x", 100_000, 1e-5, 0.01, private=False)


def test_a_non_private_silo_takes_any_sampling_rate():
    # q * n_i < 1 is refused for a private silo, whose messages would be
    # almost pure noise; a silo that releases nothing sends noiseless,
    # unbiased messages, and the non-private reference of a federation with
    # a silo of 2 rows was refused.
    with pytest.raises(ValueError, match="too few for the sampling rate"):
        check_silo_size("tiny", 2, 1e-5, 0.064)
    check_silo_size("tiny", 2, 1e-5, 0.064, private=False)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 3))
    y = (X[:, 0] + rng.logistic(size=4000) > 0).astype(int)
    silos = np.array(["big"] * 3998 + ["tiny"] * 2)
    central = DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(X, y)
    federated = DPLogisticRegression(
        epsilon=np.inf, classes=[0, 1], server_weights="size", random_state=0
    ).fit(X, y, silos=silos)
    np.testing.assert_allclose(federated.coef_, central.coef_, atol=0.05)


def test_non_private_silos_of_any_size_fit():
    # epsilon = inf and no noise: nothing is released, whatever delta says.
    from sklearn_dpfair.federated import silo_privacy

    config = FederationConfig(rounds=3, sampling_probability=0.01)
    assert math.isinf(silo_privacy(100_000, math.inf, 1e-5, config).record.epsilon)
    with pytest.raises(ValueError, match="too many for its silo_delta"):
        silo_privacy(100_000, math.inf, 1e-5, config, noise_multiplier=1.0)


@pytest.mark.parametrize("estimator", ["logistic", "mlp", "shuffle"])
def test_an_infinite_epsilon_fit_accepts_silos_larger_than_one_over_delta(estimator):
    from sklearn_dpfair import DPLogisticRegression
    from sklearn_dpfair.neural import DPMLPClassifier

    make = {
        "logistic": DPLogisticRegression,
        "mlp": DPMLPClassifier,
        "shuffle": lambda **kw: DPLogisticRegression(shuffle=True, **kw),
    }[estimator]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    y = (X[:, 0] > 0).astype(int)
    # Two silos of 500 rows, delta = 0.01 (delta * n_i = 5).
    est = make(epsilon=math.inf, delta=0.01, classes=[0, 1], max_iter=1)
    est.fit(X, y, silos=np.repeat([0, 1], 500))
    assert math.isinf(est.epsilon_)
    with pytest.raises(ValueError, match="too many for its silo_delta"):
        make(epsilon=1.0, delta=0.01, classes=[0, 1], max_iter=1).fit(
            X, y, silos=np.repeat([0, 1], 500)
        )
