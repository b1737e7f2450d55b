# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The noise generator of a fit and the fingerprint of its seed."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.privacy import check_noise_generator
from sklearn_dpfair.privacy._random import noise_seed


def _draw(random_state):
    return check_noise_generator(random_state).normal(size=4)


def test_none_draws_fresh_noise_and_has_no_seed():
    assert not np.array_equal(_draw(None), _draw(None))
    assert noise_seed(None) is None


@pytest.mark.parametrize(
    "make", [lambda: np.random.default_rng(5), lambda: np.random.RandomState(5)]
)
def test_an_instance_is_read_as_a_seed_and_never_advanced(make):
    instance = make()
    before = pickle.dumps(instance)
    first, second = _draw(instance), _draw(instance)
    # Same state, same noise: the instance is a seed, like an int.
    np.testing.assert_array_equal(first, second)
    # fit does not mutate its parameters.
    assert pickle.dumps(instance) == before
    assert noise_seed(instance) == noise_seed(make())


def test_the_seed_identifies_the_noise_whatever_its_form():
    assert noise_seed(0) == noise_seed(np.random.default_rng(0))
    assert noise_seed(0) == noise_seed(np.int64(0))
    assert noise_seed(0) != noise_seed(1)
    state = np.random.RandomState()  # OS entropy, but copied by clone
    assert noise_seed(copy.deepcopy(state)) == noise_seed(state)
    assert noise_seed(np.random.RandomState()) != noise_seed(state)
    # A generator advanced by someone else is a different seed.
    gen = np.random.default_rng(0)
    gen.normal()
    assert noise_seed(gen) != noise_seed(0)


def test_clones_share_the_seed_of_an_instance():
    # The bug this guards against: clone deep-copies the instance, so every
    # clone in a search draws the same noise.
    clf = DPLogisticRegression(random_state=np.random.RandomState())
    a, b = clone(clf), clone(clf)
    np.testing.assert_array_equal(_draw(a.random_state), _draw(b.random_state))
    assert noise_seed(a.random_state) == noise_seed(b.random_state) is not None


def test_the_fingerprint_does_not_spell_out_the_seed():
    seed = noise_seed(123456789)
    assert isinstance(seed, str) and len(seed) == 32
    assert "123456789" not in seed


@pytest.mark.parametrize("bad", [-1, 1.5, True, "0", object()])
def test_other_values_are_refused(bad):
    with pytest.raises(ValueError, match="random_state must be None"):
        check_noise_generator(bad)
    with pytest.raises(ValueError, match="random_state must be None"):
        noise_seed(bad)
