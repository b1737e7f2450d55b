# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""``privacy_plan``: the event of a fit, known before the data is read.

For every private estimator and solver, the plan made from the parameters
and public counts is the event the fit records (same ``DpEvent``, epsilon,
delta and adjacency), on raw-scale data whose content the plan never saw.
"""

import math
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_dpfair.exceptions import PrivacyAccountingError
from sklearn_dpfair.linear_model import (
    DPFERMIClassifier,
    DPLogisticRegression,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
    SemiLocalDPLinearRegression,
)
from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
from sklearn_dpfair.neural import DPMLPClassifier
from sklearn_dpfair.pipeline import PrivatePipeline, make_private_pipeline
from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPOneHotEncoder,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)
from sklearn_dpfair.privacy import PrivacyPlan

N, D = 600, 3
BOUNDS = [(-50.0, 550.0)] * D


def _data(seed=0):
    rng = np.random.default_rng(seed)
    # Raw-scale columns: an offset of 500 and mixed units.
    X = rng.normal(size=(N, D)) * [1.0, 10.0, 100.0] + [500.0, 0.0, 0.0]
    y = (X[:, 0] - 500.0 + 0.1 * X[:, 1] > 0).astype(int)
    groups = rng.integers(0, 2, N)
    return X, y, groups


CLASSIFIERS = [
    DPLogisticRegression(classes=[0, 1], max_iter=3),
    DPLogisticRegression(classes=[0, 1], max_iter=3, accountant="pld"),
    DPLogisticRegression(classes=[0, 1], max_iter=3, epsilon=math.inf),
    DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", feature_norm_bound=600.0,
        alpha=0.1,
    ),
    DPLogisticRegression(
        classes=[0, 1], solver="dp-frank-wolfe", l1_radius=1.0,
        feature_inf_bound=600.0,
    ),
    DPLogisticRegression(
        classes=[0, 1], solver="dp-frank-wolfe", l1_radius=1.0,
        feature_inf_bound=600.0, fw_steps=5,
    ),
    DPLogisticRegression(
        classes=[0, 1], solver="dp-newton", feature_norm_bound=600.0, newton_steps=3
    ),
    # Public bounds on the full-batch solvers: a public map, no budget.
    DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", feature_norm_bound=2.0,
        alpha=0.1, feature_scaling="auto", feature_bounds=BOUNDS,
    ),
    DPLogisticRegression(
        classes=[0, 1], solver="dp-frank-wolfe", l1_radius=1.0,
        feature_inf_bound=1.0, feature_scaling="auto", feature_bounds=BOUNDS,
    ),
    DPLogisticRegression(
        classes=[0, 1], solver="dp-newton", feature_norm_bound=2.0, newton_steps=3,
        feature_scaling="auto", feature_bounds=BOUNDS,
    ),
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2),
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2, disparity_bound=0.05),
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2, fairness_weight=0.0),
    DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, feature_scaling="auto"
    ),
    DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, feature_scaling="auto",
        accountant="pld",
    ),
    DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, feature_scaling="auto",
        disparity_bound=0.05,
    ),
    DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, feature_scaling="auto",
        feature_bounds=BOUNDS,
    ),
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2, hidden_layer_sizes=(8,)),
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2, epsilon=math.inf),
    DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, hidden_layer_sizes=(8,),
        disparity_bound=0.05, feature_scaling="auto",
    ),
    DPMLPClassifier((8,), classes=[0, 1], max_iter=2),
    DPMLPClassifier((8,), classes=[0, 1], max_iter=2, accountant="pld"),
    DPMLPClassifier((8,), classes=[0, 1], max_iter=2, epsilon=math.inf),
    DPMLPClassifier((8,), classes=[0, 1], max_iter=2, feature_scaling="auto"),
    DPMLPClassifier(
        (8,), classes=[0, 1], max_iter=2, feature_scaling="auto", feature_bounds=BOUNDS
    ),
]


def _ids(estimators):
    return [
        f"{type(e).__name__}-{'-'.join(f'{k}={v}' for k, v in sorted(e.get_params().items()) if k in ('solver', 'accountant', 'epsilon', 'disparity_bound', 'fairness_weight', 'small_budget', 'fw_steps', 'feature_scaling', 'bounds', 'strategy', 'max_iter', 'n_private', 'categories', 'hidden_layer_sizes'))}"
        for e in estimators
    ]


def _assert_planned(plan, est):
    assert isinstance(plan, PrivacyPlan)
    assert plan.dp_event == est.dp_event_
    assert plan.adjacency == est.adjacency_
    assert plan.delta == est.delta_
    assert plan.accountant == est.privacy_record_.accountant
    # Both computed by the same accountant from the same event.
    assert plan.epsilon == est.epsilon_ or (
        math.isinf(plan.epsilon) and math.isinf(est.epsilon_)
    )
    plan.check_fitted(est)
    if math.isinf(plan.epsilon):
        # The plan of the non-private limit described the private mechanism
        # (DP-SGD, per-example clipping) that the fit does not run.
        assert "non-private" in plan.mechanism
        assert "non-private" in est.privacy_record_.mechanism


@pytest.mark.parametrize("estimator", CLASSIFIERS, ids=_ids(CLASSIFIERS))
def test_classifier_plan_is_the_fitted_event(estimator):
    X, y, groups = _data()
    plan = estimator.privacy_plan(N, D)
    fit_kwargs = (
        {"sensitive_features": groups} if isinstance(estimator, DPFERMIClassifier) else {}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of short fits
        estimator.fit(X, y, **fit_kwargs)
    _assert_planned(plan, estimator)
    # The plan does not read the data: another dataset, the same fitted event.
    X2, y2, groups2 = _data(seed=1)
    fit_kwargs = {k: groups2 for k in fit_kwargs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X2 * 3.0, y2, **fit_kwargs)
    _assert_planned(plan, estimator)


FEDERATED = [
    DPMLPClassifier((8,), classes=[0, 1], max_iter=2),
    DPMLPClassifier((8,), classes=[0, 1], max_iter=2, silo_epsilon=3.0, accountant="pld"),
    DPMLPClassifier((8,), classes=[0, 1], max_iter=2, secure_aggregation=True),
    DPMLPClassifier(
        (8,), classes=[0, 1], max_iter=2, silo_algorithm="spider", spider_period=3
    ),
    DPMLPClassifier(
        (8,),
        classes=[0, 1],
        max_iter=2,
        silo_algorithm="spider",
        spider_smoothness=math.inf,
        accountant="pld",
    ),
]


@pytest.mark.parametrize("estimator", FEDERATED, ids=_ids(FEDERATED))
def test_federated_plan_is_the_fitted_event(estimator):
    # privacy_plan(..., n_silos=) plans fit(..., silos=): the ISRL-DP record
    # of the worst silo, the same whatever the silo sizes.
    X, y, _ = _data()
    silos = np.repeat([0, 1, 2], [100, 200, 300])
    plan = estimator.privacy_plan(N, D, n_silos=3)
    estimator.fit(X, y, silos=silos)
    _assert_planned(plan, estimator)


def test_fermi_plan_without_groups_takes_one_group():
    X, y, _ = _data()
    est = DPFERMIClassifier(classes=[0, 1], max_iter=2)
    plan = est.privacy_plan(N, D, n_groups=1)
    with pytest.warns(UserWarning, match="one group"):
        est.fit(X, y)
    _assert_planned(plan, est)
    default = DPFERMIClassifier(classes=[0, 1], max_iter=2).privacy_plan(N, D)
    assert default.dp_event == plan.dp_event


# 600 * 0.05 < 15 * (3 + 1): small_budget="auto" plans the intercept-only
# release (and "fit" the model).
SMALL_BUDGET = [
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2, epsilon=0.05),
    DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, epsilon=0.05, disparity_bound=0.05
    ),
    DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, epsilon=0.05, small_budget="fit"
    ),
    # 600 * 0.3 is between 15 and 100 times (3 + 1): the model, then the
    # private choice between it and the constants.
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2, epsilon=0.3),
    # 600 * 0.02 < 5 * (3 + 1): DPLogisticRegression's intercept-only release.
    DPLogisticRegression(classes=[0, 1], max_iter=3, epsilon=0.02),
    DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", feature_norm_bound=600.0,
        alpha=0.1, epsilon=0.02,
    ),
    # Below what the default accountant (RDP) certifies: the one Gaussian
    # histogram is calibrated and recorded with PLD.
    *(
        estimator
        for epsilon in (0.005, 0.001)
        for estimator in (
            DPLogisticRegression(classes=[0, 1], epsilon=epsilon, delta=1e-6),
            DPFERMIClassifier(
                classes=[0, 1], groups=[0, 1], epsilon=epsilon, delta=1e-6
            ),
            DPFERMIClassifier(
                classes=[0, 1], groups=[0, 1], epsilon=epsilon, delta=1e-6,
                feature_scaling="auto", disparity_bound=0.05,
            ),
        )
    ),
]


@pytest.mark.parametrize("estimator", SMALL_BUDGET, ids=_ids(SMALL_BUDGET))
def test_small_budget_plan_is_the_fitted_event(estimator):
    test_classifier_plan_is_the_fitted_event(estimator)


SEMI_DP = [
    SemiDPLinearRegression(),
    SemiDPLinearRegression(max_iter=7),
    SemiDPLinearRegression(solver="semidp-sgd", adjacency="add_remove"),
    SemiDPLinearRegression(solver="dp-gd"),
    SemiDPLinearRegression(solver="pda-md"),
    SemiDPLinearRegression(solver="public-only"),
    SemiDPLinearRegression(n_private=N, max_iter=5),
    SemiDPLinearRegression(epsilon=math.inf),
    SemiDPLinearRegression(feature_scaling=None),
    SemiDPLinearRegression(feature_bounds=[[-5.0, 5.0]] * D, max_iter=4),
    SemiDPLinearRegression(device="auto", verbose=0, max_iter=3),
]


@pytest.mark.parametrize(
    "estimator",
    [
        # On 600 rows the private quartiles resolve a spread from epsilon
        # = 16 on (quantiles_resolvable); below it nothing is spent on them.
        SemiDPLinearRegression(epsilon=16.0),
        SemiDPLinearRegression(epsilon=16.0, max_iter=4),
        SemiDPLinearRegression(
            epsilon=16.0, solver="semidp-sgd", adjacency="add_remove"
        ),
        SemiDPLinearRegression(epsilon=16.0, solver="dp-gd", max_iter=3),
    ],
    ids=lambda e: repr(e),
)
def test_semi_dp_plan_with_private_scales_is_the_fitted_event(estimator):
    # Too few public rows (3) for their scales: private quantiles, composed.
    X, _, _ = _data()
    y = X @ [1.0, 0.5, 0.01] + np.random.default_rng(3).normal(size=N)
    mask = np.zeros(N, dtype=bool)
    mask[:3] = True
    plan = estimator.privacy_plan(N, D, n_public=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y, public_mask=mask)
    assert "private quantiles" in estimator.privacy_record_.mechanism
    _assert_planned(plan, estimator)


@pytest.mark.parametrize("estimator", SEMI_DP, ids=_ids(SEMI_DP))
def test_semi_dp_plan_is_the_fitted_event(estimator):
    X, _, _ = _data()
    y = X @ [1.0, 0.5, 0.01] + np.random.default_rng(3).normal(size=N)
    mask = np.zeros(N, dtype=bool)
    mask[:60] = True
    plan = estimator.privacy_plan(N, D, n_public=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y, public_mask=mask)
    _assert_planned(plan, estimator)


HEAVY_TAIL = [
    HeavyTailDPRegressor(),
    HeavyTailDPRegressor(feature_bounds=None),
    HeavyTailDPRegressor(solver="sgd"),
    HeavyTailDPRegressor(penalty="l1", alpha=0.1),
    HeavyTailDPRegressor(loss="huber"),
    HeavyTailDPRegressor(epsilon=math.inf),
    HeavyTailDPRegressor(solver="acsa"),
    HeavyTailDPRegressor(solver="sgd", clip_norm=2.0, fit_intercept=False),
    HeavyTailDPRegressor(solver="sgd", epsilon=math.inf),
    # Below the public minimum of epsilon * n: the intercept-only model.
    HeavyTailDPRegressor(epsilon=0.05),
    # The deprecated zCDP budget (a FutureWarning, the same plan as before).
    HeavyTailDPRegressor(rho=0.05),
    HeavyTailDPRegressor(rho=0.05, solver="prox", penalty="l1", alpha=0.1),
    # The smoothed quantile and absolute losses: the private lambda_max only.
    HeavyTailDPRegressor(loss="quantile", quantile=0.8, solver="sgd"),
    HeavyTailDPRegressor(loss="absolute_error", penalty="l1", alpha=0.1),
    HeavyTailDPRegressor(loss="quantile", solver="acsa", smoothness=2.0),
]


@pytest.mark.parametrize("estimator", HEAVY_TAIL, ids=_ids(HEAVY_TAIL))
def test_heavy_tail_plan_is_the_fitted_event(estimator):
    X, _, _ = _data()
    y = X @ [0.01, 0.5, 0.001] + np.random.default_rng(4).standard_t(2, size=N)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        plan = estimator.privacy_plan(N, D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y)
    _assert_planned(plan, estimator)


LOCALIZED = {
    "auto-clip": HeavyTailDPRegressor(solver="localized", random_state=0),
    "capped-absolute": HeavyTailDPRegressor(
        solver="localized", loss="absolute_error", max_iter=40, random_state=0
    ),
    "fixed-clip": HeavyTailDPRegressor(
        solver="localized", clip_norm=2.0, fit_intercept=False, epsilon=4.0,
        random_state=0,
    ),
}


@pytest.mark.parametrize("name", LOCALIZED)
def test_heavy_tail_localized_plan_is_the_fitted_event(name):
    # Algorithm 7's phases take min(ceil(n_i ln n), max_iter) steps of noise
    # multiplier sqrt(T_i / (2 rho)): the event depends on n, max_iter and
    # the budget only, so it is planned, and equals the fitted one on data
    # whose scales (hence private clips) differ by orders of magnitude.
    estimator = LOCALIZED[name]
    clips = set()
    for n, x_scale, y_scale in [(64, 1e-3, 1e5), (200, 1.0, 1.0), (600, 1e4, 1e-2)]:
        rng = np.random.default_rng(n)
        X = x_scale * rng.standard_t(2, size=(n, D))
        y = y_scale * rng.standard_t(2, size=n)
        plan = estimator.privacy_plan(n, D)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y)
        assert estimator.solver_ == "localized"
        _assert_planned(plan, estimator)
        clips.add(estimator.clip_norm_)
    # An auto clip followed the data sets' (private) scales.
    assert (len(clips) == 1) == (name == "fixed-clip")


def test_heavy_tail_localized_plan_refuses_too_few_rows():
    # A public refusal, before any data is read, like the fit's.
    with pytest.raises(ValueError, match="at least 4 samples"):
        HeavyTailDPRegressor(solver="localized").privacy_plan(3, D)


SEARCHES = [
    # A private search over regressors: its plan is the whole search's event.
    (
        SemiDPLinearRegression(adjacency="add_remove", max_iter=3),
        {"clip_norm": [0.5, 2.0]},
        True,
    ),
    (SemiLocalDPLinearRegression(), {"clip_norm": [0.5, 2.0]}, True),
    (HeavyTailDPRegressor(max_iter=20), {"loss": ["squared_error", "huber"]}, False),
]


@pytest.mark.parametrize(
    "estimator, grid, semi", SEARCHES, ids=[type(e).__name__ for e, _, _ in SEARCHES]
)
def test_regressor_search_plan_is_the_fitted_event(estimator, grid, semi):
    X, _, _ = _data()
    y = X @ [0.01, 0.5, 0.001] + np.random.default_rng(5).normal(size=N)
    mask = np.zeros(N, dtype=bool)
    mask[:60] = semi
    search = PrivateHyperparameterSearch(
        estimator, grid, epsilon=2.0, score_bound=10.0, n_runs=2, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y, **({"public_mask": mask} if semi else {}))
    # At the training size the fit drew (before reading a row).
    plan = search.privacy_plan(N, D, n_public=int(mask.sum()), n_train=search.n_train_)
    _assert_planned(plan, search)
    assert search.epsilon_ <= 2.0


TRANSFORMERS = [
    DPStandardScaler(bounds=BOUNDS),
    DPStandardScaler(bounds="auto"),
    DPStandardScaler(bounds=BOUNDS, epsilon=math.inf),
    DPSimpleImputer(bounds=BOUNDS),
    DPSimpleImputer(bounds=BOUNDS, strategy="median"),
    DPQuantileTransformer(bounds=BOUNDS),
    DPKBinsDiscretizer(bounds=BOUNDS),
    DPKBinsDiscretizer(bounds=BOUNDS, strategy="uniform"),
    DPSplineTransformer(bounds=BOUNDS),
    DPOneHotEncoder(),
    DPOneHotEncoder(categories=[[0, 1]] * D),
]


@pytest.mark.parametrize("transformer", TRANSFORMERS, ids=_ids(TRANSFORMERS))
def test_transformer_plan_is_the_fitted_event(transformer):
    X, _, _ = _data()
    if isinstance(transformer, DPOneHotEncoder):
        X = (X > np.median(X, axis=0)).astype(int)
    plan = transformer.privacy_plan(N, D)
    transformer.fit(X)
    _assert_planned(plan, transformer)
    extra = getattr(transformer, "threshold_delta_", 0.0)
    assert plan.total_delta == transformer.delta_ + extra


def test_plan_names_the_public_inputs():
    plan = DPFERMIClassifier(groups=["a", "b", "c"]).privacy_plan(1000, 4)
    assert dict(plan.public) == {"n_samples": 1000, "n_features": 4}
    plan = SemiDPLinearRegression(max_iter=3).privacy_plan(100, 2, n_public=10)
    assert dict(plan.public)["n_public"] == 10
    text = str(plan)
    assert "n_public=10" in text and "SemiDPLinearRegression" in text


@pytest.mark.parametrize(
    "estimator, args, kwargs, error, match",
    [
        (DPLogisticRegression(), (0, 3), {}, ValueError, "n_samples must be >= 1"),
        (DPLogisticRegression(), (10.5, 3), {}, TypeError, "n_samples must be an int"),
        (DPLogisticRegression(), (10, 3), {"n_groups": 2}, TypeError, "n_groups"),
        (
            DPLogisticRegression(classes=[0, 1]),
            (10, 3),
            {"n_classes": 3},
            ValueError,
            "disagrees",
        ),
        (
            DPLogisticRegression(solver="dp-frank-wolfe", l1_radius=1.0),
            (10, 3),
            {},
            ValueError,
            "feature_inf_bound",
        ),
        (DPLogisticRegression(epsilon=-1.0), (10, 3), {}, ValueError, "epsilon"),
        (
            SemiDPLinearRegression(),
            (10, 3),
            {"n_public": 11},
            ValueError,
            "exceeds n_samples",
        ),
        # Counts every fit refuses (y of one class); DP-FERMI planned them
        # as 2 classes and 1 group.
        *[
            (est, (10, 3), {"n_classes": count}, ValueError, "n_classes must be >= 2")
            for est in (DPLogisticRegression(), DPMLPClassifier(), DPFERMIClassifier())
            for count in (0, 1)
        ],
        (DPFERMIClassifier(), (10, 3), {"n_groups": 0}, ValueError, "n_groups must"),
    ],
)
def test_plan_refuses_bad_inputs(estimator, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        estimator.privacy_plan(*args, **kwargs)


@pytest.mark.parametrize(
    "estimator, name, least",
    [
        (DPFERMIClassifier(), "n_groups", 1),
        (DPFERMIClassifier(), "n_classes", 2),
        (DPLogisticRegression(), "n_classes", 2),
        (DPLogisticRegression(), "n_silos", 1),
        (DPMLPClassifier(), "n_classes", 2),
        (DPMLPClassifier(), "n_silos", 1),
        (SemiDPLinearRegression(), "n_public", 0),
    ],
    ids=lambda p: p if isinstance(p, str) else None,
)
def test_a_count_below_its_least_value_names_one_least_value(estimator, name, least):
    # One least value per count, whatever the count below it: n_groups=0
    # said ">= 1" and n_groups=-1 ">= 0" (the generic check ran first).
    said = set()
    for count in (least - 1, -1, -7):
        with pytest.raises(ValueError, match=rf"{name} must be") as exc:
            estimator.privacy_plan(100, 3, **{name: count})
        said.add(re.search(r">= (\d+)|\[(\d+),", str(exc.value)).group(0))
    assert said == {f">= {least}"}
    estimator.privacy_plan(100, 3, **{name: least})


@pytest.mark.parametrize(
    "estimator",
    [
        DPLogisticRegression(classes=["a", "a", "b"]),
        DPMLPClassifier(classes=["a", "a", "b"]),
        DPFERMIClassifier(classes=["a", "a", "b"], groups=[0, 1]),
    ],
    ids=lambda est: type(est).__name__,
)
def test_plan_refuses_the_declared_classes_the_fit_refuses(estimator):
    # Counted as three classes, ["a", "a", "b"] planned an intercept-only
    # release (DPLogisticRegression's small-budget rule) that no fit runs:
    # the fit refuses the label set before reading a row.
    with pytest.raises(ValueError, match="classes contains duplicate labels"):
        estimator.privacy_plan(25, 2)
    X = np.zeros((25, 2))
    y = np.array(["a", "b"] * 12 + ["a"])
    with pytest.raises(ValueError, match="classes contains duplicate labels"):
        estimator.fit(X, y, **(
            {"sensitive_features": np.arange(25) % 2}
            if isinstance(estimator, DPFERMIClassifier) else {}
        ))


@pytest.mark.parametrize(
    "estimator",
    [
        DPLogisticRegression(classes=[0, 0.5, 1], max_iter=2),
        DPMLPClassifier(classes=[0, 0.5, 1], max_iter=2),
        DPFERMIClassifier(classes=[0, 0.5, 1], groups=[0, 1], max_iter=2),
    ],
    ids=lambda est: type(est).__name__,
)
@pytest.mark.parametrize("a_row_holds_the_half", [False, True])
def test_non_integral_declared_classes_are_refused_whatever_the_rows_hold(
    estimator, a_row_holds_the_half
):
    # The fit used to succeed unless a row held the label 0.5 (then
    # scikit-learn's check of y refused a continuous target): whether the
    # fit failed told whether such a row exists. The declaration is refused
    # before any row is read, by the fit and by the plan alike.
    with pytest.raises(ValueError, match="classes must hold integers or strings"):
        estimator.privacy_plan(40, 2)
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.arange(40) % 2.0
    if a_row_holds_the_half:
        y[0] = 0.5
    with pytest.raises(ValueError, match="classes must hold integers or strings"):
        estimator.fit(X, y, **(
            {"sensitive_features": np.arange(40) % 2}
            if isinstance(estimator, DPFERMIClassifier) else {}
        ))
    assert not hasattr(estimator, "classes_")


def test_check_fitted_catches_a_drift():
    X, y, _ = _data()
    est = DPLogisticRegression(classes=[0, 1], max_iter=2).fit(X, y)
    other = DPLogisticRegression(classes=[0, 1], max_iter=3).privacy_plan(N, D)
    with pytest.raises(PrivacyAccountingError, match="planned"):
        other.check_fitted(est)
    # A plan for another n is another event (the sampling rate differs).
    assert DPLogisticRegression(classes=[0, 1], max_iter=2).privacy_plan(
        N + 1, D
    ).dp_event != est.dp_event_


def test_frank_wolfe_plan_depends_on_the_class_count():
    # The auto step count reads the number of vertices, 2 d K.
    est = DPLogisticRegression(
        solver="dp-frank-wolfe", l1_radius=1.0, feature_inf_bound=1.0
    )
    binary, multi = est.privacy_plan(5000, 3), est.privacy_plan(5000, 3, n_classes=4)
    assert binary.dp_event != multi.dp_event
    X, _, _ = _data()
    y = np.random.default_rng(0).integers(0, 4, N)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.set_params(classes=[0, 1, 2, 3]).fit(np.clip(X / 600.0, -1, 1), y)
    assert est.privacy_plan(N, D).dp_event == est.dp_event_


# Sparse X: the layout is public (the container's, not the records'), and
# estimators that skip their private column scaling on it plan that fit.
SPARSE_LAYOUT_DEPENDENT = [
    # Private location and scale on dense X, public bounds only on sparse X.
    HeavyTailDPRegressor(),
    HeavyTailDPRegressor(loss="huber"),
    HeavyTailDPRegressor(rho=0.05),
    # Private quantiles on dense X (3 public rows are too few for scales).
    SemiDPLinearRegression(epsilon=16.0),
    SemiDPLinearRegression(
        epsilon=8.0, adjacency="add_remove", batch_size=6000, max_iter=7
    ),
]
SPARSE_LAYOUT_FREE = [
    HeavyTailDPRegressor(feature_bounds=None),
    HeavyTailDPRegressor(solver="sgd"),
    HeavyTailDPRegressor(penalty="l1", alpha=0.1),
    HeavyTailDPRegressor(epsilon=0.05),
    SemiDPLinearRegression(),
    SemiDPLinearRegression(solver="dp-gd", max_iter=3),
    SemiDPLinearRegression(feature_bounds=[[-5.0, 5.0]] * D, max_iter=4),
    *CLASSIFIERS[:7],
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2),
    DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2, epsilon=0.05),
    DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, feature_scaling="auto",
        feature_bounds=BOUNDS,
    ),
]


def _fit_sparse(estimator, dtype=np.float64):
    """Fit ``estimator`` on CSR X; return the public counts of its plan."""
    import scipy.sparse as sp

    X, y, groups = _data()
    kwargs, counts = {}, {}
    if isinstance(estimator, SemiDPLinearRegression):
        y = X @ [1.0, 0.5, 0.01] + np.random.default_rng(3).normal(size=N)
        mask = np.zeros(N, dtype=bool)
        mask[:3] = True
        kwargs, counts = {"public_mask": mask}, {"n_public": 3}
    elif isinstance(estimator, HeavyTailDPRegressor):
        y = X @ [0.01, 0.5, 0.001] + np.random.default_rng(4).standard_t(2, size=N)
    elif isinstance(estimator, DPFERMIClassifier):
        kwargs = {"sensitive_features": groups}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(sp.csr_matrix(X.astype(dtype)), y, **kwargs)
    return counts


@pytest.mark.parametrize(
    "estimator", SPARSE_LAYOUT_DEPENDENT, ids=_ids(SPARSE_LAYOUT_DEPENDENT)
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_plan_is_the_fitted_event_where_the_layout_matters(estimator, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        counts = _fit_sparse(estimator, dtype)
        dense = estimator.privacy_plan(N, D, **counts)
        plan = estimator.privacy_plan(N, D, sparse=True, **counts)
    _assert_planned(plan, estimator)
    # The dense fit spends part of the budget on private scales; the sparse
    # one does not, so the two plans differ.
    assert dense.dp_event != plan.dp_event
    assert ("sparse", True) in plan.public


@pytest.mark.parametrize("estimator", SPARSE_LAYOUT_FREE, ids=_ids(SPARSE_LAYOUT_FREE))
def test_sparse_plan_is_the_fitted_event_where_the_layout_does_not_matter(estimator):
    counts = _fit_sparse(estimator)
    plan = estimator.privacy_plan(N, D, sparse=True, **counts)
    _assert_planned(plan, estimator)
    assert estimator.privacy_plan(N, D, **counts).dp_event == plan.dp_event


@pytest.mark.parametrize(
    "estimator",
    [
        DPMLPClassifier((8,), classes=[0, 1]),
        DPFERMIClassifier(classes=[0, 1], hidden_layer_sizes=(8,)),
        SemiLocalDPLinearRegression(),
        DPStandardScaler(bounds=BOUNDS),
    ],
    ids=lambda e: type(e).__name__,
)
def test_sparse_plan_refused_where_the_fit_refuses_sparse_x(estimator):
    import scipy.sparse as sp

    with pytest.raises(TypeError, match="does not accept sparse X"):
        estimator.privacy_plan(N, D, sparse=True)
    X, y, _ = _data()
    with pytest.raises(TypeError, match="(?i)sparse"):
        estimator.fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize(
    "estimator",
    [
        DPLogisticRegression(classes=[0, 1], feature_scaling="auto"),
        DPFERMIClassifier(classes=[0, 1], groups=[0, 1], feature_scaling="auto"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_sparse_plan_refused_where_private_scales_need_dense_rows(estimator):
    # The fit refuses private scales on sparse X; so must the plan, before a
    # private pipeline spends its preprocessing budget on the rows.
    import scipy.sparse as sp

    with pytest.raises(ValueError, match="sparse X needs public feature_bounds"):
        estimator.privacy_plan(N, D, sparse=True)
    X, y, groups = _data()
    kwargs = (
        {"sensitive_features": groups}
        if isinstance(estimator, DPFERMIClassifier)
        else {}
    )
    with pytest.raises(ValueError, match="sparse X needs public feature_bounds"):
        estimator.fit(sp.csr_matrix(X), y, **kwargs)
    pipe = make_private_pipeline(clone(estimator), epsilon=1.0)
    with pytest.raises(ValueError, match="sparse X needs public feature_bounds"):
        pipe.fit(sp.csr_matrix(X), y, **kwargs)
    bounded = clone(estimator).set_params(feature_bounds=[(-4.0, 4.0)] * D)
    assert bounded.privacy_plan(N, D, sparse=True).epsilon <= 1.0


def test_plan_sparse_must_be_a_bool():
    with pytest.raises(TypeError, match="sparse must be a bool"):
        HeavyTailDPRegressor().privacy_plan(N, D, sparse="csr")
    # The dense plan's public inputs are unchanged.
    assert dict(HeavyTailDPRegressor().privacy_plan(N, D).public) == {
        "n_samples": N,
        "n_features": D,
    }


SPARSE_SEARCHES = [
    (HeavyTailDPRegressor(max_iter=20), {"loss": ["squared_error", "huber"]}, 2.0),
    # A private pipeline candidate plans its final step with the layout.
    (
        PrivatePipeline([("reg", HeavyTailDPRegressor(max_iter=20))]),
        {"reg__loss": ["squared_error", "huber"]},
        2.0,
    ),
    # 3 public rows and a large budget: private quantiles on dense X.
    (
        SemiDPLinearRegression(adjacency="add_remove", max_iter=3),
        {"clip_norm": [0.5, 2.0]},
        64.0,
    ),
]


@pytest.mark.parametrize(
    "estimator, grid, epsilon",
    SPARSE_SEARCHES,
    ids=[type(e).__name__ for e, _, _ in SPARSE_SEARCHES],
)
def test_sparse_search_plan_is_the_fitted_event(estimator, grid, epsilon):
    import scipy.sparse as sp

    X, _, _ = _data()
    y = X @ [0.01, 0.5, 0.001] + np.random.default_rng(5).normal(size=N)
    semi = isinstance(estimator, SemiDPLinearRegression)
    mask = np.zeros(N, dtype=bool)
    mask[:3] = semi
    search = PrivateHyperparameterSearch(
        estimator, grid, epsilon=epsilon, score_bound=10.0, n_runs=2, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(sp.csr_matrix(X), y, **({"public_mask": mask} if semi else {}))
    # At the training size the fit drew (before reading a row).
    counts = {"n_public": int(mask.sum()), "n_train": search.n_train_}
    dense = search.privacy_plan(N, D, **counts)
    plan = search.privacy_plan(N, D, sparse=True, **counts)
    _assert_planned(plan, search)
    # The candidates were planned as fitted on sparse X: no private scales.
    assert dense.dp_event != plan.dp_event
    assert search.epsilon_ <= epsilon


def test_sparse_search_refuses_a_dense_only_candidate_before_the_fit():
    import scipy.sparse as sp

    X, _, _ = _data()
    y = X[:, 1] + np.random.default_rng(6).normal(size=N)
    search = PrivateHyperparameterSearch(
        SemiLocalDPLinearRegression(), {"clip_norm": [0.5, 2.0]}, score_bound=10.0
    )
    with pytest.raises(TypeError, match="does not accept sparse X"):
        search.privacy_plan(N, D, sparse=True)
    with pytest.raises(TypeError, match="does not accept sparse X"):
        search.fit(sp.csr_matrix(X), y)
    assert not hasattr(search, "dp_event_")
