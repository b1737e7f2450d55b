"""DPLogisticRegression's small_budget rule: the intercept-only model, planned."""

import warnings

import numpy as np
import pytest
from dp_accounting import pld
from release_observer import Releases

from sklearn_dpfair.linear_model import DPLogisticRegression
from sklearn_dpfair.pipeline import make_private_pipeline
from sklearn_dpfair.privacy import GaussianMechanism, PrivacyLedger, epsilon_of
from sklearn_dpfair.privacy._mechanism import observe_privatize
from sklearn_dpfair.privacy._record import WEIGHTS_CAVEAT

SMALL = dict(epsilon=0.1, classes=[0, 1])  # 300 * 0.1 < 5 * 21


def _data(n=300, d=20, seed=0, shift=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] > shift).astype(int)


@pytest.mark.parametrize("solver_kwargs", [{}, {"solver": "output-perturbation",
                                                "feature_norm_bound": 5.0, "alpha": 0.1}])
def test_a_small_budget_releases_the_planned_intercept_only_model(solver_kwargs):
    X, y = _data()
    est = DPLogisticRegression(random_state=0, **SMALL, **solver_kwargs)
    with pytest.warns(UserWarning, match=r"epsilon is below 5 \* \(n_features"):
        est.fit(X, y)
    assert est.intercept_only_ and not np.any(est.coef_)
    assert est.coef_.shape == (1, 20) and est.n_iter_ == 0
    assert est.privacy_plan(300, 20).dp_event == est.dp_event_
    assert est.epsilon_ <= 0.1 + 1e-9 and est.adjacency_ == "add_remove"
    # A constant predictor: the (noisy) majority class for every row.
    assert np.unique(est.predict(X)).size == 1


def test_one_cause_warns_once_across_a_search_of_folds_and_epsilons():
    # The text states the rule's threshold, not the fit's n * epsilon: the
    # folds (200 rows), the refit (300) and two epsilons warned 3 times.
    from sklearn.model_selection import GridSearchCV

    X, y = _data()
    search = GridSearchCV(
        DPLogisticRegression(random_state=0, **SMALL),
        {"epsilon": [0.05, 0.1]},
        cv=3,
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        search.fit(X, y)
    texts = [str(w.message) for w in record if "small_budget" in str(w.message)]
    assert len(texts) == 1, texts


def test_the_decision_reads_public_counts_only():
    # Two datasets of the same shape with opposite label balance: both fall
    # back; the rule never looks at the labels or the signal.
    for shift in (-1.0, 1.0):
        X, y = _data(shift=shift)
        with pytest.warns(UserWarning, match="small_budget"):
            est = DPLogisticRegression(random_state=0, **SMALL).fit(X, y)
        assert est.intercept_only_
    # The intercept follows the (noisy) label balance: logit of classes_[1].
    X, y = _data(n=2000, d=1000, shift=1.0)  # 2000 * 1 < 5 * 1001
    est = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
    with pytest.warns(UserWarning):
        est.fit(X, y)
    assert est.intercept_[0] == pytest.approx(np.log(y.mean() / (1 - y.mean())), abs=0.05)


def test_fit_always_fits_and_large_budgets_are_unaffected():
    X, y = _data()
    est = DPLogisticRegression(small_budget="fit", random_state=0, **SMALL).fit(X, y)
    assert not est.intercept_only_ and np.any(est.coef_)
    est = DPLogisticRegression(epsilon=2.0, classes=[0, 1], random_state=0).fit(X, y)
    assert not est.intercept_only_  # 300 * 2 >= 5 * 21
    # A user noise multiplier, epsilon = inf and delta = 0 are not decided by it.
    for kwargs in ({"noise_multiplier": 200.0}, {"epsilon": np.inf}):
        est = DPLogisticRegression(classes=[0, 1], **{"epsilon": 0.1, **kwargs}).fit(X, y)
        assert not est.intercept_only_


def test_multiclass_and_float32():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 20)).astype(np.float32)
    y = rng.integers(0, 3, 300)
    with pytest.warns(UserWarning, match="small_budget"):
        est = DPLogisticRegression(epsilon=0.1, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert est.coef_.shape == (3, 20) and est.coef_.dtype == np.float32
    assert est.intercept_.dtype == np.float32
    proba = est.predict_proba(X[:3])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert est.privacy_plan(300, 20, n_classes=3).dp_event == est.dp_event_


@pytest.mark.parametrize("eps", [0.005, 0.001])
def test_budgets_below_what_rdp_certifies_release_the_intercept_only_model(eps):
    # The default accountant (RDP) cannot certify epsilon below about 0.01:
    # the fit used to calibrate the unused DP-SGD model with it and raise. The
    # rule is now decided first and the one Gaussian histogram is calibrated
    # and recorded with PLD (exact for it).
    X, y = _data(n=600, d=3, shift=0.0)
    est = DPLogisticRegression(
        epsilon=eps, delta=1e-6, classes=[0, 1], random_state=0
    )
    assert est.accountant == "rdp"
    plan = est.privacy_plan(600, 3)
    with pytest.warns(UserWarning, match=r"small_budget='auto' released"):
        est.fit(X, y)
    assert est.intercept_only_ and not np.any(est.coef_) and est.n_iter_ == 0
    assert plan.dp_event == est.dp_event_ and plan.accountant == "pld"
    z = est.noise_multiplier_
    assert est.dp_event_ == GaussianMechanism(1.0, z).event()
    # Within the budget by dp-accounting's PLD, recomputed from dp_event_.
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    spent = accountant.compose(est.dp_event_).get_epsilon(1e-6)
    assert spent <= eps * (1 + 1e-9) and est.epsilon_ <= eps * (1 + 1e-9)
    assert est.privacy_record_.accountant == "pld"
    assert "Accounted with dp-accounting (PLD)" in est.privacy_summary()
    assert "whatever the fit's accountant" in est.privacy_record_.mechanism


@pytest.mark.parametrize("eps", [0.005, 0.001])
def test_released_counts_have_the_calibrated_spread(eps):
    # Seeded: 200 fits, each releasing the 2 label counts once; their errors
    # over z are N(0, 1), so the sample sd of the 400 is 1 within 3.5% (its
    # standard error 1/sqrt(800)): tolerance 15%, above 4 standard errors.
    X, y = _data(n=600, d=3, shift=0.0)
    observer = Releases()
    with observe_privatize(observer), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for seed in range(200):
            DPLogisticRegression(
                epsilon=eps, delta=1e-6, classes=[0, 1], random_state=seed
            ).fit(X, y)
    observer.assert_label_histograms(y, 200)


def test_the_histogram_counts_each_record_at_its_weight_capped_at_one():
    # A weight of 0 removes a record; one above 1 counts once: the released
    # counts are the capped weighted ones, with the unweighted sensitivity.
    X, y = _data(n=600, d=3, shift=0.0)
    weights = np.random.default_rng(1).uniform(0.0, 3.0, 600)
    weights[:5] = 1e6
    observer = Releases()
    with observe_privatize(observer), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = DPLogisticRegression(
            epsilon=0.005, delta=1e-6, classes=[0, 1], random_state=0
        ).fit(X, y, sample_weight=weights)
    ((mechanism, exact, _),) = observer.seen
    assert mechanism.sensitivity == 1.0 and est.intercept_only_
    np.testing.assert_allclose(
        exact, np.bincount(y, weights=np.minimum(weights, 1.0), minlength=2)
    )
    # The record says that the public weights were used, as a model's does.
    assert WEIGHTS_CAVEAT in est.privacy_caveats_


def test_frank_wolfe_is_fitted_on_the_wide_data_it_is_for():
    # The rule counts parameters (noisy gradients grow with sqrt(d));
    # private Frank-Wolfe's error grows with log d: it fits however wide.
    X, y = _data(n=300, d=200)
    est = DPLogisticRegression(
        solver="dp-frank-wolfe", l1_radius=5.0, feature_inf_bound=4.0, **SMALL
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est.fit(X, y)
    assert not est.intercept_only_ and est.t_ > 0
    assert est.privacy_plan(300, 200).dp_event == est.dp_event_


@pytest.mark.parametrize(
    "solver_kwargs",
    [
        {"solver": "dp-newton", "feature_norm_bound": 5.0},
        {"solver": "dp-frank-wolfe", "l1_radius": 5.0, "feature_inf_bound": 4.0},
    ],
)
def test_an_exact_fit_at_its_optimum_is_not_intercept_only(solver_kwargs):
    # At epsilon=inf the exact solver may take no iteration (0 is optimal
    # for balanced labels independent of a centred X): still a fitted model.
    X = np.array([[1.0], [1.0], [-1.0], [-1.0]] * 50)
    y = np.array([1, 0, 1, 0] * 50)
    est = DPLogisticRegression(epsilon=np.inf, classes=[0, 1], **solver_kwargs)
    est.fit(X, y)
    assert not est.intercept_only_


def test_zero_weights_remove_their_records_from_the_histogram():
    X, y = _data(n=3000, d=3, shift=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = DPLogisticRegression(
            epsilon=0.005, classes=[0, 1], accountant="pld", random_state=0
        ).fit(X, y, sample_weight=(y == 0).astype(float))
    assert est.intercept_only_ and est.intercept_[0] < -3.0
    assert not np.any(est.predict(X))


def test_parameters_are_still_validated_when_the_model_is_not_fitted():
    # The model's set-up runs without privacy to check its parameters: a
    # diverging L2 step is refused whatever the budget.
    X, y = _data(n=600, d=3)
    est = DPLogisticRegression(
        epsilon=0.005, delta=1e-6, alpha=10.0, learning_rate=1.0, classes=[0, 1]
    )
    with pytest.raises(ValueError, match=r"learning_rate \* alpha must be below 2"):
        est.fit(X, y)


def test_a_ledger_or_pipeline_under_rdp_reads_the_pld_release():
    # The fit's record is PLD's; a ledger of kind "rdp" composes the same
    # event with RDP (a valid, looser total), and an RDP pipeline calibrates
    # the step's share so that the RDP composition meets its epsilon.
    X, y = _data(n=600, d=3)
    ledger = PrivacyLedger("rdp")
    est = DPLogisticRegression(
        epsilon=0.02, delta=1e-6, classes=[0, 1], accountant=ledger, random_state=0
    )
    with pytest.warns(UserWarning, match="small_budget"):
        est.fit(X, y)
    assert est.intercept_only_ and est.privacy_record_.accountant == "pld"
    rdp_reading = epsilon_of(est.dp_event_, 1e-6, "rdp")
    assert ledger.total_epsilon() == rdp_reading
    assert est.epsilon_ <= 0.02 < rdp_reading
    pipe = make_private_pipeline(
        DPLogisticRegression(classes=[0, 1]), epsilon=0.02, delta=1e-6,
        random_state=0,
    )
    with pytest.warns(UserWarning, match="small_budget"):
        pipe.fit(X, y)
    step = pipe.pipeline_[-1]
    assert step.intercept_only_ and step.privacy_record_.accountant == "pld"
    assert pipe.epsilon_ == epsilon_of(pipe.dp_event_, 1e-6, "rdp") <= 0.02
    # Below what RDP certifies, the pipeline refuses and says why.
    pipe.set_params(epsilon=0.005)
    with pytest.raises(ValueError, match="accountant='pld' can"):
        pipe.fit(X, y)


def test_without_an_intercept_the_model_is_fitted():
    # No intercept to release: an intercept-only model would put one where
    # the user asked for none.
    X, y = _data()
    clf = DPLogisticRegression(
        epsilon=0.2, classes=[0, 1], fit_intercept=False, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    assert not clf.intercept_only_ and np.all(clf.intercept_ == 0)
    assert clf.privacy_plan(*X.shape).dp_event == clf.dp_event_


def test_a_binary_only_solver_refuses_three_classes_at_any_budget():
    X, y = _data()
    y = np.arange(len(y)) % 3
    for epsilon in (0.2, 5.0):
        clf = DPLogisticRegression(
            solver="dp-newton", feature_norm_bound=4.0, epsilon=epsilon,
            classes=[0, 1, 2],
        )
        with pytest.raises(ValueError, match="binary problems only"):
            clf.privacy_plan(*X.shape)
        with pytest.raises(ValueError, match="binary problems only"):
            clf.fit(X, y)
