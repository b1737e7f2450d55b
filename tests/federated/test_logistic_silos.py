# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression.fit(X, y, silos=...): the federated mode of dp-sgd."""

import pickle
import sys
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_val_score

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.neural import DPMLPClassifier
from sklearn_dpfair.privacy._accounting import epsilon_of


@pytest.fixture(scope="module")
def data():
    # A logistic-linear problem (reference accuracy ~0.87) split into three
    # shifted, unbalanced silos.
    rng = np.random.default_rng(0)
    sizes = [600, 1000, 1400]
    X = np.vstack(
        [0.4 * rng.normal(size=(n, 5)) + 0.2 * j for j, n in enumerate(sizes)]
    )
    score = X @ np.array([2.0, -1.0, 1.0, 0.0, 0.5]) + 0.3 * rng.logistic(size=3000)
    y = (score > 0.3).astype(int)
    silos = np.repeat(["north", "south", "west"], sizes)
    return X, y, silos


def _clf(**kw):
    return DPLogisticRegression(**{"classes": [0, 1], "random_state": 0, **kw})


def test_fitted_silo_attributes(data):
    X, y, silos = data
    budgets = {"north": 0.5, "south": 1.0, "west": 2.0}
    clf = _clf(silo_epsilon=budgets).fit(X, y, silos=silos)
    assert clf.silos_ == ["north", "south", "west"]
    for s in clf.silos_:
        assert clf.silo_epsilon_[s] <= budgets[s]
        rec = clf.silo_privacy_records_[s]
        assert rec.recompute_epsilon() == clf.silo_epsilon_[s]
        assert clf.silo_delta_[s] == 1e-5
        assert clf.silo_rounds_[s] == clf.t_
    sig = clf.silo_noise_multiplier_
    assert sig["north"] > sig["south"] > sig["west"]
    assert clf.server_weights_ == pytest.approx(dict.fromkeys(clf.silos_, 1 / 3))
    # Record-level guarantee for a record of any silo, auditable.
    assert clf.epsilon_ == epsilon_of(clf.dp_event_, clf.delta_, "rdp")
    # The largest budget is the weakest guarantee: it bounds every record.
    assert clf.epsilon_ == pytest.approx(clf.silo_epsilon_["west"])
    assert clf.noise_multiplier_ == sig["west"]
    assert "ISRL-DP" in clf.privacy_summary()
    assert any("silo membership" in c for c in clf.privacy_caveats_)
    assert clf.central_epsilon_ is None and clf.central_privacy_record_ is None
    assert clf.coef_.shape == (1, 5) and clf.intercept_.shape == (1,)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.predict(X), clf.predict(X))
    assert clone.silo_epsilon_ == clf.silo_epsilon_


def test_secure_aggregation_is_reported_as_conditional(data):
    X, y, silos = data
    clf = _clf(secure_aggregation=True, server_weights="size").fit(X, y, silos=silos)
    assert clf.central_epsilon_ < clf.epsilon_
    assert clf.central_privacy_record_.epsilon == clf.central_epsilon_
    assert "CONDITIONAL" in str(clf.central_privacy_record_)
    assert clf.server_weights_ == pytest.approx(
        {"north": 0.2, "south": 1 / 3, "west": 1400 / 3000}
    )


def test_secure_aggregation_with_an_unclipped_silo_is_not_private(data):
    X, y, silos = data
    budgets = {"north": np.inf, "south": 1.0, "west": 1.0}
    clf = _clf(secure_aggregation=True, silo_epsilon=budgets, max_iter=2)
    clf.fit(X, y, silos=silos)
    assert clf.central_epsilon_ == np.inf
    assert clf.central_privacy_record_.clip_norm == np.inf
    assert clf.epsilon_ == np.inf


@pytest.mark.parametrize("random_state", [None, 0])
def test_silo_records_say_whether_the_fit_is_seeded(data, random_state):
    X, y, silos = data
    clf = _clf(secure_aggregation=True, random_state=random_state, max_iter=2)
    clf.fit(X, y, silos=silos)
    seeds = {r.seed for r in clf.silo_privacy_records_.values()}
    seeds |= {clf.central_privacy_record_.seed, clf.privacy_record_.seed}
    assert seeds == {None if random_state is None else clf.privacy_record_.seed}
    assert clf.privacy_record_.seeded is (random_state is not None)


@pytest.mark.parametrize(
    "make",
    [_clf, lambda **kw: DPMLPClassifier((4,), classes=[0, 1], random_state=0, **kw)],
    ids=["DPLogisticRegression", "DPMLPClassifier"],
)
def test_silo_delta_overrides_delta_without_a_warning_about_it(data, make):
    # delta=0.01 is not below 1/n, but the fit's delta is silo_delta (each
    # silo's own check refuses a delta of 1/n_i or more): nothing to warn.
    X, y, silos = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = make(max_iter=1, delta=0.01, silo_delta=1e-6).fit(X, y, silos=silos)
    assert est.delta_ == 1e-6


def test_central_fit_has_no_silo_attributes(data):
    X, y, silos = data
    clf = _clf().fit(X, y, silos=silos)
    clf.fit(X, y)  # refit without silos clears the federated attributes
    assert clf.silos_ is None and clf.silo_epsilon_ is None
    assert "ISRL" not in clf.privacy_summary()


def test_infinite_epsilon_matches_non_private_reference(data):
    X, y, silos = data
    clf = _clf(epsilon=np.inf, max_iter=40).fit(X, y, silos=silos)
    assert clf.epsilon_ == np.inf
    assert set(clf.silo_noise_multiplier_.values()) == {0.0}
    ref = LogisticRegression(C=1e6).fit(X, y)
    assert np.mean(clf.predict(X) == ref.predict(X)) >= 0.97


def test_float32_input_gives_a_float32_model(data):
    # As a central fit: the coefficients and the probabilities are in X's
    # precision, and the model is the float64 fit's up to float32 rounding
    # of the inputs.
    X, y, silos = data
    clf32 = _clf().fit(X.astype(np.float32), y, silos=silos)
    clf64 = _clf().fit(X, y, silos=silos)
    assert clf32.coef_.dtype == np.float32 and clf32.intercept_.dtype == np.float32
    assert clf32.predict_proba(X.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(clf32.coef_, clf64.coef_, rtol=1e-3, atol=1e-4)


def test_float32_input_keeps_a_model_beyond_float32_in_float64():
    # A column in units of 1e-40 has a coefficient ~1e40, past float32's
    # largest float: cast, it was inf and every probability NaN.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    X[:, 0] *= 1e-40
    X32 = X.astype(np.float32)
    silos = np.tile(["a", "b"], 200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf = _clf(epsilon=np.inf).fit(X32, y, silos=silos)
    assert clf.coef_.dtype == np.float64 and clf.intercept_.dtype == np.float64
    assert np.isfinite(clf.coef_).all() and abs(clf.coef_[0, 0]) > 1e38
    assert np.isfinite(clf.predict_proba(X32)).all()


def test_an_expected_batch_of_exactly_one_row_per_silo_is_accepted():
    # batch_size 2 over 98 rows: q * 49 computes as 1 - 2**-53, one row.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(98, 2))
    y = (X[:, 0] > 0).astype(int)
    silos = np.repeat(["a", "b"], 49)
    clf = _clf(epsilon=np.inf, batch_size=2, max_iter=2).fit(X, y, silos=silos)
    assert clf.silos_ == ["a", "b"]


def test_utility_rises_with_epsilon(data):
    X, y, silos = data
    scores = {
        eps: np.mean(
            [
                _clf(epsilon=eps, random_state=s).fit(X, y, silos=silos).score(X, y)
                for s in range(3)
            ]
        )
        for eps in (0.05, 4.0)
    }
    assert scores[4.0] > scores[0.05] + 0.05
    assert scores[4.0] > 0.85


def test_multinomial_with_silos():
    X, y = make_classification(
        n_samples=1500,
        n_features=4,
        n_informative=3,
        n_redundant=0,
        n_classes=3,
        random_state=1,
    )
    silos = np.arange(1500) % 3
    clf = DPLogisticRegression(classes=[0, 1, 2], epsilon=4.0, random_state=0)
    clf.fit(X, y, silos=silos)
    assert clf.coef_.shape == (3, 4)
    assert clf.score(X, y) > 0.5


def test_unseeded_fits_differ(data):
    X, y, silos = data
    a = DPLogisticRegression(classes=[0, 1]).fit(X, y, silos=silos)
    b = DPLogisticRegression(classes=[0, 1]).fit(X, y, silos=silos)
    assert not np.array_equal(a.coef_, b.coef_)


def test_silos_are_routable_metadata(data):
    X, y, silos = data
    with sklearn.config_context(enable_metadata_routing=True):
        clf = _clf(epsilon=4.0).set_fit_request(silos=True)
        scores = cross_val_score(
            clf,
            X,
            y,
            cv=KFold(3, shuffle=True, random_state=0),
            params={"silos": silos},
        )
    assert scores.mean() > 0.85


@pytest.mark.parametrize(
    "params, silos_fn, error, match",
    [
        ({}, lambda s: s[:-1], ValueError, "one silo id per row"),
        (
            {"silo_epsilon": {"north": 1.0, "south": 1.0}},
            lambda s: s,
            ValueError,
            r"silo_epsilon is a mapping without an entry for silos \['west'\]",
        ),
        (
            {"silo_delta": {"north": 1e-2, "south": 1e-5, "west": 1e-5}},
            lambda s: s,
            ValueError,
            "silo 'north' has 600 rows, too many for its silo_delta",
        ),
        ({"batch_size": 1}, lambda s: s, ValueError, "expected batch"),
        ({"server_weights": {"north": 1.0}}, lambda s: s, ValueError, "server_weights"),
        (
            {"solver": "output-perturbation", "alpha": 1.0, "feature_norm_bound": 1.0},
            lambda s: s,
            ValueError,
            "solver='dp-sgd'",
        ),
        ({"execution": "dask"}, lambda s: None, ValueError, "pass silos="),
        ({"device": "cuda"}, lambda s: s, ValueError, "silos run on the CPU"),
    ],
)
def test_bad_input_leaves_the_estimator_unfitted(data, params, silos_fn, error, match):
    X, y, silos = data
    clf = _clf(**params)
    with pytest.raises(error, match=match):
        clf.fit(X, y, silos=silos_fn(silos))
    # Nothing half-fitted (validate_data's n_features_in_ aside, as in sklearn).
    assert not hasattr(clf, "coef_") and not hasattr(clf, "silos_")


def test_bad_silo_parameters_are_rejected(data):
    X, y, silos = data
    for params in ({"silo_epsilon": -1.0}, {"silo_delta": 2.0}, {"execution": "ray"}):
        with pytest.raises(ValueError, match=next(iter(params))):
            _clf(**params).fit(X, y, silos=silos)


def test_dask_execution_without_dask_installed(data, monkeypatch):
    X, y, silos = data
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"sklearn-dpfair\[dask\]"):
        _clf(execution="dask").fit(X, y, silos=silos)


def test_a_budget_for_an_absent_silo_keeps_the_exact_standardization():
    # A silo_epsilon mapping may name silos absent from the data (a CV
    # fold's); they run no rounds, so a federation whose present silos are
    # all non-private still standardizes the columns exactly.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 3))
    y = (X @ [2.0, -1.0, 1.0] + 0.3 * rng.logistic(size=1200) > 0).astype(int)
    X = X * [1.0, 100.0, 0.01] + [500.0, -2000.0, 0.0]
    silos = np.repeat(["a", "b"], 600)
    fits = {}
    for name, budgets in {
        "present": {"a": np.inf, "b": np.inf},
        "with-absent": {"a": np.inf, "b": np.inf, "absent": 1.0},
    }.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fits[name] = _clf(silo_epsilon=budgets, max_iter=20).fit(X, y, silos=silos)
    assert "exact means" in fits["with-absent"].privacy_record_.mechanism
    np.testing.assert_array_equal(fits["present"].coef_, fits["with-absent"].coef_)


@pytest.mark.parametrize("shuffle", [False, True])
def test_every_silo_record_carries_the_fit_caveats(data, shuffle):
    # The silos' records of the ISRL-DP fit had none: a label set read from
    # the pooled rows (the silo's own among them) and the public silo sizes
    # went unmentioned there, as the shuffled protocol's records said.
    X, y, silos = data
    kwargs = {"shuffle": True, "accountant": "pld"} if shuffle else {}
    with pytest.warns(UserWarning, match="classes was not given"):
        clf = DPLogisticRegression(max_iter=2, random_state=0, **kwargs).fit(
            X, y, silos=silos
        )
    caveats = clf.privacy_record_.caveats
    assert any("label set" in c for c in caveats)
    assert any("silo membership" in c for c in caveats)
    for s in clf.silos_:
        assert clf.silo_privacy_records_[s].caveats == caveats
