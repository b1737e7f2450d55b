# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validation of the public silo metadata (ids, budgets, weights, sizes)."""

import math

import numpy as np
import pandas as pd
import pytest

from sklearn_dpfair.federated import FederationConfig
from sklearn_dpfair.federated._silos import (
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


def test_check_silo_size():
    check_silo_size("ok", 1000, 1e-5, 0.01)
    with pytest.raises(
        ValueError, match="silo 'x' has 100 rows, too few for its budget"
    ):
        check_silo_size("x", 100, 0.01, 0.5)
    with pytest.raises(ValueError, match="expected batch"):
        check_silo_size("x", 100, 1e-5, 0.005)


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
