# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression(solver="dp-newton"): plan, utility, limits, verbose."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import (
    check_classifier_not_supporting_multiclass,
    check_classifiers_train,
    check_estimator,
)

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.utils import expected_failed_checks


def _data(n=4000, d=8, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(n + 4000, d))
    y = (rng.random(n + 4000) < 1 / (1 + np.exp(-X @ w))).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def _newton(**kw):
    return DPLogisticRegression(
        solver="dp-newton", feature_norm_bound=4.0, classes=[0, 1], **kw
    )


@pytest.mark.parametrize("curvature", ["upper-bound", "hessian"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_planned_event_is_the_fitted_event(curvature, sparse, weighted):
    X, y, _, _ = _data(n=1000)
    clf = _newton(epsilon=0.7, newton_steps=4, curvature=curvature, random_state=0)
    planned = clf.privacy_plan(*X.shape).dp_event
    fit_X = sp.csr_matrix(X) if sparse else X
    weights = np.linspace(0.5, 2.0, len(y)) if weighted else None
    clf.fit(fit_X, y, sample_weight=weights)
    assert clf.dp_event_ == planned
    assert clf.epsilon_ <= 0.7 and clf.adjacency_ == "add_remove"
    assert clf.n_iter_ == 4 == clf.t_


def test_utility_rises_with_epsilon():
    X, y, X_test, y_test = _data()
    scores = {
        eps: np.mean(
            [_newton(epsilon=eps, random_state=s).fit(X, y).score(X_test, y_test)
             for s in range(4)]
        )
        for eps in (0.05, 0.5, 8.0)
    }
    assert scores[0.05] < scores[0.5] < scores[8.0]
    best = LogisticRegression().fit(X, y).score(X_test, y_test)
    assert scores[8.0] > best - 0.02


def test_infinite_epsilon_is_lbfgs():
    # The non-private limit: the unpenalized minimizer on the raw rows (no
    # clipping), as scikit-learn's L-BFGS finds it.
    X, y, _, _ = _data(n=500)
    X = X * 10  # rows beyond the bound: not clipped without privacy
    clf = _newton(epsilon=np.inf).fit(X, y)
    ref = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, rtol=1e-3, atol=1e-4)
    assert clf.epsilon_ == np.inf


def test_refusals_name_the_parameter():
    X, y, _, _ = _data(n=300)
    with pytest.raises(ValueError, match="feature_norm_bound"):
        DPLogisticRegression(solver="dp-newton", classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        _newton_3 = DPLogisticRegression(
            solver="dp-newton", feature_norm_bound=1.0, classes=[0, 1, 2]
        )
        _newton_3.fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="noise_multiplier"):
        _newton(noise_multiplier=1.0).fit(X, y)
    with pytest.raises(ValueError, match="newton_steps"):
        _newton(newton_steps=0).fit(X, y)
    with pytest.raises(ValueError, match="curvature"):
        _newton(curvature="bfgs").fit(X, y)


_ONLY_BINARY = "Only binary classification is supported by solver='dp-newton'"


@pytest.mark.filterwarnings("ignore::sklearn_dpfair.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("classes", [None, [0, 1, 2]])
def test_three_classes_are_refused_in_scikit_learns_words(classes):
    # scikit-learn's phrase for a binary-only classifier, with the solver
    # that fits three classes; no count of the labels read from y.
    X, y, _, _ = _data(n=300)
    clf = DPLogisticRegression(
        solver="dp-newton", feature_norm_bound=1.0, classes=classes
    )
    with pytest.raises(ValueError, match=_ONLY_BINARY) as info:
        clf.fit(X, np.arange(len(y)) % 3)
    assert "solver='dp-sgd'" in str(info.value)
    assert not hasattr(clf, "coef_")
    with pytest.raises(ValueError, match=_ONLY_BINARY):
        clf.set_params(classes=[0, 1, 2]).privacy_plan(*X.shape)


def test_only_dp_newton_is_tagged_binary_only():
    assert not get_tags(_newton()).classifier_tags.multi_class
    for solver in ("dp-sgd", "output-perturbation", "dp-frank-wolfe"):
        clf = DPLogisticRegression(solver=solver)
        assert get_tags(clf).classifier_tags.multi_class


@pytest.mark.filterwarnings("ignore")
def test_scikit_learn_checks_pass_for_the_newton_solver():
    # Tagged multi-class, dp-newton was sent the checks' three-class data
    # and failed two dozen of them. The private configuration runs them all
    # (the non-private limit's L-BFGS on the checks' separable data takes
    # seconds), its exemptions those of every private fit.
    clf = DPLogisticRegression(
        solver="dp-newton", feature_norm_bound=100.0, random_state=0
    )
    results = check_estimator(
        clf,
        on_fail=None,
        on_skip=None,
        expected_failed_checks=expected_failed_checks(clf),
    )
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []
    ran = {r["check_name"] for r in results if r["status"] == "passed"}
    assert "check_classifier_not_supporting_multiclass" in ran
    limit = clf.set_params(epsilon=np.inf)
    check_classifier_not_supporting_multiclass(type(limit).__name__, limit)
    check_classifiers_train(type(limit).__name__, limit)


@pytest.mark.parametrize(
    "make, unit, lines",
    [
        (lambda: _newton(newton_steps=3), "Newton step", 3),
        (lambda: DPLogisticRegression(classes=[0, 1], max_iter=4), "epoch", 4),
        # An epoch of 1.2 batches: 20 epochs are 24 steps, still 20 lines.
        (
            lambda: DPLogisticRegression(
                classes=[0, 1], batch_size=500, max_iter=20
            ),
            "epoch",
            20,
        ),
    ],
)
def test_verbose_prints_one_line_per_epoch_and_nothing_by_default(
    capsys, make, unit, lines
):
    X, y, _, _ = _data(n=600)
    make().set_params(random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
    make().set_params(random_state=0, verbose=1).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == lines
    assert all(
        line.startswith(f"[DPLogisticRegression] {unit} {k + 1}: released-gradient norm")
        for k, line in enumerate(out)
    )


def test_verbose_does_not_change_the_fit():
    X, y, _, _ = _data(n=600)
    quiet = _newton(random_state=0).fit(X, y)
    loud = _newton(random_state=0, verbose=2).fit(X, y)
    np.testing.assert_array_equal(quiet.coef_, loud.coef_)


def test_infinite_epsilon_weights_are_duplicated_rows():
    # scikit-learn's sample-weight equivalence, binary (dp-newton refuses
    # three classes, so the common check's multiclass data do not apply).
    X, y, _, _ = _data(n=300)
    weights = np.arange(300) % 3
    weighted = _newton(epsilon=np.inf).fit(X, y, sample_weight=weights)
    rows = np.repeat(np.arange(300), weights)
    repeated = _newton(epsilon=np.inf).fit(X[rows], y[rows])
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-4, atol=1e-6)


def test_the_record_states_the_noise_of_each_release():
    # Three releases a step, of three multipliers: no single one is claimed
    # (the calibration's composed-equivalent multiplier was, which no
    # release used), and the text names the three that ran.
    from sklearn_dpfair.privacy._mechanism import observe_privatize

    class Multipliers:
        def __init__(self):
            self.seen = []

        def before_noise(self, mechanism, clipped_sum):
            self.seen.append(mechanism.noise_multiplier)
            return clipped_sum

        def after_noise(self, mechanism, noisy_sum):
            pass

    X, y, _, _ = _data(n=600)
    observer = Multipliers()
    with observe_privatize(observer):
        clf = _newton(newton_steps=3, random_state=0).fit(X, y)
    record = clf.privacy_record_
    assert clf.noise_multiplier_ is None and record.clip_norm is None
    assert record.steps == 3 * 3
    used = {f"{z:.4g}" for z in observer.seen}
    assert len(used) == 3 and all(z in record.mechanism for z in used)
