# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPMLPClassifier: the plan, the record, utility, parity and routing."""

import warnings

import dp_accounting
import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_digits, make_moons
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair.exceptions import PrivacyBudgetError, PrivacyLeakWarning
from sklearn_dpfair.neural import DPMLPClassifier
from sklearn_dpfair.privacy import epsilon_of


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(n_samples=1500, noise=0.25, random_state=0)
    return train_test_split(X, y, test_size=0.3, random_state=0)


@pytest.mark.parametrize(
    "params, n_classes",
    [
        ({}, 2),
        ({"batch_size": 100, "max_iter": 3, "accountant": "pld"}, 2),
        ({"batch_size": "full", "max_iter": 4, "hidden_layer_sizes": ()}, 3),
        ({"noise_multiplier": 5.0, "epsilon": 10.0, "max_iter": 2}, 3),
        ({"epsilon": np.inf}, 2),
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_planned_event_is_the_fitted_event(params, n_classes, weighted):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 4))
    y = rng.integers(0, n_classes, 700)
    w = rng.uniform(0.0, 3.0, 700) if weighted else None
    est = DPMLPClassifier(
        hidden_layer_sizes=(8,), classes=np.arange(n_classes), random_state=0
    ).set_params(**params)
    plan = est.privacy_plan(700, 4, n_classes=n_classes)
    est.fit(X, y, sample_weight=w)
    assert plan.dp_event == est.dp_event_
    assert plan.epsilon == est.epsilon_ or np.isinf(est.epsilon_)
    assert (plan.delta, plan.adjacency) == (est.delta_, est.adjacency_)
    plan.check_fitted(est)
    # The plan reads no data: the fitted estimator plans the same event.
    assert est.privacy_plan(700, 4).dp_event == est.dp_event_


def test_plan_refuses_a_class_count_that_disagrees():
    est = DPMLPClassifier(classes=[0, 1, 2])
    with pytest.raises(ValueError, match="n_classes=2 disagrees"):
        est.privacy_plan(100, 3, n_classes=2)
    with pytest.raises(TypeError, match="n_groups"):
        est.privacy_plan(100, 3, n_groups=2)


def test_record_is_true_to_the_accountant(moons):
    X, _, y, _ = moons
    est = DPMLPClassifier(epsilon=2.0, delta=1e-6, classes=[0, 1], random_state=0)
    est.fit(X, y)
    record = est.privacy_record_
    assert est.epsilon_ <= 2.0 and est.delta_ == 1e-6
    assert est.adjacency_ == "add_remove"
    assert est.epsilon_ == pytest.approx(epsilon_of(est.dp_event_, 1e-6), rel=1e-9)
    assert record.clip_norm == 1.0 and record.steps == est.t_
    event = est.dp_event_
    assert isinstance(event, dp_accounting.SelfComposedDpEvent)
    assert event.count == est.t_
    assert isinstance(event.event, dp_accounting.PoissonSampledDpEvent)
    assert event.event.event.noise_multiplier == est.noise_multiplier_
    assert est.privacy_caveats_ == []


def test_undeclared_classes_and_weights_are_caveats(moons):
    X, _, y, _ = moons
    with pytest.warns(PrivacyLeakWarning):
        est = DPMLPClassifier(max_iter=2, random_state=0).fit(
            X, y, sample_weight=np.ones(len(y))
        )
    caveats = " ".join(est.privacy_caveats_)
    assert "label" in caveats and "weight" in caveats


def test_user_noise_that_overspends_is_refused(moons):
    X, _, y, _ = moons
    est = DPMLPClassifier(epsilon=0.5, noise_multiplier=0.3, classes=[0, 1])
    with pytest.raises(PrivacyBudgetError):
        est.fit(X, y)
    assert not hasattr(est, "coefs_")


def test_utility_rises_with_epsilon(moons):
    X, Xt, y, yt = moons
    scores = {}
    for eps in (0.05, 1.0, np.inf):
        scores[eps] = np.mean(
            [
                DPMLPClassifier(epsilon=eps, classes=[0, 1], random_state=s)
                .fit(X, y)
                .score(Xt, yt)
                for s in range(3)
            ]
        )
    # Measured (3 seeds): 0.05 -> 0.83, 1 -> 0.88, inf -> 0.89.
    assert scores[0.05] < scores[1.0] < scores[np.inf]
    assert scores[np.inf] > 0.87


def test_infinite_epsilon_matches_scikit_learn_mlp():
    X, y = load_digits(return_X_y=True)
    X, Xt, y, yt = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X)
    X, Xt = scaler.transform(X), scaler.transform(Xt)
    ours, theirs = [], []
    for seed in range(2):
        est = DPMLPClassifier(epsilon=np.inf, classes=np.arange(10), random_state=seed)
        ours.append(est.fit(X, y).score(Xt, yt))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # adam's ConvergenceWarning
            ref = MLPClassifier((64,), random_state=seed).fit(X, y)
        theirs.append(ref.score(Xt, yt))
    assert est.epsilon_ == np.inf and est.noise_multiplier_ == 0.0
    assert "non-private" in est.privacy_record_.mechanism
    # Measured: 0.980 (ours, 30 epochs of SGD) and 0.973 (adam, 200 epochs).
    assert np.mean(ours) >= np.mean(theirs) - 0.01


def test_uniform_unit_weights_are_the_unweighted_fit(moons):
    X, _, y, _ = moons
    est = DPMLPClassifier(classes=[0, 1], max_iter=3, random_state=0)
    a = est.fit(X, y).coefs_
    b = DPMLPClassifier(classes=[0, 1], max_iter=3, random_state=0).fit(
        X, y, sample_weight=np.ones(len(y))
    ).coefs_
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_pipeline_routes_sample_weight(moons):
    X, _, y, _ = moons
    w = np.random.default_rng(0).uniform(0.0, 2.0, len(y))
    kw = {"classes": [0, 1], "max_iter": 3, "random_state": 0}
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(
            StandardScaler().set_fit_request(sample_weight=False),
            DPMLPClassifier(**kw).set_fit_request(sample_weight=True),
        )
        pipe.fit(X, y, sample_weight=w)
    direct = DPMLPClassifier(**kw).fit(
        StandardScaler().fit_transform(X), y, sample_weight=w
    )
    unweighted = DPMLPClassifier(**kw).fit(StandardScaler().fit_transform(X), y)
    routed = pipe[-1]
    for a, b, c in zip(routed.coefs_, direct.coefs_, unweighted.coefs_):
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    assert any("weight" in c for c in routed.privacy_caveats_)


def test_adversarial_rows_give_a_finite_model():
    X, y = make_moons(n_samples=300, noise=0.2, random_state=0)
    X = X.copy()
    X[:5] = [[1e300, -1e300], [np.finfo(float).max, 0.0], [1e-300, 0.0],
             [-1e308, 1e308], [1e150, 1e150]]
    est = DPMLPClassifier(classes=[0, 1], random_state=0, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(X, y)
        proba = est.predict_proba(X)
        log_proba = est.predict_log_proba(X)
    for W in [*est.coefs_, *est.intercepts_]:
        assert np.all(np.isfinite(W))
    assert np.all(np.isfinite(proba)) and np.all(np.isfinite(log_proba))


@pytest.mark.parametrize("extreme", [1e308, -1e300, 1e12])
def test_one_extreme_record_leaves_the_non_private_fit_its_columns(extreme):
    # Without privacy the columns were standardized by their exact moments:
    # one record of 1e308 made every standard deviation 1e306, every other
    # row about 0 on every column, and the network fit the constant (0.50
    # accuracy, no warning). A column a few rows dominate is now scaled
    # robustly, as FERMI's network is.
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=2000, n_features=4, n_informative=3, n_redundant=0,
        random_state=2,
    )
    kw = dict(epsilon=np.inf, classes=[0, 1], random_state=0)
    clean = DPMLPClassifier((8,), **kw).fit(X[1:], y[1:]).score(X[1:], y[1:])
    X = X.copy()
    X[0] = extreme
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = DPMLPClassifier((8,), **kw).fit(X, y)
    assert est.score(X[1:], y[1:]) > clean - 0.03 > 0.85


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("extreme", [1e4, 1e6, -1e300])
def test_one_extreme_value_in_one_column_keeps_the_relu_fit(extreme, n_classes):
    # One value of 1e4 in a column of unit normals: the column's robust scale
    # left that record 1e4 units out, where a ReLU does not saturate, its
    # gradient dwarfed the bulk's and the non-private fit scored 0.43 on two
    # classes (at 1e6 it refused its step size). The record now weighs as a
    # record at the exact standardization's reach would.
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=2000, n_features=6, n_informative=4, n_classes=n_classes,
        random_state=0,
    )
    kw = dict(epsilon=np.inf, classes=list(range(n_classes)), random_state=0)
    clean = DPMLPClassifier((16,), **kw).fit(X[1:], y[1:]).score(X[1:], y[1:])
    X = X.copy()
    X[0, 1] = extreme
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = DPMLPClassifier((16,), **kw).fit(X, y)
    assert est.score(X[1:], y[1:]) > clean - 0.03 > 0.8


def test_fitted_shapes_and_seeds(moons):
    X, _, y, _ = moons
    y3 = (np.arange(len(y)) % 3)
    est = DPMLPClassifier((7, 5), "tanh", classes=[0, 1, 2], max_iter=2, random_state=0)
    est.fit(X, y3)
    assert [W.shape for W in est.coefs_] == [(2, 7), (7, 5), (5, 3)]
    assert [b.shape for b in est.intercepts_] == [(7,), (5,), (3,)]
    assert est.n_layers_ == 4 and est.n_outputs_ == 3
    assert est.out_activation_ == "softmax"
    assert est.predict_proba(X).shape == (len(y), 3)
    other = DPMLPClassifier((7, 5), "tanh", classes=[0, 1, 2], max_iter=2, random_state=1)
    assert not np.array_equal(other.fit(X, y3).coefs_[0], est.coefs_[0])


@pytest.mark.parametrize("sizes", [(0,), (3, -1), (2.5,)])
def test_bad_hidden_layer_sizes(moons, sizes):
    X, _, y, _ = moons
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        DPMLPClassifier(hidden_layer_sizes=sizes, classes=[0, 1]).fit(X, y)


def test_numpy_path_never_imports_torch():
    # device="cpu" is numpy: a fit and a prediction never import torch, so
    # they work where it is not installed.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import numpy as np\n"
        "from sklearn_dpfair.neural import DPMLPClassifier\n"
        "X = np.random.default_rng(0).normal(size=(300, 3)); y = (X[:, 0] > 0) * 1\n"
        "est = DPMLPClassifier((4,), classes=[0, 1], max_iter=2, random_state=0)\n"
        "est.fit(X, y).predict(X[:2])\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_private_search_over_networks(moons):
    # The search plans every candidate from its privacy_plan and accounts
    # for the selection: the whole run stays within its epsilon.
    from sklearn_dpfair.model_selection import PrivateHyperparameterSearch

    X, _, y, _ = moons
    search = PrivateHyperparameterSearch(
        DPMLPClassifier(classes=[0, 1], max_iter=2),
        {"hidden_layer_sizes": [(4,), (16,)], "clip_norm": [0.5, 2.0]},
        epsilon=2.0,
        random_state=0,
    ).fit(X, y)
    assert search.epsilon_ <= 2.0 * (1 + 1e-9)
    assert isinstance(search.best_estimator_, DPMLPClassifier)
    assert search.best_params_["hidden_layer_sizes"] in [(4,), (16,)]
    assert search.predict(X).shape == y.shape


def test_private_pipeline_composes_the_network_plan():
    # A private scaler and the network under one budget: the pipeline reads
    # the network's privacy_plan to split it, and the whole fit stays within.
    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPStandardScaler

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3)) * [1, 10, 100] + [500, 0, 0]
    y = ((X[:, 0] - 500) ** 2 + (X[:, 1] / 10) ** 2 > 1).astype(int)
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=[(495, 505), (-50, 50), (-500, 500)]),
        DPMLPClassifier(classes=[0, 1], random_state=0),
        epsilon=2.0,
    ).fit(X, y)
    assert pipe.epsilon_ <= 2.0 * (1 + 1e-9)
    network = pipe.step_budgets_["dpmlpclassifier"]
    assert network["plan"].dp_event == pipe.pipeline_[-1].dp_event_
    # A nonlinear boundary (a disc) on raw-scale columns; measured 0.979.
    assert pipe.score(X, y) > 0.9


def test_widths_beyond_one_numpy_array_are_refused_by_plan_and_fit():
    # numpy's "Maximum allowed dimension exceeded", after the rows were
    # read, named no parameter; the plan accepted the network.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = DPMLPClassifier(10**30, classes=[0, 1], random_state=0)
    with pytest.raises(ValueError, match="hidden_layer_sizes=.* is too large"):
        clf.privacy_plan(40, 3)
    with pytest.raises(ValueError, match="hidden_layer_sizes=.* is too large"):
        clf.fit(X, y)
