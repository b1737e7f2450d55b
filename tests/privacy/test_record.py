# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivacyRecord: a seeded fit says that it is not a private release."""

import dataclasses
import pickle
import warnings

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
from sklearn_dpfair.privacy._record import (
    ADJACENCY_CONVERSION,
    PUBLIC_ROWS_CAVEAT,
    WEIGHTS_CAVEAT,
    weights_caveats,
)

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


def test_a_seeded_non_private_fit_states_no_guarantee_for_its_seed(classification):
    # "the guarantee above holds only while the seed stays secret" followed
    # "No differential privacy (epsilon = inf)": there is none to hold.
    X, y = classification
    clf = DPLogisticRegression(epsilon=np.inf, random_state=0).fit(X, y)
    text = str(clf.privacy_record_)
    assert "No differential privacy" in text
    assert "Seeded fit" not in text and "guarantee above" not in text


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


# -- sample weights ------------------------------------------------------------


def _weighted_fit(make, weights):
    X, y = make_regression(n_samples=200, n_features=3, random_state=0)
    # Seeded so that the test does not depend on a draw.
    est = make().set_params(random_state=0)
    fit_kw = {"sample_weight": weights}
    if isinstance(est, (DPLogisticRegression, DPFERMIClassifier)):
        y = (y > 0).astype(int)
    if isinstance(est, DPFERMIClassifier):
        fit_kw["sensitive_features"] = (X[:, 0] > 0).astype(int)
    if isinstance(est, SemiDPLinearRegression):
        fit_kw["public_mask"] = np.arange(200) < 60
    return est.fit(X, y, **fit_kw)


_WEIGHTED_ESTIMATORS = {
    "dp-sgd": lambda: DPLogisticRegression(classes=[0, 1], max_iter=1),
    "output-perturbation": lambda: DPLogisticRegression(
        classes=[0, 1],
        solver="output-perturbation",
        alpha=1.0,
        feature_norm_bound=1.0,
    ),
    "frank-wolfe": lambda: DPLogisticRegression(
        classes=[0, 1], solver="dp-frank-wolfe", l1_radius=1.0, feature_inf_bound=5.0
    ),
    "DPFERMIClassifier": lambda: DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=1
    ),
    "SemiDPLinearRegression": lambda: SemiDPLinearRegression(),
    "HeavyTailDPRegressor": lambda: HeavyTailDPRegressor(),
}


@pytest.mark.parametrize(
    "make", list(_WEIGHTED_ESTIMATORS.values()), ids=list(_WEIGHTED_ESTIMATORS)
)
def test_passed_weights_carry_the_one_weights_caveat(make):
    weights = np.random.default_rng(0).uniform(0.5, 2.0, size=200)
    fitted = _weighted_fit(make, weights)
    # One text, the same for every estimator and solver, once.
    assert fitted.privacy_caveats_.count(WEIGHTS_CAVEAT) == 1
    assert not [
        c for c in fitted.privacy_caveats_ if "weight" in c and c != WEIGHTS_CAVEAT
    ]
    summary = fitted.privacy_summary()
    assert "treated as public inputs" in summary
    assert "computed from the private data" in summary
    # Weights of 1 carry the same caveat: the record may not depend on the
    # weights a record brings (all 1, or one of them not).
    ones = _weighted_fit(make, np.ones(200))
    assert ones.privacy_record_.caveats == fitted.privacy_record_.caveats


def test_weights_caveats_for_every_weighted_fit():
    assert weights_caveats(None) == ()
    # Passed weights, whatever they hold.
    assert weights_caveats(np.ones(4)) == (WEIGHTS_CAVEAT,)
    assert weights_caveats(np.array([1.0, 1.0, 2.0])) == (WEIGHTS_CAVEAT,)
    # Private fits use weights as given: uniform weights of 3 scale the terms.
    assert weights_caveats(np.full(4, 3.0)) == (WEIGHTS_CAVEAT,)


class _WeightsSeen(DPLogisticRegression):
    """DPLogisticRegression that keeps the sample_weight its fit was given."""

    def fit(self, X, y, sample_weight=None):
        self.weights_seen_ = sample_weight
        return super().fit(X, y, sample_weight=sample_weight)


def test_exponentiated_gradient_inner_fits_say_their_weights_are_outside():
    # fairlearn's reduction computes each inner fit's sample_weight from the
    # private labels and groups: every inner fit given weights other than 1
    # must say, in its record and summary, that such weights are outside the
    # guarantee.
    pytest.importorskip("fairlearn")
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient

    X, y = make_classification(n_samples=300, n_features=4, random_state=0)
    group = (X[:, 1] > 0).astype(int)
    eg = ExponentiatedGradient(
        _WeightsSeen(classes=[0, 1], max_iter=2), DemographicParity(), max_iter=4
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fairlearn's own pandas warnings
        eg.fit(X, y, sensitive_features=group)
    weighted = [
        p for p in eg.predictors_ if np.any(np.asarray(p.weights_seen_) != 1.0)
    ]
    assert weighted  # the reduction did reweight
    for predictor in weighted:
        assert WEIGHTS_CAVEAT in predictor.privacy_caveats_
        summary = predictor.privacy_summary()
        assert "ExponentiatedGradient" in summary
        assert "outside the guarantee" in summary


# -- the summary in plain words --------------------------------------------------


def _sentences(paragraph):
    # Sentences end with ". " or the final "."; numbers such as 1e-05 hold no
    # ". ".
    return paragraph.rstrip(".").split(". ")


@pytest.mark.parametrize("adjacency", ["add_remove", "replace_one"])
def test_summary_leads_with_plain_words_then_the_technical_record(adjacency):
    rec = dataclasses.replace(_record(), adjacency=adjacency)
    text = str(rec)
    plain, technical = text.split("\n\nTechnical record:\n")
    assert plain == rec.plain_language() and technical == rec.technical_text()
    assert len(_sentences(plain)) == 3
    # What is protected, against whom, what is public, what is not covered.
    assert "features, label or target, sensitive group and sample weight" in plain
    assert "anyone who sees the released model or its outputs" in plain
    assert "Public, and not protected:" in plain and "number of training" in plain
    assert "Not covered: the checks of the input before training" in plain
    # The technical record is unchanged after its header.
    assert technical.startswith(f"({rec.epsilon:.4g}, 1e-05)-differential privacy")


def test_replace_one_states_the_conversion_and_what_it_does_not_hide():
    replace = dataclasses.replace(_record(), adjacency="replace_one")
    add_remove = _record()
    assert ADJACENCY_CONVERSION in replace.technical_text()
    assert "(2 eps, (1 + e^eps) delta)" in ADJACENCY_CONVERSION
    assert "does not by itself hide whether a record is present" in (
        ADJACENCY_CONVERSION
    )
    assert "replaced by any other record" in replace.plain_language()
    assert "whether a record is present at all" in replace.plain_language()
    assert ADJACENCY_CONVERSION not in str(add_remove)
    assert "left out" in add_remove.plain_language()


def test_plain_words_name_the_caveats_and_a_seeded_fit():
    rec = _record(
        caveats=(WEIGHTS_CAVEAT, "label set inferred from the private data"),
        seed="abc",
    )
    plain = rec.plain_language()
    assert "sample weights computed from the private data" in plain
    assert "the 1 further caveat listed below" in plain
    assert "seeded, so it is not a private release" in plain
    assert len(_sentences(plain)) == 3
    infinite = dataclasses.replace(_record(), epsilon=float("inf"))
    assert "not differentially private" in infinite.plain_language()


@pytest.mark.parametrize(
    "make, replace_one",
    [
        (lambda: DPLogisticRegression(classes=[0, 1], max_iter=1), False),
        (lambda: SemiDPLinearRegression(), True),
        (lambda: HeavyTailDPRegressor(solver="localized"), True),
        (lambda: HeavyTailDPRegressor(solver="dp-sgd"), False),
    ],
    ids=["DPLogisticRegression", "SemiDPLinearRegression", "localized", "dp-sgd"],
)
def test_every_replace_one_fit_states_the_conversion(make, replace_one):
    fitted = _weighted_fit(make, None)
    summary = fitted.privacy_summary()
    assert summary.startswith("In plain words:")
    assert (fitted.adjacency_ == "replace_one") == replace_one
    assert (ADJACENCY_CONVERSION in summary) == replace_one


def test_semi_dp_says_that_public_rows_are_not_protected():
    fitted = _weighted_fit(lambda: SemiDPLinearRegression(), None)
    assert PUBLIC_ROWS_CAVEAT in fitted.privacy_caveats_
    plain = fitted.privacy_record_.plain_language()
    assert "each private training record" in plain
    assert "the rows marked public" in plain
    # dp-gd's noisy gradient treats them as private, but they still give its
    # start, column scales and step size exactly.
    dp_gd = _weighted_fit(lambda: SemiDPLinearRegression(solver="dp-gd"), None)
    assert PUBLIC_ROWS_CAVEAT in dp_gd.privacy_caveats_
