# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivacyRecord: a seeded fit says that it is not a private release."""

import dataclasses
import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
)
from sklearn_dpfair.privacy import PrivacyRecord
from sklearn_dpfair.privacy._accounting import gaussian_event
from sklearn_dpfair.privacy._random import noise_seed

NOT_A_RELEASE = "not a private release"


def _record(**kw):
    return PrivacyRecord.from_event(
        gaussian_event(3.0),
        delta=1e-5,
        accountant="rdp",
        adjacency="add_remove",
        mechanism="Gaussian",
        noise_multiplier=3.0,
        **kw,
    )


def test_unseeded_record_is_a_release():
    rec = _record()
    assert rec.seed is None and not rec.seeded
    assert NOT_A_RELEASE not in str(rec)


def test_seeded_record_says_it_is_not_a_release():
    rec = _record(seed="abc")
    assert rec.seeded
    text = str(rec)
    assert "Seeded fit" in text and NOT_A_RELEASE in text
    assert rec.to_dict()["seed"] == "abc"
    # The guarantee of the mechanism itself is unchanged.
    assert rec.epsilon == _record().epsilon


@pytest.fixture(scope="module")
def classification():
    return make_classification(n_samples=300, n_features=4, random_state=0)


@pytest.mark.parametrize(
    "random_state",
    [0, np.random.RandomState(0), np.random.default_rng(0)],
    ids=["int", "RandomState", "Generator"],
)
def test_a_seeded_fit_is_marked_in_record_and_summary(classification, random_state):
    X, y = classification
    before = pickle.dumps(random_state)
    clf = DPLogisticRegression(
        classes=[0, 1], max_iter=2, random_state=random_state
    ).fit(X, y)
    assert pickle.dumps(random_state) == before  # fit never advances it
    assert clf.privacy_record_.seeded
    assert clf.privacy_record_.seed == noise_seed(random_state)
    assert NOT_A_RELEASE in clf.privacy_summary()


def test_an_unseeded_fit_is_a_release(classification):
    X, y = classification
    clf = DPLogisticRegression(classes=[0, 1], max_iter=2).fit(X, y)
    assert not clf.privacy_record_.seeded
    assert NOT_A_RELEASE not in clf.privacy_summary()


def test_generator_is_accepted_as_documented(classification):
    # The docstrings promise a Generator; parameter validation used to refuse it.
    X, y = classification
    gen = np.random.default_rng(3)
    a = DPLogisticRegression(classes=[0, 1], max_iter=2, random_state=gen).fit(X, y)
    b = DPLogisticRegression(classes=[0, 1], max_iter=2, random_state=3).fit(X, y)
    # Read as the seed its state gives: the int 3 draws the same noise.
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.privacy_record_.seed == b.privacy_record_.seed


@pytest.mark.parametrize(
    "make",
    [
        lambda rs: DPFERMIClassifier(
            classes=[0, 1], groups=[0, 1], max_iter=1, random_state=rs
        ),
        lambda rs: HeavyTailDPRegressor(random_state=rs),
        lambda rs: SemiDPLinearRegression(random_state=rs),
    ],
    ids=["DPFERMIClassifier", "HeavyTailDPRegressor", "SemiDPLinearRegression"],
)
def test_every_private_estimator_marks_seeded_fits(make):
    X, y = make_regression(n_samples=300, n_features=3, random_state=0)
    fit_kw = {}
    est = make(np.random.RandomState(1))
    if isinstance(est, DPFERMIClassifier):
        y = (y > 0).astype(int)
        fit_kw["sensitive_features"] = (X[:, 0] > 0).astype(int)
    if isinstance(est, SemiDPLinearRegression):
        fit_kw["public_mask"] = np.arange(300) < 60
    seeded = est.fit(X, y, **fit_kw)
    assert seeded.privacy_record_.seed == noise_seed(np.random.RandomState(1))
    assert NOT_A_RELEASE in seeded.privacy_summary()
    unseeded = make(None).fit(X, y, **fit_kw)
    assert not unseeded.privacy_record_.seeded


def test_record_replace_keeps_the_seed():
    rec = dataclasses.replace(_record(seed="s"), caveats=("x",))
    assert rec.seed == "s"
