# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.exceptions import PrivacyBudgetError, PrivacyLeakWarning
from sklearn_dpfair.privacy import epsilon_of
from sklearn_dpfair.privacy._mechanism import observe_privatize


@pytest.fixture(scope="module")
def blobs():
    X, y = make_classification(
        n_samples=4000, n_features=10, n_informative=6, random_state=0
    )
    return X[:3000], y[:3000], X[3000:], y[3000:]


@pytest.mark.parametrize("solver", ["dp-sgd", "output-perturbation"])
@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_epsilon_recomputed_from_event(blobs, solver, accountant):
    X, y, _, _ = blobs
    clf = DPLogisticRegression(
        epsilon=0.7,
        solver=solver,
        alpha=1e-2,
        feature_norm_bound=3.0,
        accountant=accountant,
        classes=[0, 1],
        random_state=0,
    ).fit(X, y)
    assert clf.epsilon_ <= 0.7
    recomputed = epsilon_of(clf.dp_event_, clf.delta_, clf.privacy_record_.accountant)
    assert recomputed == pytest.approx(clf.epsilon_, rel=1e-12)
    assert clf.epsilon_ > 0.69  # calibrated, not wasteful
    assert clf.adjacency_ == ("add_remove" if solver == "dp-sgd" else "replace_one")
    assert "differential privacy" in clf.privacy_summary()


def test_utility_rises_with_epsilon(blobs):
    X, y, X_test, y_test = blobs
    accuracies = []
    for eps in (0.01, 0.05, 0.2, math.inf):
        per_seed = [
            DPLogisticRegression(epsilon=eps, classes=[0, 1], random_state=s)
            .fit(X, y)
            .score(X_test, y_test)
            for s in range(5)
        ]
        accuracies.append(np.mean(per_seed))
    # Measured: 0.713, 0.815, 0.834, 0.839.
    assert np.all(np.diff(accuracies) > 0), accuracies


def test_infinite_epsilon_matches_sklearn_on_adult(adult):
    X, y, X_test, y_test = adult
    ours = DPLogisticRegression(epsilon=np.inf, classes=[0, 1], random_state=0)
    ours.fit(X, y)
    ref = LogisticRegression(max_iter=1000).fit(X, y)
    agreement = np.mean(ours.predict(X_test) == ref.predict(X_test))
    assert agreement >= 0.99
    assert ours.epsilon_ == math.inf
    assert "non-private" in ours.privacy_summary()


def test_private_accuracy_on_adult(adult):
    # Light form of the benchmark: default hyperparameters, one seed.
    X, y, X_test, y_test = adult
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
    assert clf.fit(X, y).score(X_test, y_test) >= 0.84


def test_multinomial_matches_sklearn_without_noise():
    X, y = make_classification(
        n_samples=3000,
        n_features=8,
        n_informative=6,
        n_classes=4,
        n_clusters_per_class=1,
        random_state=0,
    )
    ours = DPLogisticRegression(epsilon=np.inf, classes=[0, 1, 2, 3], random_state=0)
    ours.fit(X, y)
    ref = LogisticRegression(max_iter=1000).fit(X, y)
    assert ours.coef_.shape == (4, 8) and ours.intercept_.shape == (4,)
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.97
    np.testing.assert_allclose(ours.predict_proba(X).sum(axis=1), 1.0)


def test_declared_classes_are_honoured_even_if_absent():
    X, y = make_classification(n_samples=500, random_state=0)
    labels = np.where(y == 1, "b", "a")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = DPLogisticRegression(classes=["a", "b", "c"], random_state=0)
        clf.fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, ["a", "b", "c"])
    assert clf.coef_.shape == (3, X.shape[1])
    assert set(clf.predict(X)) <= {"a", "b", "c"}


def test_inferred_classes_warn_and_are_recorded():
    X, y = make_classification(n_samples=200, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        clf = DPLogisticRegression(random_state=0).fit(X, y)
    assert clf.privacy_caveats_ == ["label set inferred from the private data"]
    assert "Caveat" in clf.privacy_summary()


def test_seed_reproduces_and_none_does_not():
    X, y = make_classification(n_samples=300, random_state=0)
    a = DPLogisticRegression(classes=[0, 1], random_state=3).fit(X, y)
    b = DPLogisticRegression(classes=[0, 1], random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = DPLogisticRegression(classes=[0, 1]).fit(X, y)
    d = DPLogisticRegression(classes=[0, 1]).fit(X, y)
    assert not np.array_equal(c.coef_, d.coef_)


def test_one_step_noise_has_the_calibrated_scale():
    # One full-batch step from zero: coef = -lr (S + N(0, sigma^2 C^2 I)) / n,
    # so the spread of coef_ across seeds is lr sigma C / n.
    X, y = make_classification(
        n_samples=200, n_features=3, n_informative=2, n_redundant=0, random_state=0
    )
    kw = dict(
        classes=[0, 1],
        batch_size="full",
        max_iter=1,
        learning_rate=1.0,
        noise_multiplier=2.0,
        epsilon=np.inf,
        clip_norm=0.5,
    )
    coefs = np.array(
        [DPLogisticRegression(random_state=s, **kw).fit(X, y).coef_[0] for s in range(400)]
    )
    expected = 1.0 * 2.0 * 0.5 / 200
    assert np.std(coefs, axis=0) == pytest.approx([expected] * 3, rel=0.15)


def test_output_perturbation_noise_and_sensitivity():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    kw = dict(
        solver="output-perturbation",
        alpha=0.1,
        feature_norm_bound=1.0,
        classes=[0, 1],
        epsilon=1.0,
    )
    coefs = np.array(
        [DPLogisticRegression(random_state=s, **kw).fit(X, y).coef_[0] for s in range(200)]
    )
    clf = DPLogisticRegression(random_state=0, **kw).fit(X, y)
    sensitivity = clf.privacy_record_.clip_norm
    # 2 L / (alpha n) + 2 tol with L = sqrt(R^2 + 1) for binary logistic loss.
    assert sensitivity == pytest.approx(2 * math.sqrt(2) / (0.1 * 400) + 2e-6)
    expected_std = clf.noise_multiplier_ * sensitivity
    assert np.std(coefs, axis=0) == pytest.approx([expected_std] * 3, rel=0.15)
    assert clf.n_iter_ is None  # the solver's data-dependent count is not released

    # Replace one record (by an extreme one): the point the noise is added
    # to moves by at most the stated sensitivity.
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [50.0, -50.0, 50.0], 1 - y[0]

    class Seen:
        def before_noise(self, mechanism, point):
            self.point = np.array(point, copy=True)
            return point

        def after_noise(self, mechanism, noisy):
            pass

    exact = []
    for A, b in ((X, y), (X2, y2)):
        with observe_privatize(Seen()) as seen:
            DPLogisticRegression(random_state=0, **kw).fit(A, b)
        exact.append(seen.point)
    assert np.linalg.norm(exact[0] - exact[1]) <= sensitivity


def test_noise_multiplier_override_respects_budget():
    X, y = make_classification(n_samples=500, random_state=0)
    with pytest.raises(PrivacyBudgetError, match="noise_multiplier"):
        DPLogisticRegression(epsilon=0.5, noise_multiplier=0.5, classes=[0, 1]).fit(
            X, y
        )
    clf = DPLogisticRegression(epsilon=0.5, noise_multiplier=50.0, classes=[0, 1])
    clf.fit(X, y)
    assert clf.noise_multiplier_ == 50.0 and clf.epsilon_ < 0.5


@pytest.mark.parametrize(
    "params",
    [
        {"solver": "output-perturbation", "alpha": 0.1, "feature_norm_bound": 1.0},
        {"solver": "dp-frank-wolfe", "l1_radius": 1.0, "feature_inf_bound": 1.0},
        # Without a declared bound the fit would read it from X: refused first.
        {"solver": "dp-frank-wolfe", "l1_radius": 1.0},
        {"solver": "dp-newton", "feature_norm_bound": 1.0},
    ],
)
@pytest.mark.parametrize("epsilon", [0.5, np.inf])
def test_noise_multiplier_is_refused_by_the_self_calibrating_solvers(
    params, epsilon
):
    """Only DP-SGD takes a user's noise multiplier. The other solvers refuse
    it before reading anything (no warning about the undeclared classes or
    feature bound), and so does their plan: ignored, it would still skip
    the small-budget rule, which exempts user-calibrated noise."""
    X, y = make_classification(
        n_samples=30, n_features=3, n_informative=2, n_redundant=0, random_state=0
    )
    clf = DPLogisticRegression(epsilon=epsilon, noise_multiplier=1.0, **params)
    before = clf.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="noise_multiplier does not apply"):
            clf.fit(X, y)
        with pytest.raises(ValueError, match="noise_multiplier does not apply"):
            clf.privacy_plan(30, 3)
    assert clf.get_params() == before
    assert not hasattr(clf, "coef_") and not hasattr(clf, "privacy_record_")
    with pytest.raises(NotFittedError):
        clf.predict(X)


def test_n_iter_counts_the_solver_that_ran():
    """Private DP-SGD runs its epochs; the non-private limit runs L-BFGS-B
    instead, whose iterations n_iter_ reports (as t_), for every solver."""
    X, y = make_classification(n_samples=300, n_features=4, random_state=0)
    private = DPLogisticRegression(max_iter=2, classes=[0, 1], random_state=0)
    assert private.fit(X, y).n_iter_ == 2
    exact = DPLogisticRegression(epsilon=np.inf, max_iter=1, classes=[0, 1])
    exact.fit(X, y)
    assert exact.n_iter_ == exact.t_ > 1  # not the one epoch of max_iter
    op = DPLogisticRegression(
        epsilon=np.inf,
        solver="output-perturbation",
        alpha=0.01,
        feature_norm_bound=1.0,
        classes=[0, 1],
    ).fit(X, y)
    assert op.n_iter_ == op.t_ > 0


@pytest.mark.parametrize(
    "params, match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": np.nan}, "epsilon"),
        ({"delta": 0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"clip_norm": 0}, "clip_norm"),
        ({"clip_norm": -1}, "clip_norm"),
        ({"batch_size": 0}, "batch_size"),
        ({"solver": "lbfgs"}, "solver"),
        ({"solver": "output-perturbation", "alpha": 0.0}, "alpha"),
        ({"solver": "output-perturbation", "alpha": 1.0}, "feature_norm_bound"),
    ],
)
def test_bad_parameters_raise_naming_the_parameter(params, match):
    X, y = make_classification(n_samples=100, random_state=0)
    clf = DPLogisticRegression(classes=[0, 1], **params)
    before = clf.get_params()
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert clf.get_params() == before or params.get("epsilon") is np.nan
    with pytest.raises(NotFittedError):
        clf.predict(X)


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.array([[np.nan, 1.0], [1.0, 2.0]]), [0, 1], "NaN"),
        (np.array([[np.inf, 1.0], [1.0, 2.0]]), [0, 1], "infinity"),
        (np.ones((3, 2)), [0, 1], "inconsistent"),
        (np.ones(4), [0, 1, 0, 1], "2D array"),
        (np.ones((4, 2)), [0, 1, 2, 0], "not in the declared classes"),
    ],
)
def test_bad_data_raises(X, y, match):
    clf = DPLogisticRegression(classes=[0, 1])
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")


def test_one_class_without_declared_classes_raises():
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ValueError, match="one class"):
        DPLogisticRegression().fit(np.ones((5, 2)), [1] * 5)


def test_large_delta_warns():
    X, y = make_classification(n_samples=100, random_state=0)
    with pytest.warns(UserWarning, match="delta"):
        DPLogisticRegression(delta=0.05, classes=[0, 1], random_state=0).fit(X, y)


def test_works_in_pipeline_gridsearch_cross_validate_and_pickles(blobs):
    X, y, X_test, _ = blobs
    pipe = make_pipeline(
        StandardScaler(), DPLogisticRegression(classes=[0, 1], random_state=0)
    )
    grid = GridSearchCV(pipe, {"dplogisticregression__epsilon": [0.5, 2.0]}, cv=3)
    grid.fit(X, y)
    assert grid.best_params_["dplogisticregression__epsilon"] in (0.5, 2.0)
    scores = cross_validate(pipe, X, y, cv=3)["test_score"]
    assert np.all(scores > 0.7)
    restored = pickle.loads(pickle.dumps(grid.best_estimator_))
    np.testing.assert_array_equal(
        restored.predict(X_test), grid.best_estimator_.predict(X_test)
    )
    # clone keeps parameters, drops fitted state.
    fresh = clone(pipe[-1])
    assert fresh.get_params() == pipe[-1].get_params()
    assert not hasattr(fresh, "coef_")


def test_pandas_input_keeps_feature_names():
    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    clf = DPLogisticRegression(classes=[0, 1], random_state=0).fit(frame, y)
    np.testing.assert_array_equal(clf.feature_names_in_, ["a", "b", "c", "d"])
    assert clf.predict(frame).shape == (200,)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 5.0])
def test_strong_penalty_with_the_auto_step_converges(alpha):
    # At epsilon = 8 the "auto" step is 8: uncapped, the penalty's step
    # multiplied the coefficients by 1 - 8 alpha every step (to 1e32 at
    # alpha = 0.3, NaN with RuntimeWarnings from alpha = 1).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf = DPLogisticRegression(
            alpha=alpha, epsilon=8.0, classes=[0, 1], random_state=0
        ).fit(X, y)
    # The penalized minimizer has |w| < max|grad of the loss| / alpha <= 1 / alpha.
    assert np.all(np.abs(clf.coef_) <= 1.0 / alpha)
    assert clf.score(X, y) > 0.7


@pytest.mark.parametrize("clip_norm", [np.int64(5), np.float32(0.5)])
def test_numpy_scalar_parameters_fit_as_the_equal_python_numbers(clip_norm):
    # A numpy scalar clip norm kept the clip's bounds and the noise's scale
    # in its own precision: warnings from library lines ("overflow
    # encountered in scalar divide") and a float32 fit's coefficients
    # moved in the 9th digit.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(classes=[0, 1], max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        given = DPLogisticRegression(clip_norm=clip_norm, **kw).fit(X, y)
    plain = DPLogisticRegression(clip_norm=clip_norm.item(), **kw).fit(X, y)
    np.testing.assert_allclose(given.coef_, plain.coef_, rtol=1e-13, atol=0)
    assert given.clip_norm is clip_norm  # the parameter itself is untouched
