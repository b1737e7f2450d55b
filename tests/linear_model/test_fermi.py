# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import inspect
import math
import warnings

import dp_accounting
import numpy as np
import pandas as pd
import pytest
import sklearn
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    equalized_odds_difference,
    selection_rate,
)
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair.exceptions import PrivacyBudgetError, PrivacyLeakWarning
from sklearn_dpfair.metrics import ermi_score, make_fairness_scorer

FAST = {"batch_size": 200, "max_iter": 10}
DECLARED = {"classes": [0, 1], "groups": [0, 1]}


def _biased(seed, n=2000, n_classes=2, n_groups=2):
    """Data whose label and features both depend on the group."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, n_groups, n)
    X = rng.normal(size=(n, 4)) + 0.8 * s[:, None]
    score = X[:, 0] + 0.5 * X[:, 1] + 0.4 * rng.normal(size=n)
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.searchsorted(edges, score)
    return X, y, s


def _dp_gap(clf, X, y, s):
    return demographic_parity_difference(y, clf.predict(X), sensitive_features=s)


# -- FERMIClassifier ---------------------------------------------------------


def test_fairness_weight_reduces_the_parity_gap(global_random_seed):
    X, y, s = _biased(global_random_seed)
    gaps = [
        _dp_gap(
            FERMIClassifier(fairness_weight=lam, random_state=0, **FAST).fit(
                X, y, sensitive_features=s
            ),
            X,
            y,
            s,
        )
        for lam in (0.0, 4.0, 16.0)
    ]
    assert gaps[0] > 0.3
    assert gaps[2] < gaps[1] < gaps[0]
    assert gaps[2] < 0.4 * gaps[0]


def test_equalized_odds_reduces_the_odds_gap(global_random_seed):
    X, y, s = _biased(global_random_seed)
    y = (X[:, 0] + 2 * s + np.random.default_rng(1).normal(size=y.size) > 1.3).astype(
        int
    )
    X[:, 1] = y + s + 0.5 * np.random.default_rng(2).normal(size=y.size)
    gaps = []
    for lam in (0.0, 16.0):
        clf = FERMIClassifier(
            constraint="equalized_odds", fairness_weight=lam, random_state=0, **FAST
        ).fit(X, y, sensitive_features=s)
        gaps.append(equalized_odds_difference(y, clf.predict(X), sensitive_features=s))
        assert clf.dual_coef_.shape == (2, 2, 2)
        assert clf.group_marginals_.shape == (2, 2)
    assert gaps[1] < 0.6 * gaps[0]


def test_equal_opportunity_targets_the_advantaged_class():
    X, y, s = _biased(0)
    clf = FERMIClassifier(
        constraint="equal_opportunity", fairness_weight=16, random_state=0, **FAST
    ).fit(X, y, sensitive_features=s)
    ref = FERMIClassifier(fairness_weight=0, random_state=0, **FAST).fit(
        X, y, sensitive_features=s
    )
    tpr = MetricFrame(
        metrics=selection_rate, y_true=y, y_pred=clf.predict(X), sensitive_features=s
    )
    pos = y == 1
    gap = ermi_score(y[pos], clf.predict(X)[pos], sensitive_features=s[pos])
    gap_ref = ermi_score(y[pos], ref.predict(X)[pos], sensitive_features=s[pos])
    assert gap < gap_ref
    assert tpr.by_group.shape == (2,)
    with pytest.raises(ValueError, match="opportunity_class=5 is not one of"):
        FERMIClassifier(constraint="equal_opportunity", opportunity_class=5).fit(
            X, y, sensitive_features=s
        )


def test_unknown_opportunity_class_message_fits_each_estimator():
    # FERMIClassifier's classes are not private and it has no classes
    # parameter: the message lists them. DPFERMIClassifier withholds the
    # classes it read from the private y and names its classes parameter.
    X, y, s = _biased(0, n=400)
    labels = np.where(y == 1, "yes", "no")
    with pytest.raises(ValueError) as info:
        FERMIClassifier(constraint="equal_opportunity", opportunity_class="maybe").fit(
            X, labels, sensitive_features=s
        )
    message = str(info.value)
    assert "['no', 'yes']" in message
    assert "classes=[" not in message and "private" not in message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(ValueError) as info:
            DPFERMIClassifier(
                constraint="equal_opportunity",
                opportunity_class="maybe",
                epsilon=1.0,
                random_state=0,
            ).fit(X, labels, sensitive_features=s)
    message = str(info.value)
    assert "declare them with classes=[...]" in message
    assert "'yes'" not in message


def test_multiclass_and_many_groups():
    X, y, s = _biased(0, n=3000, n_classes=3, n_groups=4)
    clf = FERMIClassifier(fairness_weight=8, random_state=0, **FAST).fit(
        X, y, sensitive_features=s
    )
    ref = FERMIClassifier(fairness_weight=0, random_state=0, **FAST).fit(
        X, y, sensitive_features=s
    )
    assert clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
    assert clf.dual_coef_.shape == (4, 3)
    assert clf.predict_proba(X).shape == (3000, 3)
    assert ermi_score(y, clf.predict(X), sensitive_features=s) < 0.5 * ermi_score(
        y, ref.predict(X), sensitive_features=s
    )


def test_intersectional_groups_from_a_dataframe():
    X, y, s = _biased(0)
    frame = pd.DataFrame({"a": np.where(s == 1, "u", "v"), "b": np.arange(y.size) % 2})
    clf = FERMIClassifier(random_state=0, **FAST).fit(X, y, sensitive_features=frame)
    assert clf.groups_.tolist() == [("u", 0), ("u", 1), ("v", 0), ("v", 1)]
    assert clf.group_marginals_.shape == (4,)
    np.testing.assert_allclose(clf.group_marginals_.sum(), 1.0)


def test_missing_sensitive_values_are_reweighted():
    X, y, s = _biased(0)
    sf = s.astype(object)
    sf[::3] = None
    clf = FERMIClassifier(fairness_weight=8, random_state=0, **FAST).fit(
        X, y, sensitive_features=sf
    )
    obs = sf != None
    np.testing.assert_allclose(clf.group_marginals_, np.bincount(s[obs]) / obs.sum())
    ref = FERMIClassifier(fairness_weight=0, random_state=0, **FAST).fit(
        X, y, sensitive_features=s
    )
    assert _dp_gap(clf, X, y, s) < 0.5 * _dp_gap(ref, X, y, s)


def test_no_sensitive_features_is_plain_logistic_regression():
    X, y, s = _biased(0)
    with pytest.warns(UserWarning, match="sensitive_features is None"):
        none = FERMIClassifier(fairness_weight=8, random_state=0, **FAST).fit(X, y)
    zero = FERMIClassifier(fairness_weight=0, random_state=0, **FAST).fit(
        X, y, sensitive_features=s
    )
    np.testing.assert_array_equal(none.coef_, zero.coef_)
    with pytest.warns(UserWarning, match="single group"):
        one = FERMIClassifier(fairness_weight=8, random_state=0, **FAST).fit(
            X, y, sensitive_features=np.zeros(y.size)
        )
    np.testing.assert_array_equal(one.coef_, zero.coef_)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_alpha_is_half_the_squared_norm_of_the_softmax_parameters(n_classes):
    # alpha/2 sum_k ||w_k||^2 on the per-class softmax parameters: for
    # multiclass targets coef_ holds them (scikit-learn's C = 1/(n alpha));
    # for binary ones coef_ = w_1 - w_0 with w_0 = -w_1 at the minimizer,
    # so the penalty is alpha/4 ||coef_||^2 (C = 2/(n alpha)), as the
    # alpha docstring says.
    from sklearn.linear_model import LogisticRegression

    X, y, s = _biased(3, n=1500, n_classes=n_classes)
    n, alpha = y.size, 0.05
    fermi = FERMIClassifier(
        fairness_weight=0, alpha=alpha, tol=1e-9, random_state=0
    )
    with warnings.catch_warnings():
        # tol=1e-9 may sit below L-BFGS's floating-point floor.
        warnings.simplefilter("ignore")
        fermi.fit(X, y, sensitive_features=s)
    C = (2.0 if n_classes == 2 else 1.0) / (n * alpha)
    ref = LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(fermi.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(fermi.intercept_, ref.intercept_, atol=1e-6)
    if n_classes == 2:
        other = LogisticRegression(C=1.0 / (n * alpha), tol=1e-12).fit(X, y)
        assert np.abs(fermi.coef_ - other.coef_).max() > 1e-2


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_training_disparity_weighs_rows_like_fairlearn(constraint):
    # A row of weight k counts k times and one of weight 0 not at all, as
    # in fairlearn's metrics with sample_weight (and as when the weight-0
    # rows are removed from the fit).
    rng = np.random.default_rng(0)
    X, y, s = _biased(4, n=1000, n_groups=3)
    w = rng.integers(0, 4, y.size).astype(float)
    params = {"constraint": constraint, "fairness_weight": 2, "random_state": 0}
    est = FERMIClassifier(**params).fit(X, y, sample_weight=w, sensitive_features=s)
    metric = (
        demographic_parity_difference
        if constraint == "demographic_parity"
        else equalized_odds_difference
    )
    pred = est.predict(X)
    expected = metric(y, pred, sensitive_features=s, sample_weight=w)
    assert est.training_disparity_ == pytest.approx(expected, abs=1e-12)
    assert est.training_disparity_ != pytest.approx(
        metric(y, pred, sensitive_features=s), abs=1e-3
    )
    keep = w > 0
    removed = FERMIClassifier(**params).fit(
        X[keep], y[keep], sample_weight=w[keep], sensitive_features=s[keep]
    )
    assert removed.training_disparity_ == pytest.approx(
        metric(y[keep], removed.predict(X[keep]), sensitive_features=s[keep],
               sample_weight=w[keep]),
        abs=1e-12,
    )


def test_training_disparity_survives_a_subnormal_weight():
    # One weight of 1e-310 beside weights of 1: dividing the weights by the
    # least of them would overflow every count (a disparity of 0 and a
    # RuntimeWarning); the rates are those of the weighted rows.
    rng = np.random.default_rng(0)
    n = 400
    s = rng.choice(["a", "b", "c"], n)
    X = rng.normal(size=(n, 3)) + (s == "a")[:, None]
    y = (X[:, 0] + rng.normal(size=n) > 0.5).astype(int)
    w = np.ones(n)
    w[0] = 1e-310
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = FERMIClassifier(fairness_weight=1.0, min_group_size=0).fit(
            X, y, sample_weight=w, sensitive_features=s
        )
    pred = est.predict(X)
    rates = [np.sum(w[s == g] * pred[s == g]) / np.sum(w[s == g]) for g in "abc"]
    expected = max(rates) - min(rates)
    assert expected > 0.1
    assert est.training_disparity_ == pytest.approx(expected, abs=1e-12)


def test_float32_training_disparity_is_that_of_predict():
    # float32 rows with a column of offset 500 in units of 1e-3 (a raw
    # price): the released float32 model's intercept is near 1e5 and its
    # float32 scores differ from the float64 solution's near the decision
    # boundary. training_disparity_ is the disparity of predict's labels.
    rng = np.random.default_rng(0)
    n = 1200
    s = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    X = rng.normal(size=(n, 3)) + (s == 0)[:, None]
    X[:, 1] = X[:, 1] * 1e-3 + 500
    y = (X[:, 0] + rng.normal(size=n) > 0.5).astype(int)
    X = X.astype(np.float32)
    est = FERMIClassifier(fairness_weight=4.0, min_group_size=0).fit(
        X, y, sensitive_features=s
    )
    assert est.coef_.dtype == np.float32
    expected = demographic_parity_difference(y, est.predict(X), sensitive_features=s)
    assert est.training_disparity_ == pytest.approx(expected, abs=1e-12)


def test_convergence_warning_names_its_cause():
    # Increase max_full_batch_iter only when the returned model's L-BFGS
    # run stopped at it; at the round-off floor (L-BFGS stops far below
    # the limit) tol is below the attainable precision.
    X, y, s = _biased(5, n=2000)
    with pytest.warns(ConvergenceWarning) as floor:
        est = FERMIClassifier(fairness_weight=8, tol=1e-12, random_state=0).fit(
            X, y, sensitive_features=s
        )
    (message,) = [str(w.message) for w in floor if w.category is ConvergenceWarning]
    assert est.n_full_batch_iter_ < est.max_full_batch_iter
    assert "Increase max_full_batch_iter" not in message
    assert "tol is below the precision attainable" in message
    assert f"after {est.n_full_batch_iter_} L-BFGS iterations." in message
    with pytest.warns(ConvergenceWarning) as limit:
        FERMIClassifier(
            fairness_weight=8, max_full_batch_iter=2, random_state=0
        ).fit(X, y, sensitive_features=s)
    (message,) = [str(w.message) for w in limit if w.category is ConvergenceWarning]
    assert "stopped at max_full_batch_iter=2" in message
    assert "increase max_full_batch_iter" in message


def test_bounded_convergence_warning_counts_the_chosen_weights_iterations():
    # Under disparity_bound the message reports the returned weight's own
    # L-BFGS iterations (n_full_batch_iter_ adds up the whole path).
    X, y, s = _biased(5, n=2000)
    with pytest.warns(ConvergenceWarning) as caught:
        est = FERMIClassifier(
            disparity_bound=0.02, tol=1e-12, max_full_batch_iter=50, random_state=0
        ).fit(X, y, sensitive_features=s)
    (message,) = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    (chosen,) = [
        p for p in est.weight_path_ if p["fairness_weight"] == est.fairness_weight_
    ]
    assert chosen["n_iter"] < est.n_full_batch_iter_
    assert (
        f"after {chosen['n_iter']} L-BFGS iterations at the chosen "
        f"fairness_weight_ = {est.fairness_weight_:g}." in message
    )
    # No run at this weight reached the limit of 50: the round-off floor.
    assert "tol is below the precision attainable" in message
    assert "increase max_full_batch_iter" not in message.lower()


def test_predict_takes_no_sensitive_features():
    for method in ("predict", "predict_proba", "decision_function"):
        params = inspect.signature(getattr(FERMIClassifier, method)).parameters
        assert list(params) == ["self", "X"]


@pytest.mark.parametrize("Est", [FERMIClassifier, DPFERMIClassifier])
def test_bad_input_raises_and_leaves_nothing_fitted(Est):
    X, y, s = _biased(0, n=300)
    bad = [
        ({"sensitive_features": s[:-1]}, "sensitive_features has 299 rows"),
        ({"sensitive_features": np.zeros((300, 2, 2))}, "1-D or 2-D"),
    ]
    for kwargs, msg in bad:
        clf = Est(**FAST)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match=msg):
                clf.fit(X, y, **kwargs)
        assert not hasattr(clf, "coef_")
    with pytest.raises(ValueError, match="Every value of sensitive_features"):
        FERMIClassifier().fit(X, y, sensitive_features=[None] * 300)
    with pytest.raises(ValueError, match="only one class"):
        FERMIClassifier().fit(X, np.zeros(300), sensitive_features=s)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Est().fit(Xn, y, sensitive_features=s)


def test_exact_dual_update_needs_full_batch():
    X, y, s = _biased(0, n=300)
    with pytest.raises(ValueError, match="batch_size='full'"):
        FERMIClassifier(dual_update="exact").fit(X, y, sensitive_features=s)
    clf = FERMIClassifier(
        dual_update="exact", batch_size="full", max_iter=50, fairness_weight=4
    ).fit(X, y, sensitive_features=s)
    assert clf.t_ == 50


def test_small_groups_are_floored_with_a_warning():
    X, y, s = _biased(0, n=1000)
    s = s.copy()
    s[:2] = 2  # a tiny third group
    with pytest.warns(UserWarning, match="group\\(s\\) 2 have a training frequency"):
        # min_group_size=0: the two rows stay in the penalty, floored.
        clf = FERMIClassifier(min_group_frequency=0.01, min_group_size=0, **FAST).fit(
            X, y, sensitive_features=s
        )
    assert clf.group_marginals_.min() >= 0.0099


def test_curves_are_recorded():
    X, y, s = _biased(0)
    clf = FERMIClassifier(fairness_weight=8, random_state=0, **FAST).fit(
        X, y, sensitive_features=s
    )
    assert len(clf.loss_curve_) == clf.n_iter_ == len(clf.fairness_curve_)
    assert clf.fairness_curve_[-1] < clf.fairness_curve_[0]


# -- routing through Pipeline, GridSearchCV, cross_validate --------------------


def test_routing_through_pipeline_and_grid_search():
    X, y, s = _biased(0, n=1200)
    frame = pd.DataFrame(X, columns=list("abcd"))
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline(
            [
                ("scale", ColumnTransformer([("num", StandardScaler(), list("abcd"))])),
                (
                    "clf",
                    FERMIClassifier(random_state=0, **FAST).set_fit_request(
                        sensitive_features=True
                    ),
                ),
            ]
        )
        scorer = make_fairness_scorer(base_metric="accuracy", fairness_penalty=2.0)
        search = GridSearchCV(
            pipe,
            {"clf__fairness_weight": [0.0, 16.0]},
            cv=3,
            scoring={
                "fair_acc": scorer,
                "acc": "accuracy",
                "dpd": make_fairness_scorer(),
            },
            refit="fair_acc",
        ).fit(frame, y, sensitive_features=s)
        # The penalized score prefers the fair model on this biased data.
        assert search.best_params_ == {"clf__fairness_weight": 16.0}
        res = search.cv_results_
        assert np.all(res["mean_test_dpd"] <= 0)
        assert res["mean_test_dpd"][1] > res["mean_test_dpd"][0]
        cv = cross_validate(
            pipe,
            frame,
            y,
            cv=2,
            params={"sensitive_features": s},
            scoring={"fair_acc": scorer},
        )
        assert np.all(np.isfinite(cv["test_fair_acc"]))


def test_fairlearn_metrics_accept_predictions():
    X, y, s = _biased(0)
    clf = FERMIClassifier(random_state=0, **FAST).fit(X, y, sensitive_features=s)
    pred = clf.predict(X)
    frame = MetricFrame(
        metrics={"acc": accuracy_score, "sel": selection_rate},
        y_true=y,
        y_pred=pred,
        sensitive_features=s,
    )
    assert frame.difference()["sel"] == pytest.approx(
        demographic_parity_difference(y, pred, sensitive_features=s)
    )
    assert 0 <= equalized_odds_difference(y, pred, sensitive_features=s) <= 1


# -- DPFERMIClassifier -------------------------------------------------------


def test_zero_noise_equals_fermi_with_the_same_clipping(global_random_seed):
    # noise_multiplier=0 at epsilon = inf is the private loop without noise
    # (epsilon = inf alone is the non-private limit, which ends with a
    # full-batch solve: tests/solvers/test_non_private.py).
    X, y, s = _biased(global_random_seed)
    common = {
        "fairness_weight": 8.0,
        "batch_size": 300,
        "max_iter": 5,
        "learning_rate": 0.3,
        "min_group_frequency": 0.01,
        "clip_norm": 0.5,
        "dual_clip_norm": 0.8,
        "random_state": global_random_seed,
        "return_iterate": "average",
    }
    dp = DPFERMIClassifier(
        epsilon=math.inf, noise_multiplier=0.0, **DECLARED, **common
    ).fit(X, y, sensitive_features=s)
    # Clipped gradients are no objective's: the full-batch phase is off.
    plain = FERMIClassifier(full_batch_phase=None, **common).fit(
        X, y, sensitive_features=s
    )
    np.testing.assert_array_equal(dp.coef_, plain.coef_)
    np.testing.assert_array_equal(dp.intercept_, plain.intercept_)
    np.testing.assert_array_equal(dp.dual_coef_, plain.dual_coef_)
    assert dp.epsilon_ == math.inf
    # The clipping is active (a fit without it differs).
    unclipped = FERMIClassifier(**{**common, "clip_norm": None}).fit(
        X, y, sensitive_features=s
    )
    assert not np.allclose(unclipped.coef_, plain.coef_)


def test_zero_noise_equals_fermi_for_a_network_on_raw_columns():
    # Both precondition the network's columns by their exact moments (the
    # noiseless loop claims nothing): on raw columns the DP loop without
    # them scored 0.42 where FERMI scored 0.84.
    X, y, s = _biased(0)
    X = X * np.array([1e4, 1.0, 30.0, 1.0])[: X.shape[1]] + 500.0
    common = {
        "hidden_layer_sizes": (6,),
        "fairness_weight": 2.0,
        "batch_size": 300,
        "max_iter": 5,
        "learning_rate": 0.3,
        "clip_norm": 0.5,
        "dual_clip_norm": 0.8,
        "random_state": 0,
    }
    dp = DPFERMIClassifier(
        epsilon=math.inf, noise_multiplier=0.0, **DECLARED, **common
    ).fit(X, y, sensitive_features=s)
    plain = FERMIClassifier(full_batch_phase=None, **common).fit(
        X, y, sensitive_features=s
    )
    for a, b in zip(dp.coefs_, plain.coefs_):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert dp.score(X, y) == plain.score(X, y)


def test_sampling_rate_is_a_deprecated_alias_of_sampling_probability():
    X, y, s = _biased(0)
    clf = DPFERMIClassifier(epsilon=1.0, delta=1e-5, random_state=0, **DECLARED)
    assert not hasattr(clf, "sampling_rate_")  # unfitted: no warning either
    clf.set_params(**FAST).fit(X, y, sensitive_features=s)
    assert clf.sampling_probability_ == clf.privacy_record_.sampling_probability
    with pytest.warns(FutureWarning, match="sampling_probability_") as record:
        value = clf.sampling_rate_
    assert value == clf.sampling_probability_
    assert record[0].filename == __file__  # at the caller's line


def test_privacy_record_is_recomputable_with_dp_accounting():
    X, y, s = _biased(0)
    # small_budget="fit": the histogram and the steps alone (at n * epsilon
    # = 2000 "auto" would also compare the model with the constants).
    clf = DPFERMIClassifier(
        epsilon=1.0, delta=1e-5, random_state=0, small_budget="fit", **DECLARED,
        **FAST,
    ).fit(X, y, sensitive_features=s)
    assert clf.epsilon_ <= 1.0
    assert clf.epsilon_ == pytest.approx(1.0, rel=1e-2)
    event = clf.dp_event_
    assert isinstance(event, dp_accounting.ComposedDpEvent)
    marginal, sgda = event.events
    assert marginal.noise_multiplier == 20.0
    assert sgda.count == clf.t_
    assert sgda.event.sampling_probability == pytest.approx(
        clf.sampling_probability_
    )
    assert sgda.event.event.noise_multiplier == pytest.approx(
        clf.effective_noise_multiplier_
    )
    # Independent computation with dp-accounting's own RDP accountant.
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(event)
    assert acc.get_epsilon(1e-5) == pytest.approx(clf.epsilon_, rel=1e-2)
    assert clf.privacy_record_.recompute_epsilon() == clf.epsilon_
    # One joint Gaussian: sigma_eff^-2 = sigma_theta^-2 + sigma_w^-2.
    assert clf.effective_noise_multiplier_**-2 == pytest.approx(
        clf.noise_multiplier_**-2 + clf.dual_noise_multiplier_**-2
    )
    assert clf.dual_noise_multiplier_ == pytest.approx(clf.noise_multiplier_)
    assert clf.adjacency_ == "add_remove" and clf.privacy_caveats_ == []
    assert clf.loss_curve_ is None


def test_public_marginals_spend_no_budget_on_the_histogram():
    X, y, s = _biased(0)
    clf = DPFERMIClassifier(
        group_marginals=[3, 1], random_state=0, small_budget="fit", **DECLARED,
        **FAST,
    ).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(clf.group_marginals_, [0.75, 0.25])
    assert isinstance(clf.dp_event_, dp_accounting.SelfComposedDpEvent)
    eo = DPFERMIClassifier(
        constraint="equalized_odds",
        group_marginals=np.ones((2, 2)),
        random_state=0,
        small_budget="fit",
        **DECLARED,
        **FAST,
    ).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(eo.group_marginals_, np.full((2, 2), 0.5))
    with pytest.raises(ValueError, match="group_marginals must be"):
        DPFERMIClassifier(group_marginals=[1, 1, 1], **DECLARED, **FAST).fit(
            X, y, sensitive_features=s
        )



@pytest.mark.parametrize(
    "params, n_classes, match",
    [
        ({"group_marginals": [0.2, 0.3, 0.5]}, 2, r"of shape \(2,\).*got shape \(3,\)"),
        ({"group_marginals": [-1.0, 2.0]}, 2, "must be non-negative"),
        ({"group_marginals": [np.nan, 1.0]}, 2, "must be finite"),
        ({"group_marginals": [0.0, 0.0]}, 2, "must not be all zero"),
        (
            {"constraint": "equalized_odds", "group_marginals": [0.5, 0.5]},
            2,
            r"of shape \(2, 2\)",
        ),
        (
            {"constraint": "equalized_odds", "group_marginals": np.ones((3, 2))},
            2,
            r"of shape \(2, 2\)",
        ),
        (
            {"constraint": "equal_opportunity", "opportunity_class": 5},
            2,
            r"^opportunity_class=5 is not one of the classes \[0, 1\]\.$",
        ),
        (
            {"constraint": "equal_opportunity", "opportunity_class": "1"},
            2,
            r"^opportunity_class='1' is not one of the classes \[0, 1\]\.$",
        ),
        (
            {"constraint": "equal_opportunity"},
            3,
            "more than two classes needs opportunity_class",
        ),
    ],
    ids=["shape", "negative", "nan", "zero", "eo_ndim", "eo_classes",
         "eopp_class", "eopp_str", "eopp_multiclass"],
)
def test_plan_refuses_what_the_fit_refuses_from_declared_sets(
    params, n_classes, match
):
    # Declared groups and classes decide these refusals before any row is
    # read: the plan raises the fit's error (no plan for a fit that cannot
    # run), and the message names the failed condition; declared classes are
    # public, so it lists them rather than calling them private.
    X, y, s = _biased(0, n=300, n_classes=n_classes)
    est = DPFERMIClassifier(
        classes=list(range(n_classes)), groups=[0, 1], max_iter=2, **params
    )
    with pytest.raises(ValueError, match=match) as planned:
        est.privacy_plan(300, X.shape[1])
    with pytest.raises(ValueError, match=match) as fitted:
        est.fit(X, y, sensitive_features=s)
    assert str(planned.value) == str(fitted.value)
    assert "read from y" not in str(fitted.value)
    assert not hasattr(est, "classes_")


@pytest.mark.parametrize(
    "params, n_classes",
    [
        ({"group_marginals": [3, 1]}, 2),
        ({"constraint": "equalized_odds", "group_marginals": np.ones((3, 2))}, 3),
        ({"constraint": "equal_opportunity", "opportunity_class": 0}, 2),
        (
            {
                "constraint": "equal_opportunity",
                "opportunity_class": 2,
                "group_marginals": [[1, 1], [1, 1], [2, 1]],
            },
            3,
        ),
    ],
    ids=["dp", "eo", "eopp", "eopp_multiclass"],
)
def test_valid_declared_marginals_and_classes_plan_and_fit(params, n_classes):
    X, y, s = _biased(0, n=600, n_classes=n_classes)
    est = DPFERMIClassifier(
        classes=list(range(n_classes)), groups=[0, 1], random_state=0,
        small_budget="fit", batch_size=200, max_iter=2, **params,
    )
    plan = est.privacy_plan(600, X.shape[1])
    est.fit(X, y, sensitive_features=s)
    assert plan.dp_event == est.dp_event_


def test_plan_refuses_at_stated_counts_its_fit_refuses():
    # Without declared sets the counts passed to the plan are those of the
    # fit's data: what they decide is refused as the fit on it refuses.
    est = DPFERMIClassifier(group_marginals=[0.5, 0.5], max_iter=2)
    with pytest.raises(ValueError, match=r"of shape \(3,\).*got shape \(2,\)"):
        est.privacy_plan(300, 4, n_groups=3)
    # One group has no fairness term: the fit reads no marginals.
    est.privacy_plan(300, 4, n_groups=1)
    est.privacy_plan(300, 4, n_groups=2)
    eopp = DPFERMIClassifier(constraint="equal_opportunity", max_iter=2)
    with pytest.raises(ValueError, match="more than two classes"):
        eopp.privacy_plan(300, 4, n_classes=3)
    eopp.privacy_plan(300, 4, n_classes=2)
    # A label it cannot check without the labels is left to the fit.
    eopp.set_params(opportunity_class="maybe").privacy_plan(300, 4, n_classes=3)
    eo = DPFERMIClassifier(
        constraint="equalized_odds", group_marginals=np.ones((2, 2)), max_iter=2
    )
    with pytest.raises(ValueError, match=r"of shape \(3, 2\)"):
        eo.privacy_plan(300, 4, n_classes=3, n_groups=2)
    # Default counts decide no shape but the number of dimensions.
    eo.privacy_plan(300, 4)
    with pytest.raises(ValueError, match=r"of shape \(n_classes, n_groups\)"):
        eo.set_params(group_marginals=[0.5, 0.5]).privacy_plan(300, 4)


def test_undeclared_sets_warn_and_are_recorded():
    X, y, s = _biased(0)
    with pytest.warns(PrivacyLeakWarning) as record:
        clf = DPFERMIClassifier(random_state=0, **FAST).fit(X, y, sensitive_features=s)
    messages = " ".join(str(w.message) for w in record)
    assert "groups was not given" in messages and "classes was not given" in messages
    assert len(clf.privacy_caveats_) == 2
    with pytest.warns(PrivacyLeakWarning, match="record_training_loss"):
        clf = DPFERMIClassifier(
            record_training_loss=True, random_state=0, **DECLARED, **FAST
        ).fit(X, y, sensitive_features=s)
    assert len(clf.loss_curve_) == clf.n_iter_


def test_missing_sensitive_values_are_rejected_under_dp():
    X, y, s = _biased(0, n=300)
    sf = s.astype(float)
    sf[3] = np.nan
    with pytest.raises(ValueError, match="missing values"):
        DPFERMIClassifier(**DECLARED, **FAST).fit(X, y, sensitive_features=sf)


def test_declared_groups_absent_from_the_data_do_not_crash():
    X, y, s = _biased(0)
    clf = DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1, 2], random_state=0, **FAST
    ).fit(X, y, sensitive_features=s)
    assert clf.groups_.tolist() == [0, 1, 2]
    # Its released count is below min_group_size (the noise is std 20 at
    # epsilon=1 around 0): left out of the penalty, the others renormalized.
    assert clf.group_marginals_[2] == 0.0
    assert clf.group_marginals_[:2].sum() == pytest.approx(1.0)
    assert clf.group_marginals_[:2].min() >= 0.0099
    with pytest.raises(ValueError, match="not in the declared groups"):
        DPFERMIClassifier(classes=[0, 1], groups=[0], **FAST).fit(
            X, y, sensitive_features=s
        )


def test_plain_labels_declared_for_two_sensitive_columns_are_refused():
    # "Fw" was read as the tuple ("F", "w"): the fit ran on it.
    X, y, s = _biased(0, n=300)
    sf = pd.DataFrame({"sex": np.where(s == 1, "F", "M"), "race": ["w", "b"] * 150})
    groups = ["Fw", "Fb", "Mw", "Mb"]
    with pytest.raises(ValueError, match="^groups must be tuples of 2 values"):
        DPFERMIClassifier(classes=[0, 1], groups=groups, **FAST).fit(
            X, y, sensitive_features=sf
        )


def test_a_refused_sensitive_features_warns_of_no_inferred_group_set():
    # The fit read no group set: it warned that it had, then refused.
    X, y, s = _biased(0, n=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        with pytest.raises(ValueError, match="sensitive_features has 299 rows"):
            DPFERMIClassifier(classes=[0, 1], **FAST).fit(
                X, y, sensitive_features=s[:-1]
            )


def test_overspending_noise_multiplier_raises():
    X, y, s = _biased(0, n=500)
    with pytest.raises(PrivacyBudgetError):
        DPFERMIClassifier(noise_multiplier=0.3, **DECLARED, **FAST).fit(
            X, y, sensitive_features=s
        )


def test_no_fairness_term_releases_nothing_about_groups():
    X, y, s = _biased(0)
    clf = DPFERMIClassifier(
        fairness_weight=0.0, random_state=0, small_budget="fit", **DECLARED, **FAST
    ).fit(X, y, sensitive_features=s)
    assert isinstance(clf.dp_event_, dp_accounting.SelfComposedDpEvent)
    assert clf.group_marginals_ is None
    assert clf.dual_noise_multiplier_ == 0.0


def test_dual_sensitivity_does_not_need_the_box():
    # The released cell sums move by at most a record's block weight
    # whatever W is, so a fit without the box needs no declared dual clip
    # norm: the default is the largest block weight (1 for demographic
    # parity), with or without the projection.
    X, y, s = _biased(0, n=300)
    fits = [
        DPFERMIClassifier(dual_projection=proj, random_state=0, **DECLARED).fit(
            X, y, sensitive_features=s
        )
        for proj in ("box", None)
    ]
    for est in fits:
        assert est.dual_clip_norm_ == 1.0
    assert fits[0].dp_event_ == fits[1].dp_event_


def test_non_private_limit_clips_no_weighted_dual_term():
    # epsilon=inf releases nothing, so the default dual clip norm clips
    # nothing: a record of weight above 1 keeps its whole dual term, and
    # the SGDA steps (the warm start of the full-batch phase) are
    # FERMIClassifier's. With noise_multiplier=0 the fit is the private
    # loop run without noise, and clips as a private fit does.
    rng = np.random.default_rng(0)
    n = 200
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + s[:, None]
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    w = rng.integers(0, 4, n).astype(float)
    common = dict(
        fairness_weight=4.0, batch_size=1024, max_iter=5, learning_rate=0.5,
        clip_norm=5.0, dual_learning_rate=0.1, min_group_frequency=0.01,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fermi = FERMIClassifier(**common).fit(
            X, y, sample_weight=w, sensitive_features=s
        )
        limit, noiseless = (
            DPFERMIClassifier(
                epsilon=np.inf, noise_multiplier=nm, record_training_loss=True,
                **DECLARED, **common,
            ).fit(X, y, sample_weight=w, sensitive_features=s)
            for nm in (None, 0.0)
        )
    assert limit.dual_clip_norm_ == math.inf
    for curve in ("loss_curve_", "fairness_curve_"):
        np.testing.assert_allclose(
            getattr(limit, curve), getattr(fermi, curve), rtol=1e-10, atol=0
        )
    assert noiseless.dual_clip_norm_ == 1.0


def test_utility_rises_with_epsilon():
    X, y, s = _biased(0, n=4000)
    acc = {}
    # lambda = 0: with a fairness term, noise that weakens it can raise accuracy.
    for eps in (0.1, 1.0, math.inf):
        scores = [
            DPFERMIClassifier(
                epsilon=eps,
                batch_size=400,
                max_iter=10,
                fairness_weight=0.0,
                random_state=seed,
                **DECLARED,
            )
            .fit(X, y, sensitive_features=s)
            .score(X, y)
            for seed in range(3)
        ]
        acc[eps] = np.mean(scores)
    assert acc[0.1] < acc[1.0] <= acc[math.inf] + 0.01
    # A fixed histogram noise that alone overspends the budget is refused.
    with pytest.raises(ValueError, match="group marginals alone"):
        DPFERMIClassifier(
            epsilon=0.1, marginal_noise_multiplier=20.0, **DECLARED
        ).fit(X, y, sensitive_features=s)


def test_private_fit_reduces_the_parity_gap():
    X, y, s = _biased(0, n=6000)
    kw = dict(epsilon=1.0, batch_size=600, max_iter=20, random_state=0, **DECLARED)
    fair = DPFERMIClassifier(fairness_weight=16, **kw).fit(X, y, sensitive_features=s)
    plain = DPFERMIClassifier(fairness_weight=0, **kw).fit(X, y, sensitive_features=s)
    assert _dp_gap(fair, X, y, s) < 0.5 * _dp_gap(plain, X, y, s)


def test_os_entropy_by_default():
    X, y, s = _biased(0, n=500)
    a = DPFERMIClassifier(**DECLARED, **FAST).fit(X, y, sensitive_features=s)
    b = DPFERMIClassifier(**DECLARED, **FAST).fit(X, y, sensitive_features=s)
    assert not np.array_equal(a.coef_, b.coef_)


def test_small_budget_fits_with_automatic_marginal_noise():
    # The histogram of group marginals must not eat a small budget: "auto"
    # raises its noise so that it alone spends at most a quarter of epsilon.
    from sklearn_dpfair.privacy import noise_multiplier_for_gaussian

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    s = rng.integers(0, 2, size=2000)
    y = (X[:, 0] + 0.5 * s + rng.normal(size=2000) > 0).astype(int)
    clf = DPFERMIClassifier(
        epsilon=0.1, classes=[0, 1], groups=[0, 1], random_state=0
    ).fit(X, y, sensitive_features=s)
    assert clf.epsilon_ <= 0.1
    z = noise_multiplier_for_gaussian(0.025, clf.delta_, "rdp")
    assert z > 20.0
    assert repr(z)[:8] in repr(clf.dp_event_)


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
def test_max_iter_beyond_the_epoch_cap_is_refused_naming_it(cls):
    # 10**30 epochs failed in the SGDA loop's epoch bookkeeping (numpy's
    # "Maximum allowed size exceeded"), or in the noise calibration, with a
    # message that named no parameter.
    from sklearn.utils._param_validation import InvalidParameterError

    from sklearn_dpfair.linear_model._fermi import MAX_EPOCHS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    s = rng.integers(0, 2, 40)
    for max_iter in (10**30, MAX_EPOCHS + 1):
        clf = cls(max_iter=max_iter, random_state=0)
        if cls is DPFERMIClassifier:
            clf.set_params(classes=[0, 1], groups=[0, 1])
            with pytest.raises(InvalidParameterError, match="'max_iter'"):
                clf.privacy_plan(40, 3)
        with pytest.raises(InvalidParameterError, match="'max_iter'"):
            clf.fit(X, y, sensitive_features=s)
