"""DPFERMIClassifier(small_budget=): the constant model a small budget affords."""

import math
import warnings

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, pld
from release_observer import Releases

from sklearn_dpfair import DPFERMIClassifier
from sklearn_dpfair._solvers._constant_choice import choice_noise
from sklearn_dpfair.privacy import GaussianMechanism, PrivacyBudget
from sklearn_dpfair.privacy._mechanism import observe_privatize
from sklearn_dpfair.privacy._record import WEIGHTS_CAVEAT

# 300 rows of 40 columns at epsilon = 1: 300 < 15 * 41, so "auto" falls back.
N, D = 300, 40


def _data(n=N, d=D, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d))
    y = np.minimum((rng.random(n) < 0.3).astype(int) + (rng.random(n) < 0.1), n_classes - 1)
    return X, y, s


def _fit(X, y, s, sample_weight=None, **params):
    est = DPFERMIClassifier(
        classes=list(range(int(y.max()) + 1)),
        groups=[0, 1],
        **{"random_state": 0, **params},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, sensitive_features=s, sample_weight=sample_weight)
    return est, [str(w.message) for w in caught if "small_budget" in str(w.message)]


def test_falls_back_with_a_warning_and_the_planned_event():
    X, y, s = _data()
    est, msgs = _fit(X, y, s)
    assert est.intercept_only_ is True
    assert len(msgs) == 1
    assert "n_samples * epsilon is below" in msgs[0] and f"15 * {D + 1}" in msgs[0]
    np.testing.assert_array_equal(est.coef_, 0.0)
    # Majority class (0, at 70%) everywhere.
    np.testing.assert_array_equal(est.predict(X), 0)
    assert est.t_ == 0 and est.n_iter_ == 0  # no step ran
    assert est.epsilon_ <= 1.0
    assert est.privacy_plan(N, D).dp_event == est.dp_event_
    assert "label counts" in est.privacy_record_.mechanism
    # The joint multiplier in dp_event_ is the histogram's, not "no noise".
    assert est.effective_noise_multiplier_ == est.privacy_record_.noise_multiplier
    assert est.effective_noise_multiplier_ > 0 and est.noise_multiplier_ == 0.0


def test_the_constant_counts_each_record_at_its_weight_capped_at_one():
    # A weight of 0 removes a record, one above 1 counts once: every row of
    # class 1 weighted 0 leaves a histogram of class 0 only.
    X, y, s = _data()
    weights = np.where(y == 0, 1e6, 0.0)
    observer = Releases()
    with observe_privatize(observer):
        est, _ = _fit(X, y, s)
        weighted, _ = _fit(X, y, s, sample_weight=weights)
    assert est.intercept_only_ and weighted.intercept_only_
    (_, unweighted_counts, _), (mechanism, counts, _) = observer.seen
    np.testing.assert_array_equal(unweighted_counts, np.bincount(y))
    np.testing.assert_array_equal(counts, [np.count_nonzero(y == 0), 0.0])
    assert mechanism.sensitivity == 1.0
    np.testing.assert_array_equal(weighted.predict(X), 0)


def test_a_weighted_constant_says_so_and_counts_its_rows():
    # The record names the weights as a model's does, and the warning the
    # public rule (no weighted count).
    X, y, s = _data()
    est, msgs = _fit(X, y, s, sample_weight=np.full(N, 0.25))
    assert est.intercept_only_ and WEIGHTS_CAVEAT in est.privacy_caveats_
    assert len(msgs) == 1 and "n_samples * epsilon is below" in msgs[0]
    assert str(N // 4) not in msgs[0]


def test_small_budget_fit_turns_it_off():
    X, y, s = _data()
    est, msgs = _fit(X, y, s, small_budget="fit")
    assert est.intercept_only_ is False
    assert not msgs
    assert np.any(est.coef_ != 0)
    assert est.privacy_plan(N, D).dp_event == est.dp_event_


@pytest.mark.parametrize(
    "params",
    [dict(epsilon=30.0), dict(epsilon=math.inf), dict(noise_multiplier=1.0, epsilon=math.inf)],
)
def test_large_or_uncalibrated_budgets_fit_the_model(params):
    X, y, s = _data()
    est, msgs = _fit(X, y, s, **params)
    assert est.intercept_only_ is False
    assert not msgs


def test_rule_reads_public_counts_only():
    # Two datasets of the same shape, opposite majorities: the same decision
    # (and event); only the released intercept differs.
    X, y, s = _data()
    a, _ = _fit(X, y, s)
    b, _ = _fit(X, 1 - y, s)
    assert a.intercept_only_ and b.intercept_only_
    assert a.dp_event_ == b.dp_event_
    assert a.intercept_[0] < 0 < b.intercept_[0]


def test_disparity_bound_is_met_by_the_constant():
    X, y, s = _data()
    est, msgs = _fit(X, y, s, disparity_bound=0.01, constraint="equalized_odds")
    assert est.intercept_only_ and msgs
    assert est.bound_met_ is True
    assert est.training_disparity_ == 0.0
    assert est.privacy_plan(N, D).dp_event == est.dp_event_


def test_multiclass_intercepts():
    X, y, s = _data(n_classes=3)
    est, msgs = _fit(X, y, s)
    assert est.intercept_only_ and msgs
    assert est.coef_.shape == (3, D) and est.intercept_.shape == (3,)
    np.testing.assert_allclose(np.exp(est.intercept_).sum(), 1.0)
    assert est.privacy_plan(N, D, n_classes=3).dp_event == est.dp_event_


def test_float32_and_proba():
    X, y, s = _data()
    est, _ = _fit(X.astype(np.float32), y, s)
    assert est.coef_.dtype == np.float32
    proba = est.predict_proba(X[:3])
    np.testing.assert_allclose(proba, np.tile(proba[0], (3, 1)))


# 300 * 3 = 900 is between 15 * 41 and 2500: the model is trained, then
# compared privately with the constants.
CHOICE_EPSILON = 3.0


def _force_predictions(monkeypatch, value):
    # A model that predicts one class everywhere, whatever it learned: the
    # comparison then sees its true (bad) training errors.
    monkeypatch.setattr(
        "sklearn_dpfair._solvers.fermi._problem.FairProblem.predict",
        lambda problem, coef, w0: np.full(problem.X_host.shape[0], value),
    )


def test_in_between_the_fit_plans_and_makes_the_private_choice():
    X, y, s = _data()
    est, msgs = _fit(X, y, s, epsilon=CHOICE_EPSILON)
    assert est.constant_comparison_.shape == (2,)
    assert est.t_ > 0
    assert est.epsilon_ <= CHOICE_EPSILON
    assert est.privacy_plan(N, D).dp_event == est.dp_event_
    assert est.dp_event_.events[-1] == GaussianDpEvent(
        choice_noise(PrivacyBudget(CHOICE_EPSILON, 1e-5))
    )
    assert "private choice between the model and the constants" in (
        est.privacy_record_.mechanism
    )
    # "fit" keeps the model and releases no comparison: a smaller event.
    kept, _ = _fit(X, y, s, epsilon=CHOICE_EPSILON, small_budget="fit")
    assert kept.constant_comparison_ is None
    assert len(kept.dp_event_.events) == len(est.dp_event_.events) - 1
    # n * epsilon of 2500 and more: no choice.
    large, _ = _fit(X, y, s, epsilon=9.0)
    assert large.constant_comparison_ is None and not large.intercept_only_


def test_choose_makes_the_choice_where_auto_releases_the_constant(monkeypatch):
    # 300 rows of 40 columns at epsilon = 1: "auto" releases the constant
    # outright; "choose" trains the model and compares, whatever the width.
    X, y, s = _data()
    est, msgs = _fit(X, y, s, small_budget="choose")
    assert not msgs
    assert est.t_ > 0 and est.constant_comparison_.shape == (2,)
    assert est.privacy_plan(N, D).dp_event == est.dp_event_
    assert est.dp_event_.events[-1] == GaussianDpEvent(
        choice_noise(PrivacyBudget(1.0, 1e-5))
    )
    assert est.epsilon_ <= 1.0
    # The same event as "auto" at a width whose model the budget affords.
    narrow, _ = _fit(X[:, :2], y, s)
    assert narrow.constant_comparison_ is not None
    assert narrow.dp_event_ == est.dp_event_
    # A model worse than a constant is still replaced by it.
    _force_predictions(monkeypatch, 1)
    worse, msgs = _fit(X, y, s, small_budget="choose")
    assert worse.intercept_only_ is True and not msgs
    np.testing.assert_array_equal(worse.predict(X), 0)
    # n * epsilon of 2500 and more: the model alone, as with "auto".
    large, _ = _fit(X, y, s, epsilon=9.0, small_budget="choose")
    assert large.constant_comparison_ is None and not large.intercept_only_


def test_a_model_worse_than_a_constant_is_replaced_by_it(monkeypatch):
    X, y, s = _data()
    _force_predictions(monkeypatch, 1)  # the minority class, on every row
    est, msgs = _fit(X, y, s, epsilon=CHOICE_EPSILON)
    assert est.intercept_only_ is True
    # No warning: its presence would differ between neighbouring datasets.
    assert not msgs
    np.testing.assert_array_equal(est.coef_, 0.0)
    np.testing.assert_array_equal(est.predict(X), 0)  # the majority class
    # The steps ran and stay accounted: the event is the planned one.
    assert est.t_ > 0
    assert est.privacy_plan(N, D).dp_event == est.dp_event_
    # The intercept is the noisy log-odds of the released comparison.
    frequency = np.mean(y)
    assert abs(1 / (1 + np.exp(-est.intercept_[0])) - frequency) < 0.1


def test_a_model_better_than_the_constants_is_kept():
    # Labels a linear function of the first column: the model wins by far.
    X, _, s = _data()
    y = (X[:, 0] > 0.5).astype(int)
    est, msgs = _fit(X, y, s, epsilon=CHOICE_EPSILON)
    assert est.intercept_only_ is False and not msgs
    assert np.max(est.constant_comparison_) < 0
    assert np.any(est.coef_ != 0)


def test_the_chosen_constant_of_a_network_is_a_constant_network(monkeypatch):
    X, y, s = _data()
    _force_predictions(monkeypatch, 1)
    est, msgs = _fit(X, y, s, epsilon=CHOICE_EPSILON, hidden_layer_sizes=(4,))
    assert est.intercept_only_ and not msgs
    assert all(np.all(W == 0) for W in est.coefs_)
    np.testing.assert_array_equal(est.predict(X), 0)
    assert est.privacy_plan(N, D).dp_event == est.dp_event_


def test_multiclass_choice(monkeypatch):
    X, y, s = _data(n_classes=3)
    _force_predictions(monkeypatch, 2)  # the rarest class
    est, msgs = _fit(X, y, s, epsilon=CHOICE_EPSILON * 2)
    assert est.constant_comparison_.shape == (3,)
    assert est.intercept_only_ and not msgs
    assert est.coef_.shape == (3, D)
    np.testing.assert_array_equal(est.predict(X), 0)
    assert est.privacy_plan(N, D, n_classes=3).dp_event == est.dp_event_


@pytest.mark.parametrize("eps", [0.005, 0.001])
@pytest.mark.parametrize("params", [{}, {"disparity_bound": 0.05}])
def test_budgets_below_what_rdp_certifies_release_the_intercept_only_model(
    eps, params
):
    # The default accountant (RDP) cannot certify epsilon below about 0.01:
    # the one Gaussian histogram used to be calibrated with it and the fit
    # raised. It is now calibrated and recorded with PLD (exact for it).
    X, y, s = _data(n=600, d=3)
    est, msgs = _fit(X, y, s, epsilon=eps, delta=1e-6, **params)
    assert est.accountant == "rdp"
    assert est.intercept_only_ is True and len(msgs) == 1 and est.t_ == 0
    np.testing.assert_array_equal(est.coef_, 0.0)
    plan = est.privacy_plan(600, 3)
    assert plan.dp_event == est.dp_event_ and plan.accountant == "pld"
    z = est.privacy_record_.noise_multiplier
    assert est.dp_event_ == GaussianMechanism(1.0, z).event()
    # Within the budget by dp-accounting's PLD, recomputed from dp_event_.
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    spent = accountant.compose(est.dp_event_).get_epsilon(1e-6)
    assert spent <= eps * (1 + 1e-9) and est.epsilon_ <= eps * (1 + 1e-9)
    assert est.accountant_ == est.privacy_record_.accountant == "pld"
    assert "Accounted with dp-accounting (PLD)" in est.privacy_summary()


@pytest.mark.parametrize("eps", [0.005, 0.001])
def test_released_counts_have_the_calibrated_spread(eps):
    # Seeded: 200 fits, each releasing the 2 label counts once; their errors
    # over z are N(0, 1), so the sample sd of the 400 is 1 within 3.5% (its
    # standard error 1/sqrt(800)): tolerance 15%, above 4 standard errors.
    X, y, s = _data(n=600, d=3)
    observer = Releases()
    with observe_privatize(observer):
        for seed in range(200):
            _fit(X, y, s, epsilon=eps, delta=1e-6, random_state=seed)
    observer.assert_label_histograms(y, 200)


def test_a_chosen_constant_replaces_the_bound_verdict_of_the_selection(monkeypatch):
    # The selection meets no bound (none can be met at this size), then the
    # private choice releases a constant, which meets every bound: no
    # warning about the selected model, which is not returned, and no
    # fairness weight.
    X, y, s = _data()
    _force_predictions(monkeypatch, 1)
    est = DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], epsilon=CHOICE_EPSILON, random_state=0,
        disparity_bound=1e-6,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, sensitive_features=s)
    assert est.intercept_only_ is True
    assert not [w for w in caught if "not met" in str(w.message)]
    assert est.bound_met_ is True and est.training_disparity_ == 0.0
    assert est.fairness_weight_ == 0.0
    assert est.privacy_plan(N, D).dp_event == est.dp_event_
